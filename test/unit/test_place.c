/* Tests of block placement (rank_place_*) over a grid of V ranks and P
 * processes: blocks tile 0..V-1 in order, sizes differ by at most one with
 * the larger blocks first, and rank_place_proc inverts rank_place_first. */
#include "rank/rank_place.h"

#include <stdio.h>

/* Every (V, P) grid repeats a broken rule: the first few tell the story. */
#define UNIT_CHECK_PRINT_LIMIT 20
#include "unit_check.h"

static void check_grid(int v, int p)
{
    CHECK(rank_place_first(v, p, 0) == 0, "V=%d P=%d: first(0)=%d", v, p, rank_place_first(v, p, 0));
    CHECK(rank_place_first(v, p, p) == v, "V=%d P=%d: first(P)=%d", v, p, rank_place_first(v, p, p));
    int total = 0, min = v + 1, max = -1;
    for (int proc = 0; proc < p; proc++) {
        int first = rank_place_first(v, p, proc), count = rank_place_count(v, p, proc);
        CHECK(first == total, "V=%d P=%d proc %d: first %d, previous blocks end at %d",
              v, p, proc, first, total);
        CHECK(rank_place_first(v, p, proc + 1) - first == count,
              "V=%d P=%d proc %d: count %d disagrees with first()", v, p, proc, count);
        if (proc > 0)
            CHECK(count <= rank_place_count(v, p, proc - 1),
                  "V=%d P=%d: proc %d has more ranks than proc %d", v, p, proc, proc - 1);
        for (int r = first; r < first + count; r++)
            CHECK(rank_place_proc(v, p, r) == proc, "V=%d P=%d: rank %d on proc %d, block says %d",
                  v, p, r, rank_place_proc(v, p, r), proc);
        total += count;
        min = count < min ? count : min;
        max = count > max ? count : max;
    }
    CHECK(total == v, "V=%d P=%d: blocks hold %d ranks", v, p, total);
    CHECK(max - min <= 1, "V=%d P=%d: block sizes %d..%d", v, p, min, max);
}

int main(void)
{
    for (int v = 1; v <= 64; v++)
        for (int p = 1; p <= 70; p++) /* P > V included: trailing processes get nothing */
            check_grid(v, p);
    check_grid(1000003, 17);
    check_grid(1 << 20, 1000);

    /* the example in the design: V=10 on P=4 is 3,3,2,2 */
    int want[4] = { 3, 3, 2, 2 };
    for (int proc = 0; proc < 4; proc++)
        CHECK(rank_place_count(10, 4, proc) == want[proc], "V=10 P=4 proc %d: %d ranks",
              proc, rank_place_count(10, 4, proc));

    if (unit_check_summary("test_place")) {
        return 1;
    }
    printf("test_place: all checks passed\n");
    return 0;
}
