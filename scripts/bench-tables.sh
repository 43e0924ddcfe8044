#!/bin/bash
# scripts/bench-tables.sh -- the markdown tables of docs/benchmarking.md from
# the CSVs of scripts/bench.sh; nothing in them is typed by hand.
#
# Usage: scripts/bench-tables.sh [--brief] DIR [DIR ...]
#   DIR: an output folder of scripts/bench.sh (rounds.csv, runs.csv,
#   meta.txt, notes.txt).  With several (a result that was run again) every
#   call gets its own tables, in the order given, so no run drops out.
#   --brief: each side's median alone (no min-max, IQR, n), for a console.
#
# Per table (area, benchmark, placement) and size: each side's median of its
# raw values over the rounds (round 0, the warm-up, and runs that exited
# non-zero left out), its min-max and interquartile range (quartiles by
# linear interpolation), the reference (the other side with the better
# median at that size: lower time, higher bandwidth), the ratio of the two
# medians (ours / reference) and in how many rounds ours beat the reference
# of the same round.  Then the sizes where ours is worse, the geometric mean
# of the ratios over the sizes, each side's command, and every run's exit
# status.
set -uo pipefail
brief=0
[ "${1:-}" = --brief ] && { brief=1; shift; }
[ $# -ge 1 ] || { sed -n '4,8p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
status=0
n=0
for dir in "$@"; do
    n=$((n + 1))
    [ -f "$dir/rounds.csv" ] || { echo "bench-tables: no $dir/rounds.csv" >&2; exit 2; }
    if [ $# -gt 1 ]; then echo "## Call $n of $#: $(basename "$dir")"; echo; fi
    if [ -f "$dir/meta.txt" ]; then sed 's/^/    /' "$dir/meta.txt"; echo; fi
    if [ -s "$dir/notes.txt" ]; then sed 's/^/- /' "$dir/notes.txt"; echo; fi
    # the table order is that of runs.csv
    {
        echo "#runs"
        [ -f "$dir/runs.csv" ] && tail -n +2 "$dir/runs.csv"
        echo "#rounds"
        tail -n +2 "$dir/rounds.csv"
    } | awk -v dir="$dir" -v brief="$brief" '
    function fmt(v) {
        if (v == "") return "-"
        if (v >= 100) return sprintf("%.0f", v)
        if (v >= 1) return sprintf("%.2f", v)
        if (v >= 0.1) return sprintf("%.3f", v)
        return sprintf("%.3g", v)
    }
    function label(size, bench) {
        if (bench == "jacobi3d") return size
        if (bench == "osu_barrier") return "-"
        if (size >= 1048576 && size % 1048576 == 0) return (size / 1048576) " MiB"
        if (size >= 1024 && size % 1024 == 0) return (size / 1024) " KiB"
        return size " B"
    }
    # quantile p of the n sorted values of group g (type 7, as numpy)
    function q(g, p,    h, lo) {
        h = (cnt[g] - 1) * p
        lo = int(h)
        if (lo + 1 >= cnt[g]) return val[g, lo]
        return val[g, lo] + (h - lo) * (val[g, lo + 1] - val[g, lo])
    }
    function stat(g) {
        if (!(g in cnt)) return "-"
        if (brief) return fmt(q(g, 0.5))
        return fmt(q(g, 0.5)) " (" fmt(val[g, 0]) "-" fmt(val[g, cnt[g] - 1]) ", IQR " fmt(q(g, 0.75) - q(g, 0.25)) ", n " cnt[g] ")"
    }
    BEGIN { FS = "," }
    /^#runs$/ { part = "runs"; next }
    /^#rounds$/ { part = "rounds"; next }
    # The vp tables of two ranks in one process ("1+2") take their Open MPI
    # columns from host-p2p: Open MPI has no ranks that share a process.
    function vp_copy(area, bench, side) {
        return area == "host-p2p" && side != "ours" && (bench == "osu_latency" || bench == "osu_bw")
    }
    function add_side(t, side, cmd, round,    ts) {
        ts = t SUBSEP side
        # the tables and sides in the order of the timed rounds, ours first
        if (round > 0 && !(t in seen_t)) { seen_t[t] = 1; order[++nt] = t }
        if (round > 0 && side != "ours" && !(ts in seen_s)) { seen_s[ts] = 1; sides[t, ++ns[t]] = side }
        if (!(ts in command) || round == 1) command[ts] = cmd
    }
    part == "runs" {
        t = $1 SUBSEP $2 SUBSEP $3
        cmd = $0
        sub(/^[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,/, "", cmd)
        gsub(/^"|"$/, "", cmd)
        gsub(dir "/", "DIR/", cmd)
        add_side(t, $4, cmd, $5)
        if (vp_copy($1, $2, $4)) vpcmd[$2, $4] = cmd
        if ($4 == "ours") has_ours[t] = 1
        nruns++
        st[$6]++
        if ($6 != 0) failed[++nf] = "round " $5 ", " $1 " " $2 " " $3 " " $4 ": exit " $6 " after " $7 " s: `" cmd "`"
        next
    }
    function add_value(t, side, size, round, value, u,    g, i) {
        g = t SUBSEP side SUBSEP size
        # kept sorted: insertion (a few values per group)
        for (i = cnt[g]++; i > 0 && val[g, i - 1] > value + 0; i--) val[g, i] = val[g, i - 1]
        val[g, i] = value + 0
        byround[g, round] = value + 0
        unit[t] = u
        if (!((t, size) in seen_size)) { seen_size[t, size] = 1; sizes[t, ++nsz[t]] = size + 0 }
        if (round > maxround) maxround = round
    }
    part == "rounds" {
        # status "-": imported from a runner that did not record it
        if ($5 == 0 || ($9 != 0 && $9 != "-")) next
        if (!nruns) add_side($1 SUBSEP $2 SUBSEP $3, $4, "(not recorded)", $5)
        if (!nruns && $4 == "ours") has_ours[$1 SUBSEP $2 SUBSEP $3] = 1
        # a second column of a run (IMB-NBC-*-t_pure): the command is that of its run
        if (nruns && $2 ~ /-t_pure$/) {
            add_side($1 SUBSEP $2 SUBSEP $3, $4, command[$1, substr($2, 1, length($2) - 7), $3, $4], $5)
            if ($4 == "ours") has_ours[$1 SUBSEP $2 SUBSEP $3] = 1
        }
        add_value($1 SUBSEP $2 SUBSEP $3, $4, $6, $5, $7, $8)
        if (vp_copy($1, $2, $4)) vprow[++nvp] = $2 SUBSEP $4 SUBSEP $6 SUBSEP $5 SUBSEP $7 SUBSEP $8
    }
    END {
        for (i = 1; i <= nvp; i++) {
            split(vprow[i], v, SUBSEP)
            t = "vp" SUBSEP v[1] SUBSEP "1+2"
            if (t in has_ours) add_value(t, v[2], v[3], v[4], v[5], v[6])
        }
        split("osu_latency osu_bw", vb, " ")
        split("ompi-ucx ompi-ob1", vs, " ")
        for (i = 1; i <= 2; i++)
            for (j = 1; j <= 2; j++) {
                t = "vp" SUBSEP vb[i] SUBSEP "1+2"
                if ((t in has_ours) && ((vb[i], vs[j]) in vpcmd)) add_side(t, vs[j], vpcmd[vb[i], vs[j]], 1)
            }
        for (i = 1; i <= nt; i++) {
            t = order[i]
            split(t, k, SUBSEP)
            higher = (unit[t] == "MB/s" || unit[t] == "%")
            printf "### %s: %s %s (%s, %s is better)\n\n", k[1], k[2], k[3], unit[t] == "" ? "no values" : unit[t], higher ? "higher" : "lower"
            head = "| " (k[2] == "jacobi3d" ? "ODF" : "size") " |"
            sep = "|---|"
            # ours first, then the references
            if (t in has_ours) { for (j = ns[t]; j >= 1; j--) sides[t, j + 1] = sides[t, j]; sides[t, 1] = "ours"; ns[t]++ }
            for (j = 1; j <= ns[t]; j++) { head = head " " sides[t, j] (brief ? ": median |" : ": median (min-max, IQR, n) |"); sep = sep "---|" }
            print head " reference | ours / reference | rounds ours better |"
            print sep "---|---:|---:|"
            # sizes in increasing order (few: insertion sort)
            m = nsz[t]
            for (a = 1; a <= m; a++) ss[a] = sizes[t, a]
            for (a = 2; a <= m; a++) { x = ss[a]; b = a - 1; while (b >= 1 && ss[b] > x) { ss[b + 1] = ss[b]; b-- } ss[b + 1] = x }
            worse = ""; nworse = 0; ncmp = 0; logsum = 0
            for (a = 1; a <= m; a++) {
                size = ss[a]
                line = "| " label(size, k[2]) " |"
                ref = ""; refmed = ""
                for (j = 1; j <= ns[t]; j++) {
                    s = sides[t, j]
                    g = t SUBSEP s SUBSEP size
                    line = line " " stat(g) " |"
                    if (s != "ours" && (g in cnt)) {
                        med = q(g, 0.5)
                        if (refmed == "" || (higher ? med > refmed : med < refmed)) { refmed = med; ref = s }
                    }
                }
                go = t SUBSEP "ours" SUBSEP size
                ratio = "-"; better = "-"
                if (ref != "" && (go in cnt) && refmed > 0) {
                    r = q(go, 0.5) / refmed
                    ratio = sprintf("%.2f", r)
                    gr = t SUBSEP ref SUBSEP size
                    nb = 0; np = 0
                    for (rd = 1; rd <= maxround; rd++)
                        if (((go, rd) in byround) && ((gr, rd) in byround)) {
                            np++
                            if (higher ? byround[go, rd] > byround[gr, rd] : byround[go, rd] < byround[gr, rd]) nb++
                        }
                    better = nb "/" np
                    ncmp++
                    logsum += log(r)
                    if (higher ? r < 1 : r > 1) { nworse++; worse = worse (worse == "" ? "" : ", ") (k[2] == "jacobi3d" ? "ODF " : "") label(size, k[2]) " " ratio }
                }
                print line " " (ref == "" ? "-" : ref) " | " ratio " | " better " |"
            }
            print ""
            if (ncmp > 0) {
                printf "Ours worse than the reference (ratio of medians) at %d of %d %s%s%s\n\n", nworse, ncmp,
                    k[2] == "jacobi3d" ? "configurations" : "sizes", nworse ? ": " : ".", worse
                printf "Geometric mean of ours / reference over the %d %s: %.2f (%s is better)\n\n", ncmp,
                    k[2] == "jacobi3d" ? "configurations" : "sizes", exp(logsum / ncmp), higher ? "higher" : "lower"
            }
            if (nruns) {
                for (j = 1; j <= ns[t]; j++) printf "- %s: `%s`\n", sides[t, j], command[t, sides[t, j]]
                print ""
            }
        }
        if (!nruns) exit 0
        print "### Runs and exit statuses"
        print ""
        line = ""
        for (s in st) line = line (line == "" ? "" : ", ") st[s] " exited " s
        printf "%d runs (warm-up included): %s.\n", nruns, line
        for (i = 1; i <= nf; i++) print "- " failed[i]
        print ""
        exit (nf > 0 ? 1 : 0)
    }' || status=1
done
exit $status
