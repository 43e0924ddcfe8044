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
 * released: code is in memory once per process (share_read_only). */
#define _GNU_SOURCE
#include "pt2pt/p2p_api.h"
#include "core/core_settings.h"
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
    const unsigned char *bytes; /* the image embedded in the executable */
    size_t size;
    bool per_rank;              /* AMPI_PRIVATIZE: a copy per rank, else one per process */
    void *shared;               /* the one copy when not per rank */
    int text_fd;                /* memfd of the first copy: read-only segments of the others */
    unsigned loads;             /* copies loaded so far (names) */
} priv = { .text_fd = -1 };

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

/* Map the read-only PT_LOAD segments of the copy at base from the first
 * copy's file (fd < 0: this is the first copy) and punch this copy's pages
 * of them out of its own file: the bytes are the same, the memory is kept
 * once.  Every copy costs memory mappings, and a process has at most
 * vm.max_map_count (65530 by default) of them: the read-only segments are
 * mapped readable and executable alike, so that the kernel merges them into
 * one mapping, and the RELRO part of the writable segment is left writable
 * so that it merges with the rest (3 mappings a copy instead of 5).
 * Failures here only cost memory or mappings. */
static void share_read_only(int fd, uintptr_t base)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)priv.bytes;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(priv.bytes + eh->e_phoff);
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
        void *addr = (void *)((base + ph[i].p_vaddr) & ~(page - 1));
        if (fd < 0) {
            mprotect(addr, end - off, PROT_READ | PROT_EXEC);
            continue;
        }
        if (mmap(addr, end - off, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, priv.text_fd, (off_t)off) ==
            MAP_FAILED)
            continue;
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)(end - off));
    }
}

/* Load one more copy of the image; constructors run here. */
static void *load_copy(int world)
{
    int fd = memfd_create("ampi-program", MFD_CLOEXEC);
    if (fd < 0 || write_all(fd, priv.bytes, priv.size) != 0)
        util_fatal("rank %d: cannot make a copy of the program in memory: %s", world, strerror(errno));
    char path[128];
    unique_path(path, sizeof path, fd, priv.loads++);
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        util_fatal("rank %d: cannot load its copy of the program: %s", world, dlerror());
    struct link_map *lm = NULL;
    bool first = priv.text_fd < 0;
    if (first)
        priv.text_fd = fd; /* the first copy's file serves the others' code */
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        share_read_only(first ? -1 : fd, (uintptr_t)lm->l_addr);
    if (!first)
        close(fd);
    return h;
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

int AMPI_Run_image(int argc, char **argv, const void *image, size_t size)
{
    priv.bytes = image;
    priv.size = size;
    priv.per_rank = core_setting_bool(CORE_SET_PRIVATIZE);
    rank_keep_getopt = priv.per_rank; /* libc's getopt globals: per rank too */
    return AMPI_Run(argc, argv, rank_main);
}
