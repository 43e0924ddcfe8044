/* The program's own shared libraries, privatized with it (env_priv.h).
 *
 * The dynamic loader treats a DT_NEEDED name as satisfied by any loaded
 * object of that name or soname, so a rank's copy of the image would bind
 * to the first copy of a library that any rank loaded.  Each rank's copy of
 * a library therefore gets a name of its own: the loader (env_priv.c)
 * writes, into the copy's file, a new soname of the same length (the
 * strings cannot grow), and the same name into the DT_NEEDED entries (and
 * version references) of the copies that need it, which it loads after it.
 * Here the image's and the libraries' files are read once per process and
 * the offsets of those strings recorded.
 *
 * Which libraries: those `ampicc -shared` linked, marked by a section named
 * ".ampi_private"; the others (the system's, this library's, a library
 * built by plain cc) stay loaded once per process, and the globals warning
 * names their variables.  A library is looked for as the loader does: in
 * LD_LIBRARY_PATH, the needing object's DT_RUNPATH or DT_RPATH ($ORIGIN
 * being the executable's directory: the image has none of its own), then
 * the system's directories.  The shared libraries that an rpath of $ORIGIN
 * finds are loaded once, ahead (preload_origin_libs). */
#define _GNU_SOURCE
#include "env/env_priv.h"
#include "util/util_log.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MIN_NAME_LEN 6 /* a copy's name: a mark and 5 or more base-62 digits */

/* The parts of an ELF file's dynamic section that naming needs. */
typedef struct elf_dyn {
    const ElfW(Dyn) *dyn;
    size_t ndyn;
    size_t strtab, strsz; /* file offset and size of the dynamic string table */
} elf_dyn_t;

static size_t file_offset(const unsigned char *bytes, ElfW(Addr) vaddr)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)bytes;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(bytes + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr && vaddr < ph[i].p_vaddr + ph[i].p_filesz)
            return ph[i].p_offset + (vaddr - ph[i].p_vaddr);
    return SIZE_MAX;
}

static bool elf_dynamic(const unsigned char *bytes, size_t size, elf_dyn_t *d)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)bytes;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff + (size_t)eh->e_phnum * sizeof(ElfW(Phdr)) > size)
        return false;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(bytes + eh->e_phoff);
    *d = (elf_dyn_t){ .dyn = NULL };
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_DYNAMIC && ph[i].p_offset + ph[i].p_filesz <= size) {
            d->dyn = (const ElfW(Dyn) *)(bytes + ph[i].p_offset);
            d->ndyn = ph[i].p_filesz / sizeof(ElfW(Dyn));
        }
    if (!d->dyn)
        return false;
    for (size_t i = 0; i < d->ndyn && d->dyn[i].d_tag != DT_NULL; i++) {
        if (d->dyn[i].d_tag == DT_STRTAB)
            d->strtab = file_offset(bytes, d->dyn[i].d_un.d_ptr);
        else if (d->dyn[i].d_tag == DT_STRSZ)
            d->strsz = d->dyn[i].d_un.d_val;
    }
    return d->strtab != SIZE_MAX && d->strsz > 0 && d->strtab + d->strsz <= size;
}

static const char *dyn_string(const unsigned char *bytes, const elf_dyn_t *d, size_t off)
{
    return off < d->strsz ? (const char *)bytes + d->strtab + off : NULL;
}

static ElfW(Xword) dyn_value(const elf_dyn_t *d, ElfW(Sxword) tag)
{
    for (size_t i = 0; i < d->ndyn && d->dyn[i].d_tag != DT_NULL; i++)
        if (d->dyn[i].d_tag == tag)
            return d->dyn[i].d_un.d_val;
    return (ElfW(Xword))-1;
}

/* The file's section headers name a section ".ampi_private" (`ampicc -shared`). */
static bool marked_private(const unsigned char *bytes, size_t size)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)bytes;
    if (!eh->e_shoff || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size || eh->e_shstrndx >= eh->e_shnum)
        return false;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(bytes + eh->e_shoff);
    const ElfW(Shdr) *names = &sh[eh->e_shstrndx];
    if (names->sh_offset + names->sh_size > size)
        return false;
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_name + sizeof ".ampi_private" <= names->sh_size &&
            strcmp((const char *)bytes + names->sh_offset + sh[i].sh_name, ".ampi_private") == 0)
            return true;
    return false;
}

/* No dynamic symbol's name starts inside [off + 1, off + len) of the
 * dynamic string table: the linker merges a string with the tails of longer
 * ones, and rewriting a library's name must not rename a symbol. */
static bool string_unshared(const unsigned char *bytes, size_t size, size_t off, size_t len)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)bytes;
    if (!eh->e_shoff || eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size)
        return false;
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(bytes + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_offset + sh[i].sh_size > size)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)(bytes + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++)
            if (sym[k].st_name > off && sym[k].st_name < off + len)
                return false;
    }
    return true;
}

/* Reads a whole file into memory (mapped, private); NULL when it cannot. */
static const unsigned char *read_file(const char *path, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    *size = (size_t)st.st_size;
    return map;
}

/* Looks for name in the directories of list (colon-separated, $ORIGIN the
 * executable's directory); true with the path in out when found. */
static bool search_dirs(const char *list, const char *name, char *out, size_t len)
{
    char origin[PATH_MAX] = ".";
    ssize_t n = readlink("/proc/self/exe", origin, sizeof origin - 1);
    if (n > 0) {
        origin[n] = '\0';
        char *slash = strrchr(origin, '/');
        if (slash)
            *slash = '\0';
    }
    while (list && *list) {
        size_t dirlen = strcspn(list, ":");
        char dir[PATH_MAX];
        if (dirlen > 0 && dirlen < sizeof dir) {
            memcpy(dir, list, dirlen);
            dir[dirlen] = '\0';
            const char *rest = NULL;
            if (strncmp(dir, "$ORIGIN", 7) == 0)
                rest = dir + 7;
            else if (strncmp(dir, "${ORIGIN}", 9) == 0)
                rest = dir + 9;
            int w = rest ? snprintf(out, len, "%s%s/%s", origin, rest, name) : snprintf(out, len, "%s/%s", dir, name);
            if (w > 0 && (size_t)w < len && access(out, R_OK) == 0)
                return true;
        }
        list += dirlen;
        if (*list == ':')
            list++;
    }
    return false;
}

static bool find_file(const unsigned char *bytes, const elf_dyn_t *d, const char *name, char *out, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return access(out, R_OK) == 0;
    }
    ElfW(Xword) runpath = dyn_value(d, DT_RUNPATH), rpath = dyn_value(d, DT_RPATH);
    const char *rp = runpath != (ElfW(Xword))-1 ? dyn_string(bytes, d, runpath) : NULL;
    if (!rp && rpath != (ElfW(Xword))-1 && search_dirs(dyn_string(bytes, d, rpath), name, out, len))
        return true;
    return search_dirs(getenv("LD_LIBRARY_PATH"), name, out, len) || search_dirs(rp, name, out, len) ||
           search_dirs("/usr/local/lib:/usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-gnu:"
                       "/lib/aarch64-linux-gnu:/usr/lib64:/lib64:/usr/lib:/lib",
                       name, out, len);
}

static void add_patch(priv_object_t *o, size_t off, size_t len, int lib)
{
    priv_patch_t *grown = realloc(o->patches, (size_t)(o->npatches + 1) * sizeof *grown);
    int *deps = grown ? realloc(o->deps, (size_t)(o->ndeps + 1) * sizeof *deps) : NULL;
    if (!grown || !deps)
        util_fatal("out of memory");
    o->patches = grown;
    o->deps = deps;
    o->patches[o->npatches++] = (priv_patch_t){ .off = off, .len = len, .lib = lib };
    for (int i = 0; i < o->ndeps; i++)
        if (o->deps[i] == lib)
            return;
    o->deps[o->ndeps++] = lib;
}

/* The library of the table at path, read and named, or -1 when it is not
 * one of the program's own or cannot be privatized. */
static int library(priv_libs_t *libs, const char *path, const char *needed)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return -1;
    for (int i = 0; i < libs->n; i++)
        if (strcmp(libs->lib[i].path, real) == 0)
            return i;
    size_t size = 0;
    const unsigned char *bytes = read_file(real, &size);
    elf_dyn_t d;
    if (!bytes)
        return -1;
    if (!elf_dynamic(bytes, size, &d) || !marked_private(bytes, size)) {
        munmap((void *)bytes, size);
        return -1;
    }
    ElfW(Xword) soname = dyn_value(&d, DT_SONAME);
    const char *name = soname != (ElfW(Xword))-1 ? dyn_string(bytes, &d, soname) : NULL;
    const char *why = NULL;
    if (!name)
        why = "it has no soname (link it with ampicc -shared, which gives it one)";
    else if (strcmp(name, needed) != 0)
        why = "the program names it otherwise than its soname";
    else if (strlen(name) < MIN_NAME_LEN)
        why = "its name is shorter than 6 characters";
    else if (!string_unshared(bytes, size, soname, strlen(name)))
        why = "its soname shares bytes with a symbol's name";
    if (why) {
        util_warn("%s stays shared by the ranks of a process (not privatized): %s", real, why);
        munmap((void *)bytes, size);
        return -1;
    }
    priv_object_t *grown = realloc(libs->lib, (size_t)(libs->n + 1) * sizeof *grown);
    char *copy = strdup(real);
    if (!grown || !copy)
        util_fatal("out of memory");
    libs->lib = grown;
    int i = libs->n++;
    libs->lib[i] = (priv_object_t){ .bytes = bytes, .size = size, .text_fd = -1, .path = copy,
                                    .name_len = strlen(name) };
    add_patch(&libs->lib[i], d.strtab + soname, strlen(name), i);
    libs->lib[i].ndeps = 0; /* its own name is no dependency */
    return i;
}

/* The object at index self of the table (-1: the image), given by o. */
static void find_in(priv_object_t *o, priv_libs_t *libs, int self)
{
    elf_dyn_t d;
    if (!elf_dynamic(o->bytes, o->size, &d))
        return;
    for (size_t k = 0; k < d.ndyn && d.dyn[k].d_tag != DT_NULL; k++) {
        if (d.dyn[k].d_tag != DT_NEEDED)
            continue;
        const char *name = dyn_string(o->bytes, &d, d.dyn[k].d_un.d_val);
        char path[PATH_MAX];
        if (!name || !find_file(o->bytes, &d, name, path, sizeof path))
            continue;
        int before = libs->n;
        int lib = library(libs, path, name);
        if (lib < 0)
            continue;
        /* the table may have moved: o points into it for a library */
        if (self >= 0)
            o = &libs->lib[self];
        size_t off = d.strtab + d.dyn[k].d_un.d_val, len = strlen(name);
        if (!string_unshared(o->bytes, o->size, d.dyn[k].d_un.d_val, len)) {
            util_warn("%s stays shared by the ranks of a process (not privatized): its name shares bytes with a "
                      "symbol's name in the program",
                      libs->lib[lib].path);
            continue;
        }
        add_patch(o, off, len, lib);
        /* a version reference names the library too, maybe by a string of its own */
        ElfW(Xword) vn = dyn_value(&d, DT_VERNEED);
        size_t at = vn != (ElfW(Xword))-1 ? file_offset(o->bytes, vn) : SIZE_MAX;
        for (int guard = 0; at != SIZE_MAX && at + sizeof(ElfW(Verneed)) <= o->size && guard < 1000; guard++) {
            const ElfW(Verneed) *v = (const ElfW(Verneed) *)(o->bytes + at);
            const char *file = dyn_string(o->bytes, &d, v->vn_file);
            if (file && v->vn_file != d.dyn[k].d_un.d_val && strcmp(file, name) == 0)
                add_patch(o, d.strtab + v->vn_file, len, lib);
            if (!v->vn_next)
                break;
            at += v->vn_next;
        }
        if (lib == before)
            find_in(&libs->lib[lib], libs, lib);
        if (self >= 0)
            o = &libs->lib[self];
    }
}

/* The libraries that stay shared, found through an rpath of $ORIGIN: the
 * loader would look for them next to the in-memory file of a copy, so
 * they are loaded here, once per process, from the executable's folder (a
 * copy's needed name then finds them by their soname). */
static void preload_origin_libs(const priv_object_t *image, const priv_libs_t *libs)
{
    elf_dyn_t d;
    if (!elf_dynamic(image->bytes, image->size, &d))
        return;
    ElfW(Xword) runpath = dyn_value(&d, DT_RUNPATH), rpath = dyn_value(&d, DT_RPATH);
    const char *rp = dyn_string(image->bytes, &d, runpath != (ElfW(Xword))-1 ? runpath : rpath);
    if (!rp || !strstr(rp, "ORIGIN"))
        return;
    for (size_t k = 0; k < d.ndyn && d.dyn[k].d_tag != DT_NULL; k++) {
        const char *name = d.dyn[k].d_tag == DT_NEEDED ? dyn_string(image->bytes, &d, d.dyn[k].d_un.d_val) : NULL;
        char path[PATH_MAX], real[PATH_MAX];
        if (!name || strchr(name, '/') || !find_file(image->bytes, &d, name, path, sizeof path) ||
            !realpath(path, real))
            continue;
        bool own = false;
        for (int i = 0; i < libs->n; i++)
            own = own || strcmp(libs->lib[i].path, real) == 0;
        if (!own && !dlopen(real, RTLD_LAZY | RTLD_LOCAL))
            util_warn("cannot load %s, which the program needs: %s", real, dlerror());
    }
}

void env_priv_find_libs(priv_object_t *image, priv_libs_t *libs)
{
    *libs = (priv_libs_t){ .lib = NULL, .n = 0 };
    find_in(image, libs, -1);
    preload_origin_libs(image, libs);
}
