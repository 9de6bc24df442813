// SPDX-License-Identifier: MIT
//! ABI 1.5 through the safe API: `Config::remote_cache` and the remote counters.

mod common;

use common::*;
use hipacm::{CachePolicy, Isolation, Mode, Status};

/// A config whose cache is on (the remote tier is used only then), in `dir`.
fn cached(dir: &TempDir) -> hipacm::Config {
    config()
        .isolation(Isolation::InProcess)
        .cache_dir(dir.path())
        .cache_policy(CachePolicy::Read)
}

#[test]
fn a_malformed_remote_cache_fails_enter_and_leaves_the_slot_free() {
    let _serial = serial();
    let dir = TempDir::new("remote-malformed");
    for (url, why) in [("redis://host:99999", "port"), ("http://x", "scheme")].iter() {
        let err = Mode::enter(cached(&dir).remote_cache(*url)).expect_err("refused");
        assert_eq!(err.status(), Status::InvalidArgument, "{}", err);
        assert!(err.message().contains("remote_cache"), "{}", err);
        assert!(err.message().contains(why), "{}", err);
        assert!(!hipacm::active_mode_is_set());
    }
    let err = Mode::enter(cached(&dir).remote_cache("")).expect_err("refused");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("config.remote_cache"), "{}", err);
    let err = Mode::enter(cached(&dir).remote_cache("redis://h\0")).expect_err("refused");
    assert_eq!(err.status(), Status::InvalidArgument);
}

#[test]
fn remote_cache_off_enters_and_the_counters_stay_zero() {
    let _serial = serial();
    let dir = TempDir::new("remote-off");
    let mode = Mode::enter(cached(&dir).remote_cache("off")).expect("off enters");
    mode.exit().expect("nothing failed");
    let stats = hipacm::stats().expect("ABI 1.5 plugin");
    // No remote tier was used in this process.
    let remote = [
        stats.remote_hits,
        stats.remote_misses,
        stats.remote_refused,
        stats.remote_stores,
        stats.remote_duplicates,
        stats.remote_store_failures,
        stats.remote_errors,
        stats.remote_waits,
    ];
    assert_eq!(remote, [0; 8], "{:?}", stats);
}

#[test]
fn the_debug_form_leaves_out_the_password() {
    let config = config().remote_cache("redis://ci:secret@cache.example:6379/2");
    let text = format!("{:?}", config);
    assert!(
        !text.contains("secret") && !text.contains("ci:"),
        "{}",
        text
    );
    assert!(
        text.contains("\"redis://***@cache.example:6379/2\""),
        "{}",
        text
    );
    assert_ne!(config, self::config(), "the URL is part of the config");
}
