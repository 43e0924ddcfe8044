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

set -u
LAYERS='util core rank ucx shm gpu datatype pt2pt coll comm rma env launch'

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)/src}
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

if [ ${#bad[@]} -eq 0 ]; then
    echo "PASS layers/order"
    exit 0
fi
echo "FAIL layers/order: ${#bad[@]} include(s) against the order $LAYERS"
printf '    %s\n' "${bad[@]}"
exit 1
