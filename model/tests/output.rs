//! Output failures: every command whose standard output is a full disk (`/dev/full`) or a pipe
//! nobody reads exits 4 with a message, never a panic (101) and never "bad input" (2); `--help`
//! too. Every command's `--help` lists its exit codes, 4 among them.

mod common;

use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Where standard output goes.
#[derive(Clone, Copy, Debug)]
enum Sink {
    /// `/dev/full`: every write fails with "no space left".
    Full,
    /// A pipe whose reading end is closed before the command starts: every write fails with
    /// "broken pipe".
    ClosedPipe,
}

fn sink(kind: Sink) -> Stdio {
    match kind {
        Sink::Full => Stdio::from(File::options().write(true).open("/dev/full").expect("/dev/full")),
        Sink::ClosedPipe => {
            let mut fds = [0; 2];
            // SAFETY: `pipe` fills both descriptors on success; each is then owned exactly once.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
            let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            drop(read);
            Stdio::from(write)
        }
    }
}

fn run(args: &[&str], kind: Sink) -> Output {
    Command::new(env!("CARGO_BIN_EXE_model"))
        .args(args)
        .stdout(sink(kind))
        .stderr(Stdio::piped())
        .output()
        .expect("run model")
}

fn scratch(name: &str) -> common::Scratch {
    common::temp_dir("output", name)
}

fn text(path: &Path) -> String {
    path.display().to_string()
}

/// A three-node scenario (topology and events) written to `dir`, and the logs its replay writes.
fn scenario(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let events = "send N1 N2 3\nsend N2 N3 4\nsnapshot N1\nsend N3 N1 2\ntick\nsnapshot N3\ntick 3\n";
    let logs = common::replay_logs(dir, events, &[]);
    (dir.join("t.top"), dir.join("t.events"), logs)
}

/// Every command that prints something, each with a standard output that cannot be written.
#[test]
fn every_command_reports_an_output_failure_with_exit_4() {
    let dir = scratch("scenario");
    let (top, events, logs) = scenario(&dir);
    let (top, events) = (text(&top), text(&events));
    let shard_dir = scratch("shard");
    let shard = shard_dir.join("shard.json");
    let o = Command::new(env!("CARGO_BIN_EXE_model"))
        .args(["check", "--sends", "0", "--shard", "0/1", "--json"])
        .output()
        .expect("run model");
    std::fs::write(&shard, &o.stdout).unwrap();
    let log_files: Vec<String> = ["N1", "N2", "N3"].iter().map(|n| text(&logs.join(format!("{n}.jsonl")))).collect();
    let mut verify = vec!["verify", "--topology", "", "--trace"];
    let logs_top = text(&logs.join("topology.top"));
    verify[2] = &logs_top;
    verify.extend(log_files.iter().map(String::as_str));
    let shard = text(&shard);
    let commands: Vec<Vec<&str>> = vec![
        vec!["variants"],
        vec!["--help"],
        vec!["check", "--help"],
        vec!["check", "--sends", "0"],
        vec!["check", "--sends", "0", "--json"],
        vec!["merge", &shard],
        vec!["replay", "--topology", &top, "--events", &events],
        verify,
        vec!["explore", "--sends", "0", "--addr", "127.0.0.1:0"],
    ];
    for kind in [Sink::Full, Sink::ClosedPipe] {
        for args in &commands {
            let o = run(args, kind);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(4), "{kind:?} {args:?}: {err}");
            assert!(err.contains("error: cannot write the output: "), "{kind:?} {args:?}: {err}");
            assert!(!err.contains("panicked"), "{kind:?} {args:?}: {err}");
        }
    }
}

/// The same commands with a working standard output exit as documented (so the failures above
/// are the output's, not the commands').
#[test]
fn with_a_working_output_the_same_commands_succeed() {
    for args in [&["variants"][..], &["--help"], &["check", "--help"], &["check", "--sends", "1"]] {
        let o = Command::new(env!("CARGO_BIN_EXE_model")).args(args).output().expect("run model");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
}

/// Every command's `--help` lists its exit codes, the output failure among them.
#[test]
fn every_command_lists_its_exit_codes() {
    for command in ["check", "explore", "variants", "replay", "merge", "verify"] {
        let o = Command::new(env!("CARGO_BIN_EXE_model")).args([command, "--help"]).output().expect("run model");
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains("Exit codes:\n  0  "), "{command}: {help}");
        assert!(help.contains("\n  4  the output could not be written"), "{command}: {help}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_model")).arg("--help").output().expect("run model");
    assert!(String::from_utf8_lossy(&o.stdout).contains("4 the output could not be written"));
}

/// A usage error is still bad input, on standard error, whatever standard output is.
#[test]
fn a_usage_error_is_bad_input_even_with_a_broken_output() {
    let o = run(&["check", "--no-such-flag"], Sink::Full);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--no-such-flag"));
}

/// The bank example (`cargo run --example bank`) too: exit 4, not a panic.
#[test]
fn the_bank_example_reports_an_output_failure_with_exit_4() {
    let model = PathBuf::from(env!("CARGO_BIN_EXE_model"));
    let profile = model.parent().expect("the profile directory");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    // Built here (a no-op when it is up to date), so a stale binary is never the one tested.
    // The profile this test was built with (release, or cargo-mutants' own), so the example is
    // built where this binary's profile keeps its examples.
    let name = profile.file_name().and_then(|n| n.to_str()).expect("a profile directory");
    let cargo_profile = if name == "debug" { "dev" } else { name };
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--profile", cargo_profile, "-p", "chandy-lamport", "--example", "bank", "--target-dir"])
        .arg(profile.parent().expect("the target directory"))
        .current_dir(root)
        .status()
        .expect("cargo build --example bank");
    assert!(status.success());
    let bank = profile.join("examples").join("bank");
    for kind in [Sink::Full, Sink::ClosedPipe] {
        let o = Command::new(&bank)
            .args(["--transfers", "50", "--snapshots", "1"])
            .stdout(sink(kind))
            .stderr(Stdio::piped())
            .output()
            .expect("run the bank example");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(4), "{kind:?}: {err}");
        assert!(err.contains("error: cannot write the output: "), "{kind:?}: {err}");
    }
}
