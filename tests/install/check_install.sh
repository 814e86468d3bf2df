#!/usr/bin/env bash
# ctest test_install: `cmake --install` of this build into a staging root (DESTDIR) gives a working
# attnscope-cli and attnscope, and nothing installed points back into the source or build tree.
#   check_install.sh BUILD_DIR SOURCE_DIR [BUILD_TYPE]
set -euo pipefail
build="$1"
src="$2"
type="${3:-Release}"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

DESTDIR="$stage" cmake --install "$build" --prefix /usr >/dev/null
bin="$stage/usr/bin"
share="$stage/usr/share"
for f in "$bin/attnscope-cli" "$bin/attnscope" "$share/applications/attnscope.desktop" \
  "$share/icons/hicolor/scalable/apps/attnscope.svg" "$share/mime/packages/attnscope.xml" \
  "$share/bash-completion/completions/attnscope-cli" "$share/man/man1/attnscope-cli.1" \
  "$share/man/man1/attnscope.1" "$share/attnscope/samples/softmax_8x16x1024x64.json"; do
  [[ -e $f ]] || fail "not installed: ${f#"$stage"}"
done

# Nothing installed names the source or the build tree (the engine's RPATH names the torch wheel).
# Only in release builds: a debug or sanitizer build carries source paths in its debug info and
# in __FILE__ (assertions, Qt's message context), which is what such builds are for.
if [[ $type == Release ]]; then
  for f in $(find "$stage" -type f); do
    if grep -q -F -e "$src/" -e "$build/" "$f"; then fail "${f#"$stage"} names the source or build tree"; fi
  done
else
  echo "test_install: $type build: the no-build-path check runs on release builds only"
fi

# The installed CLI on the installed sample gives the build tree's table.
"$bin/attnscope-cli" table "$share/attnscope/samples/softmax_8x16x1024x64.json" >"$stage/installed.txt"
"$build/bin/attnscope-cli" table "$src/resources/softmax_8x16x1024x64.json" >"$stage/tree.txt"
cmp -s "$stage/installed.txt" "$stage/tree.txt" || fail "the installed CLI's table differs from the build tree's"

# The GUI answers --help without a display and renders its window offscreen.
env -u DISPLAY -u WAYLAND_DISPLAY "$bin/attnscope" --help >"$stage/help.txt" || fail "attnscope --help"
grep -q -- "--screenshot" "$stage/help.txt" || fail "attnscope --help does not mention --screenshot"
QT_QPA_PLATFORM=offscreen "$bin/attnscope" --screenshot "$stage/shot.png" >/dev/null 2>&1 || fail "attnscope --screenshot"
[[ -s $stage/shot.png ]] || fail "no screenshot"

# With the engine installed, run works from the installed place (LibTorch found through its RPATH).
if [[ -x $bin/attnscope-engine ]]; then
  "$bin/attnscope-cli" run --device cpu --shape 1,2,16,8 --iters 1 --out "$stage/run.json" >/dev/null 2>&1 ||
    fail "the installed attnscope-cli run (engine) failed"
  # Into a file first: `cli | grep -q` under pipefail fails whenever grep's early exit closes the pipe
  # before the CLI has written its last line (SIGPIPE), a race that once failed CI.
  "$bin/attnscope-cli" table "$stage/run.json" >"$stage/run-table.txt" || fail "table of the installed engine's trace"
  grep -q "aten::" "$stage/run-table.txt" || fail "the installed engine's trace has no ops"
fi
if command -v desktop-file-validate >/dev/null 2>&1; then
  desktop-file-validate "$share/applications/attnscope.desktop" || fail "desktop-file-validate"
fi
echo "test_install: ok ($(find "$stage/usr" -type f | wc -l) files installed)"
