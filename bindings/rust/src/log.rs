// SPDX-License-Identifier: MIT
//! The plugin's log events, sent to a Rust closure (`hipacm_set_log_callback`, ABI 1.4).

use std::cell::Cell;
use std::os::raw::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use crate::callbacks::lock;
use crate::error::Error;
use crate::ffi;
use crate::util::{cstr_lossy, drop_quietly, panic_message};

/// A log level (`HIPACM_LOG_*`); `$HIPACM_LOG` names the same ones.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum LogLevel {
    /// As a maximum: no events at all.
    Off = 0,
    Error = 1,
    Warning = 2,
    Info = 3,
    Debug = 4,
}

impl LogLevel {
    /// The level of an event; a number newer than this crate reads as `Debug`.
    fn from_raw(raw: i32) -> LogLevel {
        match raw {
            ffi::HIPACM_LOG_ERROR => LogLevel::Error,
            ffi::HIPACM_LOG_WARNING => LogLevel::Warning,
            ffi::HIPACM_LOG_INFO => LogLevel::Info,
            _ => LogLevel::Debug,
        }
    }
}

type LogFn = Box<dyn Fn(LogLevel, &str) + Send + Sync + 'static>;

/// The closure the plugin currently calls. Boxed twice so that `user_data`
/// is a thin pointer; the lock is held across `hipacm_set_log_callback`, so
/// the closure kept here is always the one the plugin has.
static CURRENT: Mutex<Option<Box<LogFn>>> = Mutex::new(None);

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Sends the plugin's log events to `callback` instead of stderr: every
/// event at or below `max_level` ([`LogLevel::Off`] drops them all).
///
/// The closure may run on any thread, the plugin's own included, and
/// concurrently; it must not block for long. It replaces the previous one,
/// which is dropped here once the plugin has stopped calling it. A panic in
/// it is caught and reported on stderr. Calling this or
/// [`reset_log_callback`] from inside a log callback fails with
/// `InvalidArgument`; so does any call with a plugin older than ABI 1.4
/// (with `AbiMismatch`).
///
/// ```
/// use hipacm::{LogLevel, Request};
/// use std::sync::{Arc, Mutex};
///
/// let lines = Arc::new(Mutex::new(Vec::new()));
/// let sink = lines.clone();
/// hipacm::set_log_callback(LogLevel::Debug, move |level, message| {
///     sink.lock().unwrap().push(format!("{:?}: {}", level, message));
/// })?;
/// let src = r#"extern "C" __global__ void logged(int* p) { p[0] = 7; }"#;
/// hipacm::compile(&Request::new(src), Some("gfx90a"))?.result()?;
/// hipacm::reset_log_callback()?; // back to stderr and $HIPACM_LOG
/// for line in lines.lock().unwrap().iter() {
///     println!("{}", line);
/// }
/// # Ok::<(), hipacm::Error>(())
/// ```
pub fn set_log_callback<F>(max_level: LogLevel, callback: F) -> Result<(), Error>
where
    F: Fn(LogLevel, &str) + Send + Sync + 'static,
{
    replace(Some(Box::new(Box::new(callback))), max_level)
}

/// Restores the plugin's default: log lines on stderr, filtered by
/// `$HIPACM_LOG`. The closure set before is dropped.
pub fn reset_log_callback() -> Result<(), Error> {
    replace(None, LogLevel::Warning)
}

fn replace(callback: Option<Box<LogFn>>, max_level: LogLevel) -> Result<(), Error> {
    if IN_CALLBACK.with(Cell::get) {
        return Err(Error::new(
            ffi::HIPACM_ERROR_INVALID_ARGUMENT,
            "the log callback cannot be replaced from inside a log callback",
        ));
    }
    let plugin = crate::library::load()?;
    let set = plugin.table.set_log_callback.ok_or_else(|| {
        Error::new(
            ffi::HIPACM_ERROR_ABI_MISMATCH,
            format!(
                "hipacm_set_log_callback needs a plugin of ABI 1.4; {} implements 1.{}",
                plugin.path.display(),
                plugin.abi_minor()
            ),
        )
    })?;
    let mut current = lock(&CURRENT);
    let (function, user_data): (ffi::hipacm_log_fn, *mut c_void) = match &callback {
        Some(boxed) => (
            Some(log_trampoline),
            &**boxed as *const LogFn as *mut c_void,
        ),
        None => (None, std::ptr::null_mut()),
    };
    // SAFETY: user_data points into a box that stays in CURRENT until the
    // plugin has been given another callback and has stopped calling this one.
    let status = unsafe { set(function, user_data, max_level as i32) };
    if status != ffi::HIPACM_SUCCESS {
        let error = Error::last(status);
        drop(current);
        drop_quietly(callback);
        return Err(error);
    }
    // The plugin no longer runs the old closure: it can go.
    let old = std::mem::replace(&mut *current, callback);
    drop(current);
    if let Some(message) = drop_quietly(old) {
        eprintln!(
            "hipacm: the previous log callback's destructor panicked: {}",
            message
        );
    }
    Ok(())
}

unsafe extern "C" fn log_trampoline(user_data: *mut c_void, level: i32, message: *const c_char) {
    let was_inside = IN_CALLBACK.with(|inside| inside.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: user_data is the LogFn box in CURRENT, alive while the
        // plugin may call it; message is borrowed for the call.
        let callback = &*(user_data as *const LogFn);
        callback(LogLevel::from_raw(level), &cstr_lossy(message));
    }));
    IN_CALLBACK.with(|inside| inside.set(was_inside));
    if let Err(payload) = outcome {
        eprintln!(
            "hipacm: the log callback panicked: {}",
            panic_message(&*payload)
        );
        drop_quietly(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_the_header_numbers() {
        let levels = [
            (LogLevel::Off, ffi::HIPACM_LOG_OFF),
            (LogLevel::Error, ffi::HIPACM_LOG_ERROR),
            (LogLevel::Warning, ffi::HIPACM_LOG_WARNING),
            (LogLevel::Info, ffi::HIPACM_LOG_INFO),
            (LogLevel::Debug, ffi::HIPACM_LOG_DEBUG),
        ];
        for (level, raw) in levels.iter() {
            assert_eq!(*level as i32, *raw);
            if *raw != ffi::HIPACM_LOG_OFF {
                assert_eq!(LogLevel::from_raw(*raw), *level);
            }
        }
        assert_eq!(LogLevel::from_raw(17), LogLevel::Debug);
        assert!(LogLevel::Error < LogLevel::Debug);
    }
}
