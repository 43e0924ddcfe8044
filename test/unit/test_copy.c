/* Unit test of util_copy_small (src/util/util_copy.h): every length from 0
 * to 80 bytes at every source and destination offset within 8 copies
 * exactly those bytes and touches nothing around them. */
#include "util/util_copy.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "unit_check.h"

int main(void)
{
    unit_check_watchdog(60, "test_copy: hung (watchdog)\n");
    uint8_t src[128], dst[128];
    for (size_t n = 0; n <= 80; n++)
        for (size_t so = 0; so < 8; so++)
            for (size_t d = 0; d < 8; d++) {
                for (size_t k = 0; k < sizeof src; k++) {
                    src[k] = (uint8_t)(k * 7 + n + 1);
                    dst[k] = 0xA5;
                }
                util_copy_small(dst + 16 + d, src + 16 + so, n);
                for (size_t k = 0; k < sizeof dst; k++) {
                    bool inside = k >= 16 + d && k < 16 + d + n;
                    uint8_t want = inside ? src[k - d + so] : 0xA5;
                    CHECK(dst[k] == want, "n %zu, offsets %zu/%zu: byte %zu is %u, not %u", n, so, d, k, dst[k], want);
                }
            }
    if (unit_check_summary("test_copy"))
        return 1;
    printf("test_copy: ok\n");
    return 0;
}
