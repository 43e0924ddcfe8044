#!/usr/bin/env bash
# test/layers/run.sh - the layers of src/ include only layers below them.
#
#   test/layers/run.sh [SRC_DIR]      (default: src of this repository)
#
# Each directory of src/ is one layer; LAYERS below lists them from the
# bottom up (README.md, "Layout", draws the same order).  A file of layer L
# may include "M/..." only when M is L or below it; a directory missing from
# the list is a failure too, so that a new layer takes its place on purpose.
# Output: "PASS layers/order" or "FAIL layers/order: ..." with every upward
# include listed; exit status 1 on failure.
# A second case, layers/header-size, keeps the headers of src/pt2pt (the
# layer every message goes through) at most HEADER_MAX lines each, so that
# each stays one subject a reader can hold (types, requests, wire, routes).
# A third, layers/self-check (on the repository's src only), runs the two
# on a small tree with one upward include and one oversized header, and
# passes only when both are reported: a check that cannot fail tests
# nothing.

set -u
LAYERS='util core rank ucx shm gpu datatype pt2pt coll comm rma env launch'

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)/src}
self_check=$([ $# -eq 0 ] && echo yes)
declare -A level
i=0
for l in $LAYERS; do level[$l]=$i; i=$((i + 1)); done

bad=()
for dir in "$src"/*/; do
    layer=$(basename "$dir")
    if [ -z "${level[$layer]+x}" ]; then
        bad+=("src/$layer: not in the layer order (test/layers/run.sh, README.md)")
        continue
    fi
    while IFS= read -r hit; do
        file=${hit%%:*}
        rest=${hit#*:}
        line=${rest%%:*}
        inc=$(printf '%s\n' "$rest" | sed -n 's/^[0-9]*:[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)\/.*/\1/p')
        [ -n "$inc" ] || continue
        if [ -z "${level[$inc]+x}" ]; then
            bad+=("${file#"$src"/}:$line includes $inc/, not a layer")
        elif [ "${level[$inc]}" -gt "${level[$layer]}" ]; then
            bad+=("${file#"$src"/}:$line: $layer includes $inc/, a layer above it")
        fi
    done < <(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$dir" -r \
                 --include='*.c' --include='*.h' --include='*.S' --include='*.cu' 2>/dev/null)
done

status=0
# report CASE WHAT FINDING...: PASS without findings, else FAIL with each one.
report() {
    local name=$1 what=$2
    shift 2
    if [ $# -eq 0 ]; then
        echo "PASS layers/$name"
        return
    fi
    echo "FAIL layers/$name: $# $what"
    printf '    %s\n' "$@"
    status=1
}
report order "include(s) against the order $LAYERS" ${bad[@]+"${bad[@]}"}

HEADER_MAX=250
big=()
for h in "$src"/pt2pt/*.h; do
    n=$(wc -l <"$h")
    [ "$n" -le $HEADER_MAX ] || big+=("src/pt2pt/$(basename "$h"): $n lines")
done
report header-size "header(s) of src/pt2pt over $HEADER_MAX lines (split by subject)" ${big[@]+"${big[@]}"}

if [ -n "$self_check" ]; then
    tree=$(mktemp -d)
    mkdir -p "$tree/util" "$tree/core" "$tree/pt2pt"
    printf '#include "util/util_a.h"\n' >"$tree/core/core_b.h"
    printf '/* below core */\n#include "core/core_b.h"\n' >"$tree/util/util_a.h"
    seq $((HEADER_MAX + 1)) | sed 's|^|/* line |; s|$| */|' >"$tree/pt2pt/p2p_big.h"
    out=$(bash "$0" "$tree" 2>&1)
    rc=$?
    rm -rf "$tree"
    missed=()
    [ $rc -eq 1 ] || missed+=("exit status $rc, expected 1")
    grep -q 'util/util_a.h:2: util includes core/, a layer above it' <<<"$out" ||
        missed+=("the upward include util/util_a.h:2 was not reported")
    grep -q "src/pt2pt/p2p_big.h: $((HEADER_MAX + 1)) lines" <<<"$out" ||
        missed+=("the $((HEADER_MAX + 1))-line pt2pt header was not reported")
    grep -q 'core_b.h' <<<"$out" && missed+=("core/core_b.h's downward include was reported")
    report self-check "finding(s) missed on a tree with one upward include and one oversized header" \
        ${missed[@]+"${missed[@]}"}
fi
exit $status
