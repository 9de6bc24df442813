// SPDX-License-Identifier: MIT
//! The async mode through the safe API, with the real plugin and hipRTC.
//!
//! The tests share the process-wide mode slot, so each holds `common::serial()`;
//! plain `cargo test` is fine (no `--test-threads=1` needed).

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

use common::*;
use hipacm::{active_mode_is_set, Isolation, Mode, Request, Status};

#[test]
fn seed_scenario_failing_compile_frees_the_slot_and_next_mode_compiles() {
    let _serial = serial();
    let mode = Mode::enter(config()).expect("enter");
    assert!(active_mode_is_set());

    let tally = Tally::new();
    let bad = tally.cleanup_checking(
        tally.finalize(Request::new(STATIC_ASSERT_SOURCE).key("seed-x1")),
        |e| assert_eq!(e.status(), Status::Compilation),
    );
    let submitted = mode.submit(&bad).expect("submit");

    let err = mode
        .exit()
        .expect_err("a failing static_assert must fail the exit");
    assert_eq!(err.status(), Status::Compilation);
    assert_eq!(err.key(), Some("seed-x1"));
    let log = err.log().expect("a compiler log");
    assert!(log.contains("X must be 2"), "log: {}", log);
    assert!(
        err.message().contains("seed-x1"),
        "message: {}",
        err.message()
    );
    assert!(
        err.to_string().contains("HIPACM_ERROR_COMPILATION"),
        "{}",
        err
    );
    assert_eq!(err.first_failure(), Some(&submitted));
    assert!(
        !active_mode_is_set(),
        "the slot must be free after a failing exit"
    );
    assert_eq!(tally.finalized(), 0);
    assert_eq!(tally.cleaned(), 1);
    let via_future = submitted.result().expect_err("the future failed too");
    assert_eq!(via_future.status(), Status::Compilation);
    assert_eq!(tally.cleaned(), 1, "cleanup ran exactly once");

    // The slot is free: a fresh mode enters and compiles a good kernel.
    let mode = Mode::enter(config()).expect("a fresh mode enters");
    let good = mode
        .submit(&Request::new(vadd_source("vadd")))
        .expect("submit");
    {
        let kernel = good.result().expect("vadd compiles");
        assert!(kernel.code().starts_with(b"\x7fELF"));
        assert_amdgpu_elf(kernel.code());
        assert_eq!(kernel.arch(), ARCH);
        assert!(kernel.compile_seconds() > 0.0);
    }
    mode.exit().expect("nothing failed");
    assert!(!active_mode_is_set());
}

#[test]
fn dedup_across_threads_gives_one_future_and_one_finalize() {
    let _serial = serial();
    let mode = Mode::enter(config()).expect("enter");
    let tally = Tally::new();
    let futures: Vec<hipacm::CompileFuture> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let (mode, tally) = (&mode, tally.clone());
                s.spawn(move || {
                    let request = Request::new(vadd_source("dedup8")).key("dedup-8-threads");
                    let req = tally.finalize_checking(request, |k| {
                        if k.code().starts_with(b"\x7fELF") {
                            Ok(())
                        } else {
                            Err("not an ELF".to_string())
                        }
                    });
                    mode.submit(&req).expect("submit")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for f in &futures {
        assert_eq!(f.as_ptr(), futures[0].as_ptr(), "one key, one future");
        assert_eq!(f.key(), "dedup-8-threads");
    }
    mode.exit().expect("nothing failed");
    assert_eq!(tally.finalized(), 1, "finalize ran exactly once");
    assert_eq!(tally.dropped(), 8, "every closure was dropped exactly once");
    for f in &futures {
        assert_amdgpu_elf(f.result().expect("compiled").code());
    }
    assert_eq!(tally.finalized(), 1);
}

#[test]
fn closures_run_and_drop_exactly_once_and_dedup_hits_are_dropped_unrun() {
    let _serial = serial();
    let mode = Mode::enter(config()).expect("enter");

    // The first submit of a key: its closures are attached.
    let a = Tally::new();
    let first = mode
        .submit(&a.both(Request::new(vadd_source("once")).key("once")))
        .expect("submit");

    // The same key again: a dedup hit. Its closures must never run, and
    // must be dropped exactly once (at the latest when the mode exits).
    let b = Tally::new();
    let second = mode
        .submit(&b.both(Request::new(vadd_source("once")).key("once")))
        .expect("submit");
    assert_eq!(first, second, "a dedup hit returns the same future");

    // Collecting runs the first submit's finalize on this thread, once, and
    // frees both of its closures right away (the cleanup one unrun).
    first.result().expect("compiled");
    second.result().expect("compiled");
    assert_eq!(a.finalized(), 1);
    assert_eq!(a.cleaned(), 0);
    assert_eq!(a.dropped(), 2);
    assert_eq!(
        b.dropped(),
        0,
        "dedup-hit closures are kept until the mode exits"
    );

    // A failing compile: cleanup runs once; the finalize closure is dropped unrun.
    let x = Tally::new();
    let failing_request = x.cleanup_checking(
        x.finalize(Request::new(STATIC_ASSERT_SOURCE).key("once-bad")),
        |e| {
            assert_eq!(e.key(), Some("once-bad"));
            assert!(e.log().unwrap_or("").contains("X must be 2"));
        },
    );
    let failing = mode.submit(&failing_request).expect("submit");

    // A request the plugin rejects (empty source) attaches nothing: its
    // closure is dropped at once, unrun.
    let r = Tally::new();
    let rejected = mode.submit(&r.cleanup(Request::new("")));
    let err = rejected.expect_err("an empty source is rejected");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("source"), "{}", err);
    assert_eq!((r.cleaned(), r.dropped()), (0, 1));

    let err = mode.exit().expect_err("once-bad failed");
    assert_eq!(err.key(), Some("once-bad"));
    assert_eq!(
        (b.finalized(), b.cleaned()),
        (0, 0),
        "dedup-hit closures never run"
    );
    assert_eq!(
        b.dropped(),
        2,
        "dedup-hit closures are dropped exactly once, at exit"
    );
    assert_eq!(x.counts(), (0, 1, 2));
    assert_eq!(a.counts(), (1, 0, 2));
    assert!(failing.result().is_err());
    assert_eq!(x.cleaned(), 1);
}

#[test]
fn finalize_errors_and_panics_become_finalize_failed() {
    let _serial = serial();
    let mode = Mode::enter(config()).expect("enter");
    let cleanup_saw = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));

    let saw = cleanup_saw.clone();
    let refused = mode
        .submit(
            &Request::new(vadd_source("refused"))
                .finalize(|k| Err(format!("cannot load {} bytes", k.code().len())))
                .cleanup(move |e| {
                    saw.lock()
                        .unwrap()
                        .push((e.status(), e.message().to_string()))
                }),
        )
        .expect("submit");
    let saw = cleanup_saw.clone();
    let panicking = mode
        .submit(
            &Request::new(vadd_source("panicking"))
                .finalize(|_| panic!("finalize went wrong"))
                .cleanup(move |e| {
                    saw.lock()
                        .unwrap()
                        .push((e.status(), e.message().to_string()))
                }),
        )
        .expect("submit");
    // A panic in cleanup is caught at the C boundary and logged.
    let cleanup_panics = mode
        .submit(
            &Request::new(STATIC_ASSERT_SOURCE)
                .key("cleanup-panics")
                .cleanup(|_| panic!("cleanup went wrong")),
        )
        .expect("submit");

    let err = refused.result().expect_err("finalize refused");
    assert_eq!(err.status(), Status::FinalizeFailed);
    assert!(err.message().contains("cannot load"), "{}", err);
    let err = panicking.result().expect_err("finalize panicked");
    assert_eq!(err.status(), Status::FinalizeFailed);
    assert!(
        err.message().contains("panicked: finalize went wrong"),
        "{}",
        err
    );
    assert_eq!(
        cleanup_panics.result().expect_err("bad").status(),
        Status::Compilation
    );

    let saw = cleanup_saw.lock().unwrap().clone();
    assert_eq!(saw.len(), 2);
    for (status, message) in &saw {
        assert_eq!(*status, Status::FinalizeFailed);
        assert!(
            message.contains("cannot load") || message.contains("finalize went wrong"),
            "{}",
            message
        );
    }
    let err = mode.exit().expect_err("three futures failed");
    assert!(matches!(
        err.status(),
        Status::FinalizeFailed | Status::Compilation
    ));
    // The finalize message survives the mode.
    assert!(refused
        .result()
        .unwrap_err()
        .message()
        .contains("cannot load"));
}

#[test]
fn dropping_the_guard_while_a_panic_unwinds_frees_the_slot() {
    let _serial = serial();
    let tally = Tally::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mode = Mode::enter(config()).expect("enter");
        let _f = mode
            .submit(&tally.cleanup(Request::new(STATIC_ASSERT_SOURCE).key("panic-bad")))
            .expect("submit");
        assert!(active_mode_is_set());
        panic!("the host JIT failed mid-warmup");
    }));
    assert!(outcome.is_err(), "the scope panicked");
    assert!(
        !active_mode_is_set(),
        "Drop exited the mode while unwinding"
    );
    assert_eq!(
        (tally.cleaned(), tally.dropped()),
        (1, 1),
        "Drop collected the compile"
    );

    let mode = Mode::enter(config()).expect("the slot is free again");
    let f = mode
        .submit(&Request::new(vadd_source("after_panic")))
        .expect("submit");
    mode.exit().expect("nothing failed");
    assert_amdgpu_elf(f.result().expect("compiled").code());
}

#[test]
fn futures_outlive_their_mode() {
    let _serial = serial();
    let (vadd, scale, clone) = {
        let mode = Mode::enter(config()).expect("enter");
        let vadd = mode
            .submit(&Request::new(vadd_source("outlive")).key("outlive"))
            .expect("submit");
        let scale = mode
            .submit(
                &Request::new(common::TEMPLATED_SOURCE)
                    .name("scale.hip")
                    .name_expressions(["scale<float>", "scale<double>"]),
            )
            .expect("submit");
        let clone = vadd.clone();
        mode.exit().expect("nothing failed");
        (vadd, scale, clone)
    };
    assert!(!active_mode_is_set());
    assert!(vadd.wait(Some(Duration::from_millis(0))));
    assert!(vadd.wait(None));
    assert_eq!(vadd.status(), Status::Success);
    assert!(vadd.is_done());
    assert_eq!(vadd.key(), "outlive");
    drop(vadd); // the clone still holds a reference
    let kernel = clone.result().expect("compiled");
    assert_amdgpu_elf(kernel.code());
    assert_eq!(kernel.key(), "outlive");

    let k = scale.result().expect("compiled");
    let names = k.lowered_names();
    assert_eq!(names.len(), 2);
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("_Z") && n.contains("scale")),
        "{:?}",
        names
    );
    assert_ne!(names[0], names[1]);
    assert!(
        scale.key().starts_with("sha256:") && scale.key().len() == 71,
        "a SHA-256 content digest: {}",
        scale.key()
    );
    // Futures move across threads.
    let t = std::thread::spawn(move || scale.result().map(|k| k.code().len()).unwrap_or(0));
    assert!(t.join().unwrap() > 0);
}

#[test]
fn second_enter_is_refused_and_config_options_apply() {
    let _serial = serial();
    let mode = Mode::enter(
        config()
            .isolation(Isolation::Process)
            .compile_timeout(Duration::from_secs(120)),
    )
    .expect("enter with worker processes");
    let err = Mode::enter(config()).expect_err("the slot is taken");
    assert_eq!(err.status(), Status::ModeAlreadyActive);
    assert!(!err.message().is_empty());
    let f = mode
        .submit(&Request::new("#include \"twice.h\"\nextern \"C\" __global__ void hdr(int* p) { p[0] = TWICE(21); }\n")
            .header("twice.h", "#define TWICE(x) ((x) * 2)\n")
            .option("-O2"))
        .expect("submit");
    mode.exit().expect("compiled with a header");
    assert_amdgpu_elf(f.result().expect("compiled").code());

    // ignore_errors: the exit succeeds, the future still reports the failure.
    let mode = Mode::enter(config().ignore_errors(true).fail_fast(true)).expect("enter");
    let bad = mode
        .submit(&Request::new(STATIC_ASSERT_SOURCE).key("ignored"))
        .expect("submit");
    mode.exit().expect("errors ignored");
    assert_eq!(bad.result().unwrap_err().status(), Status::Compilation);

    let err = Mode::enter(config().arch("gfx9999")).expect_err("unknown arch");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(!active_mode_is_set());
}
