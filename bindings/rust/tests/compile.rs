// SPDX-License-Identifier: MIT
//! The synchronous path, `hipacm::compile`, and the module-level functions.

mod common;

use common::*;
use hipacm::{compile, Request, Status};

#[test]
fn compile_runs_callbacks_at_result_exactly_once() {
    let _serial = serial();
    let tally = Tally::new();
    let req = tally.finalize_checking(Request::new(vadd_source("sync_vadd")).key("sync"), |k| {
        assert_eq!(k.key(), "sync");
        Ok(())
    });
    let future = compile(&req, Some(ARCH)).expect("accepted");
    assert_eq!(future.status(), Status::Success);
    assert_eq!(
        tally.finalized(),
        0,
        "callbacks run at result(), not at compile()"
    );
    let other = future.clone();
    let kernel = future.result().expect("compiled");
    assert_amdgpu_elf(kernel.code());
    assert_eq!(kernel.arch(), ARCH);
    other.result().expect("compiled");
    assert_eq!((tally.finalized(), tally.dropped()), (1, 1));
    // A second submit of the same Request value carries no closures.
    let again = compile(&req, Some(ARCH)).expect("accepted");
    again.result().expect("compiled");
    assert_eq!(tally.finalized(), 1);
}

#[test]
fn compile_failure_is_a_future_whose_result_fails() {
    let _serial = serial();
    let tally = Tally::new();
    let req = tally.cleanup_checking(Request::new(STATIC_ASSERT_SOURCE).key("sync-bad"), |e| {
        assert_eq!(e.status(), Status::Compilation)
    });
    let future = compile(&req, Some(ARCH)).expect("the request itself was valid");
    let err = future.result().expect_err("static_assert fails");
    assert_eq!(err.status(), Status::Compilation);
    assert_eq!(err.key(), Some("sync-bad"));
    assert!(
        err.log().unwrap().contains("X must be 2"),
        "{:?}",
        err.log()
    );
    assert!(future.log().contains("X must be 2"));
    assert!(!future.error_message().is_empty());
    assert_eq!((tally.cleaned(), tally.dropped()), (1, 1));
}

#[test]
fn uncollected_compile_drops_its_closures_with_the_last_future() {
    let _serial = serial();
    let tally = Tally::new();
    let req = tally.finalize(Request::new(vadd_source("never_collected")));
    let future = compile(&req, Some(ARCH)).expect("accepted");
    let clone = future.clone();
    drop(future);
    assert_eq!(tally.dropped(), 0);
    drop(clone);
    assert_eq!((tally.finalized(), tally.dropped()), (0, 1));
}

#[test]
fn rejected_requests_are_errors() {
    let _serial = serial();
    let err = compile(&Request::new("int x;\0"), Some(ARCH)).expect_err("NUL byte");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("NUL"), "{}", err);
    let err = compile(&Request::new(vadd_source("y")).key(""), Some(ARCH)).expect_err("empty key");
    assert_eq!(err.status(), Status::InvalidArgument);

    let tally = Tally::new();
    let req = tally.cleanup(Request::new(vadd_source("x")));
    let err = compile(&req, Some("gfx9999")).expect_err("unknown arch");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains("gfx9999"), "{}", err);
    assert_eq!(
        (tally.cleaned(), tally.dropped()),
        (0, 1),
        "rejected: dropped unrun"
    );
}

#[test]
fn backend_is_available() {
    let info = hipacm::backend_info();
    assert!(info.available, "{:?}", info);
    assert_eq!(info.compiler, "hiprtc");
    assert!(!info.version.is_empty());
    assert!(!info.library_path.is_empty());
    assert!(info.error.is_none());
}

/// `hipacm::Future`, the old name, still names `CompileFuture`; it is
/// deprecated, and allowed here so that `-D warnings` lints pass.
#[test]
#[allow(deprecated)]
fn future_is_the_deprecated_name_of_compile_future() {
    let _serial = serial();
    let old: hipacm::Future =
        compile(&Request::new(vadd_source("renamed")), Some(ARCH)).expect("accepted");
    let renamed: hipacm::CompileFuture = old.clone();
    assert_eq!(old, renamed);
    assert_amdgpu_elf(renamed.result().expect("compiled").code());
}
