// SPDX-License-Identifier: MIT
//! Shared by the integration tests. Each tests/*.rs file is its own process,
//! and the tests inside one run on parallel threads; the plugin has one
//! process-wide mode slot, so every test that touches it holds `serial()`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use hipacm::{Config, Error, Kernel, Request};

pub const ARCH: &str = "gfx90a";

static SERIAL: Mutex<()> = Mutex::new(());

/// Serializes the tests of one binary (a panicking test poisons nothing).
pub fn serial() -> MutexGuard<'static, ()> {
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        !hipacm::active_mode_is_set(),
        "a previous test left the mode slot set"
    );
    guard
}

pub fn config() -> Config {
    Config::new().arch(ARCH).max_workers(2)
}

pub fn vadd_source(name: &str) -> String {
    format!(
        "extern \"C\" __global__ void {}(float* a, const float* b, int n) {{\n\
         \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
         \x20 if (i < n) a[i] += b[i];\n\
         }}\n",
        name
    )
}

/// Triton's seed scenario: a compile-time assertion that fails.
pub const STATIC_ASSERT_SOURCE: &str =
    "template <int X> struct check { static_assert(X == 2, \"hipacm seed: X must be 2\"); };\n\
     extern \"C\" __global__ void seed(int* p) { check<1> c; (void)c; p[0] = 1; }\n";

pub const TEMPLATED_SOURCE: &str =
    "template <typename T> __global__ void scale(T* x, T a, int n) {\n\
     \x20 int i = blockIdx.x * blockDim.x + threadIdx.x;\n\
     \x20 if (i < n) x[i] *= a;\n\
     }\n";

/// An AMDGPU ELF: magic, 64-bit, little-endian, e_machine EM_AMDGPU (224).
pub fn assert_amdgpu_elf(code: &[u8]) {
    assert!(
        code.len() > 64,
        "code object too small: {} bytes",
        code.len()
    );
    assert_eq!(&code[..4], b"\x7fELF");
    assert_eq!(code[4], 2, "ELFCLASS64");
    assert_eq!(code[5], 1, "little-endian");
    let e_machine = u16::from_le_bytes([code[18], code[19]]);
    assert_eq!(e_machine, 224, "EM_AMDGPU");
}

/// Counts drops of a value captured by a closure.
pub struct DropCounter(pub Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What the closures given to requests through it did: how often finalize
/// and cleanup ran, and how many of the closures were dropped. Clones share
/// the counts.
#[derive(Clone, Default)]
pub struct Tally {
    finalized: Arc<AtomicUsize>,
    cleaned: Arc<AtomicUsize>,
    dropped: Arc<AtomicUsize>,
}

impl Tally {
    pub fn new() -> Tally {
        Tally::default()
    }

    /// `request` with a finalize closure that returns `check(kernel)` and
    /// is counted when it runs and when it is dropped.
    pub fn finalize_checking<F>(&self, request: Request, check: F) -> Request
    where
        F: FnOnce(&Kernel<'_>) -> Result<(), String> + Send + 'static,
    {
        let (calls, guard) = (self.finalized.clone(), DropCounter(self.dropped.clone()));
        request.finalize(move |kernel| {
            let _keep = &guard;
            let outcome = check(kernel);
            calls.fetch_add(1, Ordering::SeqCst);
            outcome
        })
    }

    /// `request` with a counted finalize closure that succeeds.
    pub fn finalize(&self, request: Request) -> Request {
        self.finalize_checking(request, |_| Ok(()))
    }

    /// `request` with a cleanup closure that runs `check(error)` and is
    /// counted when it runs and when it is dropped.
    pub fn cleanup_checking<F>(&self, request: Request, check: F) -> Request
    where
        F: FnOnce(&Error) + Send + 'static,
    {
        let (calls, guard) = (self.cleaned.clone(), DropCounter(self.dropped.clone()));
        request.cleanup(move |error| {
            let _keep = &guard;
            check(error);
            calls.fetch_add(1, Ordering::SeqCst);
        })
    }

    /// `request` with a counted cleanup closure.
    pub fn cleanup(&self, request: Request) -> Request {
        self.cleanup_checking(request, |_| {})
    }

    /// `request` with both counted closures.
    pub fn both(&self, request: Request) -> Request {
        self.cleanup(self.finalize(request))
    }

    pub fn finalized(&self) -> usize {
        self.finalized.load(Ordering::SeqCst)
    }

    pub fn cleaned(&self) -> usize {
        self.cleaned.load(Ordering::SeqCst)
    }

    pub fn dropped(&self) -> usize {
        self.dropped.load(Ordering::SeqCst)
    }

    /// (finalize runs, cleanup runs, closures dropped).
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.finalized(), self.cleaned(), self.dropped())
    }
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("hipacm-rust-{}-{}", std::process::id(), name));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
