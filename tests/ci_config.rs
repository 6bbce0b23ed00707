//! Issue 31, item 5: the repository's own CI on a hosted runner. A GitHub
//! runner is not root, so `.ci/run` cannot install what it misses there
//! unless sudo may: the workflow must install every package `.ci/run` looks
//! for, and `.ci/run` falls back to `sudo -n` (checked here statically; a
//! hosted run itself can only be checked on GitHub).

mod common;

use common::repo_root;

/// The Debian packages `.ci/run` installs when missing (`missing+=(pkg)`).
fn packages_ci_run_needs() -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let mut out: Vec<String> = text
        .match_indices("missing+=(")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest[..rest.find(')').unwrap()].to_owned()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_workflow_installs_everything_ci_run_needs() {
    let needs = packages_ci_run_needs();
    assert!(needs.len() >= 8, "{needs:?}");
    let wf = std::fs::read_to_string(repo_root().join(".github/workflows/ci.yml")).unwrap();
    let install = wf
        .lines()
        .find(|l| l.contains("sudo apt-get install") && l.contains("ninja-build"))
        .unwrap_or_else(|| panic!("ci.yml has no apt-get install line with ninja-build:\n{wf}"));
    let words: Vec<&str> = install.split_whitespace().collect();
    for p in &needs {
        assert!(
            words.contains(&p.as_str()),
            "ci.yml does not install {p}: {install}"
        );
    }
    let run = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    assert!(
        run.contains("sudo -n"),
        ".ci/run should use sudo -n when not root"
    );
}

/// Issue 36: the one strace command line is spelled the same wherever it is
/// documented or run (README, the contract, `record --help`, init's header,
/// the Action, the mutation suite, the floor measurement).
#[test]
fn the_strace_command_line_is_spelled_alike_everywhere() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let opts = diff2test::record::STRACE_OPTIONS;
    let line = format!("strace {opts} -o");
    for f in [
        "README.md",
        "SAFETY-CONTRACT.md",
        "src/cli.rs",
        "src/init.rs",
        ".github/actions/diff2test/run.sh",
        ".github/actions/diff2test/README.md",
    ] {
        let text = std::fs::read_to_string(root.join(f)).unwrap();
        assert!(text.contains(&line), "{f} does not spell `{line}`");
    }
    let suite = std::fs::read_to_string(root.join("mutation-suite/run")).unwrap();
    assert!(
        suite.contains(&format!("strace {opts} \\\n")),
        "mutation-suite/run"
    );
    let listed: Vec<String> = opts.split(' ').map(|a| format!("'{a}'")).collect();
    let floor = std::fs::read_to_string(root.join("bench/floor.py")).unwrap();
    assert!(
        floor.contains(&listed.join(", ")),
        "bench/floor.py does not list {listed:?}"
    );
}

/// Issue 37, item 7: the workflows hardened as actionlint and zizmor check
/// them (their CI job runs both; zizmor was clean here, actionlint cannot
/// be fetched on this machine): every action outside this repository is
/// pinned by a full commit id, every workflow grants no permission at the
/// top and each job only its own, no checkout keeps its token, and every
/// release archive and wheel gets a provenance attestation.
#[test]
fn the_workflows_pin_actions_grant_least_privilege_and_keep_no_credentials() {
    for name in ["ci.yml", "release.yml"] {
        let text =
            std::fs::read_to_string(repo_root().join(".github/workflows").join(name)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines.contains(&"permissions: {}"),
            "{name}: no top-level `permissions: {{}}`"
        );
        let mut jobs = 0;
        let mut in_jobs = false;
        for (i, l) in lines.iter().enumerate() {
            if *l == "jobs:" {
                in_jobs = true;
                continue;
            }
            // A job: two spaces, a name, a colon.
            let job = l.starts_with("  ") && !l.starts_with("   ") && !l.trim().starts_with('#');
            if in_jobs && job && l.trim_end().ends_with(':') {
                jobs += 1;
                let body: Vec<&&str> = lines[i + 1..]
                    .iter()
                    .take_while(|b| b.is_empty() || b.starts_with("   "))
                    .collect();
                assert!(
                    body.iter().any(|b| b.starts_with("    permissions:")),
                    "{name}: job {l} grants no permissions of its own"
                );
            }
            let Some(used) = l
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
            else {
                continue;
            };
            if used.starts_with("./") {
                continue;
            }
            let reference = used.split_whitespace().next().unwrap();
            let (_, at) = reference.split_once('@').unwrap();
            assert!(
                at.len() == 40 && at.bytes().all(|b| b.is_ascii_hexdigit()),
                "{name}:{}: {reference} is not pinned by commit",
                i + 1
            );
            assert!(
                used.contains(" # "),
                "{name}:{}: say which tag {reference} is",
                i + 1
            );
            if reference.starts_with("actions/checkout@") {
                let with: Vec<&&str> = lines[i + 1..].iter().take(4).collect();
                assert!(
                    with.iter()
                        .any(|w| w.trim() == "persist-credentials: false"),
                    "{name}:{}: a checkout that keeps its token",
                    i + 1
                );
            }
        }
        assert!(jobs >= 2, "{name}: {jobs} jobs found");
    }
    let release =
        std::fs::read_to_string(repo_root().join(".github/workflows/release.yml")).unwrap();
    assert_eq!(
        release.matches("actions/attest-build-provenance@").count(),
        2
    );
    let ci = std::fs::read_to_string(repo_root().join(".github/workflows/ci.yml")).unwrap();
    assert!(
        ci.contains("./actionlint") && ci.contains("zizmor\" --offline"),
        "{ci}"
    );
}
