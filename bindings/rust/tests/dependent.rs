// SPDX-License-Identifier: MIT
//! A crate that depends on this one (tests/rust_dependent in the repository)
//! is built with cargo and run with neither `LD_LIBRARY_PATH` nor
//! `$HIPACM_LIBRARY`: the library is found at run time where build.rs found
//! it (HIPACM_LIB_DIR or the build tree; in a second build, pkg-config).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the dependent crate into `target_dir` with `env` set (a `None`
/// value removes the variable) and returns its binary.
fn build_dependent(target_dir: &Path, env: &[(&str, Option<&OsStr>)]) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--offline", "--quiet", "--manifest-path"])
        .arg(repo().join("tests/rust_dependent/Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("HIPACM_LIBRARY");
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let output = command.output().expect("run cargo");
    assert!(
        output.status.success(),
        "cargo build of the dependent crate failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let binary = target_dir.join("debug/hipacm-dependent");
    assert!(binary.is_file(), "{} was not built", binary.display());
    binary
}

/// Runs the dependent binary without LD_LIBRARY_PATH, with `library` as
/// `$HIPACM_LIBRARY` (or without it).
fn run_dependent(binary: &Path, library: Option<&str>) -> Output {
    let mut command = Command::new(binary);
    command
        .arg("gfx90a")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("HIPACM_LIBRARY");
    if let Some(library) = library {
        command.env("HIPACM_LIBRARY", library);
    }
    command.output().expect("run the dependent binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The `library: ...` line the dependent prints.
fn loaded_library(output: &Output) -> PathBuf {
    let stdout = text(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("library: "))
        .unwrap_or_else(|| panic!("no library line in {:?}", stdout));
    PathBuf::from(line)
}

fn assert_compiled(output: &Output) {
    assert!(
        output.status.success(),
        "the dependent failed: {:?}\nstdout: {}\nstderr: {}",
        output.status,
        text(&output.stdout),
        text(&output.stderr)
    );
    assert!(
        text(&output.stdout).contains("compiled axpy for gfx90a"),
        "{}",
        text(&output.stdout)
    );
}

#[test]
fn a_dependent_binary_finds_the_library_built_against() {
    let binary = build_dependent(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("dependent"),
        &[],
    );
    let output = run_dependent(&binary, None);
    assert_compiled(&output);
    // This crate's own build found the same directory.
    let ours = hipacm::library_path().expect("loaded");
    assert_eq!(
        std::fs::canonicalize(loaded_library(&output)).unwrap(),
        std::fs::canonicalize(&ours).unwrap()
    );

    // An explicit library that is not there is a clear error, never a panic
    // and never silently another library.
    let output = run_dependent(&binary, Some("/nonexistent/libhipacm.so.1"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("$HIPACM_LIBRARY (/nonexistent/libhipacm.so.1)"),
        "{}",
        stderr
    );
    assert!(
        stderr.contains("HIPACM_ERROR_BACKEND_UNAVAILABLE"),
        "{}",
        stderr
    );
    assert!(!stderr.contains("panicked"), "{}", stderr);

    // And an explicit one that is there is used.
    let output = run_dependent(&binary, Some(ours.to_str().expect("UTF-8 path")));
    assert_compiled(&output);
    assert_eq!(loaded_library(&output), ours);
}

#[test]
fn a_dependent_built_with_pkg_config_loads_from_its_libdir() {
    if Command::new("pkg-config")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("pkg-config is not installed: the pkg-config build is not tested");
        return;
    }
    let ours = hipacm::library_path().expect("loaded");
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pkg-config-prefix");
    let _ = std::fs::remove_dir_all(&root);
    let libdir = root.join("lib");
    let pcdir = root.join("pkgconfig");
    std::fs::create_dir_all(&libdir).unwrap();
    std::fs::create_dir_all(&pcdir).unwrap();
    // A libdir of its own, so the test can tell that pkg-config chose it.
    std::os::unix::fs::symlink(&ours, libdir.join("libhipacm.so.1")).unwrap();
    std::fs::write(
        pcdir.join("hipacm.pc"),
        format!(
            "prefix={}\nlibdir=${{prefix}}/lib\nincludedir=${{prefix}}/include\n\n\
             Name: hipacm\nDescription: test\nVersion: 0.1.0\nLibs: -L${{libdir}} -lhipacm\n",
            root.display()
        ),
    )
    .unwrap();
    let binary = build_dependent(
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("dependent-pkg-config"),
        &[
            ("HIPACM_LIB_DIR", None),
            ("PKG_CONFIG_PATH", Some(pcdir.as_os_str())),
        ],
    );
    let output = run_dependent(&binary, None);
    assert_compiled(&output);
    assert_eq!(loaded_library(&output), libdir.join("libhipacm.so.1"));
}
