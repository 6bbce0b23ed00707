#!/usr/bin/env bash
# The logic of the diff2test GitHub Action (action.yml beside this file), runnable
# locally: it selects the CTest tests a change can reach, with diff2test, and hands
# them to ctest.
#
#   D2T_BUILD_DIR=build bash .github/actions/diff2test/run.sh
#
# Inputs come from the environment (action.yml maps each action input onto one):
#   D2T_SOURCE_DIR  source dir the build was configured from          (default .)
#   D2T_BUILD_DIR   build dir                                         (default build)
#   D2T_CTEST_JSON  ctest --show-only=json-v1 output                  (default BUILD/ctest.json)
#   D2T_DEP_LIST    list of the compiler .d files (+ .ninja_deps)      (default: found in BUILD)
#   D2T_BASE        base revision (default: see "Base" below)
#   D2T_HEAD        head revision, the one that was built             (default HEAD)
#   D2T_MERGE_BASE  auto|true|false: compare from the merge base       (auto: true for a PR default)
#   D2T_POLICY      --policy FILE                                     (optional)
#   D2T_CONFIG      --config NAME for diff2test, and -C NAME for ctest (optional)
#   D2T_FORMAT      an extra copy of the selection in this --format    (default names)
#   D2T_SHARD       K/N: this job runs shard K of N of the selection  (optional)
#   D2T_INSTALL     how to get diff2test (default auto: release, else pip, else cargo):
#                   release: this version's release binary (D2T_RELEASE_URL: where the assets
#                   are, default the GitHub release v<version>), checked against its .sha256;
#                   pip: the wheel into a venv (D2T_PIP_SPEC: a wheel file or requirement,
#                   default diff2test==<version>); cargo: cargo install --locked --path <this
#                   repo> (compiles); skip: diff2test is on PATH
#   D2T_CTEST       the ctest command                                 (default ctest)
#   D2T_CTEST_ARGS  extra ctest arguments, split on whitespace (no quoting), e.g. "-j4 --output-on-failure"
#   D2T_PUSH_BEFORE the previous tip of a push (action.yml passes github.event.before)
#   D2T_MERGE_GROUP_BASE  a merge_group event's base_sha (action.yml passes it)
#   D2T_BASE_SNAPSHOT  --base-snapshot FILE: the base commit's snapshot (with a policy that
#                   sets build_config = "compare", CMake edits cost only what they change)
#   D2T_SNAPSHOT_OUT   write this build's snapshot (diff2test snapshot) to FILE, e.g. on the
#                   main branch, to upload as an artifact for later pull requests
#   D2T_RECORD      --record FILE: the base commit's record of its test run (a missing file
#                   is said in a notice and not passed)
#   D2T_RECORD_OUT  run the whole suite under strace (README's command line) and write its
#                   record (diff2test record) to FILE, e.g. on pushes to the main branch; no
#                   selection is made in such a run (the step fails when the suite does)
# GitHub's own variables used: GITHUB_EVENT_NAME, GITHUB_BASE_REF, GITHUB_EVENT_PATH,
# GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, RUNNER_TEMP.
#
# Base: D2T_BASE if set; else on pull_request(_target) origin/$GITHUB_BASE_REF with
# --merge-base (as the PR diff); else on push the previous tip of the branch. With no
# base (a new branch, another event, a previous tip missing from the clone) the whole
# suite runs and the summary says why.
#
# Hand-off, by diff2test's exit code:
#   0, 3  the selection (3: every test). Empty: no ctest run ("no test affected").
#         Every name must be in `ctest -N`'s catalogue. CTest >= 3.29:
#         ctest --tests-from-file LIST; older: ctest -R once per --format ctest-regex
#         line. Afterwards the tests ctest ran (its JUnit report) must include every
#         selected name: fewer fails the step; more (fixtures) is reported.
#   4     FULL_SUITE_REQUIRED: plain ctest with D2T_CTEST_ARGS (with a shard K/N: every Nth
#         test from test K, ctest -I K,,N).
#   5     setup error: the step fails with the reasons, nothing runs.
#   else  the step fails.
set -uo pipefail

prog=diff2test-action

# --- helpers ----------------------------------------------------------------------
# A workflow command's message: %, CR and LF are escaped as GitHub documents.
gh_escape() {
  local m=$1
  m=${m//'%'/%25}
  m=${m//$'\r'/%0D}
  m=${m//$'\n'/%0A}
  printf '%s' "$m"
}
error() { echo "::error::$(gh_escape "$*")"; }
warning() { echo "::warning::$(gh_escape "$*")"; }
notice() { echo "::notice::$(gh_escape "$*")"; }
die() {
  error "$prog: $*"
  summary_line ":x: **diff2test action failed**: $*"
  exit "${EXIT_CODE:-1}"
}
summary_line() {
  if [[ -n ${GITHUB_STEP_SUMMARY:-} ]]; then
    printf '%s\n\n' "$*" >>"$GITHUB_STEP_SUMMARY"
  fi
}
output() {
  if [[ -n ${GITHUB_OUTPUT:-} ]]; then
    printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"
  fi
}
# Prints the lines of file $1 that are not lines of file $2 (exact, byte-wise).
lines_not_in() {
  LC_ALL=C awk -v seen_file="$2" 'BEGIN { while ((getline l <seen_file) > 0) seen[l] = 1 } !($0 in seen)' "$1"
}

# --- inputs -----------------------------------------------------------------------
action_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
action_repo=$(cd "$action_dir/../../.." && pwd)

src=${D2T_SOURCE_DIR:-.}
build=${D2T_BUILD_DIR:-build}
[[ -d $src ]] || die "source-dir not found: $src"
[[ -d $build ]] || die "build-dir not found: $build (build the project before this step)"
src=$(cd "$src" && pwd)
build=$(cd "$build" && pwd)
ctest_json=${D2T_CTEST_JSON:-$build/ctest.json}
# Without a list, diff2test finds the dependency files in the build dir itself.
dep_args=()
[[ -n ${D2T_DEP_LIST:-} ]] && dep_args=(--dep-list "$D2T_DEP_LIST")
head=${D2T_HEAD:-HEAD}
merge_base=${D2T_MERGE_BASE:-auto}
format=${D2T_FORMAT:-names}
shard=${D2T_SHARD:-}
install=${D2T_INSTALL:-auto}
ctest_cmd=${D2T_CTEST:-ctest}
read -r -a ctest_args <<<"${D2T_CTEST_ARGS:-}"
if [[ -n ${D2T_CONFIG:-} ]]; then
  has_c=false
  for a in "${ctest_args[@]}"; do [[ $a == -C || $a == --build-config ]] && has_c=true; done
  $has_c || ctest_args=(-C "$D2T_CONFIG" "${ctest_args[@]}")
fi
case $merge_base in auto | true | false) ;; *) die "merge-base must be auto, true or false, not '$merge_base'" ;; esac
case $format in names | ctest-regex | json | markdown) ;; *) die "format must be names, ctest-regex, json or markdown, not '$format'" ;; esac
shard_k=1 shard_n=1
if [[ -n $shard ]]; then
  [[ $shard =~ ^([0-9]+)/([0-9]+)$ ]] || die "shard must be K/N (e.g. 2/4), not '$shard'"
  shard_k=${BASH_REMATCH[1]} shard_n=${BASH_REMATCH[2]}
fi

work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/diff2test.XXXXXX") || die "cannot create a work dir"
output summary-file "$work/summary.md"

# --- diff2test ----------------------------------------------------------------------
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_repo/Cargo.toml" | head -n1)
inst_root="${RUNNER_TEMP:-$work}/diff2test-install"
# The repository whose releases hold this action's binaries: the release-repository input;
# else the one the runner fetched this action from (GITHUB_ACTION_PATH is
# .../_actions/OWNER/REPO/REF/.github/actions/diff2test; github.action_repository is empty
# inside a composite action); else, for a local `uses: ./...` action, the workflow's own.
release_repository() {
  local path=${GITHUB_ACTION_PATH:-$action_dir}
  if [[ -n ${D2T_RELEASE_REPOSITORY:-} ]]; then
    printf '%s\n' "$D2T_RELEASE_REPOSITORY"
  elif [[ $path =~ /_actions/([^/]+)/([^/]+)/[^/]+/\.github/actions/diff2test/?$ ]]; then
    printf '%s/%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
  else
    printf '%s\n' "${GITHUB_REPOSITORY:-}"
  fi
}
# A released binary of this action's version: the archive and its checksum, checked.
install_release() {
  local arch target base archive
  arch=$(uname -m)
  case $arch in
    x86_64 | amd64) target=x86_64-unknown-linux-musl ;;
    aarch64 | arm64) target=aarch64-unknown-linux-musl ;;
    *) echo "no release binary for $(uname -s) $arch" >&2; return 1 ;;
  esac
  [[ $(uname -s) == Linux ]] || { echo "no release binary for $(uname -s)" >&2; return 1; }
  command -v curl >/dev/null 2>&1 || { echo "curl is not installed" >&2; return 1; }
  base=${D2T_RELEASE_URL:-${D2T_GITHUB_URL:-https://github.com}/$(release_repository)/releases/download/v$version}
  archive=diff2test-v$version-$target.tar.gz
  mkdir -p "$inst_root/release" || return 1
  curl -fsSL --retry 3 -o "$inst_root/release/$archive" "$base/$archive" \
    && curl -fsSL --retry 3 -o "$inst_root/release/$archive.sha256" "$base/$archive.sha256" || {
    echo "cannot download $base/$archive (and its .sha256)" >&2
    return 1
  }
  (cd "$inst_root/release" && sha256sum -c --status "$archive.sha256") || {
    echo "$archive does not match its checksum" >&2
    return 1
  }
  tar -xzf "$inst_root/release/$archive" -C "$inst_root/release" || return 1
  d2t_bin=$(find "$inst_root/release" -type f -name diff2test -perm -u+x | head -n1)
  [[ -n $d2t_bin ]]
}
# The wheel (pip install diff2test, or D2T_PIP_SPEC: a wheel file or requirement), in a venv.
install_pip() {
  command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed" >&2; return 1; }
  python3 -m venv "$inst_root/venv" >/dev/null 2>&1 || { echo "python3 -m venv failed (python3-venv missing?)" >&2; return 1; }
  "$inst_root/venv/bin/pip" install --quiet --disable-pip-version-check "${D2T_PIP_SPEC:-diff2test==$version}" || return 1
  d2t_bin=$inst_root/venv/bin/diff2test
}
# Compiles it (minutes, cold): cache ~/.cargo and the install root to make it seconds.
install_cargo() {
  command -v cargo >/dev/null 2>&1 || { echo "cargo needs a Rust toolchain (e.g. dtolnay/rust-toolchain@stable before this step)" >&2; return 1; }
  echo "::group::cargo install --locked --path $action_repo"
  cargo install --locked --quiet --path "$action_repo" --root "$inst_root" || { echo "::endgroup::"; return 1; }
  echo "::endgroup::"
  d2t_bin=$inst_root/bin/diff2test
}
d2t_bin=
case $install in
  skip)
    d2t_bin=$(command -v diff2test) || die "install: skip, but diff2test is not on PATH"
    ;;
  release) install_release || die "install: release failed (see above)" ;;
  pip) install_pip || die "install: pip failed (see above)" ;;
  cargo) install_cargo || die "install: cargo failed (see above)" ;;
  auto)
    # Without compiling when a release of this version exists; cargo only as the last resort.
    if install_release; then
      echo "$prog: installed the released diff2test $version binary" >&2
    elif install_pip; then
      echo "$prog: installed diff2test $version from its wheel" >&2
    else
      notice "no released diff2test $version binary or wheel could be installed: compiling it with cargo (cache ~/.cargo and $inst_root to make this fast)"
      install_cargo || die "install: auto found no release binary or wheel, and cargo failed (see above)"
    fi
    ;;
  *) die "install must be auto, release, pip, cargo or skip, not '$install'" ;;
esac
"$d2t_bin" --version >/dev/null 2>&1 || die "the installed diff2test ($d2t_bin) does not run"
output installed "$install"

# --- ctest --------------------------------------------------------------------------
ctest_version=$("$ctest_cmd" --version 2>/dev/null | sed -n 's/^ctest version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n1)
[[ -n $ctest_version ]] || die "cannot run '$ctest_cmd --version' (install CMake, or set the ctest input)"
read -r ctest_major ctest_minor <<<"$ctest_version"
ctest_at_least() { ((ctest_major > $1 || (ctest_major == $1 && ctest_minor >= $2))); }
ctest_full=$("$ctest_cmd" --version | head -n1)
# A 3.29 release candidate still read '#' lines as comments; 3.29.0 does not.
ctest_rc=false
[[ $ctest_full == *-rc* ]] && ctest_rc=true

# Runs ctest in the build dir; output to the log and to file $1.
run_ctest() {
  local log=$1
  shift
  (cd "$build" && "$ctest_cmd" "$@") 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}

# What ctest's JUnit reports $@ say: "RAN FAILED"; the failed names go to $work/failed.txt.
junit_counts() {
  local ran=0 f n
  : >"$work/failed.txt"
  for f in "$@"; do
    [[ -f $f ]] || continue
    n=$(grep -o '<testcase ' "$f" | wc -l | tr -d ' ')
    ran=$((ran + n))
    grep -o '<testcase name="[^"]*"[^>]*status="fail"' "$f" | sed -e 's/^<testcase name="//' -e 's/".*//' \
      -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&apos;/'/g" -e 's/&amp;/\&/g' >>"$work/failed.txt"
  done
  echo "$ran $(wc -l <"$work/failed.txt" | tr -d ' ')"
}
# The step summary's result line and the ran-count output, from the JUnit reports $@.
report_results() {
  local counts ran failed
  counts=$(junit_counts "$@")
  read -r ran failed <<<"$counts"
  output ran-count "$ran"
  if ((failed == 0)); then
    summary_line "ctest ran $ran test(s): all passed."
  else
    # shellcheck disable=SC2016 # the backquotes are markdown
    summary_line "ctest ran $ran test(s): $((ran - failed)) passed, $failed failed: $(sed 's/.*/`&`/' "$work/failed.txt" | tr '\n' ' ')"
  fi
}

# The whole suite, the usual way (exit 4, or no base). $1 says why. With a shard,
# each shard runs every Nth test by ctest's own numbering (ctest -I K,,N): the shards
# are disjoint and together the suite.
run_full_suite() {
  local stride=() j=() rc
  if ((shard_n > 1)); then
    stride=(-I "$shard_k,,$shard_n")
    notice "diff2test: $1; shard $shard_k/$shard_n runs every ${shard_n}th test of the whole suite from test $shard_k: ctest ${ctest_args[*]} ${stride[*]}"
  else
    notice "diff2test: $1; running the whole suite: ctest ${ctest_args[*]}"
  fi
  ctest_at_least 3 21 && j=(--output-junit "$work/junit-full.xml")
  run_ctest "$work/ctest-full.log" "${ctest_args[@]}" "${stride[@]}" "${j[@]}"
  rc=$?
  if ((${#j[@]})); then
    report_results "$work/junit-full.xml"
  else
    output ran-count "$(grep -Eo 'tests (passed|failed) out of [0-9]+' "$work/ctest-full.log" | grep -Eo '[0-9]+$' | tail -n1)"
  fi
  exit $rc
}

# --- base -------------------------------------------------------------------------
have_git=false
command -v git >/dev/null 2>&1 && have_git=true
is_shallow() {
  $have_git && [[ $(git -C "$src" rev-parse --is-shallow-repository 2>/dev/null) == true ]]
}
shallow_error() {
  EXIT_CODE=2 die "the checkout is a shallow clone, so the base revision or the merge base is missing. Check out with history: actions/checkout with 'fetch-depth: 0' (or enough history for the merge base; 'git fetch --unshallow' also works). $1"
}

# --- snapshot (optional): this build's fingerprints, for later --base-snapshot runs -----
if [[ -n ${D2T_SNAPSHOT_OUT:-} ]]; then
  snap_args=(snapshot --source-dir "$src" --build-dir "$build" --ctest-json "$ctest_json"
    "${dep_args[@]}" --output "$D2T_SNAPSHOT_OUT")
  [[ -n ${D2T_CONFIG:-} ]] && snap_args+=(--config "$D2T_CONFIG")
  [[ -n ${D2T_POLICY:-} ]] && snap_args+=(--policy "$D2T_POLICY")
  if "$d2t_bin" "${snap_args[@]}" 2>"$work/snapshot.err"; then
    echo "diff2test: wrote the build's snapshot to $D2T_SNAPSHOT_OUT"
    output snapshot-file "$D2T_SNAPSHOT_OUT"
  else
    echo "::warning::diff2test snapshot wrote nothing: $(head -n3 "$work/snapshot.err" | tr '\n' ' ')"
  fi
fi

# --- record (optional): the whole suite under strace, and its record ---------------------
if [[ -n ${D2T_RECORD_OUT:-} ]]; then
  if ! command -v strace >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
      apt-get install -y -qq strace >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq strace >/dev/null; }
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo -n apt-get install -y -qq strace >/dev/null 2>&1 || { sudo -n apt-get update -qq && sudo -n apt-get install -y -qq strace >/dev/null; }
    fi
  fi
  command -v strace >/dev/null 2>&1 || EXIT_CODE=2 die "record-out needs strace (apt-get install strace)"
  strace_log=$work/ctest.strace
  notice "diff2test: recording the whole suite's run under strace for $D2T_RECORD_OUT: ctest ${ctest_args[*]}"
  rec_start=$(date +%s)
  (cd "$build" && strace -f -y -s 4096 -e trace=%file,%process,getdents64,fchdir,io_uring_setup,open_by_handle_at,bind,connect -o "$strace_log" \
    "$ctest_cmd" "${ctest_args[@]}") 2>&1 | tee "$work/ctest-record.log"
  rc=${PIPESTATUS[0]}
  rec_args=(record --source-dir "$src" --build-dir "$build" --ctest-json "$ctest_json"
    --strace "$strace_log" --output "$D2T_RECORD_OUT")
  "$d2t_bin" "${rec_args[@]}" 2>"$work/record.err"
  rec_rc=$?
  cat "$work/record.err"
  if ((rec_rc == 0 || rec_rc == 3)); then
    output record-file "$D2T_RECORD_OUT"
    summary_line "diff2test: recorded the suite's run in $D2T_RECORD_OUT ($(head -n2 "$work/record.err" | tail -n1); $(($(date +%s) - rec_start)) s under strace)."
  else
    echo "::warning::diff2test record wrote nothing: $(head -n3 "$work/record.err" | tr '\n' ' ')"
  fi
  rm -f "$strace_log"
  output state RECORDED
  exit "$rc"
fi

base=${D2T_BASE:-}
no_base=""
if [[ -n $base ]]; then
  [[ $merge_base == auto ]] && merge_base=false
elif [[ -n ${GITHUB_BASE_REF:-} ]]; then
  base=origin/$GITHUB_BASE_REF
  [[ $merge_base == auto ]] && merge_base=true
elif [[ ${GITHUB_EVENT_NAME:-} == merge_group ]]; then
  # A merge queue's group: its commit is built on top of the base branch's tip.
  base=${D2T_MERGE_GROUP_BASE:-}
  [[ $merge_base == auto ]] && merge_base=false
  [[ -n $base ]] || no_base="the merge_group event names no base_sha"
elif [[ ${GITHUB_EVENT_NAME:-} == push ]]; then
  before=${D2T_PUSH_BEFORE:-}
  if [[ -z $before && -r ${GITHUB_EVENT_PATH:-} ]] && command -v jq >/dev/null 2>&1; then
    before=$(jq -r '.before // empty' "$GITHUB_EVENT_PATH" 2>/dev/null)
  fi
  [[ $merge_base == auto ]] && merge_base=false
  if [[ -z $before ]]; then
    no_base="the push event names no previous commit"
  elif [[ $before =~ ^0+$ ]]; then
    no_base="this push created the branch, so there is no previous commit to compare with"
  elif $have_git && ! git -C "$src" cat-file -e "$before^{commit}" 2>/dev/null; then
    is_shallow && shallow_error "The previous tip $before is not in the clone."
    no_base="the previous tip $before is not in the clone (a force push?)"
  else
    base=$before
  fi
else
  no_base="the '${GITHUB_EVENT_NAME:-local}' event has no base revision (set the base input)"
fi
if [[ -n $no_base ]]; then
  summary_line "**diff2test: not run** — $no_base: the whole suite runs."
  output state NO_BASE
  run_full_suite "$no_base"
fi

# --- select -------------------------------------------------------------------------
args=(--ci --source-dir "$src" --build-dir "$build" --ctest-json "$ctest_json" "${dep_args[@]}"
  --base "$base" --head "$head" --fail-on-setup-error)
if [[ $merge_base == true ]]; then args+=(--merge-base); else args+=(--no-merge-base); fi
[[ -n ${D2T_POLICY:-} ]] && args+=(--policy "$D2T_POLICY")
[[ -n ${D2T_CONFIG:-} ]] && args+=(--config "$D2T_CONFIG")
if [[ -n ${D2T_BASE_SNAPSHOT:-} ]]; then
  if [[ -f $D2T_BASE_SNAPSHOT ]]; then
    args+=(--base-snapshot "$D2T_BASE_SNAPSHOT")
  else
    # A cache miss (the base commit's main run saved none): CMake edits cost the whole suite.
    notice "diff2test: no base snapshot at $D2T_BASE_SNAPSHOT (not restored?): a CMake edit selects the whole suite"
  fi
fi
if [[ -n ${D2T_RECORD:-} ]]; then
  if [[ -f $D2T_RECORD ]]; then
    args+=(--record "$D2T_RECORD")
  else
    notice "diff2test: no record at $D2T_RECORD (not restored?): decided from the static evidence alone"
  fi
fi
[[ -n $shard ]] && args+=(--shard "$shard")

# d2t FORMAT OUTFILE: one run; stderr kept in OUTFILE.err; returns the exit code.
d2t() {
  "$d2t_bin" "${args[@]}" --format "$1" --output "$2" 2>"$2.err"
}
sel=$work/selected.txt
d2t names "$sel"
status=$?
d2t markdown "$work/summary.md"
md_status=$?
state=$(head -n1 "$sel.err")
echo "::group::diff2test: $state (exit $status)"
cat "$sel.err"
echo "::endgroup::"
output state "$state"
output exit-code "$status"
if [[ -n ${GITHUB_STEP_SUMMARY:-} && -f $work/summary.md ]]; then
  cat "$work/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
((md_status == status)) || die "diff2test gave exit $status for --format names but $md_status for --format markdown (the inputs changed between the runs?)"

if [[ $format == names ]]; then
  output selection-file "$sel"
elif [[ $format == markdown ]]; then
  output selection-file "$work/summary.md"
else
  d2t "$format" "$work/selection.$format"
  output selection-file "$work/selection.$format"
fi

case $status in
  0 | 3) ;;
  4)
    run_full_suite "diff2test: FULL_SUITE_REQUIRED (the test catalogue cannot be trusted)"
    ;;
  5)
    error "diff2test: SETUP_ERROR — the build evidence is missing or unusable, so no test was selected and none ran. Fix the setup (see the step summary for what to do):"
    grep '^reason ' "$sel.err" | while IFS= read -r line; do error "$line"; done
    exit 5
    ;;
  2)
    if grep -q 'shallow clone' "$sel.err" || { is_shallow && grep -qE 'does not resolve|merge base' "$sel.err"; }; then
      shallow_error "diff2test: $(grep -v '^USAGE_ERROR$' "$sel.err" | head -n3)"
    fi
    EXIT_CODE=2 die "diff2test: usage error: $(head -n5 "$sel.err")"
    ;;
  *)
    EXIT_CODE=$status die "diff2test failed with exit $status: $(head -n5 "$sel.err")"
    ;;
esac

# --- hand off the selection ----------------------------------------------------------
n_sel=$(wc -l <"$sel" | tr -d ' ')
output selected-count "$n_sel"
where=""
((shard_n > 1)) && where=" in shard $shard_k/$shard_n"
if ((n_sel == 0)); then
  # An existing empty --tests-from-file list runs no test, and an empty -R runs
  # every test: neither is asked. Nothing to run is a success.
  echo "diff2test: no test affected$where: ctest is not run"
  summary_line "No test affected$where: ctest was not run."
  output ran-count 0
  exit 0
fi

# (a) ctest ignores names it does not know: every selected name must be in its catalogue.
catalogue=$work/catalogue.txt
(cd "$build" && "$ctest_cmd" -N "${ctest_args[@]}") >"$work/ctest-N.log" 2>&1 ||
  die "ctest -N failed in $build: $(tail -n5 "$work/ctest-N.log")"
sed -n 's/^ *Test *#[0-9][0-9]*: //p' "$work/ctest-N.log" >"$catalogue"
unknown=$(lines_not_in "$sel" "$catalogue")
if [[ -n $unknown ]]; then
  die "$(printf '%s\n' "$unknown" | wc -l | tr -d ' ') selected test(s) are not in ctest's catalogue, so ctest would skip them silently (is ctest.json stale, or listed with another -C?): $(printf '%s\n' "$unknown" | head -n10 | tr '\n' ' ')"
fi

# CTest >= 3.29 reads the names from a file, exactly. A name it would read otherwise
# (surrounding blanks, a CR, or a leading '#' for a 3.29 release candidate) goes by -R.
use_list=false
if ctest_at_least 3 29; then
  use_list=true
  if LC_ALL=C grep -qE $'^[ \t]|[ \t\r]$' "$sel" || { $ctest_rc && grep -q '^#' "$sel"; }; then
    use_list=false
    notice "a selected name has surrounding blanks: handing the selection over with -R instead of --tests-from-file"
  fi
fi
extra=()
ctest_at_least 3 17 && extra+=(--no-tests=error)
junit=false
ctest_at_least 3 21 && junit=true

ctest_rc_all=0
calls=0
run_one() {
  calls=$((calls + 1))
  local j=()
  $junit && j=(--output-junit "$work/junit-$calls.xml")
  run_ctest "$work/ctest-$calls.log" "${ctest_args[@]}" "${extra[@]}" "${j[@]}" "$@"
  local rc=$?
  ((rc != 0 && ctest_rc_all == 0)) && ctest_rc_all=$rc
}
if $use_list; then
  echo "diff2test: running $n_sel selected test(s)$where with $ctest_full --tests-from-file"
  run_one --tests-from-file "$sel"
else
  regex=$work/selected.regex
  d2t ctest-regex "$regex"
  rx_status=$?
  ((rx_status == status)) || die "diff2test --format ctest-regex gave exit $rx_status (names gave $status): $(head -n3 "$regex.err")"
  echo "diff2test: running $n_sel selected test(s)$where with $ctest_full -R, $(wc -l <"$regex" | tr -d ' ') call(s)"
  while IFS= read -r re; do
    run_one -R "$re"
  done <"$regex"
fi

# (a), (c) What ran: the names in ctest's JUnit reports (or, before CTest 3.21, the
# count in its summary lines). Missing names fail; extra ones (fixtures) are reported.
ran=$work/ran.txt
: >"$ran"
total=0
for ((i = 1; i <= calls; i++)); do
  m=$(grep -Eo 'tests (passed|failed) out of [0-9]+' "$work/ctest-$i.log" | grep -Eo '[0-9]+$' | tail -n1)
  total=$((total + ${m:-0}))
  if $junit && [[ -f $work/junit-$i.xml ]]; then
    grep -o '<testcase name="[^"]*"' "$work/junit-$i.xml" | sed -e 's/^<testcase name="//' -e 's/"$//' \
      -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e "s/&apos;/'/g" -e 's/&amp;/\&/g' >>"$ran"
  fi
done
if $junit; then
  LC_ALL=C sort -u -o "$ran" "$ran"
  missing=$(lines_not_in "$sel" "$ran")
  more=$(lines_not_in "$ran" "$sel")
  n_ran=$(wc -l <"$ran" | tr -d ' ')
  if [[ -n $missing ]]; then
    die "ctest ran $n_ran test(s), and not these selected ones: $(printf '%s' "$missing" | tr '\n' ' ')"
  fi
  if [[ -n $more ]]; then
    warning "ctest ran $n_ran tests, $((n_ran - n_sel)) more than the $n_sel selected (fixtures it added): $(printf '%s' "$more" | tr '\n' ' ')"
    # shellcheck disable=SC2016 # the backquotes are markdown
    summary_line "ctest also ran (fixtures): $(printf '%s' "$more" | sed 's/.*/`&`/' | tr '\n' ' ')"
  fi
else
  n_ran=$total
  ((n_ran < n_sel)) && die "ctest ran $n_ran test(s), fewer than the $n_sel selected"
  ((n_ran > n_sel)) && warning "ctest ran $n_ran tests, more than the $n_sel selected (fixtures it added)"
fi
echo "diff2test: ctest ran $n_ran test(s) for $n_sel selected$where"
if $junit; then
  report_results "$work"/junit-*.xml
else
  output ran-count "$n_ran"
fi
exit "$ctest_rc_all"
