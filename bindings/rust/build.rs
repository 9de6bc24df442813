// SPDX-License-Identifier: MIT
//! Links the crate against libhipacm.
//!
//! The library directory comes from `HIPACM_LIB_DIR`; without it, from the
//! CMake build tree of this repository: `build/release`, then `build/dev`,
//! then any other `build/*` directory (sorted by name) that holds
//! `libhipacm.so.1` or `libhipacm.so`. Trees built with sanitizers are
//! skipped (an ASan/TSan-instrumented library cannot be loaded into a plain
//! Rust binary), and so are stale libraries that predate ABI 1.1.
//!
//! Test, example and binary targets of this crate get an rpath to that
//! directory, so they run without `LD_LIBRARY_PATH`.

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
        "hipacm: cannot find libhipacm.so.1 or libhipacm.so in {}/{{release,dev,*}}.\n\
         Build the plugin first, e.g.\n    \
         cmake -S {repo} -B {repo}/build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo\n    \
         cmake --build {repo}/build/release --target hipacm hipacm-worker\n\
         or point HIPACM_LIB_DIR at the directory that holds libhipacm.so.1.",
        build.display(),
        repo = repo.display()
    );
    if !skipped.is_empty() {
        message.push_str(&format!("\nSkipped: {}", skipped.join(", ")));
    }
    Err(message)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=HIPACM_LIB_DIR");

    let manifest_dir =
        PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let repo = manifest_dir.join("..").join("..");
    let repo = fs::canonicalize(&repo).unwrap_or(repo);

    let dir = match env::var_os("HIPACM_LIB_DIR") {
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
            dir
        }
        _ => match find_in_build_tree(&repo) {
            Ok(dir) => dir,
            Err(message) => fail(&message),
        },
    };
    let dir = fs::canonicalize(&dir).unwrap_or(dir);

    // `-lhipacm` needs the development name libhipacm.so. A directory with
    // only the SONAME file (a runtime install) gets a link in OUT_DIR.
    let mut search = dir.clone();
    if !dir.join("libhipacm.so").is_file() {
        let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
        let link = out_dir.join("libhipacm.so");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(dir.join("libhipacm.so.1"), &link)
            .unwrap_or_else(|e| fail(&format!("hipacm: cannot create {}: {}", link.display(), e)));
        search = out_dir;
    }
    for name in LIB_NAMES.iter() {
        let path = dir.join(name);
        if path.is_file() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }

    println!("cargo:rustc-link-search=native={}", search.display());
    println!("cargo:rustc-link-lib=dylib=hipacm");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    // For dependent crates' build scripts (DEP_HIPACM_LIB_DIR), since link-arg does not propagate.
    println!("cargo:lib_dir={}", dir.display());
}
