#!/usr/bin/env bash
# Check that examples/synth.rs writes what real tools write: generate a preset
# (default: tiny), configure + build + list its source tree with the real cmake,
# g++ and ctest (fixtures/prepare-build.sh), and compare the two build trees with
# bench/compare_shape.py (depfiles byte for byte, ctest.json, CTestTestfile.cmake,
# File API index/codemodel/cmakeFiles/toolchains/targets modulo opaque hashes).
# A `-ninja` preset (tiny-ninja, ...) is built with -G Ninja and its .ninja_deps is
# compared with ninja's (layout byte for byte, then every record's inputs).
#
#   bash bench/validate-shape.sh [preset] [seed]
#
# Needs cmake 3.25, g++ 12, make (or ninja 1.11) and python3. `small` takes a few
# minutes on 2 cores.
set -euo pipefail
preset=${1:-tiny}
seed=${2:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/synth-validate.XXXXXX")
trap 'rm -rf "$work"' EXIT

cd "$here"
cargo build --release --quiet --example synth
bin_dir=${CARGO_TARGET_DIR:-$here/target}/release/examples
"$bin_dir/synth" --preset "$preset" --seed "$seed" --out "$work/synth" >/dev/null
generator="Unix Makefiles"
[[ $preset == *-ninja ]] && generator=Ninja
D2T_GENERATOR=$generator bash fixtures/prepare-build.sh "$work/synth/src" "$work/real"
python3 bench/compare_shape.py "$work/synth/build" "$work/real"
