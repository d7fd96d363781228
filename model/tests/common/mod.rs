//! Shared helpers for the model's tests.

#![allow(dead_code)]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::Variant;
use model::{check, CheckOptions, CheckResult, Config, InitiatorSpec, Mode, SnapshotModel, Strategy, TopologySpec};

/// A configuration from a few knobs; everything else as the command's defaults.
pub fn config(procs: usize, topology: TopologySpec, sends: u8, snapshots: u8, initiators: InitiatorSpec) -> Config {
    Config { procs: Some(procs), topology, tokens: Some(2), sends, initiators, snapshots, ..Config::default() }
}

/// Checks exhaustively (DFS, one thread, so the run is deterministic).
pub fn run(config: &Config) -> CheckResult {
    run_with(config, Strategy::Dfs)
}

/// Checks exhaustively with `strategy` on one thread.
pub fn run_with(config: &Config, strategy: Strategy) -> CheckResult {
    run_app::<Bank>(config, strategy)
}

/// Checks application `A` exhaustively with `strategy` on one thread.
pub fn run_app<A: Spec>(config: &Config, strategy: Strategy) -> CheckResult {
    let model = SnapshotModel::<A>::new(config.resolve().expect("valid configuration"));
    check(model, &CheckOptions { strategy, threads: 1, ..CheckOptions::default() }, None)
        .expect("options fit the model")
}

/// The verdict of property `name`.
pub fn verdict(result: &CheckResult, name: &str) -> model::Verdict {
    result
        .properties
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name:?} in {:?}", result.properties))
        .verdict
}

/// Property names and verdicts, for comparing runs.
pub fn verdicts(result: &CheckResult) -> Vec<(String, model::Verdict)> {
    result.properties.iter().map(|p| (p.name.clone(), p.verdict)).collect()
}

/// `config` with another mode and variant.
pub fn with(config: &Config, mode: Mode, variant: Variant) -> Config {
    Config { mode, variant, ..config.clone() }
}

/// The properties that fail, each with the length of its counterexample, in report order.
pub fn failing(result: &CheckResult) -> Vec<(&str, usize)> {
    result
        .properties
        .iter()
        .filter(|p| p.verdict == model::Verdict::Counterexample)
        .map(|p| (p.name.as_str(), p.path.as_ref().map_or(0, Vec::len)))
        .collect()
}

/// Runs the `model` command with `args`.
pub fn model(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_model")).args(args).output().expect("run model")
}

/// A run's standard error.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `model args` exits 2 with `message` on standard error.
pub fn bad_input(args: &[&str], message: &str) {
    let o = model(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains(message), "{args:?}: expected {message:?} in {}", stderr(&o));
}

/// A test's temporary directory, or a file alone in one: derefs to its path; the directory and
/// everything in it are removed on drop.
#[must_use = "the directory is removed when this is dropped"]
pub struct Scratch {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;

    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

/// A fresh, empty directory `model-PREFIX-NAME-<random>` in the temporary directory, removed
/// (with its contents) on drop.
pub fn temp_dir(prefix: &str, name: &str) -> Scratch {
    let dir = tempfile::Builder::new().prefix(&format!("model-{prefix}-{name}-")).tempdir().unwrap();
    Scratch { path: dir.path().to_path_buf(), _dir: dir }
}

/// A file `NAME` holding `text`, alone in a fresh directory `model-PREFIX-NAME-<random>`; the
/// file's path, removed with its directory on drop.
pub fn temp_file(prefix: &str, name: &str, text: &str) -> Scratch {
    let mut file = temp_dir(prefix, name);
    file.path.push(name);
    std::fs::write(&file.path, text).unwrap();
    file
}

/// The course scenario suite (`COS418_DATA`, or `../shared/cos418` beside the workspace).
pub fn suite() -> std::path::PathBuf {
    let dir = std::env::var_os("COS418_DATA")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/cos418"));
    assert!(dir.join("delays.txt").is_file(), "the cos418 suite is not at {} (set COS418_DATA)", dir.display());
    dir
}

/// The three-node ring-and-a-half topology of the replay tests.
pub const THREE_NODES: &str = "3\nN1 10\nN2 10\nN3 10\nN1 N2\nN2 N3\nN3 N1\nN2 N1\n";

/// Replays `events` on [`THREE_NODES`] (with `extra` flags) in `dir`, writing the run's logs to
/// `dir/logs`, which it returns; the replay must exit 0.
pub fn replay_logs(dir: &std::path::Path, events: &str, extra: &[&str]) -> std::path::PathBuf {
    std::fs::write(dir.join("t.top"), THREE_NODES).unwrap();
    std::fs::write(dir.join("t.events"), events).unwrap();
    let logs = dir.join("logs");
    let p = |f: &std::path::Path| f.display().to_string();
    let (top, events, out) = (p(&dir.join("t.top")), p(&dir.join("t.events")), p(&logs));
    let mut args = vec!["replay", "--topology", top.as_str(), "--events", events.as_str(), "--trace-out", out.as_str()];
    args.extend(extra);
    let o = model(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    logs
}

/// Checks application `A` with the distributed search on `ranks` ranks (threads of this
/// process), with `opts` (one thread per rank); rank 0's result.
pub fn run_distributed<A: Spec>(config: &Config, ranks: usize, opts: &CheckOptions) -> CheckResult {
    let resolved = config.resolve().expect("valid configuration");
    let handles: Vec<_> = model::engine::ranks::Threads::group(ranks)
        .into_iter()
        .map(|r| {
            let (resolved, opts) = (resolved.clone(), opts.clone());
            std::thread::spawn(move || {
                let model = SnapshotModel::<A>::new(resolved);
                model::check::check_distributed(model, &CheckOptions { threads: 1, ..opts }, &r, None)
                    .expect("options fit the model")
            })
        })
        .collect();
    let mut results: Vec<CheckResult> = handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect();
    results.swap_remove(0)
}

/// Runs `model args` as `np` MPI ranks under `mpirun` (several ranks per core allowed, as root
/// too: CI runs as root).
pub fn mpirun(np: usize, args: &[&str]) -> std::process::Output {
    mpirun_command(np, args).output().expect("run mpirun (Open MPI: apt-get install openmpi-bin)")
}

/// The `mpirun` command of [`mpirun`], not started.
pub fn mpirun_command(np: usize, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new("mpirun");
    c.args(["--oversubscribe", "--bind-to", "none", "-np", &np.to_string(), env!("CARGO_BIN_EXE_model")])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    c
}
