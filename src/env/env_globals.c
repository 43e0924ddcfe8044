/* The globals warning (env_globals.h).
 *
 * Which variables: the ELF symbol table's data objects (STT_OBJECT, size
 * above zero) in writable sections (.data*, .bss*; not .data.rel.ro, which
 * is read-only once relocated, nor thread-local ones) of the executable and
 * of the shared libraries that are neither the system's nor this library's
 * own or its dependencies'.  Left out: what the C/C++ runtime keeps there
 * (crtstuff's completed.0, __dso_handle, iostream's init object, guard
 * variables, DWARF personality references), copies of a shared library's
 * variables made by copy relocations (their names carry a version, e.g.
 * stdout@GLIBC_2.2.5), and whatever env_globals_privatized says is taken
 * care of.  A stripped file has no symbol table: it is passed over. */
#define _GNU_SOURCE
#include "env/env_globals.h"
#include "env/env_priv.h"
#include "core/core_settings.h"
#include "pt2pt/p2p.h"
#include "util/util_log.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAMES_SHOWN 5

/* A rank's copy of the program or of its libraries (`ampicc -privatize`):
 * every variable in it is the rank's own. */
bool env_globals_privatized(const char *object, const char *symbol)
{
    (void)symbol;
    return env_priv_per_rank_object(object);
}

static bool runtime_symbol(const char *n)
{
    static const char *const prefixes[] = { "__", "completed.", "DW.ref.", "_ZGV", "_ZSt", "_ZNSt", "_ZZNSt",
                                            "_ZNKSt", "ampi_", "AMPI_" };
    if (strchr(n, '@'))
        return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(n, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    return false;
}

static bool writable_data(const Elf64_Shdr *sh, const char *name)
{
    if ((sh->sh_flags & (SHF_WRITE | SHF_ALLOC)) != (SHF_WRITE | SHF_ALLOC) ||
        (sh->sh_flags & (SHF_EXECINSTR | SHF_TLS)))
        return false;
    if (strncmp(name, ".data.rel.ro", 12) == 0)
        return false;
    return strncmp(name, ".data", 5) == 0 || strncmp(name, ".bss", 4) == 0;
}

long env_globals_scan(const char *path, bool (*found)(const char *name, void *arg), void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr))
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return -1;
    size_t size = (size_t)st.st_size;
    const unsigned char *base = map;
    const Elf64_Ehdr *eh = map;
    long count = -1;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 || !eh->e_shoff ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size ||
        eh->e_shstrndx >= eh->e_shnum)
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    const Elf64_Shdr *names = &sh[eh->e_shstrndx];
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size ||
            names->sh_offset + names->sh_size > size)
            goto out;
        const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
        size_t nsym = sh[i].sh_size / sizeof *sym;
        count = 0;
        for (size_t k = 0; k < nsym; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT || sym[k].st_size == 0 ||
                sym[k].st_shndx == SHN_UNDEF || sym[k].st_shndx >= eh->e_shnum ||
                sym[k].st_name >= strs->sh_size)
                continue;
            const Elf64_Shdr *sec = &sh[sym[k].st_shndx];
            if (sec->sh_name >= names->sh_size)
                continue;
            const char *secname = (const char *)base + names->sh_offset + sec->sh_name;
            const char *name = (const char *)base + strs->sh_offset + sym[k].st_name;
            if (!writable_data(sec, secname) || runtime_symbol(name) || env_globals_privatized(path, name))
                continue;
            count++;
            if (!found(name, arg))
                goto out;
        }
        break;
    }
out:
    munmap(map, size);
    return count;
}

/* The shared libraries that are the system's, or ours and our
 * dependencies': their globals are theirs to keep right. */
static bool foreign_library(const char *path)
{
    static const char *const dirs[] = { "/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/local/cuda" };
    static const char *const libs[] = { "libampi", "libucp", "libucs", "libuct", "libucm", "libpmix", "libhwloc",
                                        "libevent", "libcuda", "libnccl", "libnvidia", "libcudart" };
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
            return true;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++)
        if (strncmp(base, libs[i], strlen(libs[i])) == 0)
            return true;
    return strstr(path, "/ucx/") != NULL; /* UCX's transport modules */
}

typedef struct {
    char shown[512]; /* the first names, comma-separated */
    int nshown;
    long total;
    int nobjects;
    char first_object[256];
} report_t;

static bool note_symbol(const char *name, void *arg)
{
    report_t *r = arg;
    if (r->nshown < NAMES_SHOWN) {
        size_t len = strlen(r->shown);
        snprintf(r->shown + len, sizeof r->shown - len, "%s%s", r->nshown ? ", " : "", name);
        r->nshown++;
    }
    return true;
}

static void scan_object(const char *path, report_t *r)
{
    long n = env_globals_scan(path, note_symbol, r);
    if (n > 0) {
        if (!r->nobjects++)
            snprintf(r->first_object, sizeof r->first_object, "%s",
                     strncmp(path, "/proc/self/", 11) == 0 ? "the program (one copy per process: AMPI_PRIVATIZE=off)"
                                                           : path);
        r->total += n;
    }
}

static int scan_library(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *path = info->dlpi_name;
    if (path && path[0] == '/' && !foreign_library(path) && !env_globals_privatized(path, NULL))
        scan_object(path, arg);
    return 0;
}

void env_globals_check(void)
{
    if (core_proc.proc != 0 || core_proc.nranks <= core_proc.nprocs || !core_setting_bool(CORE_SET_WARN_GLOBALS))
        return;
    report_t r = { .nshown = 0, .total = 0, .nobjects = 0 };
    char exe[512];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        scan_object(exe, &r);
    }
    dl_iterate_phdr(scan_library, &r);
    if (r.total == 0)
        return;
    char more[48] = "";
    if (r.total > r.nshown)
        snprintf(more, sizeof more, " and %ld more", r.total - r.nshown);
    if (env_priv_per_rank_object("/proc/self/"))
        util_warn("%d MPI ranks run in %d processes; the program's own globals are privatized, but the ranks of a "
                  "process share the global and static variables of the libraries it links that ampicc did not "
                  "build (not privatized): a rank that writes one changes it for the others.  Writable ones found "
                  "in %s%s: %s%s.  See README, section \"Global variables\"; AMPI_WARN_GLOBALS=0 silences this warning",
                  core_proc.nranks, core_proc.nprocs, r.first_object, r.nobjects > 1 ? " and other libraries" : "",
                  r.shown, more);
    else
        util_warn("%d MPI ranks run in %d processes, and the ranks of a process share its global and static "
                  "variables (not privatized): a rank that writes one changes it for the others.  Writable ones "
                  "found in %s%s: %s%s.  See README, section \"Global variables\" (ampicc -privatize); "
                  "AMPI_WARN_GLOBALS=0 silences this warning",
                  core_proc.nranks, core_proc.nprocs, r.first_object, r.nobjects > 1 ? " and its libraries" : "",
                  r.shown, more);
}
