#!/usr/bin/env bash
# Installs the CMake versions the version matrix (tests/matrix.rs) runs with, each into its own
# Python venv under target/cmake-venvs/<name>/ (PyPI's `cmake` wheels put cmake and ctest in bin/):
#
#   target/cmake-venvs/3.20/    cmake==3.20.*   the oldest CMake diff2test supports (newest 3.20.x wheel)
#   target/cmake-venvs/3.18/    cmake==3.18.*   older than supported: its Makefiles generator writes no
#                                               .d files, which diff2test must say plainly (PyPI has no 3.19)
#   target/cmake-venvs/ninja-newest/  ninja  the newest ninja (1.13+; Debian ships 1.11)
#   target/cmake-venvs/newest/  cmake>=4,<5     the newest 4.x (shared with
#                                               .github/actions/diff2test/install-cmake.sh)
#
# Debian's own cmake (/usr/bin/cmake, 3.25) is the third column of the matrix; it is not installed here.
#
#   bash .ci/cmake-versions.sh [NAME...]     (default: every venv above)
#
# Idempotent: a venv whose cmake already reports a version matching its spec is left alone
# (nothing is downloaded); one whose cmake does not run, or reports another version, is rebuilt.
# .complete is written last, the marker .github/actions/diff2test/install-cmake.sh also writes,
# so the two scripts share target/cmake-venvs/newest. Concurrent runs (parallel tests) serialise
# on target/cmake-venvs/.lock. Needs python3 with the venv module (Debian: apt-get install
# python3-venv) and access to PyPI (or a mirror through PIP_INDEX_URL).
set -euo pipefail
cd "$(dirname "$0")/.."

prog="cmake-versions"
ROOT="$PWD/target/cmake-venvs"

# name → pip requirement, and the version prefix `cmake --version` must then report.
spec_of() {
  case $1 in
    3.20) echo "cmake==3.20.*" ;;
    3.18) echo "cmake==3.18.*" ;;
    newest) echo "cmake>=4,<5" ;;
    *) return 1 ;;
  esac
}
want_prefix_of() {
  case $1 in
    3.20) echo "3.20." ;;
    3.18) echo "3.18." ;;
    newest) echo "4." ;;
  esac
}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(3.20 3.18 newest)
for n in "${names[@]}"; do
  spec_of "$n" >/dev/null || {
    echo "$prog: error: unknown venv name $n (known: 3.20 3.18 newest)" >&2
    exit 2
  }
done

# The version a venv's cmake reports ("" when it cannot run).
version_in() {
  local v
  v=$("$1/bin/cmake" --version 2>/dev/null | head -n1) || return 0
  echo "${v#cmake version }"
}

usable() {
  local dir=$1 prefix=$2 v
  [[ -f "$dir/.complete" && -x "$dir/bin/cmake" && -x "$dir/bin/ctest" ]] || return 1
  v=$(version_in "$dir")
  [[ $v == "$prefix"* ]]
}

install_one() {
  local name=$1 spec prefix dir v
  spec=$(spec_of "$name")
  prefix=$(want_prefix_of "$name")
  dir="$ROOT/$name"
  if usable "$dir" "$prefix"; then
    echo "$prog: $dir: cmake $(version_in "$dir") already installed ($spec)" >&2
    return 0
  fi
  # Binaries that work but no marker (an install interrupted after pip): keep them.
  if [[ -x "$dir/bin/cmake" && -x "$dir/bin/ctest" ]]; then
    v=$(version_in "$dir")
    if [[ $v == "$prefix"* ]]; then
      : >"$dir/.complete"
      echo "$prog: $dir: cmake $v already installed ($spec)" >&2
      return 0
    fi
  fi
  command -v python3 >/dev/null 2>&1 || {
    echo "$prog: error: python3 is required to install $spec (apt-get install python3 python3-venv)" >&2
    exit 1
  }
  echo "$prog: installing $spec into $dir" >&2
  rm -rf "$dir"
  if ! python3 -m venv "$dir" >&2; then
    rm -rf "$dir"
    echo "$prog: error: python3 -m venv failed; install the venv module (Debian: apt-get install python3-venv)" >&2
    exit 1
  fi
  if ! "$dir/bin/python" -m pip install --disable-pip-version-check --no-input -q --only-binary=:all: "$spec" >&2; then
    rm -rf "$dir"
    echo "$prog: error: pip could not install \"$spec\" from PyPI into $dir (network? set PIP_INDEX_URL for a mirror)" >&2
    exit 1
  fi
  v=$(version_in "$dir")
  if [[ $v != "$prefix"* ]]; then
    echo "$prog: error: $dir/bin/cmake reports version \"$v\", expected $prefix*" >&2
    exit 1
  fi
  : >"$dir/.complete"
  echo "$prog: installed cmake $v into $dir" >&2
}

mkdir -p "$ROOT"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$ROOT/.lock"
  flock 9
fi
for n in "${names[@]}"; do
  install_one "$n"
done

# --- the newest ninja from PyPI (the Ninja scenarios also run with it, besides Debian's 1.11) ---
ninja_dir="$ROOT/ninja-newest"
if [[ -f "$ninja_dir/.complete" && -x "$ninja_dir/bin/ninja" ]] && "$ninja_dir/bin/ninja" --version >/dev/null 2>&1; then
  echo "$prog: $ninja_dir: ninja $("$ninja_dir/bin/ninja" --version) already installed" >&2
else
  echo "$prog: installing ninja (newest) into $ninja_dir" >&2
  rm -rf "$ninja_dir"
  mkdir -p "$ROOT"
  python3 -m venv "$ninja_dir" >&2 || {
    echo "$prog: error: python3 -m venv failed; install the venv module (Debian: apt-get install python3-venv)" >&2
    exit 1
  }
  "$ninja_dir/bin/python" -m pip install --disable-pip-version-check --no-input -q --only-binary=:all: ninja >&2 || {
    echo "$prog: error: pip could not install ninja from PyPI into $ninja_dir" >&2
    exit 1
  }
  "$ninja_dir/bin/ninja" --version >/dev/null && touch "$ninja_dir/.complete"
  echo "$prog: $ninja_dir: ninja $("$ninja_dir/bin/ninja" --version)" >&2
fi
