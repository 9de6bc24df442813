// SPDX-License-Identifier: MIT
//! The async compile mode: config, the RAII guard, submits.

use std::ffi::CString;
use std::mem::{size_of, MaybeUninit};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::callbacks::{lock, FinalizeErrors, Slot};
use crate::error::{CompileError, Error};
use crate::ffi;
use crate::future::CompileFuture;
use crate::log::{report, LogLevel};
use crate::request::Request;
use crate::util::{c_bytes, c_string};

/// Where compiles run (`hipacm_mode_config.isolation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Isolation {
    /// `$HIPACM_ISOLATION` when set; otherwise worker processes when the
    /// `hipacm-worker` binary is found, else the serialized in-process path.
    #[default]
    Auto,
    /// In this process, one compile at a time.
    InProcess,
    /// In `hipacm-worker` processes; entering fails with
    /// `BackendUnavailable` when no worker binary can be found.
    Process,
}

impl Isolation {
    fn raw(self) -> i32 {
        match self {
            Isolation::Auto => ffi::HIPACM_ISOLATION_AUTO,
            Isolation::InProcess => ffi::HIPACM_ISOLATION_IN_PROCESS,
            Isolation::Process => ffi::HIPACM_ISOLATION_PROCESS,
        }
    }
}

/// Whether the mode reads and writes the persistent kernel cache
/// (`hipacm_mode_config.cache_policy`, ABI 1.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CachePolicy {
    /// `$HIPACM_CACHE` (`off`, `read` or `readwrite`; any other value fails
    /// [`Mode::enter`] with `InvalidArgument`), else `ReadWrite`.
    #[default]
    Default,
    /// Never read or write the cache.
    Off,
    /// Serve hits, never write.
    Read,
    /// Serve hits and store new code objects.
    ReadWrite,
}

impl CachePolicy {
    fn raw(self) -> i32 {
        match self {
            CachePolicy::Default => ffi::HIPACM_CACHE_DEFAULT,
            CachePolicy::Off => ffi::HIPACM_CACHE_OFF,
            CachePolicy::Read => ffi::HIPACM_CACHE_READ,
            CachePolicy::ReadWrite => ffi::HIPACM_CACHE_READWRITE,
        }
    }
}

/// A remote cache URL whose `Debug` leaves out the user and password.
#[derive(Clone, PartialEq, Eq)]
struct RemoteCacheUrl(String);

impl std::fmt::Debug for RemoteCacheUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.split_once("://") {
            Some((scheme, rest)) if rest.contains('@') => {
                let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                write!(f, "\"{}://***@{}\"", scheme, host)
            }
            _ => write!(f, "{:?}", self.0),
        }
    }
}

/// Options for [`Mode::enter`]; the defaults are the plugin's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    max_workers: u32,
    ignore_errors: bool,
    fail_fast: bool,
    arch: Option<String>,
    isolation: Isolation,
    compile_timeout: Option<Duration>,
    cache_dir: Option<PathBuf>,
    cache_policy: CachePolicy,
    load_device: Option<u32>,
    cache_failures: bool,
    remote_cache: Option<RemoteCacheUrl>,
}

impl Config {
    /// The plugin's defaults: every worker the machine has, `$HIPACM_ARCH`
    /// (else the device's arch), [`Isolation::Auto`],
    /// [`CachePolicy::Default`], no timeout, no device load, errors reported
    /// at exit. Same as `Config::default()`; each setter consumes the config
    /// and returns it changed.
    ///
    /// ```
    /// use hipacm::{Config, Isolation};
    /// use std::time::Duration;
    ///
    /// let config = Config::new()
    ///     .arch("gfx90a")
    ///     .isolation(Isolation::Process)
    ///     .compile_timeout(Duration::from_secs(60));
    /// assert_ne!(config, Config::default());
    /// assert_eq!(Config::new(), Config::default());
    /// ```
    pub fn new() -> Config {
        Config::default()
    }

    /// Pool size; 0 (the default) means the hardware concurrency.
    pub fn max_workers(mut self, n: u32) -> Config {
        self.max_workers = n;
        self
    }

    /// When set, exiting succeeds even if compiles failed.
    pub fn ignore_errors(mut self, yes: bool) -> Config {
        self.ignore_errors = yes;
        self
    }

    /// When set, the first failure cancels the queued compiles.
    pub fn fail_fast(mut self, yes: bool) -> Config {
        self.fail_fast = yes;
        self
    }

    /// The target, e.g. "gfx90a" or "gfx90a:xnack-". Default: `$HIPACM_ARCH`,
    /// otherwise the current device's arch.
    pub fn arch(mut self, arch: impl Into<String>) -> Config {
        self.arch = Some(arch.into());
        self
    }

    /// Where compiles run; see [`Isolation`]. Default: [`Isolation::Auto`].
    pub fn isolation(mut self, isolation: Isolation) -> Config {
        self.isolation = isolation;
        self
    }

    /// Per-compile limit in worker processes (rounded up to whole
    /// milliseconds; zero means none). In-process compiles ignore it.
    pub fn compile_timeout(mut self, timeout: Duration) -> Config {
        self.compile_timeout = if timeout == Duration::from_secs(0) {
            None
        } else {
            Some(timeout)
        };
        self
    }

    /// The read-write cache directory (ABI 1.2). Default: `$HIPACM_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/hipacm`, else `~/.cache/hipacm`;
    /// `$HIPACM_SYSTEM_CACHE` adds a read-only layer beneath it. The policy
    /// stays [`CachePolicy::Default`] unless set, so `HIPACM_CACHE=off` still
    /// turns the cache off. An empty path fails [`Mode::enter`] with
    /// `InvalidArgument`.
    pub fn cache_dir(mut self, dir: impl AsRef<Path>) -> Config {
        self.cache_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to read and write the cache (ABI 1.2); an explicit policy
    /// overrides `$HIPACM_CACHE`. The cache never fails a compile: an
    /// unusable one degrades to compiling. [`Kernel::from_cache`](crate::Kernel::from_cache)
    /// tells whether a kernel was served from it.
    pub fn cache_policy(mut self, policy: CachePolicy) -> Config {
        self.cache_policy = policy;
        self
    }

    /// The device whose primary context each code object is loaded into,
    /// with every kernel in it resolved, before its future completes (ABI
    /// 1.2); `None` (the default) compiles only. The module and functions are
    /// then in [`Kernel::module`](crate::Kernel::module) and
    /// [`Kernel::functions`](crate::Kernel::functions), unloaded when the
    /// future's last clone is dropped. A failed load fails the future (the
    /// cleanup path) with `BackendUnavailable` (no driver or runtime, or no
    /// device with that index), `OutOfMemory`, or `Internal` (the driver
    /// refused the code object). An index above `i32::MAX` fails
    /// [`Mode::enter`] with `InvalidArgument`.
    pub fn load_device(mut self, device: impl Into<Option<u32>>) -> Config {
        self.load_device = device.into();
        self
    }

    /// The negative cache (ABI 1.4): a compile that fails with
    /// [`Status::Compilation`](crate::Status::Compilation) is stored in the
    /// persistent cache (with [`CachePolicy::ReadWrite`] in effect), and a
    /// later request with the same key fails at once with the stored log and
    /// message instead of compiling again. Crashes, timeouts and
    /// cancellations are never stored; stored failures are served only while
    /// this is set. Default: off. Setting it with a plugin older than ABI 1.4
    /// fails [`Mode::enter`] with `AbiMismatch`.
    pub fn cache_failures(mut self, yes: bool) -> Config {
        self.cache_failures = yes;
        self
    }

    /// The shared remote cache tier below the persistent cache (ABI 1.5):
    /// `redis://[user[:password]@]host[:port][/db]`, read on a local miss
    /// and, with `HIPACM_REMOTE_CACHE_MODE=read-write`, written after each
    /// compile; entries are served only when they verify against
    /// `$HIPACM_REMOTE_CACHE_KEY_FILE`. Unset (the default):
    /// `$HIPACM_REMOTE_CACHE`; `"off"`: none. Used only while the cache is
    /// not off. A malformed URL fails [`Mode::enter`] with
    /// `InvalidArgument`; an unreachable server never fails a compile. A value
    /// other than `"off"` with a plugin older than ABI 1.5 fails
    /// [`Mode::enter`] with `AbiMismatch`. `Debug` shows the URL without its
    /// user and password; prefer `$HIPACM_REMOTE_CACHE_PASSWORD_FILE` to a
    /// password in the URL.
    ///
    /// ```
    /// use hipacm::Config;
    ///
    /// let config = Config::new().remote_cache("redis://ci:secret@cache.example:6379/2");
    /// assert!(!format!("{:?}", config).contains("secret"));
    /// ```
    pub fn remote_cache(mut self, url: impl Into<String>) -> Config {
        self.remote_cache = Some(RemoteCacheUrl(url.into()));
        self
    }

    fn c_remote_cache(&self) -> Result<Option<CString>, Error> {
        match &self.remote_cache {
            None => Ok(None),
            Some(RemoteCacheUrl(url)) if url.is_empty() => Err(Error::new(
                ffi::HIPACM_ERROR_INVALID_ARGUMENT,
                "config.remote_cache is empty (leave it unset for $HIPACM_REMOTE_CACHE, or \"off\")",
            )),
            Some(RemoteCacheUrl(url)) => c_string(url, "config.remote_cache").map(Some),
        }
    }

    fn timeout_ms(&self) -> u32 {
        match self.compile_timeout {
            None => 0,
            Some(d) => {
                let ms = d.as_millis() + u128::from(d.subsec_nanos() % 1_000_000 != 0);
                ms.min(u128::from(u32::MAX)) as u32
            }
        }
    }

    fn c_cache_dir(&self) -> Result<Option<CString>, Error> {
        match &self.cache_dir {
            None => Ok(None),
            Some(dir) if dir.as_os_str().is_empty() => Err(Error::new(
                ffi::HIPACM_ERROR_INVALID_ARGUMENT,
                "config.cache_dir is empty (leave it unset for the default directory)",
            )),
            Some(dir) => c_bytes(dir.as_os_str().as_bytes(), "config.cache_dir").map(Some),
        }
    }

    fn raw_load_device(&self) -> Result<i32, Error> {
        match self.load_device {
            None => Ok(ffi::HIPACM_LOAD_NONE),
            Some(device) => i32::try_from(device).map_err(|_| {
                Error::new(
                    ffi::HIPACM_ERROR_INVALID_ARGUMENT,
                    format!("config.load_device {} is above i32::MAX", device),
                )
            }),
        }
    }
}

/// The process-wide async compile mode, as a guard.
///
/// [`Mode::enter`] claims the single mode slot; dropping the guard exits the
/// mode (collecting every compile, running finalize/cleanup exactly once),
/// and logs a compile failure instead of panicking, so the slot is freed
/// even while a panic unwinds. The failure goes to the log callback when one
/// is installed ([`set_log_callback`](crate::set_log_callback)), otherwise
/// to stderr as the plugin's own log lines do (`hipacm: error: mode exit:
/// ...`, silenced by `HIPACM_LOG=off`). Call [`Mode::exit`] to get the first
/// failure as a [`CompileError`] instead.
///
/// `Mode` is `Send + Sync`: share `&Mode` with threads that submit.
///
/// ```
/// use hipacm::{CachePolicy, Config, LogLevel, Mode, Request};
/// use std::sync::{Arc, Mutex};
///
/// let events = Arc::new(Mutex::new(Vec::new()));
/// let sink = events.clone();
/// hipacm::set_log_callback(LogLevel::Error, move |_, line| {
///     sink.lock().unwrap().push(line.to_string());
/// })?;
/// let mode = Mode::enter(Config::new().arch("gfx90a").cache_policy(CachePolicy::Off))?;
/// let src = r#"extern "C" __global__ void oops(int* p) { p[0] = missing; }"#;
/// mode.submit(&Request::new(src).key("oops"))?;
/// drop(mode); // no exit(): the failure becomes log events, not a panic
/// let events = events.lock().unwrap();
/// assert!(events.iter().any(|line| line.starts_with("mode exit: ") && line.contains("oops")));
/// assert!(events.iter().any(|line| line.contains("'missing'")));
/// # Ok::<(), hipacm::Error>(())
/// ```
pub struct Mode {
    raw: *mut ffi::hipacm_mode,
    /// Every callback slot handed to the plugin by this mode; freed at exit.
    slots: Mutex<Vec<Arc<Slot>>>,
    errors: Arc<FinalizeErrors>,
}

// SAFETY: the mode handle is only passed to thread-safe hipacm functions,
// and exit needs `self` by value (or `&mut` in Drop), so it cannot race a
// submit through this guard.
unsafe impl Send for Mode {}
unsafe impl Sync for Mode {}

impl Mode {
    /// Claims the mode slot. Fails with
    /// [`Status::ModeAlreadyActive`](crate::Status::ModeAlreadyActive) if
    /// another mode is active in the process, `InvalidArgument` for an
    /// unknown arch, `BackendUnavailable` without hipRTC or when libhipacm
    /// itself cannot be loaded (see [`library_path`](crate::library_path)).
    ///
    /// ```
    /// use hipacm::{CachePolicy, Config, Mode, Request};
    ///
    /// let arch = std::env::var("HIPACM_ARCH").unwrap_or_else(|_| "gfx90a".to_string());
    /// let mode = Mode::enter(Config::new().arch(arch).cache_policy(CachePolicy::Off))?;
    /// let futures = (0..3)
    ///     .map(|i| {
    ///         let src = format!("extern \"C\" __global__ void k{}(int* p) {{ p[0] = {}; }}", i, i);
    ///         mode.submit(&Request::new(src))
    ///     })
    ///     .collect::<Result<Vec<_>, _>>()?;
    /// mode.exit()?;
    /// for (i, f) in futures.iter().enumerate() {
    ///     assert_eq!(f.result()?.function_names(), [format!("k{}", i)]);
    /// }
    /// # Ok::<(), hipacm::Error>(())
    /// ```
    pub fn enter(config: Config) -> Result<Mode, Error> {
        let plugin = crate::library::load()?;
        if config.cache_failures && plugin.abi_minor() < 4 {
            return Err(Error::new(
                ffi::HIPACM_ERROR_ABI_MISMATCH,
                format!(
                    "config.cache_failures needs a plugin of ABI 1.4; {} implements 1.{}",
                    plugin.path.display(),
                    plugin.abi_minor()
                ),
            ));
        }
        let arch = match &config.arch {
            Some(a) => Some(c_string(a, "config.arch")?),
            None => None,
        };
        let remote_cache = config.c_remote_cache()?;
        // "off" means the same to a plugin that has no remote tier.
        if remote_cache
            .as_deref()
            .map_or(false, |url| url.to_bytes() != b"off")
            && plugin.abi_minor() < 5
        {
            return Err(Error::new(
                ffi::HIPACM_ERROR_ABI_MISMATCH,
                format!(
                    "config.remote_cache needs a plugin of ABI 1.5; {} implements 1.{}",
                    plugin.path.display(),
                    plugin.abi_minor()
                ),
            ));
        }
        let cache_dir = config.c_cache_dir()?;
        let load_device = config.raw_load_device()?;
        let mut cfg = MaybeUninit::<ffi::hipacm_mode_config>::zeroed();
        // SAFETY: zeroed is a valid config; the plugin writes at most the size we pass.
        let mut cfg = unsafe {
            ffi::hipacm_mode_config_init_sized(
                cfg.as_mut_ptr(),
                size_of::<ffi::hipacm_mode_config>(),
            );
            cfg.assume_init()
        };
        cfg.max_workers = config.max_workers;
        cfg.ignore_errors = i32::from(config.ignore_errors);
        cfg.fail_fast = i32::from(config.fail_fast);
        cfg.arch = arch.as_ref().map_or(ptr::null(), |a| a.as_ptr());
        cfg.isolation = config.isolation.raw();
        cfg.compile_timeout_ms = config.timeout_ms();
        cfg.cache_dir = cache_dir.as_ref().map_or(ptr::null(), |d| d.as_ptr());
        cfg.cache_policy = config.cache_policy.raw();
        cfg.load_device = load_device;
        cfg.cache_failures = i32::from(config.cache_failures);
        // A plugin before ABI 1.5 ignores the field (it lies past its struct).
        cfg.remote_cache = remote_cache.as_ref().map_or(ptr::null(), |u| u.as_ptr());

        let mut raw: *mut ffi::hipacm_mode = ptr::null_mut();
        // SAFETY: cfg, arch, cache_dir and remote_cache live across the call; the plugin
        // copies them.
        let status = unsafe { ffi::hipacm_mode_enter(&cfg, &mut raw) };
        if status != ffi::HIPACM_SUCCESS || raw.is_null() {
            return Err(Error::last(status));
        }
        Ok(Mode {
            raw,
            slots: Mutex::new(Vec::new()),
            errors: Arc::new(FinalizeErrors::default()),
        })
    }

    /// Schedules a compile and returns at once. Submitting a key that is
    /// already in the mode returns the same future (a dedup hit): its
    /// callbacks are the first submit's, and this request's closures are
    /// dropped unrun when the mode exits.
    pub fn submit(&self, request: &Request) -> Result<CompileFuture, Error> {
        let c_request = request.to_c()?;
        let mut req = c_request.raw();
        let slot = request
            .take_callbacks()
            .map(|callbacks| Slot::new(callbacks, self.errors.clone()));
        if let Some(slot) = &slot {
            slot.attach(&mut req);
        }
        let mut out: *mut ffi::hipacm_future = ptr::null_mut();
        // SAFETY: req points into c_request, alive across the call; the slot
        // is kept alive by `slot` now and by self.slots until exit.
        let status = unsafe { ffi::hipacm_submit(self.raw, &req, &mut out) };
        if status != ffi::HIPACM_SUCCESS || out.is_null() {
            let error = Error::last(status);
            // A rejected submit attaches nothing: drop the closures unrun.
            if let Some(slot) = slot {
                slot.discard();
            }
            return Err(error);
        }
        if let Some(slot) = &slot {
            lock(&self.slots).push(slot.clone());
        }
        Ok(CompileFuture::from_raw(out, Some(self.errors.clone()), None).expect("non-NULL future"))
    }

    /// The raw mode handle, valid until the mode exits.
    pub fn as_ptr(&self) -> *mut ffi::hipacm_mode {
        self.raw
    }

    /// Leaves the mode: frees the slot first, then collects every compile in
    /// completion order (running finalize or cleanup exactly once each).
    /// Returns the first failure unless the config set `ignore_errors`.
    pub fn exit(mut self) -> Result<(), CompileError> {
        self.exit_impl()
    }

    fn exit_impl(&mut self) -> Result<(), CompileError> {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        if raw.is_null() {
            return Ok(());
        }
        let mut first: *mut ffi::hipacm_future = ptr::null_mut();
        // SAFETY: a live mode that only this guard can exit.
        let status = unsafe { ffi::hipacm_mode_exit(raw, &mut first) };
        // Read the message before anything else can call into hipacm.
        let error = if status == ffi::HIPACM_SUCCESS {
            None
        } else if first.is_null() {
            Some(Error::last(status))
        } else {
            // SAFETY: first is a reference we now own.
            Some(unsafe { Error::last(status).with_future(first) })
        };
        let first = CompileFuture::from_raw(first, Some(self.errors.clone()), None);

        let slots = std::mem::take(&mut *lock(&self.slots));
        if status == ffi::HIPACM_SUCCESS || first.is_some() {
            // Every future of the mode was collected: no callback of ours can
            // run any more. Closures still in a slot were never attached
            // (dedup hits) or never run; drop them now, exactly once.
            for slot in slots {
                if let Some(message) = slot.discard() {
                    report(
                        LogLevel::Error,
                        &format!("a request closure's destructor panicked: {}", message),
                    );
                }
            }
        } else {
            // The exit call itself failed (not a compile failure): we cannot
            // prove that the plugin will never call these callbacks, so the
            // slots are leaked rather than freed under it.
            report(
                LogLevel::Error,
                &format!(
                    "hipacm_mode_exit failed; leaking {} callback slot(s)",
                    slots.len()
                ),
            );
            std::mem::forget(slots);
        }
        match error {
            None => Ok(()),
            Some(error) => Err(CompileError::new(error, first)),
        }
    }
}

impl Drop for Mode {
    /// Exits the mode if [`Mode::exit`] did not. A failure is reported as
    /// [`LogLevel::Error`] events, the failure first, then each line of its
    /// compiler log: to the log callback when one is installed
    /// ([`set_log_callback`](crate::set_log_callback)), else on stderr unless
    /// `$HIPACM_LOG` is `off`. Never panics.
    fn drop(&mut self) {
        if let Err(e) = self.exit_impl() {
            report(LogLevel::Error, &format!("mode exit: {}", e));
            if let Some(log) = e.log() {
                let key = e.key().unwrap_or("");
                for line in log.lines() {
                    report(
                        LogLevel::Error,
                        &format!("compiler log of '{}': {}", key, line),
                    );
                }
            }
        }
    }
}

impl std::fmt::Debug for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mode").field("handle", &self.raw).finish()
    }
}
