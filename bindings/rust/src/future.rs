// SPDX-License-Identifier: MIT
//! Futures and kernels.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::raw::{c_char, c_void};
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::time::Duration;

use crate::callbacks::{FinalizeErrors, Slot};
use crate::error::{Error, Status};
use crate::ffi;
use crate::util::{cstr_lossy, cstr_str};

/// One compile's outcome: a counted reference to a `hipacm_future`.
///
/// Not a `std::future::Future`: it is never polled, but waited on
/// ([`wait`](CompileFuture::wait)) or collected
/// ([`result`](CompileFuture::result)) from any thread. (It was called
/// `Future`; that name remains as a deprecated alias.)
///
/// `Clone` adds a reference (`hipacm_future_retain`) and `Drop` releases it.
/// A future stays valid after its mode has exited. It is `Send + Sync`: any
/// thread may wait on it or collect it.
///
/// ```
/// use hipacm::{Config, Mode, Request, Status};
///
/// let mode = Mode::enter(Config::new().arch("gfx90a"))?;
/// let src = r#"extern "C" __global__ void fill(int* p) { p[threadIdx.x] = 3; }"#;
/// let future = mode.submit(&Request::new(src).key("fill"))?;
/// // Submitting the same key again is a dedup hit: the same compile.
/// assert_eq!(mode.submit(&Request::new(src).key("fill"))?, future);
/// let waiter = future.clone();
/// let done = std::thread::spawn(move || waiter.wait(None)).join().unwrap();
/// assert!(done && future.is_done());
/// assert_eq!(future.status(), Status::Success);
/// mode.exit()?;
/// assert_eq!(future.result()?.key(), "fill");
/// # Ok::<(), hipacm::Error>(())
/// ```
pub struct CompileFuture {
    raw: NonNull<ffi::hipacm_future>,
    /// Messages of failed finalize closures of this future's mode.
    errors: Option<Arc<FinalizeErrors>>,
    /// For `compile()`: the callback slot, freed after the last clone has
    /// released its handle (fields drop after `Drop::drop`).
    _slot: Option<Arc<Slot>>,
}

// SAFETY: the handle is reference counted by the plugin, and every hipacm
// function is thread-safe; the Arcs are Send + Sync.
unsafe impl Send for CompileFuture {}
unsafe impl Sync for CompileFuture {}

impl CompileFuture {
    /// Takes ownership of one reference.
    pub(crate) fn from_raw(
        raw: *mut ffi::hipacm_future,
        errors: Option<Arc<FinalizeErrors>>,
        slot: Option<Arc<Slot>>,
    ) -> Option<CompileFuture> {
        NonNull::new(raw).map(|raw| CompileFuture {
            raw,
            errors,
            _slot: slot,
        })
    }

    /// The raw handle, borrowed: it stays valid while `self` lives. Two
    /// futures with the same pointer are the same compile (a dedup hit).
    pub fn as_ptr(&self) -> *mut ffi::hipacm_future {
        self.raw.as_ptr()
    }

    /// Blocks until the compile is done, runs finalize or cleanup exactly
    /// once (on this thread, unless another thread got there first), and
    /// returns the kernel, or the failure with its status, key and log.
    pub fn result(&self) -> Result<Kernel<'_>, Error> {
        let mut kernel: *const ffi::hipacm_kernel = ptr::null();
        // SAFETY: a live handle; the kernel is owned by the future, which
        // `self` keeps alive for the borrow.
        unsafe {
            let status = ffi::hipacm_future_result(self.as_ptr(), &mut kernel);
            if status == ffi::HIPACM_SUCCESS && !kernel.is_null() {
                return Ok(Kernel::from_raw(kernel));
            }
            Err(self.error_for(status))
        }
    }

    /// The error of a finished, failed future.
    unsafe fn error_for(&self, status: ffi::hipacm_status) -> Error {
        let f = self.as_ptr();
        let mut message = cstr_lossy(ffi::hipacm_future_error_message(f)).into_owned();
        if status == ffi::HIPACM_ERROR_FINALIZE_FAILED {
            if let Some(why) = self.errors.as_ref().and_then(|e| e.get(f)) {
                message = format!(
                    "the finalize callback of '{}' failed: {}",
                    cstr_str(ffi::hipacm_future_key(f)),
                    why
                );
            }
        }
        Error::new(status, message).with_future(f)
    }

    /// Waits until the compile is done; `None` waits forever. Returns true
    /// once done (whatever the outcome), false on timeout. Never runs callbacks.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let ms = match timeout {
            None => -1,
            Some(d) => {
                // Round up so that a short positive timeout still waits.
                let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
                ms.min(i64::MAX as u128) as i64
            }
        };
        // SAFETY: a live handle.
        unsafe { ffi::hipacm_future_wait(self.as_ptr(), ms) == ffi::HIPACM_SUCCESS }
    }

    /// Non-blocking: [`Status::NotReady`] while pending, otherwise the
    /// outcome (a finalize failure shows once the callbacks have run).
    pub fn status(&self) -> Status {
        // SAFETY: a live handle.
        let raw = unsafe { ffi::hipacm_future_status(self.as_ptr()) };
        Status::from_raw(raw).unwrap_or(Status::Internal)
    }

    /// True once the compile has finished (callbacks may not have run yet).
    pub fn is_done(&self) -> bool {
        self.status() != Status::NotReady
    }

    /// The dedup key (the request's, or the content digest).
    pub fn key(&self) -> &str {
        // SAFETY: owned by the future, alive while `self` is.
        unsafe { cstr_str(ffi::hipacm_future_key(self.as_ptr())) }
    }

    /// The compiler log ("" until done).
    pub fn log(&self) -> Cow<'_, str> {
        // SAFETY: as above.
        unsafe { cstr_lossy(ffi::hipacm_future_log(self.as_ptr())) }
    }

    /// The failure's message ("" until done, and on success).
    pub fn error_message(&self) -> Cow<'_, str> {
        // SAFETY: as above.
        unsafe { cstr_lossy(ffi::hipacm_future_error_message(self.as_ptr())) }
    }
}

impl Clone for CompileFuture {
    fn clone(&self) -> CompileFuture {
        // SAFETY: a live handle; retaining cannot fail while we hold a reference.
        let status = unsafe { ffi::hipacm_future_retain(self.as_ptr()) };
        assert_eq!(
            status,
            ffi::HIPACM_SUCCESS,
            "hipacm_future_retain failed on a live future"
        );
        CompileFuture {
            raw: self.raw,
            errors: self.errors.clone(),
            _slot: self._slot.clone(),
        }
    }
}

impl Drop for CompileFuture {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe {
            ffi::hipacm_future_release(self.as_ptr());
        }
    }
}

impl PartialEq for CompileFuture {
    /// The same compile: dedup hits compare equal.
    fn eq(&self, other: &CompileFuture) -> bool {
        self.raw == other.raw
    }
}

impl Eq for CompileFuture {}

impl fmt::Debug for CompileFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompileFuture")
            .field("handle", &self.raw)
            .field("key", &self.key())
            .field("status", &self.status())
            .finish()
    }
}

/// A compiled kernel, borrowed from its [`CompileFuture`] (or, inside a finalize
/// closure, from the future being finalized).
///
/// ```
/// use hipacm::{CachePolicy, Config, Mode, Request};
///
/// let dir = std::env::temp_dir().join(format!("hipacm-doc-kernel-{}", std::process::id()));
/// let src = r#"extern "C" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }"#;
/// let mut served = Vec::new();
/// for _ in 0..2 {
///     let config = Config::new().arch("gfx90a").cache_dir(&dir).cache_policy(CachePolicy::ReadWrite);
///     let mode = Mode::enter(config)?;
///     let future = mode.submit(&Request::new(src))?;
///     mode.exit()?;
///     let kernel = future.result()?;
///     assert_eq!(u16::from_le_bytes([kernel.code()[18], kernel.code()[19]]), 224); // EM_AMDGPU
///     assert_eq!(kernel.function_names(), ["twice"]);
///     served.push(kernel.from_cache());
/// }
/// assert_eq!(served, [false, true]); // the second mode was served from the cache
/// std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), hipacm::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct Kernel<'a> {
    /// A raw pointer, not a reference: a plugin older than ABI 1.2 fills a
    /// shorter struct than this crate's `hipacm_kernel`.
    raw: NonNull<ffi::hipacm_kernel>,
    _owner: PhantomData<&'a ffi::hipacm_kernel>,
}

// SAFETY: the kernel is read-only once published, and its owner (the future)
// is itself Send + Sync and outlives 'a.
unsafe impl Send for Kernel<'_> {}
unsafe impl Sync for Kernel<'_> {}

/// `count` entries at `p` (NULL or empty reads as none).
///
/// # Safety
/// `p` is NULL or points to `count` values that live for `'a`.
unsafe fn array<'a, T>(p: *const T, count: usize) -> &'a [T] {
    if p.is_null() || count == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, count)
    }
}

/// `count` strings at `p` (NULL reads as none).
///
/// # Safety
/// As for [`array`], and each string as for [`cstr_str`].
unsafe fn c_strings<'a>(p: *const *const c_char, count: usize) -> Vec<&'a str> {
    array(p, count).iter().map(|&s| cstr_str(s)).collect()
}

impl<'a> Kernel<'a> {
    /// `raw`: a non-NULL kernel owned by a future that outlives `'a`.
    pub(crate) fn from_raw(raw: *const ffi::hipacm_kernel) -> Kernel<'a> {
        Kernel {
            raw: NonNull::new(raw as *mut ffi::hipacm_kernel).expect("non-NULL kernel"),
            _owner: PhantomData,
        }
    }

    /// The struct; `(*self.v1()).field` reads one field of version 1, which
    /// every plugin fills in, without referencing the whole struct.
    fn v1(&self) -> *const ffi::hipacm_kernel {
        self.raw.as_ptr()
    }

    /// The struct, when the plugin filled in version 2 (ABI 1.2) too.
    fn v2(&self) -> Option<&'a ffi::hipacm_kernel> {
        // SAFETY: struct_size lies in version 1; when it covers this crate's
        // whole struct, the struct is the plugin's and alive for 'a.
        unsafe {
            if (*self.v1()).struct_size >= size_of::<ffi::hipacm_kernel>() {
                Some(&*self.v1())
            } else {
                None
            }
        }
    }

    /// The code object: an AMDGPU ELF for gfx targets.
    pub fn code(&self) -> &'a [u8] {
        // SAFETY: code_size bytes owned by the future, alive for 'a.
        unsafe { array((*self.v1()).code as *const u8, (*self.v1()).code_size) }
    }

    /// The compiler log (may be empty).
    pub fn log(&self) -> Cow<'a, str> {
        // SAFETY: owned by the future, alive for 'a.
        unsafe { cstr_lossy((*self.v1()).log) }
    }

    /// The arch it was compiled for, e.g. "gfx90a".
    pub fn arch(&self) -> &'a str {
        // SAFETY: as above.
        unsafe { cstr_str((*self.v1()).arch) }
    }

    /// The dedup key.
    pub fn key(&self) -> &'a str {
        // SAFETY: as above.
        unsafe { cstr_str((*self.v1()).key) }
    }

    /// Lowered (mangled) names, in the order of the request's name expressions.
    pub fn lowered_names(&self) -> Vec<&'a str> {
        // SAFETY: num_lowered_names non-NULL strings owned by the future.
        unsafe { c_strings((*self.v1()).lowered_names, (*self.v1()).num_lowered_names) }
    }

    /// Wall time of the compile step itself, in seconds (the lookup's time
    /// when [`from_cache`](Kernel::from_cache)).
    pub fn compile_seconds(&self) -> f64 {
        // SAFETY: a field of version 1.
        unsafe { (*self.v1()).compile_seconds }
    }

    /// True when the code object came from the persistent cache: no compiler
    /// ran (ABI 1.2; false from an older plugin).
    pub fn from_cache(&self) -> bool {
        self.v2().map_or(false, |k| k.from_cache != 0)
    }

    /// Every kernel in the code object, sorted by name (ABI 1.2; empty from
    /// an older plugin).
    pub fn function_names(&self) -> Vec<&'a str> {
        // SAFETY: num_functions non-NULL strings owned by the future.
        self.v2().map_or_else(Vec::new, |k| unsafe {
            c_strings(k.function_names, k.num_functions)
        })
    }

    /// With [`Config::load_device`](crate::Config::load_device): the loaded
    /// module (a `hipModule_t` on AMD targets, a `CUmodule` on NVIDIA ones),
    /// owned by the future; never unload it yourself. Otherwise NULL.
    pub fn module(&self) -> *mut c_void {
        self.v2().map_or(ptr::null_mut(), |k| k.module)
    }

    /// With a loaded module: the resolved function of each of
    /// [`function_names`](Kernel::function_names), in that order. Otherwise
    /// NULL entries (or none, from a plugin older than ABI 1.2).
    pub fn functions(&self) -> Vec<*mut c_void> {
        // SAFETY: num_functions entries owned by the future.
        self.v2().map_or_else(Vec::new, |k| unsafe {
            array(k.functions, k.num_functions).to_vec()
        })
    }

    /// The raw struct, for hosts that pass it on to C. Its fields past
    /// version 1 are the plugin's only when `struct_size` covers them.
    pub fn as_raw(&self) -> &'a ffi::hipacm_kernel {
        // SAFETY: owned by the future, alive for 'a.
        unsafe { &*self.v1() }
    }
}

impl fmt::Debug for Kernel<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("key", &self.key())
            .field("arch", &self.arch())
            .field("code_size", &self.code().len())
            .field("lowered_names", &self.lowered_names())
            .field("compile_seconds", &self.compile_seconds())
            .finish()
    }
}
