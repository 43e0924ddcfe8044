/* Settings from the environment (AMPI_*), with K/M/G suffixes for sizes. */
#ifndef AMPI_UTIL_ENV_H
#define AMPI_UTIL_ENV_H

#include <stddef.h>
#include <stdbool.h>

/* Parses "123", "64K", "8M", "1G" (binary multiples); false on junk. */
bool util_parse_size(const char *s, size_t *out);
size_t util_env_size(const char *name, size_t dflt);
long util_env_long(const char *name, long dflt);

#endif
