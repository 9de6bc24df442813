// SPDX-License-Identifier: MIT
//! The plugin's log events, sent to a Rust closure (`hipacm_set_log_callback`, ABI 1.4),
//! and this crate's own events, which take the same way.
//!
//! The crate reports a few things that no return value can carry, above all a
//! compile failure that only [`Mode`](crate::Mode)'s `Drop` sees. Those go
//! where the plugin's own events go: to the installed closure (filtered by its
//! `max_level`), or, with none installed, to stderr as `hipacm: LEVEL: ...`
//! lines filtered by `$HIPACM_LOG`, exactly as the plugin's default does. The
//! C ABI has no entry point for a host to log through, so the crate keeps the
//! closure it installed and calls it itself.

use std::cell::Cell;
use std::io::Write;
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
    /// A failure that no status can report, e.g. a compile failure found
    /// when a [`Mode`](crate::Mode) is dropped instead of exited.
    Error = 1,
    /// Something degraded but went on, e.g. an unusable cache directory
    /// (the compile runs without the cache). `$HIPACM_LOG`'s default.
    Warning = 2,
    /// Notable decisions, e.g. a result the plugin chose not to cache or a
    /// compile slot it had to wait for.
    Info = 3,
    /// Step-by-step detail: cache hits and stores, waits.
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

impl LogLevel {
    /// The word of the plugin's stderr lines and of `$HIPACM_LOG`.
    fn word(self) -> &'static str {
        match self {
            LogLevel::Off => "log",
            LogLevel::Error => "error",
            LogLevel::Warning => "warning",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
        }
    }
}

type LogFn = Box<dyn Fn(LogLevel, &str) + Send + Sync + 'static>;

/// An installed closure and the most detailed level it receives.
struct Installed {
    /// Boxed twice so that `user_data` is a thin pointer.
    callback: Box<LogFn>,
    max_level: LogLevel,
}

/// The closure the plugin currently calls. The lock is held across
/// `hipacm_set_log_callback`, so the closure kept here is always the one the
/// plugin has, and while [`report`] calls it, so a replaced closure is never
/// running once [`set_log_callback`] has returned.
static CURRENT: Mutex<Option<Installed>> = Mutex::new(None);

thread_local! {
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Sends the plugin's log events to `callback` instead of stderr: every
/// event at or below `max_level` ([`LogLevel::Off`] drops them all).
///
/// The closure may run on any thread, the plugin's own included, and
/// concurrently; it must not block for long. It replaces the previous one,
/// which is dropped here once the plugin has stopped calling it. A panic in
/// it is caught and reported on stderr. Besides the plugin's events it gets
/// this crate's own, e.g. the compile failure that a [`Mode`](crate::Mode)
/// dropped without [`Mode::exit`](crate::Mode::exit) finds (one event per
/// line, without a newline, as the plugin's). Calling this or
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
    let installed = Installed {
        callback: Box::new(Box::new(callback)),
        max_level,
    };
    replace(Some(installed), max_level)
}

/// Restores the plugin's default: log lines on stderr, filtered by
/// `$HIPACM_LOG`. The closure set before is dropped.
pub fn reset_log_callback() -> Result<(), Error> {
    replace(None, LogLevel::Warning)
}

fn replace(callback: Option<Installed>, max_level: LogLevel) -> Result<(), Error> {
    if in_callback() {
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
        Some(installed) => (
            Some(log_trampoline),
            &*installed.callback as *const LogFn as *mut c_void,
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
        report(
            LogLevel::Error,
            &format!(
                "the previous log callback's destructor panicked: {}",
                message
            ),
        );
    }
    Ok(())
}

/// True while this thread runs a log callback (`false` once its
/// thread-locals are gone).
fn in_callback() -> bool {
    IN_CALLBACK.try_with(Cell::get).unwrap_or(false)
}

/// Calls `callback` with one event, marking the thread as inside a log
/// callback and catching a panic, which goes to stderr: the closure that
/// panicked is no place to report it.
fn call(callback: &LogFn, level: LogLevel, message: &str) {
    let was_inside = IN_CALLBACK.try_with(|inside| inside.replace(true));
    let outcome = catch_unwind(AssertUnwindSafe(|| callback(level, message)));
    if let Ok(was_inside) = was_inside {
        let _ = IN_CALLBACK.try_with(|inside| inside.set(was_inside));
    }
    if let Err(payload) = outcome {
        let message = format!("the log callback panicked: {}", panic_message(&*payload));
        drop_quietly(payload);
        write_to_stderr(LogLevel::Error, &message);
    }
}

unsafe extern "C" fn log_trampoline(user_data: *mut c_void, level: i32, message: *const c_char) {
    // SAFETY: user_data is the LogFn box in CURRENT, alive while the plugin
    // may call it; message is borrowed for the call.
    let callback = &*(user_data as *const LogFn);
    call(callback, LogLevel::from_raw(level), &cstr_lossy(message));
}

/// Reports one of this crate's own events the way the plugin reports its
/// events: each line of `message` to the installed closure when its
/// `max_level` admits `level`, else, with no closure installed, to stderr
/// when `$HIPACM_LOG` admits it. Never panics and never blocks for long
/// (besides the closure itself), so `Drop` and C callbacks may call it.
///
/// Inside a log callback (a closure that, say, drops a `Mode`) the closure
/// cannot be re-entered, and the line goes to stderr instead.
pub(crate) fn report(level: LogLevel, message: &str) {
    if level == LogLevel::Off {
        return;
    }
    if !in_callback() {
        let current = lock(&CURRENT);
        if let Some(installed) = current.as_ref() {
            if level <= installed.max_level {
                for line in message.lines() {
                    call(&installed.callback, level, line);
                }
            }
            return;
        }
    }
    if level <= stderr_level() {
        for line in message.lines() {
            write_to_stderr(level, line);
        }
    }
}

/// `$HIPACM_LOG` as the plugin reads it: `off`, `none` or `quiet`, `error`,
/// `warning`, `info`, `debug`; unset, empty or anything else is `warning`
/// (the plugin itself warns about an unknown value).
fn stderr_level() -> LogLevel {
    let value = std::env::var_os("HIPACM_LOG").unwrap_or_default();
    match value.to_str().unwrap_or("") {
        "off" | "none" | "quiet" => LogLevel::Off,
        "error" => LogLevel::Error,
        "info" => LogLevel::Info,
        "debug" => LogLevel::Debug,
        _ => LogLevel::Warning,
    }
}

/// One `hipacm: LEVEL: message` line, in a single write so that concurrent
/// lines stay whole, like the plugin's. A failed write is ignored: unlike
/// `eprintln!`, this never panics, which matters inside `Drop`.
fn write_to_stderr(level: LogLevel, message: &str) {
    let line = format!("hipacm: {}: {}\n", level.word(), message);
    let _ = std::io::stderr().write_all(line.as_bytes());
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
