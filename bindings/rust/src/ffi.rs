//! Raw declarations mirroring `include/hipacm/hipacm.h` (ABI 1.1, LP64).
//!
//! Every struct is `#[repr(C)]` with the header's field order, including the
//! fields appended in ABI 1.1. `hipacm_mode_config_init` is a macro in C that
//! calls [`hipacm_mode_config_init_sized`] with the caller's `sizeof`; from
//! Rust, call that function with `size_of::<hipacm_mode_config>()`.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_void};

pub const HIPACM_ABI_VERSION_MAJOR: u32 = 1;
pub const HIPACM_ABI_VERSION_MINOR: u32 = 1;
pub const HIPACM_ABI_VERSION: u32 = HIPACM_ABI_VERSION_MAJOR;

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
}

pub type hipacm_get_provider_fn = Option<unsafe extern "C" fn(u32) -> *const hipacm_provider>;

// Linked by build.rs (`cargo:rustc-link-lib=dylib=hipacm`).
extern "C" {
    pub fn hipacm_mode_config_init_sized(cfg: *mut hipacm_mode_config, struct_size: usize);
    /// The ABI 1.0 entry point: fills version 1 only. Prefer `_sized`.
    pub fn hipacm_mode_config_init(cfg: *mut hipacm_mode_config);
    pub fn hipacm_mode_enter(
        cfg: *const hipacm_mode_config,
        out: *mut *mut hipacm_mode,
    ) -> hipacm_status;
    pub fn hipacm_active_mode() -> *mut hipacm_mode;
    pub fn hipacm_submit(
        mode: *mut hipacm_mode,
        req: *const hipacm_request,
        out: *mut *mut hipacm_future,
    ) -> hipacm_status;
    pub fn hipacm_mode_exit(
        mode: *mut hipacm_mode,
        first_failure: *mut *mut hipacm_future,
    ) -> hipacm_status;
    pub fn hipacm_compile(
        req: *const hipacm_request,
        arch: *const c_char,
        out: *mut *mut hipacm_future,
    ) -> hipacm_status;
    pub fn hipacm_future_retain(f: *mut hipacm_future) -> hipacm_status;
    pub fn hipacm_future_release(f: *mut hipacm_future) -> hipacm_status;
    pub fn hipacm_future_wait(f: *mut hipacm_future, timeout_ms: i64) -> hipacm_status;
    pub fn hipacm_future_status(f: *mut hipacm_future) -> hipacm_status;
    pub fn hipacm_future_result(
        f: *mut hipacm_future,
        out: *mut *const hipacm_kernel,
    ) -> hipacm_status;
    pub fn hipacm_future_key(f: *mut hipacm_future) -> *const c_char;
    pub fn hipacm_future_log(f: *mut hipacm_future) -> *const c_char;
    pub fn hipacm_future_error_message(f: *mut hipacm_future) -> *const c_char;
    pub fn hipacm_status_string(status: hipacm_status) -> *const c_char;
    pub fn hipacm_last_error_message() -> *const c_char;
    pub fn hipacm_get_backend_info(out: *mut hipacm_backend_info) -> hipacm_status;
    pub fn hipacm_get_provider(abi_version: u32) -> *const hipacm_provider;
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

    // The numbers come from the C header compiled with gcc on x86_64 Linux
    // (offsetof/sizeof); see tests/abi/header_cxx_test.cpp for the C side.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn mode_config_layout() {
        assert_eq!(size_of::<hipacm_mode_config>(), 40);
        assert_eq!(align_of::<hipacm_mode_config>(), 8);
        assert_eq!(offset_of!(hipacm_mode_config, struct_size), 0);
        assert_eq!(offset_of!(hipacm_mode_config, max_workers), 8);
        assert_eq!(offset_of!(hipacm_mode_config, ignore_errors), 12);
        assert_eq!(offset_of!(hipacm_mode_config, fail_fast), 16);
        assert_eq!(offset_of!(hipacm_mode_config, arch), 24);
        assert_eq!(offset_of!(hipacm_mode_config, isolation), 32);
        assert_eq!(offset_of!(hipacm_mode_config, compile_timeout_ms), 36);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn request_layout() {
        assert_eq!(size_of::<hipacm_request>(), 112);
        assert_eq!(offset_of!(hipacm_request, struct_size), 0);
        assert_eq!(offset_of!(hipacm_request, key), 8);
        assert_eq!(offset_of!(hipacm_request, source), 16);
        assert_eq!(offset_of!(hipacm_request, source_name), 24);
        assert_eq!(offset_of!(hipacm_request, options), 32);
        assert_eq!(offset_of!(hipacm_request, num_options), 40);
        assert_eq!(offset_of!(hipacm_request, header_sources), 48);
        assert_eq!(offset_of!(hipacm_request, header_names), 56);
        assert_eq!(offset_of!(hipacm_request, num_headers), 64);
        assert_eq!(offset_of!(hipacm_request, name_expressions), 72);
        assert_eq!(offset_of!(hipacm_request, num_name_expressions), 80);
        assert_eq!(offset_of!(hipacm_request, finalize), 88);
        assert_eq!(offset_of!(hipacm_request, cleanup), 96);
        assert_eq!(offset_of!(hipacm_request, user_data), 104);
        // Function pointers are nullable pointers, as in C.
        assert_eq!(size_of::<hipacm_finalize_fn>(), size_of::<*const c_void>());
        assert_eq!(size_of::<hipacm_cleanup_fn>(), size_of::<*const c_void>());
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn kernel_layout() {
        assert_eq!(size_of::<hipacm_kernel>(), 72);
        assert_eq!(offset_of!(hipacm_kernel, key), 8);
        assert_eq!(offset_of!(hipacm_kernel, code), 16);
        assert_eq!(offset_of!(hipacm_kernel, code_size), 24);
        assert_eq!(offset_of!(hipacm_kernel, log), 32);
        assert_eq!(offset_of!(hipacm_kernel, arch), 40);
        assert_eq!(offset_of!(hipacm_kernel, lowered_names), 48);
        assert_eq!(offset_of!(hipacm_kernel, num_lowered_names), 56);
        assert_eq!(offset_of!(hipacm_kernel, compile_seconds), 64);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn backend_info_layout() {
        assert_eq!(size_of::<hipacm_backend_info>(), 48);
        assert_eq!(offset_of!(hipacm_backend_info, available), 8);
        assert_eq!(offset_of!(hipacm_backend_info, compiler), 16);
        assert_eq!(offset_of!(hipacm_backend_info, version), 24);
        assert_eq!(offset_of!(hipacm_backend_info, library_path), 32);
        assert_eq!(offset_of!(hipacm_backend_info, default_arch), 40);
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn provider_layout() {
        assert_eq!(size_of::<hipacm_provider>(), 176);
        assert_eq!(offset_of!(hipacm_provider, abi_version), 8);
        assert_eq!(offset_of!(hipacm_provider, name), 16);
        assert_eq!(offset_of!(hipacm_provider, version), 24);
        assert_eq!(offset_of!(hipacm_provider, mode_config_init), 32);
        assert_eq!(offset_of!(hipacm_provider, get_backend_info), 160);
        assert_eq!(offset_of!(hipacm_provider, mode_config_init_sized), 168);
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
    }

    #[test]
    fn provider_table_matches_the_direct_exports() {
        // SAFETY: a static table owned by the plugin, or NULL.
        let provider = unsafe { hipacm_get_provider(HIPACM_ABI_VERSION).as_ref() }
            .expect("the plugin implements ABI 1");
        assert_eq!(provider.abi_version, HIPACM_ABI_VERSION);
        assert!(provider.struct_size >= size_of::<hipacm_provider>());
        assert_eq!(
            provider
                .mode_config_init_sized
                .map(|f| f as *const () as usize),
            Some(hipacm_mode_config_init_sized as *const () as usize)
        );
        assert_eq!(
            provider.submit.map(|f| f as *const () as usize),
            Some(hipacm_submit as *const () as usize)
        );
        // SAFETY: an unsupported major version gives NULL.
        assert!(unsafe { hipacm_get_provider(HIPACM_ABI_VERSION + 1) }.is_null());
    }
}
