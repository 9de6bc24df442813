// SPDX-License-Identifier: MIT
//! Finalize/cleanup closures behind the C callbacks.
//!
//! Each submit that carries closures gets one heap [`Slot`]; the plugin gets
//! a raw pointer to it as `user_data`, with the two trampolines below. The
//! slot's *memory* is owned by Rust (an `Arc`) and is freed only once the
//! plugin can no longer call it:
//!
//! * for a mode submit, when the mode has exited (`hipacm_mode_exit`
//!   collects every future of the mode and returns only after every callback
//!   has finished, on whatever thread it ran);
//! * for [`compile`](crate::compile), when the last
//!   [`CompileFuture`](crate::CompileFuture) clone is dropped (after it
//!   released its handle, so no one can collect the future any more).
//!
//! The *closures* inside are taken out (and so dropped) exactly once: by the
//! trampoline that runs them, or, if the plugin never attached them (a dedup
//! hit, a rejected submit) or never ran them, when the slot is discarded at
//! one of the two points above.

use std::collections::HashMap;
use std::os::raw::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::Error;
use crate::ffi;
use crate::future::Kernel;
use crate::util::{cstr_str, drop_quietly, panic_message};

pub(crate) type FinalizeFn = Box<dyn FnOnce(&Kernel<'_>) -> Result<(), String> + Send + 'static>;
pub(crate) type CleanupFn = Box<dyn FnOnce(&Error) + Send + 'static>;

/// The closures of one request.
#[derive(Default)]
pub(crate) struct Callbacks {
    pub(crate) finalize: Option<FinalizeFn>,
    pub(crate) cleanup: Option<CleanupFn>,
}

impl Callbacks {
    pub(crate) fn is_empty(&self) -> bool {
        self.finalize.is_none() && self.cleanup.is_none()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of our locks cannot leave the data
    // inconsistent (we only move Options in and out), so ignore poisoning.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The messages of finalize closures that failed, by future handle address.
///
/// One map per mode (or per `compile` call); every
/// [`CompileFuture`](crate::CompileFuture) from that mode holds it. An
/// address identifies one future here: the mode holds a reference to each of
/// its futures until it exits, after which no callback of the mode runs, and
/// a future that looks itself up holds its own reference, so its address
/// cannot have been reused.
#[derive(Default)]
pub(crate) struct FinalizeErrors {
    map: Mutex<HashMap<usize, String>>,
}

impl FinalizeErrors {
    pub(crate) fn get(&self, f: *mut ffi::hipacm_future) -> Option<String> {
        lock(&self.map).get(&(f as usize)).cloned()
    }

    fn insert(&self, f: *mut ffi::hipacm_future, message: String) {
        lock(&self.map).insert(f as usize, message);
    }
}

struct SlotState {
    callbacks: Callbacks,
    /// Set by the finalize trampoline when the closure failed; read by cleanup.
    finalize_error: Option<String>,
}

/// The `user_data` of one submit.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    errors: Arc<FinalizeErrors>,
}

impl Slot {
    pub(crate) fn new(callbacks: Callbacks, errors: Arc<FinalizeErrors>) -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState {
                callbacks,
                finalize_error: None,
            }),
            errors,
        })
    }

    /// Fills the request's callback fields with the trampolines and `self`.
    ///
    /// Both trampolines are always set: finalize runs (and frees the
    /// closures) on success, cleanup on failure, so whichever path the plugin
    /// takes consumes the closures.
    pub(crate) fn attach(self: &Arc<Slot>, req: &mut ffi::hipacm_request) {
        req.finalize = Some(finalize_trampoline);
        req.cleanup = Some(cleanup_trampoline);
        req.user_data = Arc::as_ptr(self) as *mut c_void;
    }

    /// Drops whatever closures were never run. Call only once the plugin
    /// can no longer call this slot. Returns a panic message from a
    /// closure's destructor, if one panicked.
    pub(crate) fn discard(&self) -> Option<String> {
        let callbacks = std::mem::take(&mut lock(&self.state).callbacks);
        drop_quietly(callbacks)
    }

    fn take_finalize(&self) -> Option<FinalizeFn> {
        lock(&self.state).callbacks.finalize.take()
    }
}

/// The message of a trampoline that could not report any other way: to the
/// log callback, or stderr (see [`report`](crate::log::report)).
fn warn(message: &str) {
    crate::log::report(crate::log::LogLevel::Error, message);
}

unsafe extern "C" fn finalize_trampoline(
    user_data: *mut c_void,
    f: *mut ffi::hipacm_future,
) -> c_int {
    // Nothing may unwind into C: every panic, including one from a closure's
    // destructor, is caught here and turned into a finalize failure.
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user_data is the Slot set by attach(); it is alive until
        // the plugin can no longer call us (see the module docs).
        let slot = &*(user_data as *const Slot);
        let result = match slot.take_finalize() {
            None => Ok(()),
            Some(finalize) => {
                let mut kernel: *const ffi::hipacm_kernel = ptr::null();
                // Inside its own callback this returns the compile outcome at once.
                let status = ffi::hipacm_future_result(f, &mut kernel);
                if status != ffi::HIPACM_SUCCESS || kernel.is_null() {
                    drop_quietly(finalize);
                    Err(format!(
                        "the kernel was not available to the finalize callback (status {})",
                        status
                    ))
                } else {
                    // SAFETY: owned by the future, which the plugin keeps alive
                    // for the duration of the callback.
                    finalize(&Kernel::from_raw(kernel))
                }
            }
        };
        if result.is_ok() {
            // Success: the cleanup closure will never run; free it now.
            let cleanup = lock(&slot.state).callbacks.cleanup.take();
            if let Some(message) = drop_quietly(cleanup) {
                warn(&format!(
                    "the cleanup closure's destructor panicked: {}",
                    message
                ));
            }
        }
        (slot, result)
    }));
    match outcome {
        Ok((_, Ok(()))) => 0,
        Ok((slot, Err(message))) => {
            record_failure(slot, f, message);
            1
        }
        Err(payload) => {
            let message = format!(
                "the finalize callback panicked: {}",
                panic_message(&*payload)
            );
            drop_quietly(payload);
            // SAFETY: as above.
            let slot = &*(user_data as *const Slot);
            record_failure(slot, f, message);
            1
        }
    }
}

fn record_failure(slot: &Slot, f: *mut ffi::hipacm_future, message: String) {
    lock(&slot.state).finalize_error = Some(message.clone());
    slot.errors.insert(f, message);
}

unsafe extern "C" fn cleanup_trampoline(user_data: *mut c_void, f: *mut ffi::hipacm_future) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as in finalize_trampoline.
        let slot = &*(user_data as *const Slot);
        let (callbacks, finalize_error) = {
            let mut state = lock(&slot.state);
            (
                std::mem::take(&mut state.callbacks),
                state.finalize_error.take(),
            )
        };
        let Callbacks { finalize, cleanup } = callbacks;
        // A compile failure never ran finalize: drop it unrun.
        drop_quietly(finalize);
        if let Some(cleanup) = cleanup {
            let error = match finalize_error {
                Some(message) => Error::new(
                    ffi::HIPACM_ERROR_FINALIZE_FAILED,
                    format!(
                        "the finalize callback of '{}' failed: {}",
                        cstr_str(ffi::hipacm_future_key(f)),
                        message
                    ),
                )
                .with_future(f),
                // During the callback the status is the compile's outcome.
                None => {
                    let status = ffi::hipacm_future_status(f);
                    Error::new(
                        status,
                        crate::util::cstr_lossy(ffi::hipacm_future_error_message(f)).into_owned(),
                    )
                    .with_future(f)
                }
            };
            cleanup(&error);
        }
    }));
    if let Err(payload) = outcome {
        // SAFETY: a live handle, borrowed for the duration of the callback.
        let key = cstr_str(ffi::hipacm_future_key(f));
        warn(&format!(
            "the cleanup callback of '{}' panicked: {}",
            key,
            panic_message(&*payload)
        ));
        drop_quietly(payload);
    }
}
