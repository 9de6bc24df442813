// SPDX-License-Identifier: MIT
//! Raw declarations mirroring `include/hipacm/hipacm.h` (ABI 1.5, LP64).
//!
//! Every struct is `#[repr(C)]` with the header's field order, including the
//! fields appended up to ABI 1.5 (1.3 added none). `hipacm_mode_config_init`
//! is a macro in C that calls [`hipacm_mode_config_init_sized`] with the
//! caller's `sizeof`; from Rust, call that function with
//! `size_of::<hipacm_mode_config>()`.
//!
//! The functions are not linked: they call the plugin that the crate loads
//! at run time (see [`library_path`](crate::library_path)).
//!
//! Each item means what its namesake in the header means; the header's
//! comments and docs/ABI.md are its documentation, so this module alone is
//! exempt from the crate's `missing_docs` lint rather than repeating them.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

pub const HIPACM_ABI_VERSION_MAJOR: u32 = 1;
pub const HIPACM_ABI_VERSION_MINOR: u32 = 5;
/// The request for [`hipacm_get_provider`]: major and minor encoded (ABI 1.3).
/// A plugin older than ABI 1.3 answers only the plain [`HIPACM_ABI_VERSION_MAJOR`].
pub const HIPACM_ABI_VERSION: u32 =
    HIPACM_ABI_VERSION_ENCODE(HIPACM_ABI_VERSION_MAJOR, HIPACM_ABI_VERSION_MINOR);

/// `HIPACM_ABI_VERSION_ENCODE(major, minor)`: the major in the high 16 bits.
#[allow(non_snake_case)]
pub const fn HIPACM_ABI_VERSION_ENCODE(major: u32, minor: u32) -> u32 {
    (major << 16) | minor
}

/// `HIPACM_ABI_VERSION_MAJOR_OF(version)`.
#[allow(non_snake_case)]
pub const fn HIPACM_ABI_VERSION_MAJOR_OF(version: u32) -> u32 {
    version >> 16
}

/// `HIPACM_ABI_VERSION_MINOR_OF(version)`.
#[allow(non_snake_case)]
pub const fn HIPACM_ABI_VERSION_MINOR_OF(version: u32) -> u32 {
    version & 0xFFFF
}

/// `enum hipacm_status`: travels as a C `int`. The numbers never change.
pub type hipacm_status = c_int;
pub const HIPACM_SUCCESS: hipacm_status = 0;
pub const HIPACM_ERROR_INVALID_ARGUMENT: hipacm_status = 1;
pub const HIPACM_ERROR_ABI_MISMATCH: hipacm_status = 2;
pub const HIPACM_ERROR_MODE_ALREADY_ACTIVE: hipacm_status = 3;
pub const HIPACM_ERROR_MODE_CLOSED: hipacm_status = 4;
pub const HIPACM_ERROR_COMPILATION: hipacm_status = 5;
pub const HIPACM_ERROR_COMPILER_CRASHED: hipacm_status = 6;
pub const HIPACM_ERROR_TIMEOUT: hipacm_status = 7;
pub const HIPACM_ERROR_CANCELLED: hipacm_status = 8;
pub const HIPACM_ERROR_BACKEND_UNAVAILABLE: hipacm_status = 9;
pub const HIPACM_ERROR_FINALIZE_FAILED: hipacm_status = 10;
pub const HIPACM_ERROR_NOT_READY: hipacm_status = 11;
pub const HIPACM_ERROR_OUT_OF_MEMORY: hipacm_status = 12;
pub const HIPACM_ERROR_INTERNAL: hipacm_status = 13;

pub const HIPACM_ISOLATION_AUTO: i32 = 0;
pub const HIPACM_ISOLATION_IN_PROCESS: i32 = 1;
pub const HIPACM_ISOLATION_PROCESS: i32 = 2;

/// `hipacm_mode_config.cache_policy` (ABI 1.2): `$HIPACM_CACHE`, else read-write.
pub const HIPACM_CACHE_DEFAULT: i32 = 0;
pub const HIPACM_CACHE_OFF: i32 = 1;
pub const HIPACM_CACHE_READ: i32 = 2;
pub const HIPACM_CACHE_READWRITE: i32 = 3;

/// `hipacm_mode_config.load_device` meaning "compile only" (ABI 1.2).
pub const HIPACM_LOAD_NONE: i32 = -1;

/// Log levels for [`hipacm_set_log_callback`] (ABI 1.4).
pub const HIPACM_LOG_OFF: i32 = 0;
pub const HIPACM_LOG_ERROR: i32 = 1;
pub const HIPACM_LOG_WARNING: i32 = 2;
pub const HIPACM_LOG_INFO: i32 = 3;
pub const HIPACM_LOG_DEBUG: i32 = 4;

/// Receives one log event (ABI 1.4): any thread, possibly concurrently;
/// `message` is borrowed for the call.
pub type hipacm_log_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, level: i32, message: *const c_char)>;

/// Opaque: owned by the plugin from `hipacm_mode_enter` until `hipacm_mode_exit`.
#[repr(C)]
pub struct hipacm_mode {
    _private: [u8; 0],
}

/// Opaque, reference counted.
#[repr(C)]
pub struct hipacm_future {
    _private: [u8; 0],
}

pub type hipacm_finalize_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, f: *mut hipacm_future) -> c_int>;
pub type hipacm_cleanup_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, f: *mut hipacm_future)>;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipacm_mode_config {
    pub struct_size: usize,
    pub max_workers: u32,
    pub ignore_errors: i32,
    pub fail_fast: i32,
    pub arch: *const c_char,
    // ---- end of version 1 (ABI 1.0) ----
    pub isolation: i32,
    pub compile_timeout_ms: u32,
    // ---- end of version 2 (ABI 1.1) ----
    pub cache_dir: *const c_char,
    pub cache_policy: i32,
    pub load_device: i32,
    // ---- end of version 3 (ABI 1.2) ----
    pub cache_failures: i32,
    pub reserved_1_4: i32,
    // ---- end of version 4 (ABI 1.4) ----
    pub remote_cache: *const c_char,
    // ---- end of version 5 (ABI 1.5) ----
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipacm_request {
    pub struct_size: usize,
    pub key: *const c_char,
    pub source: *const c_char,
    pub source_name: *const c_char,
    pub options: *const *const c_char,
    pub num_options: usize,
    pub header_sources: *const *const c_char,
    pub header_names: *const *const c_char,
    pub num_headers: usize,
    pub name_expressions: *const *const c_char,
    pub num_name_expressions: usize,
    pub finalize: hipacm_finalize_fn,
    pub cleanup: hipacm_cleanup_fn,
    pub user_data: *mut c_void,
    // ---- end of version 1 (ABI 1.0) ----
}

/// Filled in by the plugin; `struct_size` says how much of it. A plugin
/// older than ABI 1.2 writes version 1 only: read the fields past it only
/// when `struct_size` covers them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipacm_kernel {
    pub struct_size: usize,
    pub key: *const c_char,
    pub code: *const c_void,
    pub code_size: usize,
    pub log: *const c_char,
    pub arch: *const c_char,
    pub lowered_names: *const *const c_char,
    pub num_lowered_names: usize,
    pub compile_seconds: f64,
    // ---- end of version 1 (ABI 1.0) ----
    pub from_cache: i32,
    pub module: *mut c_void,
    pub function_names: *const *const c_char,
    pub functions: *const *mut c_void,
    pub num_functions: usize,
    // ---- end of version 2 (ABI 1.2) ----
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipacm_backend_info {
    pub struct_size: usize,
    pub available: i32,
    pub compiler: *const c_char,
    pub version: *const c_char,
    pub library_path: *const c_char,
    pub default_arch: *const c_char,
    // ---- end of version 1 (ABI 1.0) ----
}

/// Process-wide counters since the plugin was loaded (ABI 1.4; the remote
/// ones ABI 1.5, which a 1.4 plugin leaves as they were).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct hipacm_stats {
    pub struct_size: usize,
    pub compiles: u64,
    pub compile_failures: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub cache_stores: u64,
    pub bytes_stored: u64,
    pub cache_evictions: u64,
    pub bytes_evicted: u64,
    pub worker_spawns: u64,
    pub worker_crashes: u64,
    pub timeouts: u64,
    pub cached_failures: u64,
    // ---- end of version 1 (ABI 1.4) ----
    pub remote_hits: u64,
    pub remote_misses: u64,
    pub remote_refused: u64,
    pub remote_stores: u64,
    pub remote_duplicates: u64,
    pub remote_store_failures: u64,
    pub remote_errors: u64,
    pub remote_waits: u64,
    // ---- end of version 2 (ABI 1.5) ----
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct hipacm_provider {
    pub struct_size: usize,
    pub abi_version: u32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub mode_config_init: Option<unsafe extern "C" fn(*mut hipacm_mode_config)>,
    pub mode_enter: Option<
        unsafe extern "C" fn(*const hipacm_mode_config, *mut *mut hipacm_mode) -> hipacm_status,
    >,
    pub mode_exit:
        Option<unsafe extern "C" fn(*mut hipacm_mode, *mut *mut hipacm_future) -> hipacm_status>,
    pub active_mode: Option<unsafe extern "C" fn() -> *mut hipacm_mode>,
    pub submit: Option<
        unsafe extern "C" fn(
            *mut hipacm_mode,
            *const hipacm_request,
            *mut *mut hipacm_future,
        ) -> hipacm_status,
    >,
    pub compile: Option<
        unsafe extern "C" fn(
            *const hipacm_request,
            *const c_char,
            *mut *mut hipacm_future,
        ) -> hipacm_status,
    >,
    pub future_wait: Option<unsafe extern "C" fn(*mut hipacm_future, i64) -> hipacm_status>,
    pub future_status: Option<unsafe extern "C" fn(*mut hipacm_future) -> hipacm_status>,
    pub future_result: Option<
        unsafe extern "C" fn(*mut hipacm_future, *mut *const hipacm_kernel) -> hipacm_status,
    >,
    pub future_key: Option<unsafe extern "C" fn(*mut hipacm_future) -> *const c_char>,
    pub future_log: Option<unsafe extern "C" fn(*mut hipacm_future) -> *const c_char>,
    pub future_error_message: Option<unsafe extern "C" fn(*mut hipacm_future) -> *const c_char>,
    pub future_retain: Option<unsafe extern "C" fn(*mut hipacm_future) -> hipacm_status>,
    pub future_release: Option<unsafe extern "C" fn(*mut hipacm_future) -> hipacm_status>,
    pub status_string: Option<unsafe extern "C" fn(hipacm_status) -> *const c_char>,
    pub last_error_message: Option<unsafe extern "C" fn() -> *const c_char>,
    pub get_backend_info: Option<unsafe extern "C" fn(*mut hipacm_backend_info) -> hipacm_status>,
    // ---- end of version 1 (ABI 1.0) ----
    pub mode_config_init_sized: Option<unsafe extern "C" fn(*mut hipacm_mode_config, usize)>,
    // ---- end of version 2 (ABI 1.1) ----
    pub set_log_callback:
        Option<unsafe extern "C" fn(hipacm_log_fn, *mut c_void, i32) -> hipacm_status>,
    pub get_stats: Option<unsafe extern "C" fn(*mut hipacm_stats) -> hipacm_status>,
    // ---- end of version 3 (ABI 1.4) ----
}

pub type hipacm_get_provider_fn = Option<unsafe extern "C" fn(u32) -> *const hipacm_provider>;

/// `through_the_table! { /// doc  pub fn name(args) -> ret = field else fallback; }`:
/// the C entry points as functions that call the loaded plugin's table.
macro_rules! through_the_table {
    ($($(#[$doc:meta])* pub fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? = $field:ident else $fallback:expr;)+) => {
        $(
            $(#[$doc])*
            ///
            /// # Safety
            /// The contract of the C function of the same name in `hipacm.h`.
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                match crate::library::table().and_then(|t| t.$field) {
                    Some(f) => f($($arg),*),
                    None => $fallback,
                }
            }
        )+
    };
}

/// What the pointer-returning entry points give when no plugin can be loaded.
const NOT_LOADED: *const c_char =
    b"libhipacm could not be loaded (hipacm::library_path() says why)\0".as_ptr() as *const c_char;
const EMPTY: *const c_char = b"\0".as_ptr() as *const c_char;

// The plugin is loaded at run time (see `hipacm::library_path`); these call
// it through its provider table. When no plugin can be loaded, a status
// function returns HIPACM_ERROR_BACKEND_UNAVAILABLE, a handle function NULL,
// a string function a static message, and the config initialisers write nothing.
through_the_table! {
    pub fn hipacm_mode_config_init_sized(cfg: *mut hipacm_mode_config, struct_size: usize) = mode_config_init_sized else ();
    pub fn hipacm_mode_enter(cfg: *const hipacm_mode_config, out: *mut *mut hipacm_mode) -> hipacm_status = mode_enter else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_active_mode() -> *mut hipacm_mode = active_mode else ptr::null_mut();
    pub fn hipacm_submit(mode: *mut hipacm_mode, req: *const hipacm_request, out: *mut *mut hipacm_future) -> hipacm_status = submit else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_mode_exit(mode: *mut hipacm_mode, first_failure: *mut *mut hipacm_future) -> hipacm_status = mode_exit else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_compile(req: *const hipacm_request, arch: *const c_char, out: *mut *mut hipacm_future) -> hipacm_status = compile else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_retain(f: *mut hipacm_future) -> hipacm_status = future_retain else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_release(f: *mut hipacm_future) -> hipacm_status = future_release else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_wait(f: *mut hipacm_future, timeout_ms: i64) -> hipacm_status = future_wait else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_status(f: *mut hipacm_future) -> hipacm_status = future_status else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_result(f: *mut hipacm_future, out: *mut *const hipacm_kernel) -> hipacm_status = future_result else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    pub fn hipacm_future_key(f: *mut hipacm_future) -> *const c_char = future_key else EMPTY;
    pub fn hipacm_future_log(f: *mut hipacm_future) -> *const c_char = future_log else EMPTY;
    pub fn hipacm_future_error_message(f: *mut hipacm_future) -> *const c_char = future_error_message else EMPTY;
    pub fn hipacm_status_string(status: hipacm_status) -> *const c_char = status_string else NOT_LOADED;
    pub fn hipacm_last_error_message() -> *const c_char = last_error_message else NOT_LOADED;
    pub fn hipacm_get_backend_info(out: *mut hipacm_backend_info) -> hipacm_status = get_backend_info else HIPACM_ERROR_BACKEND_UNAVAILABLE;
    /// ABI 1.4; a plugin older than that gives HIPACM_ERROR_ABI_MISMATCH.
    pub fn hipacm_set_log_callback(callback: hipacm_log_fn, user_data: *mut c_void, max_level: i32) -> hipacm_status = set_log_callback else HIPACM_ERROR_ABI_MISMATCH;
    /// ABI 1.4; a plugin older than that gives HIPACM_ERROR_ABI_MISMATCH.
    pub fn hipacm_get_stats(out: *mut hipacm_stats) -> hipacm_status = get_stats else HIPACM_ERROR_ABI_MISMATCH;
}

/// The ABI 1.0 entry point: fills version 1 only. Prefer `_sized`.
///
/// # Safety
/// As `hipacm_mode_config_init` in `hipacm.h`.
pub unsafe fn hipacm_mode_config_init(cfg: *mut hipacm_mode_config) {
    if let Some(init) = crate::library::load()
        .ok()
        .and_then(|p| p.mode_config_init_v1)
    {
        init(cfg)
    }
}

/// The loaded plugin's `hipacm_get_provider`; NULL when no plugin can be loaded.
///
/// # Safety
/// As `hipacm_get_provider` in `hipacm.h`.
pub unsafe fn hipacm_get_provider(abi_version: u32) -> *const hipacm_provider {
    match crate::library::load() {
        Ok(plugin) => (plugin.get_provider)(abi_version),
        Err(_) => ptr::null(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, size_of, MaybeUninit};
    use std::ptr::addr_of;

    /// offsetof without `core::mem::offset_of!` (Rust 1.77): kept for rustc 1.63.
    macro_rules! offset_of {
        ($ty:ty, $field:ident) => {{
            let value = MaybeUninit::<$ty>::uninit();
            let base = value.as_ptr();
            // SAFETY: addr_of! computes a field address without reading or referencing it.
            let field = unsafe { addr_of!((*base).$field) };
            field as usize - base as usize
        }};
    }

    /// `layout_test!(name: T, size; field offset, ...)`: a test of sizeof T and
    /// of each field's offset.
    macro_rules! layout_test {
        ($name:ident: $ty:ty, $size:expr; $($field:ident $offset:expr),+ $(,)?) => {
            #[test]
            #[cfg(target_pointer_width = "64")]
            fn $name() {
                assert_eq!(size_of::<$ty>(), $size, "sizeof {}", stringify!($ty));
                $(assert_eq!(offset_of!($ty, $field), $offset, "{}.{}", stringify!($ty), stringify!($field));)+
            }
        };
    }

    // The numbers come from the C header compiled with gcc on x86_64 Linux
    // (offsetof/sizeof); see tests/plugin/abi/header_cxx_test.cpp for the C side.
    layout_test!(mode_config_layout: hipacm_mode_config, 72;
        struct_size 0, max_workers 8, ignore_errors 12, fail_fast 16, arch 24,
        isolation 32, compile_timeout_ms 36, cache_dir 40, cache_policy 48, load_device 52,
        cache_failures 56, reserved_1_4 60, remote_cache 64);
    layout_test!(request_layout: hipacm_request, 112;
        struct_size 0, key 8, source 16, source_name 24, options 32, num_options 40,
        header_sources 48, header_names 56, num_headers 64, name_expressions 72,
        num_name_expressions 80, finalize 88, cleanup 96, user_data 104);
    layout_test!(kernel_layout: hipacm_kernel, 112;
        key 8, code 16, code_size 24, log 32, arch 40, lowered_names 48,
        num_lowered_names 56, compile_seconds 64, from_cache 72, module 80,
        function_names 88, functions 96, num_functions 104);
    layout_test!(backend_info_layout: hipacm_backend_info, 48;
        available 8, compiler 16, version 24, library_path 32, default_arch 40);
    layout_test!(provider_layout: hipacm_provider, 192;
        abi_version 8, name 16, version 24, mode_config_init 32, get_backend_info 160,
        mode_config_init_sized 168, set_log_callback 176, get_stats 184);
    layout_test!(stats_layout: hipacm_stats, 168;
        struct_size 0, compiles 8, compile_failures 16, cache_hits 24, cache_misses 32,
        cache_stores 40, bytes_stored 48, cache_evictions 56, bytes_evicted 64,
        worker_spawns 72, worker_crashes 80, timeouts 88, cached_failures 96,
        remote_hits 104, remote_misses 112, remote_refused 120, remote_stores 128,
        remote_duplicates 136, remote_store_failures 144, remote_errors 152, remote_waits 160);

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn alignment_and_function_pointers_match_c() {
        assert_eq!(align_of::<hipacm_mode_config>(), 8);
        // Function pointers are nullable pointers, as in C.
        assert_eq!(size_of::<hipacm_finalize_fn>(), size_of::<*const c_void>());
        assert_eq!(size_of::<hipacm_cleanup_fn>(), size_of::<*const c_void>());
    }

    /// sizeof mode_config, request, kernel, backend_info and provider (LP64)
    /// in the header of ABI 1.<index>: docs/ABI.md's changelog as numbers.
    const SIZES_BY_MINOR: [[usize; 5]; 6] = [
        [32, 112, 72, 48, 168],
        [40, 112, 72, 48, 176],
        [56, 112, 112, 48, 176],
        [56, 112, 112, 48, 176], // 1.3 added no struct field
        [64, 112, 112, 48, 192], // 1.4 also added hipacm_stats (104 bytes)
        [72, 112, 112, 48, 192], // 1.5 also grew hipacm_stats to 168 bytes
    ];

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn declared_minor_is_the_one_whose_structs_are_mirrored() {
        let mirrored = [
            size_of::<hipacm_mode_config>(),
            size_of::<hipacm_request>(),
            size_of::<hipacm_kernel>(),
            size_of::<hipacm_backend_info>(),
            size_of::<hipacm_provider>(),
        ];
        assert_eq!(mirrored, SIZES_BY_MINOR[HIPACM_ABI_VERSION_MINOR as usize]);
    }

    /// The header this crate mirrors (the crate lives in its repository).
    const HEADER: &str = include_str!("../../../include/hipacm/hipacm.h");

    /// The value of `#define name value` in the header.
    fn header_define(name: &str) -> i64 {
        let value = HEADER
            .lines()
            .find_map(|line| {
                line.strip_prefix("#define ")?
                    .strip_prefix(name)?
                    .strip_prefix(' ')
            })
            .unwrap_or_else(|| panic!("{} is not defined in hipacm.h", name));
        let value = value.split_whitespace().next().unwrap_or("");
        value
            .trim_matches(|c| c == '(' || c == ')')
            .parse()
            .expect(name)
    }

    #[test]
    fn abi_version_and_constants_match_the_header() {
        assert_eq!(HIPACM_ABI_VERSION, 0x0001_0005);
        assert_eq!(HIPACM_ABI_VERSION_MAJOR_OF(HIPACM_ABI_VERSION), 1);
        assert_eq!(HIPACM_ABI_VERSION_MINOR_OF(HIPACM_ABI_VERSION), 5);
        let wide = HIPACM_ABI_VERSION_ENCODE(7, 0xFFFF);
        assert_eq!(
            (
                HIPACM_ABI_VERSION_MAJOR_OF(wide),
                HIPACM_ABI_VERSION_MINOR_OF(wide)
            ),
            (7, 0xFFFF)
        );
        // The crate may lag the header, never lead it.
        assert_eq!(
            i64::from(HIPACM_ABI_VERSION_MAJOR),
            header_define("HIPACM_ABI_VERSION_MAJOR")
        );
        assert!(i64::from(HIPACM_ABI_VERSION_MINOR) <= header_define("HIPACM_ABI_VERSION_MINOR"));
        let constants = [
            ("HIPACM_ISOLATION_PROCESS", HIPACM_ISOLATION_PROCESS),
            ("HIPACM_CACHE_DEFAULT", HIPACM_CACHE_DEFAULT),
            ("HIPACM_CACHE_OFF", HIPACM_CACHE_OFF),
            ("HIPACM_CACHE_READ", HIPACM_CACHE_READ),
            ("HIPACM_CACHE_READWRITE", HIPACM_CACHE_READWRITE),
            ("HIPACM_LOAD_NONE", HIPACM_LOAD_NONE),
            ("HIPACM_LOG_OFF", HIPACM_LOG_OFF),
            ("HIPACM_LOG_ERROR", HIPACM_LOG_ERROR),
            ("HIPACM_LOG_WARNING", HIPACM_LOG_WARNING),
            ("HIPACM_LOG_INFO", HIPACM_LOG_INFO),
            ("HIPACM_LOG_DEBUG", HIPACM_LOG_DEBUG),
        ];
        for (name, value) in constants.iter() {
            assert_eq!(i64::from(*value), header_define(name), "{}", name);
        }
    }

    #[test]
    fn status_is_a_c_int() {
        assert_eq!(size_of::<hipacm_status>(), 4);
    }

    #[test]
    fn config_init_sized_fills_the_whole_struct() {
        let mut cfg = MaybeUninit::<hipacm_mode_config>::uninit();
        // SAFETY: the plugin writes exactly the size we pass.
        let cfg = unsafe {
            hipacm_mode_config_init_sized(cfg.as_mut_ptr(), size_of::<hipacm_mode_config>());
            cfg.assume_init()
        };
        assert_eq!(cfg.struct_size, size_of::<hipacm_mode_config>());
        assert_eq!(cfg.max_workers, 0);
        assert!(cfg.arch.is_null());
        assert_eq!(cfg.isolation, HIPACM_ISOLATION_AUTO);
        assert_eq!(cfg.compile_timeout_ms, 0);
        assert!(cfg.cache_dir.is_null());
        assert_eq!(cfg.cache_policy, HIPACM_CACHE_DEFAULT);
        assert_eq!(cfg.load_device, HIPACM_LOAD_NONE);
        assert_eq!((cfg.cache_failures, cfg.reserved_1_4), (0, 0));
        assert!(cfg.remote_cache.is_null());
    }

    #[test]
    fn provider_table_matches_the_exports() {
        // SAFETY: a static table owned by the plugin, or NULL.
        let provider = unsafe { hipacm_get_provider(HIPACM_ABI_VERSION).as_ref() }
            .expect("the plugin implements ABI 1.5");
        // A plugin of this tree knows every minor the crate mirrors.
        assert_eq!(provider.abi_version, HIPACM_ABI_VERSION);
        assert!(provider.struct_size >= size_of::<hipacm_provider>());
        let plugin = crate::library::load().expect("loaded");
        let entries = [
            (
                "hipacm_mode_config_init_sized",
                provider.mode_config_init_sized.map(|f| f as usize),
            ),
            ("hipacm_submit", provider.submit.map(|f| f as usize)),
            (
                "hipacm_set_log_callback",
                provider.set_log_callback.map(|f| f as usize),
            ),
            ("hipacm_get_stats", provider.get_stats.map(|f| f as usize)),
        ];
        for (name, entry) in entries.iter() {
            assert_eq!(*entry, Some(plugin.symbol(name) as usize), "{}", name);
        }
        // The copy this crate calls through is the same table.
        assert_eq!(plugin.table.get_stats.map(|f| f as usize), entries[3].1);
        // SAFETY: as above.
        let plain = unsafe { hipacm_get_provider(HIPACM_ABI_VERSION_MAJOR).as_ref() }
            .expect("the plain major number of headers before 1.3");
        assert_eq!(plain.abi_version, HIPACM_ABI_VERSION_MAJOR);
        // SAFETY: an unsupported major version gives NULL, encoded or plain.
        unsafe {
            assert!(hipacm_get_provider(HIPACM_ABI_VERSION_ENCODE(2, 0)).is_null());
            assert!(hipacm_get_provider(HIPACM_ABI_VERSION_MAJOR + 1).is_null());
        }
    }
}
