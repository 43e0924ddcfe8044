/* The library's own arguments on a program's command line. */
#ifndef AMPI_ENV_ARGS_H
#define AMPI_ENV_ARGS_H

/* Removes "+vp N" / "+vpN" from argv; returns N, or 0 when absent.  A
 * value that is not a positive integer, or a second +vp, ends the process
 * with a message (status 2, as a usage error). */
int env_take_vp_arg(int *argc, char **argv);

#endif
