//! Running the `model` command: each command carried out, its output and its exit code.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::sim::{replay, DelayChoice, Replay, ReplayError, SimError};
use chandy_lamport::{Algorithm, Variant};
use clap::Parser;
use stateright::Model;

use super::args::{CheckerArgs, Cli, Command, ModelArgs, SYMMETRY_MAX_PROCESSES};
use super::output::{is_output_failure, note, to_stdout, EXIT_OUTPUT};
use super::verify;
use crate::check::options::{CheckOptions, Strategy};
use crate::check::report::{print_table, CheckResult, EXIT_BAD_INPUT, EXIT_FAIL};
use crate::check::run::check;
use crate::check::shards::merge;
use crate::reduce::symmetry::SymmetryError;
use crate::system::machine::SnapshotModel;
use crate::system::setting::{Names, Wording};

/// The `model` command: parses the command line, runs the command, and returns its exit code
/// (an error is printed and exits 2).
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // `--help` and `--version` go to standard output, checked like any output; a usage
        // error goes to standard error with clap's exit code (2).
        Err(e) if !e.use_stderr() => {
            let help = e.render().to_string();
            return match to_stdout(|out| out.write_all(help.as_bytes())) {
                Ok(()) => ExitCode::SUCCESS,
                Err(failed) => {
                    note(format!("error: {failed}"));
                    ExitCode::from(EXIT_OUTPUT)
                }
            };
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_BAD_INPUT));
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => ExitCode::from(failed(&e)),
    }
}

/// A flag raised by the first Ctrl-C (or SIGTERM); another one a second or more later exits at
/// once. (`timeout -s INT` signals both the command and its process group: the same interrupt
/// may arrive twice within a moment.)
fn interrupt_flag() -> Option<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let raised = Arc::clone(&flag);
    let mut first: Option<Instant> = None;
    let installed = ctrlc::set_handler(move || match first {
        Some(at) if at.elapsed() >= Duration::from_secs(1) => std::process::exit(130),
        Some(_) => {}
        None => {
            first = Some(Instant::now());
            raised.store(true, Ordering::SeqCst);
            note("\ninterrupted: reporting what was explored (interrupt again to quit at once)");
        }
    });
    installed.ok().map(|()| flag)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Variants => {
            to_stdout(|out| {
                Variant::ALL.iter().try_for_each(|v| writeln!(out, "{:<28} {}", v.name(), v.description()))
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { model, checker, json } => match model.app {
            verify::App::Bank => check_cmd::<Bank>(&model, &checker, json),
            verify::App::Orders => check_cmd::<Orders>(&model, &checker, json),
            verify::App::Stream => check_cmd::<Stream>(&model, &checker, json),
        },
        Command::Merge { files, json } => merge_cmd(&files, json),
        Command::Verify { topology, trace, app, initial, json, reader } => {
            verify::run(&topology, &trace, app, initial.as_deref(), json, reader)
        }
        Command::Replay { topology, events, delays, seed, expect, variant, trace_out } => {
            if !variant.applies_to(Algorithm::ChandyLamport) {
                anyhow::bail!(
                    "--variant {variant} is a fault of --algorithm {}, but replay runs Chandy-Lamport's marker rules",
                    variant.algorithm()
                );
            }
            // The topology's warnings (self-links ignored); its errors are reported by the replay.
            if let Ok(top) = TopFile::read(&topology) {
                for w in &top.warnings {
                    note(format!("warning: {w}"));
                }
            }
            let delays = match delays {
                Some(file) => DelayChoice::File(file),
                None => DelayChoice::Seed(seed.unwrap_or(0)),
            };
            let request =
                Replay { expect: expect.clone(), variant, trace_out, ..Replay::new(topology, events, delays) };
            match replay(&request) {
                Ok(outcome) => {
                    let text = outcome.snap_text();
                    to_stdout(|out| out.write_all(text.as_bytes()))?;
                    match (outcome.comparison.as_ref(), expect) {
                        (Some(diff), _) if !diff.matches() => {
                            note(format!("MISMATCH with the expected snapshots:\n{diff}"));
                            Ok(ExitCode::from(EXIT_FAIL))
                        }
                        (Some(_), Some(prefix)) => {
                            let n = outcome.blocks.len();
                            note(format!(
                                "match: {} equal {} (node balances, and recorded messages per destination in order)",
                                if n == 1 { "the snapshot".to_string() } else { format!("all {n} snapshots") },
                                expected_files(&prefix, n)
                            ));
                            Ok(ExitCode::SUCCESS)
                        }
                        _ => Ok(ExitCode::SUCCESS),
                    }
                }
                Err(e) if replay_bad_input(&e, request.expect.as_deref()) => Err(e.into()),
                Err(e) => {
                    note(format!("FAILED: {e}"));
                    Ok(ExitCode::from(EXIT_FAIL))
                }
            }
        }
        Command::Explore { model, addr } => match model.app {
            verify::App::Bank => explore::<Bank>(&model, addr),
            verify::App::Orders => explore::<Orders>(&model, addr),
            verify::App::Stream => explore::<Stream>(&model, addr),
        },
    }
}

/// `model explore` for application `A`.
fn explore<A: Spec>(model: &ModelArgs, addr: SocketAddr) -> anyhow::Result<ExitCode> {
    let m = model.build::<A>()?;
    // Fail with a message (not a panic inside the server) if the address is taken, and learn
    // the port the system chose for port 0, so the address printed is the one served.
    let listener = TcpListener::bind(addr).with_context(|| format!("cannot serve on {addr}"))?;
    let addr = listener.local_addr().with_context(|| format!("cannot serve on {addr}"))?;
    drop(listener);
    to_stdout(|out| writeln!(out, "Explorer: http://{addr}/"))?;
    m.checker().serve(addr);
    Ok(ExitCode::SUCCESS)
}

/// `model check` for application `A`.
fn check_cmd<A: Spec>(model: &ModelArgs, checker: &CheckerArgs, json: bool) -> anyhow::Result<ExitCode> {
    if checker.distributed {
        return distributed_cmd::<A>(model, checker, json);
    }
    let (m, opts) = check_setup::<A>(model, checker)?;
    let mut err = std::io::stderr();
    let result = check(m, &opts, Some(&mut err)).map_err(|e| e.worded(Names::Flags))?;
    report(&result, json)
}

/// The model and the checker's options of `model check`, the flags checked.
fn check_setup<A: Spec>(model: &ModelArgs, checker: &CheckerArgs) -> anyhow::Result<(SnapshotModel<A>, CheckOptions)> {
    if checker.symmetry && model.por {
        return Err(SymmetryError::Por.worded(Names::Flags).into());
    }
    if let (Some(shard), Some(strategy)) = (checker.shard, strategy_name(checker.strategy)) {
        anyhow::bail!(
            "--shard {shard} splits an exhaustive depth-first search: use it with --strategy dfs (the default), not \
             --strategy {strategy}"
        );
    }
    if checker.distributed {
        if let Some(shard) = checker.shard {
            anyhow::bail!(
                "--distributed searches the whole state space once across its ranks: not with --shard {shard}"
            );
        }
        if checker.strategy == Strategy::Simulation {
            anyhow::bail!("--distributed is an exhaustive breadth-first search: not with --strategy simulation");
        }
        if let Some(n) = checker.threads.filter(|&n| n > 1) {
            anyhow::bail!(
                "--threads {n} with --distributed: each rank searches with one thread; start more ranks (mpirun -np) \
                 to use more cores"
            );
        }
    } else {
        if checker.symmetry && checker.strategy == Strategy::Bfs {
            anyhow::bail!("--symmetry is honoured only by --strategy dfs or simulation");
        }
        for (flag, given) in
            [("--rank-memory", checker.rank_memory.is_some()), ("--spill-dir", checker.spill_dir.is_some())]
        {
            if given {
                anyhow::bail!("{flag} is honoured only by --distributed");
            }
        }
    }
    if checker.strategy != Strategy::Simulation {
        for (flag, given) in [("--seed", checker.seed.is_some()), ("--max-states", checker.max_states.is_some())] {
            if given {
                anyhow::bail!("{flag} is honoured only by --strategy simulation");
            }
        }
    }
    let m = model.build::<A>()?;
    let processes = m.topology().len();
    if checker.symmetry && processes > SYMMETRY_MAX_PROCESSES {
        anyhow::bail!(
            "--symmetry enumerates every permutation of the houses: at most {SYMMETRY_MAX_PROCESSES} houses, \
                     this configuration has {processes}"
        );
    }
    let opts = CheckOptions {
        strategy: if checker.distributed { Strategy::Bfs } else { checker.strategy },
        threads: if checker.distributed { 1 } else { threads(checker.threads) },
        symmetry: checker.symmetry,
        depth: checker.depth,
        stop_on_failure: checker.stop_on_failure,
        seed: checker.seed.unwrap_or(0),
        max_states: checker.max_states.unwrap_or(1_000_000),
        addr: checker.addr.to_string(),
        timeout: checker.timeout,
        interrupt: interrupt_flag(),
        shard: checker.shard,
        rank_memory: checker.rank_memory,
        spill_dir: checker.spill_dir.clone(),
        ..CheckOptions::default()
    };
    Ok((m, opts))
}

/// `model check --distributed` on one rank of an MPI job: every rank checks its flags and
/// searches; rank 0 prints the result or the error and exits with the run's code, the others
/// with 0 (the launcher exits with the first non-zero code, and ends the other ranks when one
/// exits with it: none may leave before rank 0 has said why, or while rank 0 still works), all
/// after a last collective step and MPI's finalisation.
#[cfg(feature = "mpi")]
fn distributed_cmd<A: Spec>(model: &ModelArgs, checker: &CheckerArgs, json: bool) -> anyhow::Result<ExitCode> {
    use crate::engine::ranks::Ranks;
    let universe = mpi::initialize().context("--distributed: MPI cannot be initialised")?;
    crate::engine::mpi::Mpi::abort_job_on_panic();
    let ranks = crate::engine::mpi::Mpi::world(&universe);
    let first = ranks.rank() == 0;
    // Every rank has the same flags and searches the same model, so every rank fails alike.
    let result = check_setup::<A>(model, checker).and_then(|(m, opts)| {
        let mut err = std::io::stderr();
        let progress: Option<&mut (dyn std::io::Write + Send)> = if first { Some(&mut err) } else { None };
        crate::check::run::check_distributed(m, &opts, &ranks, progress).map_err(|e| e.worded(Names::Flags).into())
    });
    // Only rank 0's result has the discoveries: its verdicts are the run's.
    let code = match result {
        _ if !first => 0,
        Ok(result) => match report(&result, json) {
            Ok(_) => result.exit_code,
            Err(e) => failed(&e),
        },
        Err(e) => failed(&e),
    };
    let mut done = [0];
    ranks.max(&mut done);
    drop(ranks);
    drop(universe);
    Ok(ExitCode::from(code))
}

/// Says why a command failed and gives its exit code: 4 when its output could not be written,
/// else 2 (bad input).
fn failed(e: &anyhow::Error) -> u8 {
    note(format!("error: {e:#}"));
    if is_output_failure(e) {
        EXIT_OUTPUT
    } else {
        EXIT_BAD_INPUT
    }
}

/// Without MPI: `--distributed` refused, saying how to build with it.
#[cfg(not(feature = "mpi"))]
#[allow(clippy::extra_unused_type_parameters)] // the same signature as with MPI
fn distributed_cmd<A: Spec>(_: &ModelArgs, _: &CheckerArgs, _: bool) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "--distributed needs MPI, and this build of model has none: build it with `cargo build --release -p model \
         --features mpi` (Open MPI and libclang: on Debian, apt-get install libopenmpi-dev openmpi-bin libclang-dev)"
    )
}

/// The worker threads for `--threads`: all cores by default, and never more (more threads
/// than cores only cost memory), with a warning naming the flag.
fn threads(asked: Option<usize>) -> usize {
    let cores = CheckOptions::default().threads;
    match asked {
        Some(n) if n > cores => {
            note(format!("warning: --threads {n}: this machine has {cores} cores; using {cores} threads"));
            cores
        }
        Some(n) => n,
        None => cores,
    }
}

/// The name of a strategy other than dfs.
fn strategy_name(s: Strategy) -> Option<&'static str> {
    match s {
        Strategy::Dfs => None,
        Strategy::Bfs => Some("bfs"),
        Strategy::Simulation => Some("simulation"),
    }
}

/// Prints a result (the table, or one JSON object); its exit code.
fn report(result: &CheckResult, json: bool) -> anyhow::Result<ExitCode> {
    to_stdout(|out| {
        if json {
            serde_json::to_writer(&mut *out, result)?;
            writeln!(out)
        } else {
            print_table(result, out)
        }
    })?;
    Ok(ExitCode::from(result.exit_code))
}

/// `model merge`: every shard's result read, then one verdict.
fn merge_cmd(files: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let mut inputs = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).with_context(|| format!("{name}: cannot read"))?;
        let result: CheckResult = serde_json::from_str(&text)
            .with_context(|| format!("{name}: not a result of `model check --shard I/N --json`"))?;
        inputs.push((name, result));
    }
    let merged = merge(inputs).map_err(|e| e.worded(Names::Flags))?;
    report(&merged, json)
}

/// `PREFIX + suffix` as a path.
fn suffixed(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The expected files a matching run of `n` snapshots was compared with.
fn expected_files(prefix: &Path, n: usize) -> String {
    let single = suffixed(prefix, ".snap");
    if n == 1 && single.is_file() {
        return single.display().to_string();
    }
    let first = suffixed(prefix, "0.snap").display().to_string();
    match n {
        0 | 1 => first,
        2 => format!("{first} and {}", suffixed(prefix, "1.snap").display()),
        _ => format!("{first} ... {}", suffixed(prefix, &format!("{}.snap", n - 1)).display()),
    }
}

/// Whether a replay error is bad input (exit 2) rather than a failed check (exit 1): a bad or
/// unreadable file, a command the topology refuses, a delay file too short for the run, an
/// expectation prefix with no file at all, a --trace-out directory that cannot be written.
fn replay_bad_input(e: &ReplayError, expect: Option<&Path>) -> bool {
    match e {
        ReplayError::Format(_) | ReplayError::Write(_) => true,
        ReplayError::Command { error: SimError::DelaysExhausted { .. }, .. }
        | ReplayError::Completion { error: SimError::DelaysExhausted { .. }, .. } => true,
        ReplayError::MissingExpected { .. } => {
            expect.is_some_and(|p| !suffixed(p, ".snap").is_file() && !suffixed(p, "0.snap").is_file())
        }
        _ => false,
    }
}
