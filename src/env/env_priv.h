/* Globals privatization (env_priv.c): the objects each rank loads a copy
 * of, the program's image and the shared libraries of its own that it
 * links (env_priv_libs.c finds them). */
#ifndef AMPI_ENV_PRIV_H
#define AMPI_ENV_PRIV_H

#include <stdbool.h>
#include <stddef.h>

/* A string of an object's file that each copy rewrites: the name of a
 * library (its soname in the library itself, a DT_NEEDED entry or a version
 * reference in the objects that need it) becomes the name of the rank's
 * copy of that library, of the same length. */
typedef struct priv_patch {
    size_t off, len; /* in the file */
    int lib;         /* the library named there (index in the library table) */
} priv_patch_t;

typedef struct priv_object {
    const unsigned char *bytes; /* the ELF file */
    size_t size;
    int text_fd;                /* memfd of the first copy: read-only segments of the others */
    priv_patch_t *patches;
    int npatches;
    int *deps;                  /* libraries of the table that it needs, loaded before it */
    int ndeps;
    char *path;                 /* a library's file */
    size_t name_len;            /* a library's soname length: that of its copies' names */
} priv_object_t;

typedef struct priv_libs {
    priv_object_t *lib;
    int n;
} priv_libs_t;

/* Finds the shared libraries built by `ampicc -shared` (they hold a section
 * named ".ampi_private") that the image needs, directly or through each
 * other, reads them and records in image and in each of them the strings a
 * copy rewrites.  A library that cannot be privatized (no soname, a name
 * shorter than 6 characters, strings the linker merged with others) is left
 * to the dynamic loader, loaded once per process, with a warning.  The
 * libraries left shared that the image finds through an rpath of $ORIGIN
 * are loaded here, from the executable's folder. */
void env_priv_find_libs(priv_object_t *image, priv_libs_t *libs);

/* True when path names an object loaded once per rank (a copy of the image
 * or of one of its libraries): its globals are privatized. */
bool env_priv_per_rank_object(const char *path);

#endif
