// SPDX-License-Identifier: MIT
//! What a dropped `Mode` reports: a compile failure that only `Drop` sees
//! goes to the installed log callback and not to stderr; without a callback
//! it goes to stderr as the plugin's own log lines do, unless `$HIPACM_LOG`
//! is `off`.
//!
//! Each case runs in a child process (this test binary again, running only
//! `child`), so that its stderr is the child's own fd 2, captured whole.

use std::process::{Command, Output};
use std::sync::Mutex;

use hipacm::{CachePolicy, Config, Isolation, LogLevel, Mode, Request};

/// Selects the case that `child` runs; unset in the parent.
const CASE_VARIABLE: &str = "HIPACM_RUST_TEST_DROP_CASE";
const KEY: &str = "dropped-with-a-failure";
/// An identifier that the failing kernel uses and the compiler log names.
const UNDECLARED: &str = "undeclared_in_the_dropped_mode";
/// Each event the child's callback got is printed on stdout after this.
const EVENT: &str = "EVENT ";

static EVENTS: Mutex<Vec<(LogLevel, String)>> = Mutex::new(Vec::new());

/// Enters a mode, submits a kernel that fails to compile, and drops the
/// mode without `exit()`.
fn drop_a_failed_mode() {
    let config = Config::new()
        .arch("gfx90a")
        .isolation(Isolation::InProcess)
        .cache_policy(CachePolicy::Off);
    let mode = Mode::enter(config).expect("enter");
    let source = format!(
        "extern \"C\" __global__ void broken(int* p) {{ p[0] = {}; }}",
        UNDECLARED
    );
    mode.submit(&Request::new(source).key(KEY)).expect("submit");
    drop(mode);
}

/// Not a test of its own: the body of a child process, chosen by
/// `$HIPACM_RUST_TEST_DROP_CASE`; without it (the parent run) it does nothing.
#[test]
fn child() {
    let case = match std::env::var(CASE_VARIABLE) {
        Ok(case) => case,
        Err(_) => return,
    };
    match case.as_str() {
        "callback" => {
            hipacm::set_log_callback(LogLevel::Debug, |level, message| {
                EVENTS.lock().unwrap().push((level, message.to_string()));
            })
            .expect("set_log_callback");
            drop_a_failed_mode();
            for (level, message) in EVENTS.lock().unwrap().iter() {
                println!("{}{:?} {}", EVENT, level, message);
            }
        }
        "no-callback" => drop_a_failed_mode(),
        other => panic!("unknown case {}", other),
    }
}

/// Runs `child` with `case`, `$HIPACM_LOG` set to `log` (or unset).
fn run_child(case: &str, log: Option<&str>) -> Output {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    // --nocapture: anything the crate printed with eprintln! would reach fd 2.
    command
        .args(["child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CASE_VARIABLE, case)
        .env_remove("HIPACM_LOG");
    if let Some(log) = log {
        command.env("HIPACM_LOG", log);
    }
    let output = command.output().expect("run the child");
    assert!(
        output.status.success(),
        "the child of case {} failed:\n{}\n{}",
        case,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_drop_reports_to_the_log_callback_and_not_to_stderr() {
    let output = run_child("callback", None);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    let events: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix(EVENT))
        .collect();
    let exit = events
        .iter()
        .find(|event| event.starts_with("Error mode exit: "))
        .unwrap_or_else(|| panic!("no mode exit event: {:?}", events));
    assert!(exit.contains("HIPACM_ERROR_COMPILATION"), "{}", exit);
    assert!(exit.contains(KEY), "{}", exit);
    let log_prefix = format!("Error compiler log of '{}': ", KEY);
    let log_lines: Vec<&&str> = events
        .iter()
        .filter(|event| event.starts_with(&log_prefix))
        .collect();
    assert!(
        log_lines.iter().any(|line| line.contains(UNDECLARED)),
        "the compiler log was not delivered: {:?}",
        events
    );
    assert!(
        events.iter().all(|event| !event.contains('\n')),
        "one line per event"
    );
    assert!(
        !stderr.contains("mode exit") && !stderr.contains(UNDECLARED),
        "the drop wrote to stderr despite the callback:\n{}",
        stderr
    );
    assert!(
        stderr.lines().all(|line| !line.starts_with("hipacm:")),
        "{}",
        stderr
    );
}

#[test]
fn without_a_callback_a_drop_reports_on_stderr_as_the_plugin_does() {
    let stderr = text(&run_child("no-callback", None).stderr);
    let exit = stderr
        .lines()
        .find(|line| line.starts_with("hipacm: error: mode exit: "))
        .unwrap_or_else(|| panic!("no mode exit line on stderr:\n{}", stderr));
    assert!(
        exit.contains("HIPACM_ERROR_COMPILATION") && exit.contains(KEY),
        "{}",
        exit
    );
    let log_prefix = format!("hipacm: error: compiler log of '{}': ", KEY);
    assert!(
        stderr
            .lines()
            .any(|line| line.starts_with(&log_prefix) && line.contains(UNDECLARED)),
        "no compiler log lines on stderr:\n{}",
        stderr
    );
}

#[test]
fn hipacm_log_off_silences_a_drop_without_a_callback() {
    let stderr = text(&run_child("no-callback", Some("off")).stderr);
    assert!(
        !stderr.contains("mode exit") && !stderr.contains(UNDECLARED),
        "{}",
        stderr
    );
    // The same switch as the plugin's: errors still show at HIPACM_LOG=error.
    let stderr = text(&run_child("no-callback", Some("error")).stderr);
    assert!(stderr.contains("hipacm: error: mode exit: "), "{}", stderr);
}
