# shellcheck shell=bash
# Shared helpers for scripts/build, scripts/run and scripts/test. Source it; do not run it.
#
# Environment:
#   ATTNSCOPE_ENGINE      ON (scripts/run and scripts/test) | AUTO (scripts/build) | OFF. ON installs
#                         torch==$ATTNSCOPE_TORCH_VERSION from PyPI if python3 cannot import torch
#                         and builds the LibTorch engine; AUTO builds it only when python3 can
#                         already import torch and never installs it; OFF never builds it.
#   ATTNSCOPE_ARROW       ON (default) | AUTO | OFF. ON installs pyarrow==$ATTNSCOPE_PYARROW_VERSION from
#                         PyPI if python3 cannot import it and builds the columnar cache with the
#                         wheel's Arrow and Parquet C++ (as the engine builds from the torch wheel);
#                         AUTO uses the wheel only when python3 already has it; OFF builds without it
#                         (every open parses the JSON; scripts/package does, a .deb cannot depend on a wheel).
#   ATTNSCOPE_BUILD_TYPE  CMake build type (default Release); the tree is build-<type>/, lower
#                         case (build-release/, build-relwithdebinfo/, build-debug/), so build
#                         types never share a directory.
#   ATTNSCOPE_PRESET      scripts/test only: build and test with this CMake preset (e.g. asan).
#   ATTNSCOPE_BUILD_TARGET  build only these targets (space-separated; CI: attnscope_tests, everything
#                         ctest runs, or the three tests of the tsan preset).

ATTNSCOPE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ATTNSCOPE_BUILD_TYPE="${ATTNSCOPE_BUILD_TYPE:-Release}"
ATTNSCOPE_BUILD_DIR="$ATTNSCOPE_ROOT/build-${ATTNSCOPE_BUILD_TYPE,,}"
ATTNSCOPE_TORCH_VERSION="2.11.0"
ATTNSCOPE_PYARROW_VERSION="26.0.1"

# Everything a fresh Debian 12 (bookworm) image needs to build, test and screenshot attnscope
# (checked by building and running in a debootstrap --variant=minbase bookworm chroot).
# - libgl-dev: Qt6Gui's CMake config needs OpenGL (GL/gl.h, libGL.so); qt6-base-dev depends on
#   it already, it is listed to keep the requirement explicit.
# - libisal-dev: ISA-L's inflate for .json.gz traces (about 3x zlib's); the build falls back to
#   zlib without it.
# - libqt6opengl6-dev: Qt6Charts' CMake config needs Qt6OpenGL and Qt6OpenGLWidgets, which are
#   only a Recommends of qt6-base-dev; without them find_package(Qt6 ... Charts) fails.
ATTNSCOPE_APT_PACKAGES=(
  g++ cmake ninja-build pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev libqt6opengl6-dev
  libsimdjson-dev zlib1g-dev libisal-dev libgl-dev
  xvfb xauth fonts-dejavu-core
  python3
)

log() { printf '[attnscope] %s\n' "$*" >&2; }
die() { printf '[attnscope] error: %s\n' "$*" >&2; exit 1; }

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [[ $EUID -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    die "need root (or sudo) to run: $*"
  fi
}

_apt_updated=0
apt_install() {
  if [[ $_apt_updated -eq 0 ]]; then
    log "apt-get update"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -qq update >/dev/null
    _apt_updated=1
  fi
  log "installing: $*"
  as_root env DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes \
    apt-get -qq install -y --no-install-recommends "$@" >/dev/null
}

# Prints the packages of "$@" that dpkg does not have installed.
apt_missing() {
  command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: these scripts need Debian 12"
  local installed
  installed="$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true)"
  local p
  for p in "$@"; do
    grep -qx "$p installed" <<<"$installed" || printf '%s\n' "$p"
  done
}

# Installs the packages of "$@" (default: ATTNSCOPE_APT_PACKAGES) that are missing.
ensure_apt_packages() {
  local missing
  (($#)) || set -- "${ATTNSCOPE_APT_PACKAGES[@]}"
  mapfile -t missing < <(apt_missing "$@")
  if [[ ${#missing[@]} -gt 0 ]]; then
    apt_install "${missing[@]}"
  fi
}

# Normalised ATTNSCOPE_ENGINE (AUTO|ON|OFF).
engine_mode() {
  local mode="${ATTNSCOPE_ENGINE:-AUTO}"
  mode="${mode^^}"
  case "$mode" in
    AUTO | ON | OFF) printf '%s\n' "$mode" ;;
    *) die "ATTNSCOPE_ENGINE must be AUTO, ON or OFF (got '${ATTNSCOPE_ENGINE}')" ;;
  esac
}

# Sets TORCH_DIR to the torch package folder; returns 1 when python3 cannot import torch.
probe_torch() {
  TORCH_DIR=""
  command -v python3 >/dev/null 2>&1 || return 1
  TORCH_DIR="$(python3 -c 'import torch; print(torch.__path__[0])' 2>/dev/null)" || return 1
  [[ -n $TORCH_DIR ]]
}

# Installs torch==$ATTNSCOPE_TORCH_VERSION from PyPI. It is large: say so, and how long it took.
install_torch() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    apt_install python3-pip
  fi
  log "installing torch==$ATTNSCOPE_TORCH_VERSION from PyPI for the engine: about 2.7 GB downloaded, 4.5 GB on"
  log "disk with NVIDIA's CUDA runtime wheels (no CUDA toolkit needed); 1-5 minutes on a fast link"
  local t0=$SECONDS
  # Debian's python3 is "externally managed" (PEP 668); this is a build machine, so allow it.
  # pip's progress bars go to the terminal when there is one, so the download shows its progress.
  local quiet=()
  [[ -t 2 ]] || quiet=(--quiet)
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install "${quiet[@]}" --disable-pip-version-check \
    --root-user-action=ignore "torch==$ATTNSCOPE_TORCH_VERSION"
  log "torch installed in $((SECONDS - t0)) s"
}

# The Python readers the summary-format and Dask tests use (test_ranks_scale, test_ranks_dask): pyarrow,
# pandas, duckdb and dask[distributed], pinned. ATTNSCOPE_PYCHECKS=ON installs the missing ones from PyPI
# (about 100 MB of wheels, under a minute on a fast link; like torch, into this python3, PEP 668 allowed);
# scripts/test sets ON; OFF (or AUTO, elsewhere) installs nothing: those tests then skip, saying which module is missing.
ATTNSCOPE_PYCHECK_PACKAGES=(pyarrow==26.0.1 pandas==3.1.1 duckdb==2.0.1 "dask[distributed]==2026.8.0")
ensure_pychecks() {
  local mode="${ATTNSCOPE_PYCHECKS:-AUTO}"
  [[ ${mode^^} == ON ]] || return 0
  if python3 -c 'import pyarrow, pandas, duckdb, dask.distributed' 2>/dev/null; then
    return 0
  fi
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  log "installing ${ATTNSCOPE_PYCHECK_PACKAGES[*]} from PyPI for the Arrow and Dask tests (about 100 MB)"
  local t0=$SECONDS
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
    --root-user-action=ignore "${ATTNSCOPE_PYCHECK_PACKAGES[@]}"
  log "installed in $((SECONDS - t0)) s"
}

# CUDA's runtime header includes crt/host_defines.h, which the runtime wheel leaves to
# nvidia-cuda-crt (cuda-toolkit's "crt" extra): headers only, 1 MB. Installs the one that matches the
# cuda-toolkit torch brought, when torch has one and the header is missing.
ensure_cuda_headers() {
  local need
  need="$(python3 - <<'PY' 2>/dev/null
import importlib.metadata as m, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
have = any(os.path.exists(os.path.join(site, "nvidia", d, "include", "crt", "host_defines.h"))
           for d in ("cu13", "cu12", "cuda_runtime", "cuda_nvcc"))
try:
    print("" if have or not torch.version.cuda else m.version("cuda-toolkit"))
except m.PackageNotFoundError:
    print("")
PY
)" || return 0
  [[ -n $need ]] || return 0
  log "installing CUDA's crt headers for the engine (cuda-toolkit[crt]==$need from PyPI, about 1 MB)"
  PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
    --root-user-action=ignore "cuda-toolkit[crt]==$need"
}

# Sets ENGINE_MODE and ENGINE_CMAKE_ARGS (the -D flags the engine choice needs). The engine builds
# from the torch wheel and the nvidia-* wheels it brings (cmake/AttnscopeTorch.cmake): no CUDA
# toolkit is needed.
resolve_engine() {
  ENGINE_MODE="$(engine_mode)"
  ENGINE_CMAKE_ARGS=("-DATTNSCOPE_ENGINE=$ENGINE_MODE")
  case "$ENGINE_MODE" in
    OFF) return 0 ;;
    ON)
      if ! probe_torch; then
        install_torch
        probe_torch || die "torch was installed but python3 still cannot import it"
      fi
      ensure_cuda_headers
      ;;
    AUTO)
      probe_torch || return 0
      ;;
  esac
  ENGINE_CMAKE_ARGS+=("-DATTNSCOPE_TORCH_DIR=$TORCH_DIR")
}

# Sets PYARROW_DIR to the pyarrow package folder; returns 1 when python3 cannot import pyarrow (with
# its C++ headers, which every wheel since 0.17 ships).
probe_pyarrow() {
  PYARROW_DIR=""
  command -v python3 >/dev/null 2>&1 || return 1
  PYARROW_DIR="$(python3 -c 'import pyarrow; print(pyarrow.__path__[0])' 2>/dev/null)" || return 1
  [[ -n $PYARROW_DIR && -f $PYARROW_DIR/include/arrow/api.h ]]
}

# Sets ARROW_CMAKE_ARGS: the columnar cache's Arrow C++ from the pyarrow wheel (cmake/AttnscopeArrow.cmake),
# installed from PyPI when ATTNSCOPE_ARROW=ON and missing (about 45 MB; no Debian package has Arrow C++).
resolve_arrow() {
  local mode="${ATTNSCOPE_ARROW:-ON}"
  mode="${mode^^}"
  case "$mode" in
    OFF)
      ARROW_CMAKE_ARGS=("-DATTNSCOPE_ARROW=OFF")
      return 0
      ;;
    AUTO | ON) ;;
    *) die "ATTNSCOPE_ARROW must be AUTO, ON or OFF (got '${ATTNSCOPE_ARROW}')" ;;
  esac
  if ! probe_pyarrow && [[ $mode == ON ]]; then
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    log "installing pyarrow==$ATTNSCOPE_PYARROW_VERSION from PyPI for the columnar cache (Arrow and Parquet C++, about 45 MB)"
    local t0=$SECONDS
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
      --root-user-action=ignore "pyarrow==$ATTNSCOPE_PYARROW_VERSION"
    log "pyarrow installed in $((SECONDS - t0)) s"
    probe_pyarrow || die "pyarrow was installed but python3 still cannot import it"
  fi
  if [[ -n $PYARROW_DIR ]]; then
    ARROW_CMAKE_ARGS=("-DATTNSCOPE_ARROW=$mode" "-DATTNSCOPE_PYARROW_DIR=$PYARROW_DIR")
  else
    ARROW_CMAKE_ARGS=("-DATTNSCOPE_ARROW=AUTO")
  fi
}

# Installs what is missing and builds $ATTNSCOPE_BUILD_DIR (extra args go to the CMake configure
# step). Configures only when the tree has no Ninja tree yet or the configure arguments changed;
# Ninja re-runs CMake by itself when a CMakeLists.txt changes.
build_main() {
  ensure_apt_packages
  resolve_engine
  resolve_arrow
  local args=(
    -S "$ATTNSCOPE_ROOT" -B "$ATTNSCOPE_BUILD_DIR" -G Ninja
    "-DCMAKE_BUILD_TYPE=$ATTNSCOPE_BUILD_TYPE"
    "${ENGINE_CMAKE_ARGS[@]}"
    "${ARROW_CMAKE_ARGS[@]}"
    "$@"
  )
  local stamp="$ATTNSCOPE_BUILD_DIR/.attnscope-configure-args"
  local cache="$ATTNSCOPE_BUILD_DIR/CMakeCache.txt"
  local want
  want="$(printf '%q ' "${args[@]}")"
  if [[ -f $cache ]] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$cache"; then
    log "$ATTNSCOPE_BUILD_DIR was configured with another generator: starting it over"
    rm -rf "$cache" "$ATTNSCOPE_BUILD_DIR/CMakeFiles"
  fi
  if [[ ! -f $cache || ! -f $ATTNSCOPE_BUILD_DIR/build.ninja || ! -f $stamp ||
    "$(cat "$stamp")" != "$want" ]]; then
    log "configuring $ATTNSCOPE_BUILD_DIR ($ATTNSCOPE_BUILD_TYPE, engine: $ENGINE_MODE)"
    rm -f "$stamp"
    cmake "${args[@]}"
    printf '%s' "$want" >"$stamp"
  fi
  local targets=()
  read -r -a targets <<<"${ATTNSCOPE_BUILD_TARGET:-}"
  cmake --build "$ATTNSCOPE_BUILD_DIR" -j"$(nproc)" ${targets[0]:+--target "${targets[@]}"}
}

# Configures and builds with a CMake preset (re-running the configure step of an existing tree
# is quick and keeps this path simple).
build_preset() {
  local preset="$1"
  ensure_apt_packages
  # The asan preset compiles with Clang 14 (a second compiler over every file it builds, warnings as
  # errors), whose sanitizer runtimes are a package of their own.
  if [[ $preset == asan ]]; then
    ensure_apt_packages clang-14 libclang-rt-14-dev
  fi
  cd "$ATTNSCOPE_ROOT" || return
  cmake --preset "$preset"
  local targets=()
  read -r -a targets <<<"${ATTNSCOPE_BUILD_TARGET:-}"
  cmake --build --preset "$preset" -j"$(nproc)" ${targets[0]:+--target "${targets[@]}"}
}
