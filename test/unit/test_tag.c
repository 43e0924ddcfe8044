/* Unit test of the 64-bit UCX tag layout (src/ucx/ucx_tag.h). */
#include "ucx/ucx_tag.h"

#include <stdbool.h>
#include <stdio.h>

#include "unit_check.h"

int main(void)
{
    CHECK(UCX_TAG_TYPE_BITS + UCX_TAG_PE_BITS + UCX_TAG_COUNTER_BITS == 64);
    /* the three fields are disjoint and cover all 64 bits */
    CHECK((UCX_TAG_TYPE_MASK & UCX_TAG_PE_MASK) == 0);
    CHECK((UCX_TAG_TYPE_MASK & UCX_TAG_COUNTER_MASK) == 0);
    CHECK((UCX_TAG_PE_MASK & UCX_TAG_COUNTER_MASK) == 0);
    CHECK((UCX_TAG_TYPE_MASK | UCX_TAG_PE_MASK | UCX_TAG_COUNTER_MASK) == UCX_TAG_FULL_MASK);

    const uint32_t pes[] = { 0, 1, 77, UCX_TAG_MAX_PES - 1 };
    const uint64_t counters[] = { 0, 1, 123456789, UCX_TAG_COUNTER_MASK };
    for (int t = UCX_TAG_ENVELOPE; t <= UCX_TAG_DEVICE; t++)
        for (unsigned i = 0; i < sizeof pes / sizeof *pes; i++)
            for (unsigned k = 0; k < sizeof counters / sizeof *counters; k++) {
                uint64_t tag = ucx_tag_make((ucx_tag_type_t)t, pes[i], counters[k]);
                CHECK(ucx_tag_type(tag) == (ucx_tag_type_t)t);
                CHECK(ucx_tag_pe(tag) == pes[i]);
                CHECK(ucx_tag_counter(tag) == counters[k]);
                /* an envelope probe (type bits only) takes envelopes, never payloads */
                bool env = (tag & UCX_TAG_TYPE_MASK) ==
                           (ucx_tag_make(UCX_TAG_ENVELOPE, 0, 0) & UCX_TAG_TYPE_MASK);
                CHECK(env == (t == UCX_TAG_ENVELOPE));
            }
    /* the counter wraps inside its field without touching the PE bits */
    uint64_t wrapped = ucx_tag_make(UCX_TAG_PAYLOAD, 5, UCX_TAG_COUNTER_MASK + 1);
    CHECK(ucx_tag_pe(wrapped) == 5 && ucx_tag_counter(wrapped) == 0);
    /* distinct (pe, counter) pairs give distinct tags */
    CHECK(ucx_tag_make(UCX_TAG_PAYLOAD, 1, 2) != ucx_tag_make(UCX_TAG_PAYLOAD, 2, 1));
    if (unit_check_summary("test_tag"))
        return 1;
    printf("test_tag: ok\n");
    return 0;
}
