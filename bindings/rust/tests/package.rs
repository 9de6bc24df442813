// SPDX-License-Identifier: MIT
//! The crate's package metadata: a licence that matches the repository's
//! LICENSE, and the files a `cargo package` would ship with it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `key = "value"` lines of Cargo.toml's `[package]` table, in order.
fn package_fields() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(crate_dir().join("Cargo.toml")).expect("Cargo.toml");
    let mut in_package = false;
    let mut fields = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package && !line.starts_with('#') {
            if let Some((key, value)) = line.split_once('=') {
                let value = value.trim().trim_matches('"');
                fields.push((key.trim().to_string(), value.to_string()));
            }
        }
    }
    fields
}

fn field(name: &str) -> Option<String> {
    package_fields()
        .into_iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

#[test]
fn the_licence_is_declared_and_is_the_repositorys() {
    assert_eq!(
        field("license").as_deref(),
        Some("MIT"),
        "Cargo.toml's license"
    );
    let root = std::fs::read(crate_dir().join("../../LICENSE")).expect("the repository's LICENSE");
    let here = std::fs::read(crate_dir().join("LICENSE")).expect("the crate's LICENSE");
    assert_eq!(here, root, "the crate's LICENSE is not the repository's");
    assert!(
        root.starts_with(b"MIT License\n"),
        "the repository's LICENSE is no longer MIT: the license field must follow it"
    );
}

#[test]
fn the_metadata_crates_io_asks_for_is_set() {
    for name in ["description", "rust-version", "readme"] {
        let value = field(name).unwrap_or_default();
        assert!(!value.is_empty(), "Cargo.toml has no {}", name);
    }
    assert!(crate_dir().join(field("readme").unwrap()).is_file());
}

#[test]
fn a_package_ships_the_licence_and_the_readme() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // Its own target dir: this test's `cargo test` holds the crate's.
    let target: PathBuf =
        std::env::temp_dir().join(format!("hipacm-rust-package-{}", std::process::id()));
    let output = Command::new(cargo)
        .args([
            "package",
            "--offline",
            "--no-verify",
            "--allow-dirty",
            "--list",
        ])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(crate_dir())
        .output()
        .expect("run cargo package");
    let _ = std::fs::remove_dir_all(&target);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cargo package --list failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let files: Vec<&str> = stdout.lines().collect();
    for wanted in [
        "LICENSE",
        "README.md",
        "Cargo.toml",
        "build.rs",
        "src/lib.rs",
    ] {
        assert!(
            files.contains(&wanted),
            "{} not packaged: {:?}",
            wanted,
            files
        );
    }
}
