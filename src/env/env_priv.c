/* Globals privatization: every rank runs its own copy of the program.
 *
 * `ampicc -privatize` links the program's objects into a shared object (the
 * image, -fPIC, -Bsymbolic so that the image's references to its own
 * symbols stay inside it) and embeds that image in a small executable whose
 * main calls AMPI_Run_image.  Each rank then loads the image afresh with
 * dlopen from an in-memory file (memfd): the dynamic loader gives every copy
 * its own .data, .bss, GOT, TLS block and C++ static constructors (run by
 * dlopen, on the rank's own thread), while libampi, libc and libstdc++ stay
 * loaded once per process and keep their single state (stdio buffers,
 * environment, file descriptors, the library's own state).
 *
 * No segment is swapped when ranks switch: the copies live at different
 * addresses.  The scheduler keeps errno (always) and, for privatized
 * programs, getopt's globals of libc per rank (rank_ult.c).
 *
 * glibc treats a file it has already loaded (same name, or same device and
 * inode) as loaded: every copy is a fresh memfd (a new inode) opened under a
 * name of its own, /proc/self/ followed by 20 components that are each "./"
 * or "//" (the binary digits of a counter: names the kernel resolves alike)
 * and fd/N.  The descriptor is closed once loaded, so copies hold no file
 * descriptors.  The read-only segments of every copy after the first are
 * mapped from the first copy's file and the copy's own pages of them are
 * released: code is in memory once per process (share_read_only).
 *
 * The shared libraries of the program's own (built by `ampicc -shared`)
 * are loaded per rank too, before the image, each copy under a name of its
 * own that the image's copy asks for (env_priv_libs.c says how). */
#define _GNU_SOURCE
#include "pt2pt/p2p_api.h"
#include "core/core_settings.h"
#include "env/env_main.h"
#include "env/env_priv.h"
#include "rank/rank_ult.h"
#include "util/util_log.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef int (*main3_fn)(int, char **, char **);

extern char **environ;

static struct {
    priv_object_t image; /* embedded in the executable */
    priv_libs_t libs;    /* the program's own shared libraries */
    char *names;         /* the names of one copy's libraries, each name_len + 1 bytes */
    size_t *name_at;     /* where each library's name starts in names */
    bool per_rank;       /* AMPI_PRIVATIZE: a copy per rank, else one per process */
    void *shared;        /* the one copy when not per rank */
    unsigned loads;      /* objects loaded so far (file names) */
    unsigned copies;     /* copies of the program loaded so far (library names) */
} priv;

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A name of the memfd that no copy loaded before had (see the top). */
static void unique_path(char *buf, size_t len, int fd, unsigned serial)
{
    char dots[41];
    for (int bit = 0; bit < 20; bit++)
        memcpy(dots + 2 * bit, (serial >> bit) & 1 ? "./" : "//", 2);
    dots[40] = '\0';
    snprintf(buf, len, "/proc/self/%sfd/%d", dots, fd);
}

/* The name of a library's copy (env_priv_libs.c): as long as its soname, a
 * mark no library name starts with, then the digits of id in base 62. */
static void copy_name(char *out, size_t len, unsigned long id)
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    out[0] = '~';
    for (size_t i = len - 1; i > 0; i--) {
        out[i] = digits[id % 62];
        id /= 62;
    }
    out[len] = '\0';
    if (id)
        util_fatal("too many copies of the program's libraries for names of %zu characters", len);
}

/* A patched string lies in [lo, hi) of the file: that page stays the copy's own. */
static bool patched(const priv_object_t *o, uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < o->npatches; i++)
        if (o->patches[i].off < hi && o->patches[i].off + o->patches[i].len > lo)
            return true;
    return false;
}

/* Map the read-only PT_LOAD segments of o's copy at base from its first
 * copy's file (fd < 0: this is the first copy) and punch this copy's pages
 * of them out of its own file: the bytes are the same, the memory is kept
 * once (pages holding a name that differs between copies excepted).  Every
 * copy costs memory mappings, and a process has at most vm.max_map_count
 * (65530 by default) of them: the read-only segments are mapped readable
 * and executable alike, so that the kernel merges them into one mapping, and
 * the RELRO part of the writable segment is left writable so that it merges
 * with the rest (3 mappings a copy instead of 5).  Failures here only cost
 * memory or mappings. */
static void share_read_only(const priv_object_t *o, int fd, uintptr_t base)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)o->bytes;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(o->bytes + eh->e_phoff);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    /* the file pages that a writable segment maps stay: its untouched
     * pages still read them */
    uintptr_t keep_lo = UINTPTR_MAX, keep_hi = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_W)) {
            uintptr_t lo = ph[i].p_offset & ~(page - 1), hi = ph[i].p_offset + ph[i].p_filesz;
            keep_lo = lo < keep_lo ? lo : keep_lo;
            keep_hi = hi > keep_hi ? hi : keep_hi;
        }
    }
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_GNU_RELRO) {
            uintptr_t lo = (base + ph[i].p_vaddr) & ~(page - 1);
            uintptr_t hi = (base + ph[i].p_vaddr + ph[i].p_memsz) & ~(page - 1);
            if (hi > lo)
                mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
            continue;
        }
        if (ph[i].p_type != PT_LOAD || (ph[i].p_flags & PF_W))
            continue;
        uintptr_t off = ph[i].p_offset & ~(page - 1);
        uintptr_t end = (ph[i].p_offset + ph[i].p_filesz + page - 1) & ~(page - 1);
        if (end > keep_lo && off < keep_hi)
            continue; /* shares a page with writable data: leave it */
        uintptr_t addr = (base + ph[i].p_vaddr) & ~(page - 1);
        if (fd < 0) {
            mprotect((void *)addr, end - off, PROT_READ | PROT_EXEC);
            continue;
        }
        /* runs of pages without a patched string */
        for (uintptr_t lo = off; lo < end;) {
            if (patched(o, lo, lo + page)) {
                lo += page;
                continue;
            }
            uintptr_t hi = lo + page;
            while (hi < end && !patched(o, hi, hi + page))
                hi += page;
            void *at = (void *)(addr + (lo - off));
            if (mmap(at, hi - lo, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, o->text_fd, (off_t)lo) !=
                MAP_FAILED)
                fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)lo, (off_t)(hi - lo));
            lo = hi;
        }
    }
}

/* One object of a copy being loaded: its file stays open until every
 * object of the copy is (its read-only pages are shared then). */
typedef struct loaded {
    const priv_object_t *o;
    int fd;
    uintptr_t base;
} loaded_t;

/* Load o's copy, its libraries' names written in; constructors run here. */
static void *load_object(priv_object_t *o, int world, loaded_t *out)
{
    int fd = memfd_create("ampi-program", MFD_CLOEXEC);
    if (fd < 0 || write_all(fd, o->bytes, o->size) != 0)
        util_fatal("rank %d: cannot make a copy of the program in memory: %s", world, strerror(errno));
    for (int i = 0; i < o->npatches; i++) {
        const priv_patch_t *p = &o->patches[i];
        if (pwrite(fd, priv.names + priv.name_at[p->lib], p->len, (off_t)p->off) != (ssize_t)p->len)
            util_fatal("rank %d: cannot name its copy of a library: %s", world, strerror(errno));
    }
    char path[128];
    unique_path(path, sizeof path, fd, priv.loads++);
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        util_fatal("rank %d: cannot load its copy of the program: %s", world, dlerror());
    struct link_map *lm = NULL;
    *out = (loaded_t){ .o = o, .fd = fd, .base = 0 };
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        out->base = (uintptr_t)lm->l_addr;
    return h;
}

/* Library i of the copy, after the libraries it needs. */
static void load_library(int i, int world, loaded_t *done, bool *loaded)
{
    priv_object_t *lib = &priv.libs.lib[i];
    loaded[i] = true;
    for (int k = 0; k < lib->ndeps; k++)
        if (!loaded[lib->deps[k]])
            load_library(lib->deps[k], world, done, loaded);
    load_object(lib, world, &done[i]);
}

/* Load one more copy of the program: its libraries, then the image. */
static void *load_copy(int world)
{
    int n = priv.libs.n;
    unsigned copy = priv.copies++;
    loaded_t *done = malloc((size_t)(n + 1) * sizeof *done);
    bool *loaded = malloc((size_t)(n + 1) * sizeof *loaded);
    if (!done || !loaded)
        util_fatal("rank %d: out of memory", world);
    for (int i = 0; i < n; i++) {
        copy_name(priv.names + priv.name_at[i], priv.libs.lib[i].name_len, (unsigned long)copy * (unsigned)n + (unsigned)i);
        loaded[i] = false;
    }
    for (int i = 0; i < n; i++)
        if (!loaded[i])
            load_library(i, world, done, loaded);
    void *h = load_object(&priv.image, world, &done[n]);
    /* once every name is resolved: the loader reads a soname from the
     * object's memory until it has matched it */
    for (int i = 0; i <= n; i++) {
        priv_object_t *o = (priv_object_t *)done[i].o;
        bool first = o->text_fd < 0;
        if (first)
            o->text_fd = done[i].fd; /* the first copy's file serves the others' code */
        if (done[i].base)
            share_read_only(o, first ? -1 : done[i].fd, done[i].base);
        if (!first)
            close(done[i].fd);
    }
    free(done);
    free(loaded);
    return h;
}

bool env_priv_per_rank_object(const char *path)
{
    return priv.per_rank && path && strncmp(path, "/proc/self/", 11) == 0;
}

/* The program's main in copy h: `main`, or AMPI_Main from objects compiled
 * against an mpi.h that renamed it. */
static main3_fn find_main(void *h)
{
    static const char *const names[] = { "main", "AMPI_Main", "_Z9AMPI_MainiPPc", "_Z9AMPI_Mainv" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *f = dlsym(h, names[i]);
        if (f)
            return (main3_fn)f; /* main(), main(argc, argv) take the same call */
    }
    util_fatal("the program has no main");
}

static int rank_main(int argc, char **argv)
{
    p2p_rank_t *r = p2p_self();
    int world = r ? r->core.world : -1;
    void *h;
    if (priv.per_rank)
        h = load_copy(world);
    else {
        if (!priv.shared)
            priv.shared = load_copy(world);
        h = priv.shared;
    }
    return find_main(h)(argc, argv, environ);
}

int AMPI_Rank_atexit(void (*fn)(void))
{
    return priv.per_rank ? env_rank_atexit_add(fn) : -1;
}

int AMPI_Run_image(int argc, char **argv, const void *image, size_t size)
{
    priv.image = (priv_object_t){ .bytes = image, .size = size, .text_fd = -1 };
    env_priv_find_libs(&priv.image, &priv.libs);
    size_t bytes = 1;
    priv.name_at = calloc((size_t)priv.libs.n + 1, sizeof *priv.name_at);
    for (int i = 0; i < priv.libs.n && priv.name_at; i++) {
        priv.name_at[i] = bytes - 1;
        bytes += priv.libs.lib[i].name_len + 1;
    }
    priv.names = malloc(bytes);
    if (!priv.name_at || !priv.names)
        util_fatal("out of memory");
    priv.per_rank = core_setting_bool(CORE_SET_PRIVATIZE);
    rank_keep_getopt = priv.per_rank; /* libc's getopt globals: per rank too */
    return AMPI_Run(argc, argv, rank_main);
}
