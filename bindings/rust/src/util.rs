// SPDX-License-Identifier: MIT
//! C string helpers.

use std::any::Any;
use std::borrow::Cow;
use std::ffi::{CStr, CString};
use std::os::raw::c_char;

use crate::error::Error;
use crate::ffi;

/// `p` as bytes (NULL reads as empty).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn cstr_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        b""
    } else {
        CStr::from_ptr(p).to_bytes()
    }
}

/// `p` as `&str`. Invalid UTF-8 (which the plugin's keys, archs and mangled
/// names never contain) is cut at the first invalid byte.
///
/// # Safety
/// As for [`cstr_bytes`].
pub(crate) unsafe fn cstr_str<'a>(p: *const c_char) -> &'a str {
    let bytes = cstr_bytes(p);
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        // SAFETY: the prefix up to valid_up_to() is valid UTF-8.
        Err(e) => std::str::from_utf8_unchecked(&bytes[..e.valid_up_to()]),
    }
}

/// `p` as text, with invalid UTF-8 replaced (for compiler logs and messages).
///
/// # Safety
/// As for [`cstr_bytes`].
pub(crate) unsafe fn cstr_lossy<'a>(p: *const c_char) -> Cow<'a, str> {
    String::from_utf8_lossy(cstr_bytes(p))
}

/// This thread's `hipacm_last_error_message()`, copied.
pub(crate) fn last_error_message() -> String {
    // SAFETY: never NULL; valid until the next hipacm call on this thread.
    unsafe { cstr_lossy(ffi::hipacm_last_error_message()).into_owned() }
}

/// A C copy of `s`, or INVALID_ARGUMENT naming `what` if it holds a NUL byte.
pub(crate) fn c_string(s: &str, what: &str) -> Result<CString, Error> {
    c_bytes(s.as_bytes(), what)
}

/// A C copy of `bytes` (e.g. a path's), or INVALID_ARGUMENT naming `what` if
/// it holds a NUL byte.
pub(crate) fn c_bytes(bytes: &[u8], what: &str) -> Result<CString, Error> {
    CString::new(bytes).map_err(|e| {
        Error::new(
            ffi::HIPACM_ERROR_INVALID_ARGUMENT,
            format!(
                "{} contains a NUL byte at offset {}",
                what,
                e.nul_position()
            ),
        )
    })
}

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a non-string panic payload".to_string()
    }
}

/// Drops `value`, catching a panic from its destructor so that it cannot
/// unwind into C or abort a thread that is already unwinding. Returns the
/// panic message, if any.
pub(crate) fn drop_quietly<T>(value: T) -> Option<String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(value))) {
        Ok(()) => None,
        Err(payload) => {
            let message = panic_message(&*payload);
            // The payload's own destructor might panic too; leak it instead.
            std::mem::forget(payload);
            Some(message)
        }
    }
}
