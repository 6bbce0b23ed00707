//! Issue 31, item 1: the Python wheel. maturin (`bindings = "bin"`, pyproject.toml)
//! builds a wheel of this crate; a fresh venv's `pip install <the wheel>` gives a
//! `diff2test` that runs a real selection on the fixture, as the binary does.
//!
//! Needs python3 with venv (Debian: python3-venv) and PyPI, where maturin comes from
//! (installed once into target/wheel-tools). The wheel is built with the dev profile,
//! which reuses the test build (the release workflow builds the dist profile).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn python_ok(venv: &Path) -> bool {
    venv.join("bin/python").exists()
}

/// maturin in `target/wheel-tools` (made once).
fn maturin() -> PathBuf {
    require("tests/wheel.rs", &[("python3", "python3"), ("git", "git")]);
    let tools = repo_root().join("target/wheel-tools");
    let bin = tools.join("bin/maturin");
    if !bin.exists() {
        if !python_ok(&tools) {
            let ok = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&tools)
                .status()
                .is_ok_and(|s| s.success());
            assert!(
                ok,
                "python3 -m venv failed: install python3-venv (apt-get install python3-venv)"
            );
        }
        run_ok(Command::new(tools.join("bin/pip")).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "maturin>=1.5,<2",
        ]));
    }
    bin
}

/// Builds the wheel into `out`; returns its path.
pub fn build_wheel(out: &Path) -> PathBuf {
    let maturin = maturin();
    run_ok(
        Command::new(maturin)
            .current_dir(repo_root())
            .args([
                "build",
                "--quiet",
                "--profile",
                "dev",
                "--compatibility",
                "linux",
                "--out",
            ])
            .arg(out),
    );
    let wheels: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(
        wheels.len(),
        1,
        "one wheel expected in {}: {wheels:?}",
        out.display()
    );
    wheels[0].clone()
}

#[test]
fn a_fresh_venv_installs_the_wheel_and_its_diff2test_selects() {
    let dir = scratch_dir("d2t-wheel-");
    let wheel = build_wheel(&dir.path().join("dist"));
    let name = wheel.file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with(&format!(
            "diff2test-{}-py3-none-",
            env!("CARGO_PKG_VERSION")
        )),
        "{name}"
    );
    let venv = dir.path().join("venv");
    run_ok(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run_ok(
        Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-index",
            ])
            .arg(&wheel),
    );
    let exe = venv.join("bin/diff2test");
    let v = Command::new(&exe).arg("--version").output().unwrap();
    assert!(v.status.success());
    assert!(
        String::from_utf8_lossy(&v.stdout).contains(env!("CARGO_PKG_VERSION")),
        "{v:?}"
    );
    // A real selection, as the binary of this build makes it.
    let b = shared();
    let mut args = b.base_args();
    args.extend(["--changed".into(), "libs/core/include/core/core.hpp".into()]);
    let out = Command::new(&exe).args(&args).output().unwrap();
    let expect = run_bin(&args, None);
    assert_eq!(out.status.code(), Some(expect.code));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expect.stdout);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .collect::<Vec<_>>(),
        CORE_SELECTED
    );
}
