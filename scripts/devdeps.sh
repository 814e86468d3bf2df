#!/usr/bin/env bash
# Fills .devdeps/ (ignored by git) with simdjson's and zlib's headers and
# libraries from this machine's Debian packages, for building the engine on
# the GPU box, which has neither (pass it to the device tool's carry and to
# CMake as -DATTNSCOPE_DEPS_DIR). Links are replaced by copies: a carried link
# would point off the machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
grep -qx '/.devdeps/' .git/info/exclude 2>/dev/null || echo '/.devdeps/' >>.git/info/exclude
rm -rf .devdeps && mkdir -p .devdeps/include .devdeps/lib
cp /usr/include/simdjson.h /usr/include/zlib.h /usr/include/zconf.h .devdeps/include/
L=/usr/lib/x86_64-linux-gnu
for f in libsimdjson.so libsimdjson.so.14 libz.so libz.so.1; do cp -L "$L/$f" ".devdeps/lib/$f"; done
du -sh .devdeps
