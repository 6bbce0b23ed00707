#!/usr/bin/env bash
# Reproducible diff2test benchmark on a synthetic build (examples/synth.rs).
#
#   bash bench/run.sh [PRESET] [--seed N] [--runs N] [--dir DIR] [--fresh] [--interleave]
#                     [--snapshot]
#
# PRESET: tiny | small | llvm (default) | chromium, or the same name with -ninja
# (llvm-ninja, ...: the Ninja build tree, one .ninja_deps instead of .d files). The tree is generated into DIR
# (default ${TMPDIR:-/tmp}/diff2test-bench-PRESET-sSEED) and reused on later runs when
# DIR/synth-stamp.txt records the same preset, seed and generator version (--fresh
# regenerates). Nothing is dropped from the page cache: every number is warm, after
# one untimed warm-up run.
#
# Measured side by side, each the median of RUNS (default 7, at least 5) runs:
#   cat floor        xargs cat over every evidence file diff2test reads (all .d files,
#                    or the .ninja_deps, every File API reply file, ctest.json,
#                    deps.txt; for Ninja also build.ninja, rules.ninja, .ninja_log) > /dev/null
#   readall 1T / 2T  examples/readall.rs: open + read each file once, 1 and 2 threads
#   readall 2T + audit stats   (Ninja presets) the same, then on one thread the stats a
#                    deps log's freshness audit needs: each project file and directory
#                    its object records list, each object
#   readall + audit stats both on 2 threads   (Ninja presets) the same reads and stats,
#                    half of each on each thread at once: the floor with perfect balance
#   readall + minimal parse + audit stats on 2 threads   (Ninja presets) the same, and each
#                    file parsed as little as its format allows (JSON into IgnoredAny, the
#                    deps log, the build log, the manifest's statements): the floor of a
#                    parser that builds nothing
#   diff2test        whole process, --format names, --changed-from each change set the
#                    generator wrote: one-header, twenty-files (expect exit 0,
#                    SUBSET_SELECTED) and build-config (expect exit 3)
# plus each diff2test run's peak RSS (/usr/bin/time -f %M, else python3 getrusage).
# A diff2test case that ends with another exit code prints its stderr head and the
# script fails, so a fallback is never measured by accident. Uses hyperfine when it
# is installed, else a date +%s%N loop. Prints a markdown table on stdout.
#
#   D2T_BIN=PATH        time this diff2test binary instead of building target/release's
#   D2T_BASE_BIN=PATH   also time a second binary (e.g. an older build) on the same cases:
#                       rows "base CASE", with the "vs base" column
#   --interleave        run the commands round-robin (each round runs every command once,
#                       starting one further along each time) with the date loop, even
#                       when hyperfine is installed: on a shared machine the load then
#                       drifts over all commands alike. On by default with D2T_BASE_BIN.
#   --snapshot          also time `diff2test snapshot` on the tree (RUNS runs, not
#                       interleaved) and report its size
set -euo pipefail

preset=llvm
seed=1
runs=7
dir=
fresh=0
interleave=0
snapshot=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --fresh) fresh=1; shift ;;
    --interleave) interleave=1; shift ;;
    --snapshot) snapshot=1; shift ;;
    -h|--help) sed -n '2,44p' "$0"; exit 0 ;;
    -*) echo "bench/run.sh: unknown option $1" >&2; exit 2 ;;
    *) preset=$1; shift ;;
  esac
done
[[ $runs -ge 5 ]] || { echo "bench/run.sh: --runs must be at least 5" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${dir:-${TMPDIR:-/tmp}/diff2test-bench-$preset-s$seed}
log() { echo "bench: $*" >&2; }

# ---- build (release) -----------------------------------------------------------
cd "$root"
if [[ -n ${D2T_BIN:-} ]]; then
  log "building release binaries (examples synth and readall); diff2test is D2T_BIN=$D2T_BIN"
  cargo build --release --quiet --example synth --example readall
else
  log "building release binaries (diff2test, examples synth and readall)"
  cargo build --release --quiet --bin diff2test --example synth --example readall
fi
target_dir=$(cargo metadata --no-deps --format-version 1 | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
target_dir=${target_dir:-${CARGO_TARGET_DIR:-$root/target}}
d2t=${D2T_BIN:-$target_dir/release/diff2test}
base=${D2T_BASE_BIN:-}
[[ -n $base ]] && interleave=1
synth=$target_dir/release/examples/synth
readall=$target_dir/release/examples/readall
for b in "$d2t" "$synth" "$readall" ${base:+"$base"}; do [[ -x $b ]] || { log "missing binary $b"; exit 1; }; done

# ---- synthetic tree ---------------------------------------------------------------
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
want_stamp="preset=$preset seed=$seed version=$("$synth" --version) out=$dir"
if [[ $fresh == 0 && -f $dir/synth-stamp.txt && "$(cat "$dir/synth-stamp.txt")" == "$want_stamp" ]]; then
  log "reusing $dir ($want_stamp)"
else
  log "generating preset $preset (seed $seed) into $dir"
  "$synth" --preset "$preset" --seed "$seed" --out "$dir" >&2
fi
SRC=$dir/src
BUILD=$dir/build
files=$dir/bench-files.txt
{
  cat "$BUILD/deps.txt"
  find "$BUILD/.cmake/api/v1/reply" -type f -name '*.json' | LC_ALL=C sort
  echo "$BUILD/ctest.json"
  echo "$BUILD/deps.txt"
  # A Ninja tree's manifest and build log: the command audit reads them.
  if grep -q '/\.ninja_deps$' "$BUILD/deps.txt"; then
    for f in build.ninja CMakeFiles/rules.ninja .ninja_log; do
      [[ -f $BUILD/$f ]] && echo "$BUILD/$f"
    done
  fi
} >"$files"
n_files=$(wc -l <"$files" | tr -d ' ')
bytes=$(xargs cat <"$files" | wc -c | tr -d ' ')
n_dep=$(wc -l <"$BUILD/deps.txt" | tr -d ' ')
dep_bytes=$(xargs cat <"$BUILD/deps.txt" | wc -c | tr -d ' ')
n_logs=$(grep -c '/\.ninja_deps$' "$BUILD/deps.txt" || true)

# ---- correctness gate: each case once, exit code checked ------------------------------
declare -A want_rc=([one-header]=0 [twenty-files]=0 [build-config]=3)
declare -A expected_sel got_sel
while read -r name rc sel total; do
  [[ $name == \#* || -z $name ]] && continue
  expected_sel[$name]=$sel
done <"$dir/changes/expected.txt"
d2t_cmd() { # BINARY CASE -> the diff2test command line (shell words)
  printf '%q ' "$1" --source-dir "$SRC" --build-dir "$BUILD" --ctest-json "$BUILD/ctest.json" \
    --dep-list "$BUILD/deps.txt" --changed-from "$dir/changes/$2.txt" --format names
}
cases=(one-header twenty-files build-config)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff2test-bench-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
bins=("$d2t")
[[ -n $base ]] && bins+=("$base")
for bin in "${bins[@]}"; do
  for c in "${cases[@]}"; do
    set +e
    eval "$(d2t_cmd "$bin" "$c")" >"$tmp/$c.out" 2>"$tmp/$c.err"
    rc=$?
    set -e
    [[ $bin == "$d2t" ]] && got_sel[$c]=$(wc -l <"$tmp/$c.out" | tr -d ' ')
    if [[ $rc != "${want_rc[$c]}" ]]; then
      log "FAIL: $bin: case $c exited $rc, expected ${want_rc[$c]}; stderr head:"
      head -15 "$tmp/$c.err" >&2
      fail=1
    elif [[ -f $dir/changes/$c.expected ]]; then
      # The generator's independent oracle: diff2test must never omit one of its tests.
      missing=$(LC_ALL=C comm -13 <(LC_ALL=C sort "$tmp/$c.out") <(LC_ALL=C sort "$dir/changes/$c.expected") | wc -l)
      extra=$(LC_ALL=C comm -23 <(LC_ALL=C sort "$tmp/$c.out") <(LC_ALL=C sort "$dir/changes/$c.expected") | wc -l)
      if [[ $missing != 0 ]]; then
        log "FAIL: $bin: case $c omits $missing test(s) the generator's oracle selects (see $dir/changes/$c.expected)"
        fail=1
      elif [[ $extra != 0 ]]; then
        log "note: $bin: case $c selects $extra test(s) more than the generator's oracle"
      fi
    fi
  done
done
[[ $fail == 0 ]] || { log "not benchmarking a fallback; regenerate with --fresh if the tree was modified"; exit 1; }

# ---- timing -----------------------------------------------------------------------------
labels=("cat floor" "readall 1 thread" "readall 2 threads")
cmds=("xargs cat < $(printf %q "$files") > /dev/null"
      "$(printf %q "$readall") $(printf %q "$files") 1 > /dev/null"
      "$(printf %q "$readall") $(printf %q "$files") 2 > /dev/null")
if [[ $n_logs -gt 0 ]]; then
  # A Ninja build's floor also holds the stats its freshness audit needs (examples/readall.rs).
  "$readall" --audit-list "$BUILD/.ninja_deps" "$SRC" "$BUILD" >"$tmp/stat-list.txt"
  labels+=("readall 2 threads + audit stats")
  cmds+=("$(printf %q "$readall") $(printf %q "$files") 2 --stat-list $(printf %q "$tmp/stat-list.txt") > /dev/null")
  labels+=("readall + audit stats both on 2 threads")
  cmds+=("$(printf %q "$readall") $(printf %q "$files") 2 --stat-list-spread $(printf %q "$tmp/stat-list.txt") > /dev/null")
  # The least any parser of these formats must do beyond that (examples/readall.rs --parse-spread).
  labels+=("readall + minimal parse + audit stats on 2 threads")
  cmds+=("$(printf %q "$readall") $(printf %q "$files") 2 --parse-spread $(printf %q "$tmp/stat-list.txt") > /dev/null")
fi
for c in "${cases[@]}"; do
  labels+=("diff2test $c")
  cmds+=("$(d2t_cmd "$d2t" "$c") > /dev/null 2>&1; test \$? = ${want_rc[$c]}")
done
if [[ -n $base ]]; then
  for c in "${cases[@]}"; do
    labels+=("base $c")
    cmds+=("$(d2t_cmd "$base" "$c") > /dev/null 2>&1; test \$? = ${want_rc[$c]}")
  done
fi
declare -a med mn mx
if [[ $interleave == 0 ]] && command -v hyperfine >/dev/null 2>&1; then
  tool="hyperfine $(hyperfine --version | awk '{print $2}')"
  hargs=()
  for i in "${!cmds[@]}"; do hargs+=(-n "${labels[$i]}" "${cmds[$i]}"); done
  hyperfine --warmup 1 --runs "$runs" --style none --export-csv "$tmp/h.csv" "${hargs[@]}" >/dev/null
  # command,mean,stddev,median,user,system,min,max  (seconds)
  i=0
  while IFS=, read -r _ _ _ median _ _ min max; do
    med[$i]=$(awk -v x="$median" 'BEGIN{printf "%.1f", x*1000}')
    mn[$i]=$(awk -v x="$min" 'BEGIN{printf "%.1f", x*1000}')
    mx[$i]=$(awk -v x="$max" 'BEGIN{printf "%.1f", x*1000}')
    i=$((i + 1))
  done < <(tail -n +2 "$tmp/h.csv")
else
  # Round-robin: round r runs every command once, starting at command r mod N, so
  # a change of the machine's load falls on all commands alike.
  tool="bash loop (date +%s%N), interleaved round-robin"
  n_cmds=${#cmds[@]}
  for i in "${!cmds[@]}"; do
    bash -c "${cmds[$i]}" || { log "warm-up of ${labels[$i]} failed"; exit 1; }
    : >"$tmp/t$i"
  done
  for r in $(seq 0 $((runs - 1))); do
    for k in $(seq 0 $((n_cmds - 1))); do
      i=$(((r + k) % n_cmds))
      s=$(date +%s%N)
      bash -c "${cmds[$i]}" || { log "${labels[$i]} failed"; exit 1; }
      e=$(date +%s%N)
      echo $(((e - s) / 1000)) >>"$tmp/t$i"
    done
  done
  for i in "${!cmds[@]}"; do
    sort -n "$tmp/t$i" >"$tmp/ts"
    med[$i]=$(awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1000}' "$tmp/ts")
    mn[$i]=$(awk 'NR==1{printf "%.1f", $1/1000}' "$tmp/ts")
    mx[$i]=$(awk 'END{printf "%.1f", $1/1000}' "$tmp/ts")
  done
fi

# ---- peak RSS ---------------------------------------------------------------------------
peak_kb() { # command words... -> peak RSS in KB of that process
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f %M -o "$tmp/rss" "$@" >/dev/null 2>&1 || true
    tail -1 "$tmp/rss"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import resource,subprocess,sys; subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
  else
    echo n/a
  fi
}
declare -A rss
for c in "${cases[@]}"; do
  rss[$c]=$(peak_kb "$d2t" --source-dir "$SRC" --build-dir "$BUILD" --ctest-json "$BUILD/ctest.json" \
    --dep-list "$BUILD/deps.txt" --changed-from "$dir/changes/$c.txt" --format names)
  if [[ -n $base ]]; then
    rss["base $c"]=$(peak_kb "$base" --source-dir "$SRC" --build-dir "$BUILD" --ctest-json "$BUILD/ctest.json" \
      --dep-list "$BUILD/deps.txt" --changed-from "$dir/changes/$c.txt" --format names)
  fi
done

# ---- snapshot (issue 15), on request ------------------------------------------------------
if [[ $snapshot == 1 ]]; then
  snap_cmd=("$d2t" snapshot --source-dir "$SRC" --build-dir "$BUILD" --ctest-json "$BUILD/ctest.json" \
    --dep-list "$BUILD/deps.txt" --output "$tmp/snapshot.json")
  "${snap_cmd[@]}" 2>"$tmp/snap.err" || { log "FAIL: diff2test snapshot:"; head -15 "$tmp/snap.err" >&2; exit 1; }
  : >"$tmp/snap.t"
  for _ in $(seq "$runs"); do
    s=$(date +%s%N)
    "${snap_cmd[@]}" 2>/dev/null
    e=$(date +%s%N)
    echo $(((e - s) / 1000)) >>"$tmp/snap.t"
  done
  sort -n "$tmp/snap.t" >"$tmp/snap.ts"
  snap_med=$(awk '{a[NR]=$1} END{m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1000}' "$tmp/snap.ts")
  snap_min=$(awk 'NR==1{printf "%.1f", $1/1000}' "$tmp/snap.ts")
  snap_max=$(awk 'END{printf "%.1f", $1/1000}' "$tmp/snap.ts")
  snap_bytes=$(wc -c <"$tmp/snapshot.json" | tr -d ' ')
  snap_gz=$(gzip -c "$tmp/snapshot.json" | wc -c | tr -d ' ')
  snap_rss=$(peak_kb "${snap_cmd[@]}")
fi

# ---- report -------------------------------------------------------------------------------
mb() { awk -v b="$1" 'BEGIN{printf "%.1f", b/1048576}'; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
ram=$(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)
echo "### diff2test benchmark: preset \`$preset\` (seed $seed)"
echo
echo "- machine: $(nproc) CPUs ($cpu), $ram RAM; $(uname -sr)"
if [[ $n_logs -gt 0 ]]; then
  echo "- evidence: $n_files files, $(mb "$bytes") MB (deps log $(mb "$dep_bytes") MB: $n_dep dependency-list entries, $n_logs .ninja_deps); tree $dir"
else
  echo "- evidence: $n_files files, $(mb "$bytes") MB ($n_dep .d files, $(mb "$dep_bytes") MB); tree $dir"
fi
echo "- timing: $tool, median of $runs warm runs after 1 warm-up; $("$d2t" --version 2>/dev/null | head -1) ($d2t)"
[[ -n $base ]] && echo "- base: $base"
echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
vs_base_h="" vs_base_s=""
[[ -n $base ]] && vs_base_h=" vs base |" vs_base_s="---:|"
echo "| measurement | median ms | min ms | max ms | vs cat floor |$vs_base_h peak RSS MB | outcome |"
echo "|---|---:|---:|---:|---:|$vs_base_s---:|---|"
for i in "${!labels[@]}"; do
  ratio=$(awk -v a="${med[$i]}" -v b="${med[0]}" 'BEGIN{printf "%.2f", a/b}')
  l=${labels[$i]}
  r="" o="" vb=""
  if [[ $l == diff2test* || $l == base* ]]; then
    c=${l#* }
    key=$c
    [[ $l == base* ]] && key="base $c"
    r=$(awk -v k="${rss[$key]}" 'BEGIN{ if (k ~ /^[0-9]+$/) printf "%.0f", k/1024; else print k }')
    if [[ $c == build-config ]]; then
      o="exit 3, FULL_SUITE_SELECTED (${got_sel[$c]} tests)"
    else
      o="exit 0, ${got_sel[$c]} of ${expected_sel[build-config]} tests"
    fi
    if [[ -n $base && $l == diff2test* ]]; then
      for j in "${!labels[@]}"; do
        [[ ${labels[$j]} == "base $c" ]] && vb=$(awk -v a="${med[$i]}" -v b="${med[$j]}" 'BEGIN{printf "%.2fx", a/b}')
      done
    fi
  fi
  if [[ -n $base ]]; then
    echo "| $l | ${med[$i]} | ${mn[$i]} | ${mx[$i]} | ${ratio}x | $vb | $r | $o |"
  else
    echo "| $l | ${med[$i]} | ${mn[$i]} | ${mx[$i]} | ${ratio}x | $r | $o |"
  fi
done
if [[ $snapshot == 1 ]]; then
  echo
  echo "| \`diff2test snapshot\` | median ms | min ms | max ms | size bytes | gzip bytes | peak RSS MB |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  echo "| $preset ($runs runs) | $snap_med | $snap_min | $snap_max | $snap_bytes | $snap_gz | $(awk -v k="$snap_rss" 'BEGIN{ if (k ~ /^[0-9]+$/) printf "%.0f", k/1024; else print k }') |"
fi
