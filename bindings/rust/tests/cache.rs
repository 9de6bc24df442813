// SPDX-License-Identifier: MIT
//! ABI 1.2 through the safe API: the persistent cache, `from_cache`, the kernel's functions and `load_device`.

mod common;

use common::*;
use hipacm::{CachePolicy, Config, Isolation, Kernel, Mode, Request, Status};

/// The cache's database in a cache directory (docs/CACHE.md).
const DATABASE: &str = "kernels.sqlite3";

/// Compiles `name`'s vadd in a mode of its own and hands its kernel to `check`.
fn compile_once<T>(config: Config, name: &str, check: impl FnOnce(&Kernel<'_>) -> T) -> T {
    let mode = Mode::enter(config.isolation(Isolation::InProcess)).expect("enter");
    let future = mode
        .submit(&Request::new(vadd_source(name)).key(name))
        .expect("submit");
    mode.exit().expect("nothing failed");
    let kernel = future.result().expect("compiled");
    check(&kernel)
}

fn cached_code(config: Config, name: &str) -> (bool, Vec<u8>) {
    compile_once(config, name, |k| (k.from_cache(), k.code().to_vec()))
}

#[test]
fn a_cache_directory_serves_the_second_mode() {
    let _serial = serial();
    let dir = TempDir::new("serves");
    let config = || {
        config()
            .cache_dir(dir.path())
            .cache_policy(CachePolicy::ReadWrite)
    };
    let (cold_hit, cold) = cached_code(config(), "cached");
    assert!(!cold_hit, "the first compile cannot come from the cache");
    assert!(dir.path().join(DATABASE).is_file());
    let (hit, code) = cached_code(config(), "cached");
    assert!(hit, "the second mode is served from the cache");
    assert_eq!(code, cold);
    assert_amdgpu_elf(&code);
}

#[test]
fn an_explicit_policy_overrides_the_environment() {
    let _serial = serial();
    let dir = TempDir::new("policy");
    let with = |policy| config().cache_dir(dir.path()).cache_policy(policy);
    assert!(!cached_code(with(CachePolicy::Read), "by_policy").0);
    assert!(
        !dir.path().join(DATABASE).exists(),
        "a read-only cache never writes"
    );
    assert!(!cached_code(with(CachePolicy::ReadWrite), "by_policy").0);
    assert!(dir.path().join(DATABASE).is_file());
    assert!(cached_code(with(CachePolicy::Read), "by_policy").0);
    assert!(!cached_code(with(CachePolicy::Off), "by_policy").0);
}

#[test]
fn the_default_policy_follows_the_environment() {
    let _serial = serial();
    let dir = TempDir::new("environment");
    let saved = std::env::var_os("HIPACM_CACHE");
    std::env::set_var("HIPACM_CACHE", "off");
    let off = cached_code(config().cache_dir(dir.path()), "env_off").0;
    let stored = dir.path().join(DATABASE).exists();
    std::env::set_var("HIPACM_CACHE", "sometimes");
    let refused = Mode::enter(config().cache_dir(dir.path()));
    match saved {
        Some(value) => std::env::set_var("HIPACM_CACHE", value),
        None => std::env::remove_var("HIPACM_CACHE"),
    }
    assert!(
        !off && !stored,
        "HIPACM_CACHE=off still disables a directory"
    );
    let err = refused.expect_err("an unknown $HIPACM_CACHE is refused at enter");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("HIPACM_CACHE"), "{}", err);
}

#[test]
fn with_the_cache_off_kernels_list_their_functions_unloaded() {
    let _serial = serial();
    let config = || config().cache_policy(CachePolicy::Off);
    for _ in 0..2 {
        compile_once(config(), "listed", |k| {
            assert!(!k.from_cache());
            assert_eq!(k.function_names(), ["listed"]);
            assert!(
                k.module().is_null(),
                "nothing is loaded without load_device"
            );
            assert_eq!(k.functions(), [std::ptr::null_mut()]);
        });
    }
}

#[test]
fn load_device_without_that_device_fails_the_future_with_backend_unavailable() {
    let _serial = serial();
    let tally = Tally::new();
    // No machine has a device 999: the documented outcome is BACKEND_UNAVAILABLE.
    let mode = Mode::enter(config().cache_policy(CachePolicy::Off).load_device(999))
        .expect("enter: the device is looked up at load time");
    let request = Request::new(vadd_source("unloadable")).key("unloadable");
    let future = mode
        .submit(&tally.cleanup_checking(request, |e| {
            assert_eq!(e.status(), Status::BackendUnavailable)
        }))
        .expect("submit");
    let err = mode.exit().expect_err("the load failed");
    assert_eq!(err.status(), Status::BackendUnavailable);
    assert_eq!(err.key(), Some("unloadable"));
    assert!(!err.message().is_empty());
    assert_eq!(tally.cleaned(), 1, "the cleanup path ran once");
    assert_eq!(
        future.result().expect_err("failed").status(),
        Status::BackendUnavailable
    );
}

#[test]
fn bad_cache_and_device_settings_are_refused_at_enter() {
    let _serial = serial();
    let refused = [
        config().cache_dir(""),
        config().cache_dir("with\0nul"),
        config().load_device(u32::MAX),
    ];
    for config in refused.iter() {
        let err = Mode::enter(config.clone()).expect_err("refused");
        assert_eq!(err.status(), Status::InvalidArgument);
        assert!(err.message().contains("config."), "{}", err);
    }
    assert!(!hipacm::active_mode_is_set());
    let unset = config().load_device(0).load_device(None);
    assert_eq!(unset, config(), "None is the default: compile only");
}
