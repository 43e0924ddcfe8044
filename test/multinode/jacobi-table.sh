#!/usr/bin/env bash
# test/multinode/jacobi-table.sh -- the table of gpu-bed.sh's Jacobi3D runs:
# per ODF and overlap, the median ms per iteration over the rounds (runs that
# failed left out), its min-max and n, the median comm_ms, and the ratio of
# the median to that of ODF 1 with the same overlap setting (below 1: the
# overdecomposition pays).  Then which configuration was fastest.
#
#   test/multinode/jacobi-table.sh JACOBI.CSV
#   (mode,block,odf,overlap,round,iter_ms,comm_ms,status per run)
set -u
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: jacobi-table.sh JACOBI.CSV" >&2; exit 2; }
sort -t, -k3,3n -k4,4 -k6,6n "$1" | awk -F, '
    # median of the sorted values v[1..n]
    function median(v, n) { return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
    function name(k,    g) { split(k, g, SUBSEP); return sprintf("ODF %d %s -overlap, %.3f ms", g[1], g[2] == "yes" ? "with" : "without", med[k]) }
    $1 == "mode" { next }
    $8 != 0 || $6 == "" { failed++; next }
    {
        mode = $1; block = $2
        k = $3 SUBSEP $4
        if (!(k in n)) order[++nk] = k
        t[k, ++n[k]] = $6
        cms[k, n[k]] = $7
    }
    END {
        if (nk == 0) { print "(no successful Jacobi3D runs)"; exit 0 }
        printf "### Jacobi3D -%s between two nodes, %d^3 cells per node (one GPU each with -D), one process per node\n\n", mode, block
        print "| ODF | overlap | ms per iteration: median (min-max, n) | comm ms (median) | ratio to ODF 1 |"
        print "|---:|---|---|---:|---:|"
        for (i = 1; i <= nk; i++) {
            k = order[i]
            split(k, f, SUBSEP)
            m = n[k]
            for (j = 1; j <= m; j++) { a[j] = t[k, j]; c[j] = cms[k, j] }
            # comm_ms sorted on its own
            for (x = 2; x <= m; x++) { y = c[x]; z = x - 1; while (z >= 1 && c[z] > y) { c[z + 1] = c[z]; z-- } c[z + 1] = y }
            med[k] = median(a, m)
            if (f[1] == 1) base[f[2]] = med[k]
            ratio = (f[2] in base) && base[f[2]] > 0 ? sprintf("%.3f", med[k] / base[f[2]]) : "-"
            printf "| %d | %s | %.3f (%.3f-%.3f, n %d) | %.3f | %s |\n", f[1], f[2] == "yes" ? "yes" : "no",
                med[k], a[1], a[m], m, median(c, m), ratio
            if (best == "" || med[k] < med[best]) best = k
            if (f[1] == 1 && (b1 == "" || med[k] < med[b1])) b1 = k
            if (f[1] > 1 && (bn == "" || med[k] < med[bn])) bn = k
        }
        printf "\nFastest: %s.", name(best)
        if (b1 != "" && bn != "")
            printf " Best ODF > 1 (%s) against best ODF 1 (%s): %.3f (%s).", name(bn), name(b1), med[bn] / med[b1],
                med[bn] < med[b1] ? "overdecomposition pays" : "overdecomposition does not pay"
        print ""
        if (failed) printf "\n%d runs failed and are left out.\n", failed
    }'
