#!/usr/bin/env bash
# Selection time on a real project's build (beside the synthetic presets of bench/run.sh).
#
#   bash bench/real.sh [--repo URL|DIR | --src CHECKOUT] [--commit SHA] [--pairs N] [--runs N] [--dir DIR]
#
# Default project: google/brotli at 8e10eeb (28 CTest tests, all `cmake -P` scripts that run the
# `brotli` program: the scan's command-line mapping, configure reads through a helper function,
# shared libraries the scan reads). The clone, its Ninja Debug build (with the File API queries
# and ctest.json) and init's policy are made once in DIR (default
# ${TMPDIR:-/tmp}/diff2test-bench-real-brotli) and reused. Then, for each of the last N (default 10)
# first-parent commit pairs up to the commit, diff2test selects with `--base PREV --head C` and the
# policy init wrote with its `scripts = "scan"` uncommented, RUNS times (default 5, warm, after
# one untimed run); the median per pair, the exit code and the selection size are printed as a
# markdown table, then the median over the pairs. The build is of the commit itself: what each
# pair's change set reaches is decided on it (the usual CI shape: build head, select).
#
#   D2T_BIN=PATH   time this binary (default: target/release/diff2test, built if missing)
#
# --src CHECKOUT uses an existing clone (checked out at the commit) instead of cloning.
# Needs git, cmake, ninja, a C compiler and network access for the first clone (or --repo DIR).
set -euo pipefail
repo=https://github.com/google/brotli
commit=8e10eeb3378f6c459dbaf033ca6727e9816afccb
pairs=10
runs=5
dir=${TMPDIR:-/tmp}/diff2test-bench-real-brotli
src_arg=
while [[ $# -gt 0 ]]; do
  case $1 in
    --repo) repo=$2; shift 2 ;;
    --src) src_arg=$2; shift 2 ;;
    --commit) commit=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "bench/real.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${D2T_BIN:-$here/target/release/diff2test}
if [[ -z ${D2T_BIN:-} && ! -x $bin ]]; then
  (cd "$here" && cargo build --release --quiet)
fi
for tool in git cmake ninja cc; do
  command -v "$tool" >/dev/null || { echo "bench/real.sh: needs $tool" >&2; exit 2; }
done
src=${src_arg:-$dir/src}
build=$dir/build
mkdir -p "$dir"
if [[ ! -d $src/.git ]]; then
  git clone --quiet "$repo" "$src"
fi
git -C "$src" checkout --quiet "$commit"
if [[ ! -f $build/stamp-$commit ]]; then
  rm -rf "$build"
  mkdir -p "$build/.cmake/api/v1/query"
  touch "$build/.cmake/api/v1/query/"{codemodel-v2,cmakeFiles-v1,toolchains-v1}
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug >"$dir/configure.log"
  ninja -C "$build" >"$dir/build.log"
  (cd "$build" && ctest --show-only=json-v1 >ctest.json)
  touch "$build/stamp-$commit"
fi
"$bin" init --source-dir "$src" --build-dir "$build" 2>/dev/null |
  sed 's/^# scripts = "scan"$/scripts = "scan"/' >"$dir/policy.toml"
grep -q '^scripts = "scan"$' "$dir/policy.toml" ||
  echo "bench/real.sh: note: init suggested no scan for this project" >&2

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "| pair | exit | selected | median ms |"
echo "|---|---|---|---|"
mapfile -t commits < <(git -C "$src" log --first-parent --format=%H -n $((pairs + 1)) "$commit" | tac)
all=()
for ((i = 1; i < ${#commits[@]}; i++)); do
  prev=${commits[i - 1]} cur=${commits[i]}
  args=(--source-dir "$src" --build-dir "$build" --base "$prev" --head "$cur" --no-merge-base
        --policy "$dir/policy.toml")
  set +e
  "$bin" "${args[@]}" >"$dir/out.txt" 2>"$dir/err.txt"
  code=$?
  set -e
  times=()
  for ((r = 0; r < runs; r++)); do
    t0=$(date +%s%N)
    "$bin" "${args[@]}" >/dev/null 2>&1 || true
    t1=$(date +%s%N)
    times+=($(((t1 - t0) / 1000000)))
  done
  m=$(printf '%s\n' "${times[@]}" | median)
  all+=("$m")
  echo "| ${prev:0:7}..${cur:0:7} | $code | $(wc -l <"$dir/out.txt") | $m |"
done
echo
echo "median over the pairs: $(printf '%s\n' "${all[@]}" | median) ms ($("$bin" --version))"
