// SPDX-License-Identifier: MIT
//! Finds and loads libhipacm at run time (dlopen), once per process.
//!
//! The crate does not link libhipacm: a binary that depends on it runs
//! wherever the plugin can be found, without an rpath or `LD_LIBRARY_PATH`.
//! Search order: `$HIPACM_LIBRARY` (an explicit file, never replaced by
//! another), then `libhipacm.so.1` in the directory that `build.rs` found,
//! then the system loader's `libhipacm.so.1`. Every entry point is taken from
//! the `hipacm_get_provider` table; nothing is ever unloaded.

use std::ffi::{CStr, CString, OsString};
use std::mem::{size_of, MaybeUninit};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

use crate::error::Error;
use crate::ffi;

/// The library's run-time name (its SONAME).
pub(crate) const SONAME: &str = "libhipacm.so.1";

/// The directory `build.rs` found (empty when it found none) and how.
const BUILD_LIB_DIR: &str = env!("HIPACM_BUILD_LIB_DIR");
const BUILD_LIB_SOURCE: &str = env!("HIPACM_BUILD_LIB_SOURCE");

// glibc 2.34 and newer have these in libc itself.
const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;

#[repr(C)]
struct DlInfo {
    dli_fname: *const c_char,
    dli_fbase: *mut c_void,
    dli_sname: *const c_char,
    dli_saddr: *mut c_void,
}

extern "C" {
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
    fn dladdr(address: *const c_void, info: *mut DlInfo) -> c_int;
}

type GetProviderFn = unsafe extern "C" fn(u32) -> *const ffi::hipacm_provider;
type ConfigInitFn = unsafe extern "C" fn(*mut ffi::hipacm_mode_config);

/// The loaded plugin: its file and a copy of its function table.
pub(crate) struct Plugin {
    pub(crate) path: PathBuf,
    /// The table granted for `HIPACM_ABI_VERSION`, copied into this crate's
    /// struct: entries past the plugin's `struct_size` read as `None`.
    pub(crate) table: ffi::hipacm_provider,
    pub(crate) get_provider: GetProviderFn,
    /// The deprecated ABI 1.0 export, which no table carries as such.
    pub(crate) mode_config_init_v1: Option<ConfigInitFn>,
    /// The dlopen handle, never closed; the tests look symbols up through it.
    #[cfg_attr(not(test), allow(dead_code))]
    handle: usize,
}

impl Plugin {
    /// The minor ABI version the plugin granted (0 for a plugin older than
    /// ABI 1.3, which answers only the plain major number).
    pub(crate) fn abi_minor(&self) -> u32 {
        let version = self.table.abi_version;
        if ffi::HIPACM_ABI_VERSION_MAJOR_OF(version) == ffi::HIPACM_ABI_VERSION_MAJOR {
            ffi::HIPACM_ABI_VERSION_MINOR_OF(version)
        } else {
            0
        }
    }

    /// The address of an exported symbol, or NULL.
    #[cfg(test)]
    pub(crate) fn symbol(&self, name: &str) -> *mut c_void {
        let name = CString::new(name).expect("no NUL");
        // SAFETY: a handle from dlopen that is never closed.
        unsafe { dlsym(self.handle as *mut c_void, name.as_ptr()) }
    }
}

static PLUGIN: AtomicPtr<Plugin> = AtomicPtr::new(ptr::null_mut());
static LOADING: Mutex<()> = Mutex::new(());

/// The plugin, loaded on first use. A failure is not remembered: a later
/// call searches again.
pub(crate) fn load() -> Result<&'static Plugin, Error> {
    let loaded = PLUGIN.load(Ordering::Acquire);
    if !loaded.is_null() {
        // SAFETY: published once, after it was fully built, and never freed.
        return Ok(unsafe { &*loaded });
    }
    let _guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    let loaded = PLUGIN.load(Ordering::Acquire);
    if !loaded.is_null() {
        // SAFETY: as above.
        return Ok(unsafe { &*loaded });
    }
    let explicit = std::env::var_os("HIPACM_LIBRARY").filter(|v| !v.is_empty());
    let plugin = search(explicit, BUILD_LIB_DIR, SONAME)
        .map_err(|message| Error::new(ffi::HIPACM_ERROR_BACKEND_UNAVAILABLE, message))?;
    let plugin: &'static Plugin = Box::leak(Box::new(plugin));
    PLUGIN.store(plugin as *const Plugin as *mut Plugin, Ordering::Release);
    Ok(plugin)
}

/// The loaded plugin's table, or `None` when no plugin can be loaded.
pub(crate) fn table() -> Option<&'static ffi::hipacm_provider> {
    load().ok().map(|p| &p.table)
}

/// The candidates in order, as (how it was chosen, what dlopen gets).
fn candidates(
    explicit: Option<OsString>,
    build_dir: &str,
    soname: &str,
) -> Vec<(String, OsString)> {
    if let Some(file) = explicit {
        // An explicit choice is never silently replaced by another library.
        return vec![("$HIPACM_LIBRARY".to_string(), file)];
    }
    let mut found = Vec::new();
    if !build_dir.is_empty() {
        found.push((
            format!("the build-time directory (from {})", BUILD_LIB_SOURCE),
            Path::new(build_dir).join(soname).into_os_string(),
        ));
    }
    found.push(("the system loader".to_string(), OsString::from(soname)));
    found
}

fn search(explicit: Option<OsString>, build_dir: &str, soname: &str) -> Result<Plugin, String> {
    let mut tried = Vec::new();
    for (how, file) in candidates(explicit, build_dir, soname) {
        match open(&file) {
            Ok(plugin) => return Ok(plugin),
            Err(why) => tried.push(format!(
                "  {} ({}): {}",
                how,
                Path::new(&file).display(),
                why
            )),
        }
    }
    Err(format!(
        "hipacm: cannot load {}; tried:\n{}\nSet HIPACM_LIBRARY to the library's path, or \
         build the crate with HIPACM_LIB_DIR (or pkg-config) pointing at its directory.",
        soname,
        tried.join("\n")
    ))
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a thread-local string.
    unsafe {
        let message = dlerror();
        if message.is_null() {
            "unknown dlopen error".to_string()
        } else {
            CStr::from_ptr(message).to_string_lossy().into_owned()
        }
    }
}

/// dlopens `file` and checks its provider table.
fn open(file: &OsString) -> Result<Plugin, String> {
    let c_file =
        CString::new(file.as_bytes()).map_err(|_| "the name holds a NUL byte".to_string())?;
    // SAFETY: a NUL-terminated name; the handle is kept for the process.
    let handle = unsafe { dlopen(c_file.as_ptr(), RTLD_NOW | RTLD_LOCAL) };
    if handle.is_null() {
        return Err(dl_error());
    }
    // SAFETY: a live handle and NUL-terminated names.
    let (get_provider, init_v1) = unsafe {
        (
            dlsym(handle, b"hipacm_get_provider\0".as_ptr() as *const c_char),
            dlsym(
                handle,
                b"hipacm_mode_config_init\0".as_ptr() as *const c_char,
            ),
        )
    };
    if get_provider.is_null() {
        return Err("it does not export hipacm_get_provider: not the hipacm plugin".to_string());
    }
    // SAFETY: hipacm_get_provider has this signature (hipacm.h).
    let get_provider = unsafe { std::mem::transmute::<*mut c_void, GetProviderFn>(get_provider) };
    let mode_config_init_v1: Option<ConfigInitFn> = if init_v1.is_null() {
        None
    } else {
        // SAFETY: as declared in hipacm.h.
        Some(unsafe { std::mem::transmute::<*mut c_void, ConfigInitFn>(init_v1) })
    };
    // SAFETY: get_provider returns a static table or NULL.
    let table = unsafe { copy_table(get_provider)? };
    Ok(Plugin {
        path: loaded_path(get_provider as *const c_void).unwrap_or_else(|| PathBuf::from(file)),
        table,
        get_provider,
        mode_config_init_v1,
        handle: handle as usize,
    })
}

/// The file that holds `address`, as the dynamic loader knows it.
fn loaded_path(address: *const c_void) -> Option<PathBuf> {
    let mut info = MaybeUninit::<DlInfo>::zeroed();
    // SAFETY: dladdr fills info on success; dli_fname lives while the library is loaded.
    unsafe {
        if dladdr(address, info.as_mut_ptr()) == 0 {
            return None;
        }
        let info = info.assume_init();
        if info.dli_fname.is_null() {
            return None;
        }
        let name = CStr::from_ptr(info.dli_fname).to_bytes();
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(name)))
    }
}

/// Size of the provider table of ABI 1.1 (version 2), the oldest this crate drives.
const PROVIDER_V2_SIZE: usize = 176;

/// The table for this crate's ABI version (or, from a plugin older than ABI
/// 1.3, for the plain major number), copied and checked.
///
/// # Safety
/// `get_provider` is the plugin's `hipacm_get_provider`.
unsafe fn copy_table(get_provider: GetProviderFn) -> Result<ffi::hipacm_provider, String> {
    let mut requested = ffi::HIPACM_ABI_VERSION;
    let mut raw = get_provider(requested);
    if raw.is_null() {
        requested = ffi::HIPACM_ABI_VERSION_MAJOR;
        raw = get_provider(requested);
    }
    if raw.is_null() {
        return Err(format!(
            "hipacm_get_provider returned NULL: it does not implement ABI major version {}",
            ffi::HIPACM_ABI_VERSION_MAJOR
        ));
    }
    let size = ptr::read(raw as *const usize);
    if size < PROVIDER_V2_SIZE {
        return Err(format!(
            "its provider table has {} bytes; this crate needs ABI 1.1 or newer ({} bytes, \
             with mode_config_init_sized): rebuild or upgrade libhipacm",
            size, PROVIDER_V2_SIZE
        ));
    }
    let mut table = MaybeUninit::<ffi::hipacm_provider>::zeroed();
    let copied = size.min(size_of::<ffi::hipacm_provider>());
    // SAFETY: the plugin's table holds `size` bytes; every field of ours is
    // valid when zeroed (NULL pointers, None entries).
    ptr::copy_nonoverlapping(raw as *const u8, table.as_mut_ptr() as *mut u8, copied);
    let table = table.assume_init();
    let major = if requested == ffi::HIPACM_ABI_VERSION_MAJOR {
        table.abi_version
    } else {
        ffi::HIPACM_ABI_VERSION_MAJOR_OF(table.abi_version)
    };
    if major != ffi::HIPACM_ABI_VERSION_MAJOR {
        return Err(format!(
            "it reports ABI version {:#x} for a request of {:#x}",
            table.abi_version, requested
        ));
    }
    let required = [
        ("mode_enter", table.mode_enter.is_some()),
        ("mode_exit", table.mode_exit.is_some()),
        ("active_mode", table.active_mode.is_some()),
        ("submit", table.submit.is_some()),
        ("compile", table.compile.is_some()),
        ("future_wait", table.future_wait.is_some()),
        ("future_status", table.future_status.is_some()),
        ("future_result", table.future_result.is_some()),
        ("future_key", table.future_key.is_some()),
        ("future_log", table.future_log.is_some()),
        ("future_error_message", table.future_error_message.is_some()),
        ("future_retain", table.future_retain.is_some()),
        ("future_release", table.future_release.is_some()),
        ("status_string", table.status_string.is_some()),
        ("last_error_message", table.last_error_message.is_some()),
        ("get_backend_info", table.get_backend_info.is_some()),
        (
            "mode_config_init_sized",
            table.mode_config_init_sized.is_some(),
        ),
    ];
    let missing: Vec<&str> = required
        .iter()
        .filter(|(_, present)| !present)
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "its provider table has NULL entries: {}",
            missing.join(", ")
        ));
    }
    Ok(table)
}

/// The file the plugin was loaded from, loading it if needed.
///
/// Fails with [`Status::BackendUnavailable`](crate::Status::BackendUnavailable)
/// and a message naming every place that was tried when libhipacm cannot be
/// found or is not a usable hipacm plugin.
///
/// ```
/// let path = hipacm::library_path()?;
/// assert!(path.to_string_lossy().contains("libhipacm.so"));
/// # Ok::<(), hipacm::Error>(())
/// ```
pub fn library_path() -> Result<PathBuf, Error> {
    load().map(|p| p.path.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_time_directory_is_baked_in() {
        assert!(
            !BUILD_LIB_DIR.is_empty(),
            "build.rs found no library directory"
        );
        assert!(Path::new(BUILD_LIB_DIR).join(SONAME).exists());
        let plugin = load().expect("loads");
        assert!(plugin.path.is_absolute(), "{}", plugin.path.display());
        assert_eq!(plugin.abi_minor(), ffi::HIPACM_ABI_VERSION_MINOR);
    }

    #[test]
    fn an_explicit_library_is_the_only_candidate() {
        let found = candidates(Some(OsString::from("/x/libhipacm.so.1")), "/dir", SONAME);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].1, OsString::from("/x/libhipacm.so.1"));
        let found = candidates(None, "/dir", SONAME);
        let files: Vec<_> = found.iter().map(|c| c.1.clone()).collect();
        assert_eq!(
            files,
            [
                OsString::from("/dir/libhipacm.so.1"),
                OsString::from(SONAME)
            ]
        );
        assert_eq!(candidates(None, "", SONAME).len(), 1);
    }

    #[test]
    fn a_failed_search_names_every_place_tried() {
        let message = search(None, "/nonexistent-hipacm-dir", "libhipacm-absent.so.1")
            .err()
            .expect("nothing to load");
        assert!(
            message.contains("/nonexistent-hipacm-dir/libhipacm-absent.so.1"),
            "{}",
            message
        );
        assert!(
            message.contains("the system loader (libhipacm-absent.so.1)"),
            "{}",
            message
        );
        assert!(message.contains("HIPACM_LIBRARY"), "{}", message);
        let message = search(
            Some(OsString::from("/nonexistent/libhipacm.so.1")),
            "/d",
            SONAME,
        )
        .err()
        .expect("an explicit file that is missing");
        assert!(
            message.contains("$HIPACM_LIBRARY (/nonexistent/libhipacm.so.1)"),
            "{}",
            message
        );
        assert!(!message.contains("system loader"), "{}", message);
    }

    #[test]
    fn a_library_that_is_not_the_plugin_is_refused() {
        // libc is loaded in every process and exports no hipacm_get_provider.
        let message = search(Some(OsString::from("libc.so.6")), "", SONAME)
            .err()
            .expect("libc is not the plugin");
        assert!(message.contains("hipacm_get_provider"), "{}", message);
    }
}
