// SPDX-License-Identifier: MIT
//! Finds the directory of libhipacm at build time and bakes it into the crate.
//!
//! The crate loads the library at run time (`src/library.rs`) and does not
//! link it; this directory is the second place it looks, after
//! `$HIPACM_LIBRARY`. It comes from `HIPACM_LIB_DIR`; without it, from
//! `pkg-config --variable=libdir hipacm` when pkg-config knows hipacm; without
//! that, from the CMake build tree of this repository: `build/release`, then
//! `build/dev`, then any other `build/*` directory (sorted by name) that holds
//! `libhipacm.so.1` or `libhipacm.so`. Trees built with sanitizers are skipped
//! (an ASan/TSan-instrumented library cannot be loaded into a plain Rust
//! binary), and so are stale libraries that predate ABI 1.1. Finding none is
//! not an error: the run-time search then tries `$HIPACM_LIBRARY` and the
//! system loader only.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

const LIB_NAMES: [&str; 2] = ["libhipacm.so", "libhipacm.so.1"];

/// A symbol that ABI 1.1 added; a library without it predates the header
/// that this crate mirrors (a stale build tree).
const ABI_1_1_SYMBOL: &[u8] = b"hipacm_mode_config_init_sized\0";

fn library(dir: &Path) -> Option<PathBuf> {
    LIB_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file())
}

fn has_library(dir: &Path) -> bool {
    library(dir).is_some()
}

/// True when the library in `dir` exports the ABI 1.1 entry points.
fn is_abi_1_1(dir: &Path) -> bool {
    let bytes = match library(dir).and_then(|p| fs::read(p).ok()) {
        Some(bytes) => bytes,
        None => return false,
    };
    bytes
        .windows(ABI_1_1_SYMBOL.len())
        .any(|w| w == ABI_1_1_SYMBOL)
}

fn fail(message: &str) -> ! {
    eprintln!("{}", message);
    std::process::exit(1);
}

/// `pkg-config --variable=libdir hipacm`, when pkg-config is installed and knows hipacm.
fn pkg_config_libdir() -> Option<PathBuf> {
    let output = std::process::Command::new("pkg-config")
        .args(["--variable=libdir", "hipacm"])
        .output()
        .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    let dir = dir.trim();
    if output.status.success() && !dir.is_empty() {
        Some(PathBuf::from(dir))
    } else {
        None
    }
}

/// True when the CMake cache of `dir` says the tree was built with sanitizers.
fn is_sanitized(dir: &Path) -> bool {
    let cache = match fs::read_to_string(dir.join("CMakeCache.txt")) {
        Ok(text) => text,
        Err(_) => return false,
    };
    cache.lines().any(|line| {
        line.starts_with("HIPACM_SANITIZE:")
            && line
                .split_once('=')
                .map_or(false, |(_, v)| !v.trim().is_empty())
    })
}

fn find_in_build_tree(repo: &Path) -> Result<PathBuf, String> {
    let build = repo.join("build");
    let mut candidates = vec![build.join("release"), build.join("dev")];
    if let Ok(entries) = fs::read_dir(&build) {
        let mut others: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir() && !candidates.contains(p))
            .collect();
        others.sort();
        candidates.extend(others);
    }
    let mut skipped = Vec::new();
    for dir in &candidates {
        if !has_library(dir) {
            continue;
        }
        if is_sanitized(dir) {
            skipped.push(format!("{} (sanitizer build)", dir.display()));
            continue;
        }
        if !is_abi_1_1(dir) {
            skipped.push(format!("{} (stale: predates ABI 1.1)", dir.display()));
            continue;
        }
        return Ok(dir.clone());
    }
    let mut message = format!(
        "hipacm: no libhipacm.so.1 in {}/{{release,dev,*}}, HIPACM_LIB_DIR is unset and \
         pkg-config does not know hipacm; the crate will look only at $HIPACM_LIBRARY and \
         the system loader at run time",
        build.display()
    );
    if !skipped.is_empty() {
        message.push_str(&format!(" (skipped: {})", skipped.join(", ")));
    }
    Err(message)
}

/// Asks cargo to run this script again when the library in `dir` appears or changes.
fn watch(dir: &Path) {
    for name in LIB_NAMES.iter() {
        println!("cargo:rerun-if-changed={}", dir.join(name).display());
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HIPACM_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");

    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.join("..").join("..");
    let repo = fs::canonicalize(&repo).unwrap_or(repo);

    let found = match env::var_os("HIPACM_LIB_DIR") {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if !has_library(&dir) {
                fail(&format!(
                    "hipacm: HIPACM_LIB_DIR={} holds neither libhipacm.so.1 nor libhipacm.so",
                    dir.display()
                ));
            }
            if !is_abi_1_1(&dir) {
                fail(&format!(
                    "hipacm: the libhipacm in HIPACM_LIB_DIR={} predates ABI 1.1 \
                     (no hipacm_mode_config_init_sized); rebuild it",
                    dir.display()
                ));
            }
            Some((dir, "HIPACM_LIB_DIR"))
        }
        _ => match pkg_config_libdir() {
            Some(dir) if has_library(&dir) => Some((dir, "pkg-config")),
            _ => {
                let release = repo.join("build").join("release");
                watch(&release);
                match find_in_build_tree(&repo) {
                    Ok(dir) => Some((dir, "the repository's build tree")),
                    Err(message) => {
                        println!("cargo:warning={}", message);
                        None
                    }
                }
            }
        },
    };
    let (dir, source) = match found {
        Some((dir, source)) => (fs::canonicalize(&dir).unwrap_or(dir), source),
        None => (PathBuf::new(), "nowhere"),
    };
    if !dir.as_os_str().is_empty() {
        watch(&dir);
    }
    let dir = dir
        .to_str()
        .unwrap_or_else(|| fail(&format!("hipacm: {} is not UTF-8", dir.display())));
    // Always set, so that option-less env!() in the crate never reads rustc's own environment.
    println!("cargo:rustc-env=HIPACM_BUILD_LIB_DIR={}", dir);
    println!("cargo:rustc-env=HIPACM_BUILD_LIB_SOURCE={}", source);
    // For dependent crates' build scripts (DEP_HIPACM_LIB_DIR).
    println!("cargo:lib_dir={}", dir);
}
