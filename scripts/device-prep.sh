#!/bin/bash
# device-prep.sh -- run on a machine with network before working on an
# offline GPU machine: puts what that machine lacks into .whl/ (git-ignored),
# which goes there with the working tree:
#   - the CUDA-aware UCX wheel libucx-cu13 (its system UCX has no CUDA),
#     repacked without its static archives and io_demo (43 MB -> 29 MB):
#     setup.sh links the shared libraries only, and what may be carried is
#     bounded (64 MiB on the machine this was written for);
#   - Debian's libtool .deb (for a machine with autoconf/automake but no
#     libtool; setup.sh unpacks it there);
#   - Debian's iproute2 and the libraries its ip needs (for the namespace
#     test bed on an image without iproute2; nsbed.sh unpacks them);
#   - with --base REV (repeatable): the sources of commit REV as
#     .whl/base-REV.tar.gz (git archive), which `scripts/device.sh compare REV`
#     builds there beside the working tree for a before/after run (the copy
#     sent there has no git history).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .whl
while [ $# -gt 0 ]; do
    case $1 in
    --base)
        rev=${2:?--base needs a commit}
        short=$(git rev-parse --short "$rev^{commit}")
        git archive --format=tar.gz --prefix="base-$short/" -o ".whl/base-$short.tar.gz" "$short"
        echo "device-prep: .whl/base-$short.tar.gz holds the sources of $(git log -1 --format='%h %s' "$short")"
        shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "device-prep: unknown argument $1 (--base REV)" >&2; exit 2 ;;
    esac
    shift
done
if ! ls .whl/libucx_cu13-*.whl >/dev/null 2>&1; then
    python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 -d .whl libucx-cu13==1.22.0
fi
for wheel in .whl/libucx_cu13-*.whl; do
    python3 - "$wheel" <<'PY'
import os, sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    keep = [i for i in z.infolist() if not (i.filename.endswith(".a") or i.filename.endswith("/io_demo"))]
    if len(keep) == len(z.infolist()):
        sys.exit(0)
    with zipfile.ZipFile(path + ".slim", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for i in keep:
            out.writestr(i, z.read(i.filename), compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
os.replace(path + ".slim", path)
PY
done
if ! ls .whl/libtool_*_all.deb >/dev/null 2>&1; then
    (cd .whl && apt-get download libtool)
fi
# iproute2's ip and its libraries, for the namespace test bed
# (test/multinode/nsbed.sh unpacks them where the image has no ip)
if ! ls .whl/iproute2_*.deb >/dev/null 2>&1; then
    (cd .whl && apt-get download iproute2 libmnl0 libbpf1 libelf1 libcap2 libxtables12)
fi
ls -la .whl
echo "device-prep: carry .whl with the working tree; on the GPU machine run e.g. scripts/device.sh bench-p2p-dd bench-p2p-mixed (scripts/device.sh plan lists the actions)"
