// SPDX-License-Identifier: MIT
//! ABI 1.4 through the safe API: log events sent to a closure, the
//! process-wide counters, and the negative cache (`Config::cache_failures`).

mod common;

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use common::*;
use hipacm::{CachePolicy, Config, Isolation, LogLevel, Mode, Request, Stats, Status};

type Events = Arc<Mutex<Vec<(LogLevel, String)>>>;

/// A config whose cache is `dir`, read-write, compiling in this process.
fn cached(dir: &std::path::Path) -> Config {
    config()
        .isolation(Isolation::InProcess)
        .cache_dir(dir)
        .cache_policy(CachePolicy::ReadWrite)
}

/// Runs one mode of `config` that submits `source` under `key`; returns the
/// compile's outcome (the kernel's code, or the failure) and the counters'
/// change over the mode.
fn one_mode(config: Config, key: &str, source: &str) -> (Result<Vec<u8>, hipacm::Error>, Stats) {
    let before = hipacm::stats().expect("stats");
    let mode = Mode::enter(config).expect("enter");
    let future = mode.submit(&Request::new(source).key(key)).expect("submit");
    drop(mode.exit());
    let outcome = future.result().map(|k| k.code().to_vec());
    let after = hipacm::stats().expect("stats");
    (outcome, after.since(&before))
}

#[test]
fn log_events_reach_the_closure_until_it_is_replaced() {
    let _serial = serial();
    let events: Events = Arc::default();
    let drops = Arc::new(AtomicUsize::new(0));
    let nested = Arc::new(Mutex::new(None));
    let (sink, guard, nested_sink) = (events.clone(), DropCounter(drops.clone()), nested.clone());
    hipacm::set_log_callback(LogLevel::Warning, move |level, message| {
        let _keep = &guard;
        sink.lock().unwrap().push((level, message.to_string()));
        // Replacing the callback from inside it is refused, not a deadlock.
        let refused = hipacm::reset_log_callback().map_err(|e| e.status());
        *nested_sink.lock().unwrap() = Some(refused);
    })
    .expect("ABI 1.4 plugin");

    // A cache "directory" that is a file: the cache is unusable, the compile
    // goes on, and the plugin warns once for that path.
    let dir = TempDir::new("log-events");
    let not_a_dir = dir.path().join("file");
    std::fs::write(&not_a_dir, b"not a directory").unwrap();
    let (code, _) = one_mode(cached(&not_a_dir), "logged", &vadd_source("logged"));
    assert_amdgpu_elf(&code.expect("an unusable cache never fails a compile"));
    let seen = events.lock().unwrap().clone();
    let warning = seen
        .iter()
        .find(|(_, m)| m.contains(&*not_a_dir.to_string_lossy()))
        .unwrap_or_else(|| panic!("no event about {}: {:?}", not_a_dir.display(), seen));
    assert_eq!(warning.0, LogLevel::Warning);
    assert!(warning.1.contains("compiling without it"), "{}", warning.1);
    assert!(!warning.1.starts_with("hipacm: "), "{}", warning.1);
    assert!(
        seen.iter().all(|(level, _)| *level <= LogLevel::Warning),
        "{:?}",
        seen
    );
    assert_eq!(*nested.lock().unwrap(), Some(Err(Status::InvalidArgument)));
    assert_eq!(drops.load(std::sync::atomic::Ordering::SeqCst), 0);

    // Only errors now: the same kind of warning for another path is filtered.
    let errors_only: Events = Arc::default();
    let sink = errors_only.clone();
    hipacm::set_log_callback(LogLevel::Error, move |level, message| {
        sink.lock().unwrap().push((level, message.to_string()));
    })
    .expect("replaced");
    assert_eq!(
        drops.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the replaced closure is dropped once set returns"
    );
    let seen_by_first = events.lock().unwrap().len();
    let other = dir.path().join("other-file");
    std::fs::write(&other, b"not a directory either").unwrap();
    let (code, _) = one_mode(cached(&other), "filtered", &vadd_source("filtered"));
    assert_amdgpu_elf(&code.expect("compiled"));
    assert!(
        errors_only.lock().unwrap().is_empty(),
        "{:?}",
        errors_only.lock().unwrap()
    );
    assert_eq!(
        events.lock().unwrap().len(),
        seen_by_first,
        "the replaced closure is never called again"
    );
    hipacm::reset_log_callback().expect("reset");
}

#[test]
fn stats_count_compiles_stores_and_hits() {
    let _serial = serial();
    let dir = TempDir::new("stats");
    let source = vadd_source("counted");
    let (code, cold) = one_mode(cached(dir.path()), "counted", &source);
    let code = code.expect("compiled");
    assert_eq!(cold.compiles, 1, "{:?}", cold);
    assert_eq!(
        (cold.cache_misses, cold.cache_stores, cold.cache_hits),
        (1, 1, 0),
        "{:?}",
        cold
    );
    assert!(cold.bytes_stored >= code.len() as u64, "{:?}", cold);
    let (again, warm) = one_mode(cached(dir.path()), "counted", &source);
    assert_eq!(again.expect("served"), code);
    assert_eq!(
        (warm.compiles, warm.cache_hits, warm.cache_stores),
        (0, 1, 0),
        "{:?}",
        warm
    );
}

#[test]
fn failures_are_cached_only_when_asked() {
    let _serial = serial();
    let dir = TempDir::new("negative");
    let failing = || cached(dir.path()).cache_failures(true);
    let (first, cold) = one_mode(failing(), "seed", STATIC_ASSERT_SOURCE);
    let first = first.expect_err("static_assert fails");
    assert_eq!(first.status(), Status::Compilation);
    assert_eq!((cold.compiles, cold.compile_failures), (1, 1), "{:?}", cold);

    let (second, warm) = one_mode(failing(), "seed", STATIC_ASSERT_SOURCE);
    let second = second.expect_err("the stored failure");
    assert_eq!(second.status(), Status::Compilation);
    assert!(
        second.log().unwrap_or("").contains("X must be 2"),
        "{:?}",
        second.log()
    );
    assert_eq!((warm.compiles, warm.cached_failures), (0, 1), "{:?}", warm);

    // Without the option, stored failures are not served: the compiler runs.
    let (third, plain) = one_mode(cached(dir.path()), "seed", STATIC_ASSERT_SOURCE);
    assert_eq!(
        third.expect_err("fails again").status(),
        Status::Compilation
    );
    assert_eq!(
        (plain.compiles, plain.cached_failures),
        (1, 0),
        "{:?}",
        plain
    );
}
