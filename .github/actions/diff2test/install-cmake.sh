#!/usr/bin/env bash
# Install a CMake (and so a CTest) of at least a given version from PyPI into a venv.
#
#   bash .github/actions/diff2test/install-cmake.sh VENV_DIR [REQUIREMENT]
#
# REQUIREMENT defaults to "cmake>=3.29" (the first CTest with --tests-from-file).
# Afterwards VENV_DIR/bin/ctest and VENV_DIR/bin/cmake exist. VENV_DIR/.complete
# is written last, so a failed or interrupted install is redone from scratch.
# Needs python3 with the venv module (Debian/Ubuntu: apt-get install python3-venv).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: bash install-cmake.sh VENV_DIR [REQUIREMENT]" >&2
  exit 2
fi
venv=$1
req=${2:-cmake>=3.29}

if [[ -f "$venv/.complete" && -x "$venv/bin/ctest" ]]; then
  "$venv/bin/ctest" --version | head -n1
  exit 0
fi
command -v python3 >/dev/null 2>&1 || {
  echo "install-cmake: error: python3 is required (apt-get install python3 python3-venv)" >&2
  exit 1
}
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
if ! python3 -m venv "$venv"; then
  echo "install-cmake: error: python3 -m venv $venv failed (apt-get install python3-venv)" >&2
  exit 1
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check "$req"; then
  echo "install-cmake: error: pip install '$req' failed: install a CMake >= 3.29 into $venv by hand" \
    "(python3 -m venv $venv && $venv/bin/pip install '$req')" >&2
  exit 1
fi
"$venv/bin/ctest" --version | head -n1
: >"$venv/.complete"
