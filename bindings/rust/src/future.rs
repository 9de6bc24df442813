//! Futures and kernels.

use std::borrow::Cow;
use std::fmt;
use std::ptr::{self, NonNull};
use std::sync::Arc;
use std::time::Duration;

use crate::callbacks::{FinalizeErrors, Slot};
use crate::error::{Error, Status};
use crate::ffi;
use crate::util::{cstr_lossy, cstr_str};

/// One compile's outcome: a counted reference to a `hipacm_future`.
///
/// `Clone` adds a reference (`hipacm_future_retain`) and `Drop` releases it.
/// A future stays valid after its mode has exited. It is `Send + Sync`: any
/// thread may wait on it or collect it.
pub struct Future {
    raw: NonNull<ffi::hipacm_future>,
    /// Messages of failed finalize closures of this future's mode.
    errors: Option<Arc<FinalizeErrors>>,
    /// For `compile()`: the callback slot, freed after the last clone has
    /// released its handle (fields drop after `Drop::drop`).
    _slot: Option<Arc<Slot>>,
}

// SAFETY: the handle is reference counted by the plugin, and every hipacm
// function is thread-safe; the Arcs are Send + Sync.
unsafe impl Send for Future {}
unsafe impl Sync for Future {}

impl Future {
    /// Takes ownership of one reference.
    pub(crate) fn from_raw(
        raw: *mut ffi::hipacm_future,
        errors: Option<Arc<FinalizeErrors>>,
        slot: Option<Arc<Slot>>,
    ) -> Option<Future> {
        NonNull::new(raw).map(|raw| Future {
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
                return Ok(Kernel::from_raw(&*kernel));
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

impl Clone for Future {
    fn clone(&self) -> Future {
        // SAFETY: a live handle; retaining cannot fail while we hold a reference.
        let status = unsafe { ffi::hipacm_future_retain(self.as_ptr()) };
        assert_eq!(
            status,
            ffi::HIPACM_SUCCESS,
            "hipacm_future_retain failed on a live future"
        );
        Future {
            raw: self.raw,
            errors: self.errors.clone(),
            _slot: self._slot.clone(),
        }
    }
}

impl Drop for Future {
    fn drop(&mut self) {
        // SAFETY: we own one reference.
        unsafe {
            ffi::hipacm_future_release(self.as_ptr());
        }
    }
}

impl PartialEq for Future {
    /// The same compile: dedup hits compare equal.
    fn eq(&self, other: &Future) -> bool {
        self.raw == other.raw
    }
}

impl Eq for Future {}

impl fmt::Debug for Future {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Future")
            .field("handle", &self.raw)
            .field("key", &self.key())
            .field("status", &self.status())
            .finish()
    }
}

/// A compiled kernel, borrowed from its [`Future`] (or, inside a finalize
/// closure, from the future being finalized).
#[derive(Clone, Copy)]
pub struct Kernel<'a> {
    raw: &'a ffi::hipacm_kernel,
}

// SAFETY: the kernel is read-only once published, and its owner (the future)
// is itself Send + Sync and outlives 'a.
unsafe impl Send for Kernel<'_> {}
unsafe impl Sync for Kernel<'_> {}

impl<'a> Kernel<'a> {
    pub(crate) fn from_raw(raw: &'a ffi::hipacm_kernel) -> Kernel<'a> {
        Kernel { raw }
    }

    /// The code object: an AMDGPU ELF for gfx targets.
    pub fn code(&self) -> &'a [u8] {
        if self.raw.code.is_null() || self.raw.code_size == 0 {
            return &[];
        }
        // SAFETY: code_size bytes owned by the future, alive for 'a.
        unsafe { std::slice::from_raw_parts(self.raw.code as *const u8, self.raw.code_size) }
    }

    /// The compiler log (may be empty).
    pub fn log(&self) -> Cow<'a, str> {
        // SAFETY: owned by the future, alive for 'a.
        unsafe { cstr_lossy(self.raw.log) }
    }

    /// The arch it was compiled for, e.g. "gfx90a".
    pub fn arch(&self) -> &'a str {
        // SAFETY: as above.
        unsafe { cstr_str(self.raw.arch) }
    }

    /// The dedup key.
    pub fn key(&self) -> &'a str {
        // SAFETY: as above.
        unsafe { cstr_str(self.raw.key) }
    }

    /// Lowered (mangled) names, in the order of the request's name expressions.
    pub fn lowered_names(&self) -> Vec<&'a str> {
        if self.raw.lowered_names.is_null() {
            return Vec::new();
        }
        // SAFETY: num_lowered_names non-NULL strings owned by the future.
        unsafe {
            std::slice::from_raw_parts(self.raw.lowered_names, self.raw.num_lowered_names)
                .iter()
                .map(|&p| cstr_str(p))
                .collect()
        }
    }

    /// Wall time of the compile step itself, in seconds.
    pub fn compile_seconds(&self) -> f64 {
        self.raw.compile_seconds
    }

    /// The raw struct, for hosts that pass it on to C.
    pub fn as_raw(&self) -> &'a ffi::hipacm_kernel {
        self.raw
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
