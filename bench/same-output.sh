#!/usr/bin/env bash
# Do two diff2test binaries decide alike? For a refactor that must change no behaviour.
#
#   bash bench/same-output.sh BIN_A BIN_B [PRESET...] [--seed N]
#
# PRESET: as bench/run.sh (default: tiny small llvm llvm-ninja). Each preset's synthetic tree
# is generated as bench/run.sh generates it (and reused from the same directory when its
# synth-stamp.txt matches). Both binaries then run on every change set the generator wrote
# (one-header, twenty-files, build-config), in every output format (names, ctest-regex, json,
# markdown) and with --explain-changes, and their exit codes, stdout and stderr are compared
# byte for byte. One line per run; exit 1 when any run differs (its diff is printed), 2 on bad
# usage.
set -euo pipefail

[[ $# -ge 2 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
a=$(realpath "$1") b=$(realpath "$2")
shift 2
seed=1
presets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    -*) echo "bench/same-output.sh: unknown option $1" >&2; exit 2 ;;
    *) presets+=("$1"); shift ;;
  esac
done
[[ ${#presets[@]} -gt 0 ]] || presets=(tiny small llvm llvm-ninja)
for x in "$a" "$b"; do [[ -x $x ]] || { echo "bench/same-output.sh: not an executable: $x" >&2; exit 2; }; done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release --quiet --example synth
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
synth=$target_dir/release/examples/synth
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff2test-same.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

differ=0 runs=0
for preset in "${presets[@]}"; do
  dir=${TMPDIR:-/tmp}/diff2test-bench-$preset-s$seed
  want_stamp="preset=$preset seed=$seed version=$("$synth" --version) out=$dir"
  if [[ ! -f $dir/synth-stamp.txt || "$(cat "$dir/synth-stamp.txt")" != "$want_stamp" ]]; then
    rm -rf "$dir"
    "$synth" --preset "$preset" --seed "$seed" --out "$dir" >&2
    echo "$want_stamp" >"$dir/synth-stamp.txt"
  fi
  base_args=(--source-dir "$dir/src" --build-dir "$dir/build" --ctest-json "$dir/build/ctest.json"
    --dep-list "$dir/build/deps.txt")
  for c in one-header twenty-files build-config; do
    for mode in names ctest-regex json markdown explain-changes; do
      case $mode in
        explain-changes) extra=(--explain-changes) ;;
        *) extra=(--format "$mode") ;;
      esac
      for side in a b; do
        bin=$a
        [[ $side == b ]] && bin=$b
        rc=0
        "$bin" "${base_args[@]}" --changed-from "$dir/changes/$c.txt" "${extra[@]}" \
          >"$tmp/$side.out" 2>"$tmp/$side.err" </dev/null || rc=$?
        echo "$rc" >"$tmp/$side.rc"
      done
      runs=$((runs + 1))
      if cmp -s "$tmp/a.out" "$tmp/b.out" && cmp -s "$tmp/a.err" "$tmp/b.err" && cmp -s "$tmp/a.rc" "$tmp/b.rc"; then
        echo "same     $preset $c $mode (exit $(cat "$tmp/a.rc"), stdout $(wc -c <"$tmp/a.out") B, stderr $(wc -c <"$tmp/a.err") B)"
      else
        differ=$((differ + 1))
        echo "DIFFERS  $preset $c $mode (exit $(cat "$tmp/a.rc") vs $(cat "$tmp/b.rc"))"
        diff "$tmp/a.out" "$tmp/b.out" | head -n 20 || true
        diff "$tmp/a.err" "$tmp/b.err" | head -n 20 || true
      fi
    done
  done
done
echo "$runs runs: $((runs - differ)) same, $differ differ"
[[ $differ -eq 0 ]]
