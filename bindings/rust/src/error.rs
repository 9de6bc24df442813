// SPDX-License-Identifier: MIT
//! Statuses and errors.

use std::fmt;

use crate::ffi;
use crate::future::CompileFuture;
use crate::util::{cstr_lossy, last_error_message};

/// `statuses! { Variant = number => "C_NAME", ... }`: the one list that
/// [`Status`], [`Status::ALL`] and [`Status::name`] are made from.
macro_rules! statuses {
    ($($(#[doc = $doc:literal])+ $variant:ident = $raw:literal => $name:literal,)+) => {
        /// `hipacm_status`: the numbers are part of the ABI and never change.
        ///
        /// Newer plugins may add statuses: match with a `_` arm.
        ///
        /// ```
        /// use hipacm::Status;
        ///
        /// assert_eq!(Status::from_raw(5), Some(Status::Compilation));
        /// assert_eq!(Status::Compilation.raw(), 5);
        /// assert_eq!(Status::Compilation.to_string(), "HIPACM_ERROR_COMPILATION");
        /// assert_eq!(Status::from_raw(99), None); // a newer plugin's
        /// ```
        #[repr(i32)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Status {
            $($(#[doc = $doc])+ $variant = $raw,)+
        }

        impl Status {
            /// Every status, in numeric order.
            pub const ALL: [Status; 14] = [$(Status::$variant,)+];

            /// The C name, as `hipacm_status_string` spells it (e.g. `HIPACM_ERROR_COMPILATION`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Status::$variant => $name,)+
                }
            }
        }
    };
}

statuses! {
    /// The call or compile succeeded.
    Success = 0 => "HIPACM_SUCCESS",
    /// A bad argument: a NULL or unknown handle, an unknown arch, a string
    /// with a NUL byte, an out-of-range setting. Nothing was changed.
    InvalidArgument = 1 => "HIPACM_ERROR_INVALID_ARGUMENT",
    /// The plugin and the caller disagree on the ABI: a struct smaller than
    /// its version 1, or a feature newer than the loaded plugin.
    AbiMismatch = 2 => "HIPACM_ERROR_ABI_MISMATCH",
    /// [`Mode::enter`](crate::Mode::enter) while another mode holds the
    /// process-wide slot.
    ModeAlreadyActive = 3 => "HIPACM_ERROR_MODE_ALREADY_ACTIVE",
    /// A submit to a mode that is exiting or has exited.
    ModeClosed = 4 => "HIPACM_ERROR_MODE_CLOSED",
    /// The compiler rejected the source; the compiler log says why.
    Compilation = 5 => "HIPACM_ERROR_COMPILATION",
    /// The compiler (a worker process) died during the compile.
    CompilerCrashed = 6 => "HIPACM_ERROR_COMPILER_CRASHED",
    /// The compile ran past [`Config::compile_timeout`](crate::Config::compile_timeout).
    Timeout = 7 => "HIPACM_ERROR_TIMEOUT",
    /// The compile was dropped before it finished: an earlier failure
    /// cancelled it ([`Config::fail_fast`](crate::Config::fail_fast)), or it
    /// was still running when the process forked (seen in the child).
    Cancelled = 8 => "HIPACM_ERROR_CANCELLED",
    /// No compiler (hipRTC or NVRTC), no worker binary, no device to load
    /// on, or no libhipacm at all.
    BackendUnavailable = 9 => "HIPACM_ERROR_BACKEND_UNAVAILABLE",
    /// The compile succeeded but the request's finalize closure failed or
    /// panicked.
    FinalizeFailed = 10 => "HIPACM_ERROR_FINALIZE_FAILED",
    /// The compile has not finished yet
    /// ([`CompileFuture::status`](crate::CompileFuture::status)).
    NotReady = 11 => "HIPACM_ERROR_NOT_READY",
    /// Memory ran out, in the plugin or (loading a module) in the driver.
    OutOfMemory = 12 => "HIPACM_ERROR_OUT_OF_MEMORY",
    /// Anything else that went wrong inside the plugin (also a status number
    /// newer than this crate).
    Internal = 13 => "HIPACM_ERROR_INTERNAL",
}

impl Status {
    /// The status for a raw number, or `None` for a number this crate does not know.
    pub fn from_raw(raw: i32) -> Option<Status> {
        if (0..Status::ALL.len() as i32).contains(&raw) {
            Some(Status::ALL[raw as usize])
        } else {
            None
        }
    }

    /// The fixed ABI number.
    pub fn raw(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed hipacm call or compile: the status, the message, and for a
/// compile, its key and compiler log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    raw_status: i32,
    message: String,
    key: Option<String>,
    log: Option<String>,
}

impl Error {
    pub(crate) fn new(raw_status: ffi::hipacm_status, message: impl Into<String>) -> Error {
        Error {
            // A number from a newer plugin that this crate does not know.
            status: Status::from_raw(raw_status).unwrap_or(Status::Internal),
            raw_status,
            message: message.into(),
            key: None,
            log: None,
        }
    }

    /// An error for a call that just failed on this thread: the message is
    /// `hipacm_last_error_message()`. Call it before any other hipacm call.
    pub(crate) fn last(raw_status: ffi::hipacm_status) -> Error {
        Error::new(raw_status, last_error_message())
    }

    /// Adds the key and log of `f` (a live handle).
    pub(crate) unsafe fn with_future(mut self, f: *mut ffi::hipacm_future) -> Error {
        self.key = Some(cstr_lossy(ffi::hipacm_future_key(f)).into_owned());
        self.log = Some(cstr_lossy(ffi::hipacm_future_log(f)).into_owned());
        self
    }

    /// The status; an unknown number from a newer plugin reads as `Internal`
    /// (see [`Error::raw_status`]).
    pub fn status(&self) -> Status {
        self.status
    }

    /// The number the plugin returned.
    pub fn raw_status(&self) -> i32 {
        self.raw_status
    }

    /// The plugin's message (`hipacm_last_error_message` or
    /// `hipacm_future_error_message`), or this crate's for a request it rejected.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The key of the compile that failed, when the error belongs to one.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The compiler log of the compile that failed, when the error belongs to one.
    pub fn log(&self) -> Option<&str> {
        self.log.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status)?;
        if let Some(key) = &self.key {
            if !self.message.contains(key.as_str()) {
                write!(f, " [key '{}']", key)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

/// What [`Mode::exit`](crate::Mode::exit) returns when a compile in the mode
/// failed: the first failure in completion order, with its future.
///
/// The mode slot is already free when you get this. It owns one reference to
/// the failed future (released with it), and converts into a plain
/// [`Error`] with `?` or [`CompileError::into_error`].
///
/// ```
/// use hipacm::{Config, Mode, Request, Status};
///
/// let mode = Mode::enter(Config::new().arch("gfx90a"))?;
/// mode.submit(&Request::new(r#"extern "C" __global__ void ok(int* p) { *p = 1; }"#))?;
/// mode.submit(&Request::new("this is not C++").key("broken"))?;
/// let failure = mode.exit().unwrap_err();
/// assert_eq!(failure.status(), Status::Compilation);
/// assert_eq!(failure.key(), Some("broken"));
/// assert!(!failure.log().unwrap_or("").is_empty());
/// assert_eq!(failure.first_failure().map(|f| f.key()), Some("broken"));
/// assert!(!hipacm::active_mode_is_set());
/// # Ok::<(), hipacm::Error>(())
/// ```
#[derive(Debug)]
pub struct CompileError {
    error: Error,
    first_failure: Option<CompileFuture>,
}

impl CompileError {
    pub(crate) fn new(error: Error, first_failure: Option<CompileFuture>) -> CompileError {
        CompileError {
            error,
            first_failure,
        }
    }

    /// The status of the first failure (e.g. [`Status::Compilation`]).
    pub fn status(&self) -> Status {
        self.error.status()
    }

    /// The key of the first failed compile.
    pub fn key(&self) -> Option<&str> {
        self.error.key()
    }

    /// The compiler log of the first failed compile.
    pub fn log(&self) -> Option<&str> {
        self.error.log()
    }

    /// The plugin's message for the first failure.
    pub fn message(&self) -> &str {
        self.error.message()
    }

    /// The first failure as a plain [`Error`], borrowed.
    pub fn error(&self) -> &Error {
        &self.error
    }

    /// The future of the first failed compile (`None` only when the exit
    /// call itself failed, e.g. with `Internal`).
    pub fn first_failure(&self) -> Option<&CompileFuture> {
        self.first_failure.as_ref()
    }

    /// The first failure as a plain [`Error`]; the future is released.
    pub fn into_error(self) -> Error {
        self.error
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for CompileError {}

impl From<CompileError> for Error {
    fn from(e: CompileError) -> Error {
        e.error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn status_numbers_and_names_match_the_plugin() {
        for (i, status) in Status::ALL.iter().enumerate() {
            assert_eq!(status.raw(), i as i32);
            assert_eq!(Status::from_raw(i as i32), Some(*status));
            // SAFETY: static strings, never NULL.
            let c = unsafe { CStr::from_ptr(ffi::hipacm_status_string(status.raw())) };
            assert_eq!(c.to_str().unwrap(), status.name());
        }
        assert_eq!(Status::from_raw(14), None);
        assert_eq!(Status::from_raw(-1), None);
        assert_eq!(Status::Compilation.raw(), ffi::HIPACM_ERROR_COMPILATION);
        assert_eq!(Status::Internal.raw(), ffi::HIPACM_ERROR_INTERNAL);
    }

    #[test]
    fn unknown_status_reads_as_internal() {
        let e = Error::new(99, "from the future");
        assert_eq!(e.status(), Status::Internal);
        assert_eq!(e.raw_status(), 99);
        assert_eq!(e.to_string(), "from the future (HIPACM_ERROR_INTERNAL)");
    }
}
