// SPDX-License-Identifier: MIT
//! Safe Rust bindings to **libhipacm**, the asynchronous HIP kernel-compile
//! plugin (`include/hipacm/hipacm.h`).
//!
//! Enter the process-wide async compile [`Mode`], [`submit`](Mode::submit)
//! [`Request`]s while your program warms up, and collect
//! [`CompileFuture`]s. The mode is a guard: dropping it (also while a panic
//! unwinds) exits the mode, so the slot can never stay set. A compile failure
//! that only the drop sees goes to the log callback (see
//! [`set_log_callback`]), or where none is set, to stderr as the plugin's own
//! log lines do.
//!
//! ```
//! use hipacm::{Config, Mode, Request};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // $HIPACM_ARCH, or name the target; no GPU is needed to compile.
//! let arch = std::env::var("HIPACM_ARCH").unwrap_or_else(|_| "gfx90a".to_string());
//! let mode = Mode::enter(Config::new().arch(arch.as_str()))?;
//! let f = mode.submit(&Request::new("extern \"C\" __global__ void k(int* p) { *p = 1; }"))?;
//! mode.exit()?; // the first compile failure, if any
//! let kernel = f.result()?;
//! assert!(kernel.code().starts_with(b"\x7fELF"));
//! assert_eq!(kernel.arch(), arch);
//! # Ok(())
//! # }
//! ```
//!
//! Finalize and cleanup closures are `FnOnce + Send + 'static`: they run once,
//! on whichever thread collects the future, and a panic inside one is caught
//! at the C boundary (a finalize panic becomes
//! [`Status::FinalizeFailed`]). Every closure is dropped exactly once, also
//! when the plugin never attached it because the submit was a dedup hit.
//!
//! Observability (ABI 1.4): [`stats`] reads the plugin's process-wide
//! counters, and [`set_log_callback`] sends its log events to a closure
//! instead of stderr.
//!
//! Loading: the crate does not link libhipacm; it loads `libhipacm.so.1`
//! at run time, on first use, from `$HIPACM_LIBRARY` (a file), else the
//! directory that `build.rs` found (`HIPACM_LIB_DIR`, else pkg-config's
//! `hipacm` libdir, else this repository's CMake build tree), else wherever
//! the system loader finds it. A binary that depends on the crate needs no
//! rpath or `LD_LIBRARY_PATH`. When nothing loads, the calls that need the
//! plugin fail with [`Status::BackendUnavailable`] and a message naming
//! every place tried; [`library_path`] says which file was loaded.

#![deny(missing_docs)]

mod callbacks;
mod error;
// The raw mirror of hipacm.h: each item is documented once, in the header
// (include/hipacm/hipacm.h) and docs/ABI.md, not again here.
#[allow(missing_docs)]
pub mod ffi;
mod future;
mod library;
mod log;
mod mode;
mod request;
mod stats;
mod util;

use std::mem::size_of;
use std::ptr;

pub use crate::error::{CompileError, Error, Status};
pub use crate::future::{CompileFuture, Kernel};
pub use crate::library::library_path;
pub use crate::log::{reset_log_callback, set_log_callback, LogLevel};
pub use crate::mode::{CachePolicy, Config, Isolation, Mode};
pub use crate::request::Request;
pub use crate::stats::{stats, Stats};

/// The old name of [`CompileFuture`], kept so that code written against it
/// still builds. It is deprecated because `hipacm::Future` next to
/// `std::future::Future` reads as an `async` future, which it is not: a
/// `CompileFuture` is waited on with [`CompileFuture::wait`] or
/// [`CompileFuture::result`], never polled.
///
/// ```
/// # #![allow(deprecated)]
/// use hipacm::Request;
///
/// let src = r#"extern "C" __global__ void old(int* p) { *p = 1; }"#;
/// let f: hipacm::Future = hipacm::compile(&Request::new(src), Some("gfx90a"))?;
/// let same: hipacm::CompileFuture = f; // one type, two names
/// assert!(same.result().is_ok());
/// # Ok::<(), hipacm::Error>(())
/// ```
#[deprecated(note = "renamed `CompileFuture`: `Future` shadowed `std::future::Future`")]
pub type Future = CompileFuture;

use crate::callbacks::{FinalizeErrors, Slot};
use crate::util::{c_string, cstr_lossy};

/// Compiles synchronously, without a mode, on the calling thread.
///
/// `arch`: `None` means `$HIPACM_ARCH`, otherwise the device's. Returns a
/// finished future whenever the plugin accepted the request, **also when the
/// compile failed**: [`CompileFuture::result`] then returns the failure, and
/// that is also when the request's finalize or cleanup closure runs. `Err`
/// means the request itself was rejected (bad arguments, unknown arch, no
/// backend, no libhipacm).
///
/// ```
/// use hipacm::{Request, Status};
///
/// let good = Request::new(r#"extern "C" __global__ void one(int* p) { *p = 1; }"#);
/// let kernel = hipacm::compile(&good, Some("gfx90a"))?;
/// let code = kernel.result()?.code().to_vec();
/// assert_eq!(u16::from_le_bytes([code[18], code[19]]), 224); // EM_AMDGPU
///
/// let bad = Request::new(r#"extern "C" __global__ void two(int* p) { *p = nope; }"#);
/// let failed = hipacm::compile(&bad, Some("gfx90a"))?; // accepted ...
/// let error = failed.result().unwrap_err(); // ... and failed
/// assert_eq!(error.status(), Status::Compilation);
/// assert!(error.log().unwrap_or("").contains("nope"));
/// # Ok::<(), hipacm::Error>(())
/// ```
pub fn compile(request: &Request, arch: Option<&str>) -> Result<CompileFuture, Error> {
    crate::library::load()?;
    let c_request = request.to_c()?;
    let arch = match arch {
        Some(a) => Some(c_string(a, "arch")?),
        None => None,
    };
    let mut req = c_request.raw();
    let errors = std::sync::Arc::new(FinalizeErrors::default());
    let slot = request
        .take_callbacks()
        .map(|callbacks| Slot::new(callbacks, errors.clone()));
    if let Some(slot) = &slot {
        slot.attach(&mut req);
    }
    let mut out: *mut ffi::hipacm_future = ptr::null_mut();
    // SAFETY: req, arch and the slot outlive the call.
    let status = unsafe {
        ffi::hipacm_compile(
            &req,
            arch.as_ref().map_or(ptr::null(), |a| a.as_ptr()),
            &mut out,
        )
    };
    if out.is_null() {
        let mut error = Error::last(status);
        if status == ffi::HIPACM_SUCCESS {
            error = Error::new(
                ffi::HIPACM_ERROR_INTERNAL,
                "hipacm_compile returned no future",
            );
        }
        if let Some(slot) = slot {
            slot.discard();
        }
        return Err(error);
    }
    // The future's callbacks run at its first result(); the slot lives until
    // the last clone of the future has released its handle.
    Ok(CompileFuture::from_raw(out, Some(errors), slot).expect("non-NULL future"))
}

/// True while some mode is active in this process (`hipacm_active_mode() != NULL`);
/// false when libhipacm cannot be loaded.
pub fn active_mode_is_set() -> bool {
    // SAFETY: no arguments; an acquire load.
    unsafe { !ffi::hipacm_active_mode().is_null() }
}

/// What the plugin found: the compiler, its version and library, the default arch.
/// Newer plugins may report more, so the struct cannot be built outside this crate.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackendInfo {
    /// True when hipRTC could be loaded.
    pub available: bool,
    /// e.g. "hiprtc".
    pub compiler: String,
    /// e.g. "9.0"; empty when unavailable.
    pub version: String,
    /// The library that was loaded.
    pub library_path: String,
    /// `$HIPACM_ARCH` or the device's; empty if none.
    pub default_arch: String,
    /// Why the backend is unavailable (`hipacm_last_error_message`), if it is.
    pub error: Option<String>,
}

/// Asks the plugin which compiler it can load. Never fails: an unavailable
/// backend (or an unloadable libhipacm) is `available == false` with the
/// reason in `error`.
pub fn backend_info() -> BackendInfo {
    if let Err(e) = crate::library::load() {
        return BackendInfo {
            available: false,
            compiler: String::new(),
            version: String::new(),
            library_path: String::new(),
            default_arch: String::new(),
            error: Some(e.message().to_string()),
        };
    }
    let mut info = ffi::hipacm_backend_info {
        struct_size: size_of::<ffi::hipacm_backend_info>(),
        available: 0,
        compiler: ptr::null(),
        version: ptr::null(),
        library_path: ptr::null(),
        default_arch: ptr::null(),
    };
    // SAFETY: struct_size is set; the strings live until the plugin is unloaded.
    let status = unsafe { ffi::hipacm_get_backend_info(&mut info) };
    let error = if status == ffi::HIPACM_SUCCESS {
        None
    } else {
        Some(Error::last(status).message().to_string())
    };
    // SAFETY: as above (NULL reads as "").
    unsafe {
        BackendInfo {
            available: info.available != 0,
            compiler: cstr_lossy(info.compiler).into_owned(),
            version: cstr_lossy(info.version).into_owned(),
            library_path: cstr_lossy(info.library_path).into_owned(),
            default_arch: cstr_lossy(info.default_arch).into_owned(),
            error,
        }
    }
}

/// The loaded plugin's release version (`hipacm_provider.version`), e.g.
/// "0.1.0"; empty when libhipacm cannot be loaded.
pub fn plugin_version() -> String {
    // A plugin older than ABI 1.3 answers only the plain major number.
    let requests = [ffi::HIPACM_ABI_VERSION, ffi::HIPACM_ABI_VERSION_MAJOR];
    // SAFETY: a static table owned by the plugin, or NULL.
    let provider = requests
        .iter()
        .find_map(|&request| unsafe { ffi::hipacm_get_provider(request).as_ref() });
    // SAFETY: the version string lives as long as the table.
    provider.map_or_else(String::new, |p| unsafe {
        cstr_lossy(p.version).into_owned()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn version_and_backend_info() {
        assert_eq!(super::plugin_version(), "0.1.0");
        let info = super::backend_info();
        assert_eq!(info.compiler, "hiprtc");
        assert_eq!(info.available, info.error.is_none());
    }

    #[test]
    fn api_types_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<super::Mode>();
        check::<super::CompileFuture>();
        check::<super::Kernel<'static>>();
        check::<super::Request>();
        check::<super::Error>();
        check::<super::CompileError>();
    }
}
