//! `model`: check the Chandy–Lamport model, explore it in a browser, list the fault variants,
//! replay a course scenario, verify another implementation's logs.

mod verify_cmd;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io::Write;
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
use clap::{Args, Parser, Subcommand};
use model::run::{EXIT_BAD_INPUT, EXIT_FAIL};
use model::shard::ShardSpec;
use model::{check, ChandyLamport, CheckOptions, Checkpointing, Config, InitiatorSpec, Mode, Strategy, TopologySpec};
use stateright::Model;

const CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  the search was exhaustive and every property holds (each sometimes-property found its example)
  1  a property fails: a counterexample to an always-property (even in a bounded run), or, after an
     exhaustive search, no example of a sometimes-property
  2  bad input: a bad flag, an impossible configuration, an unreadable or malformed topology file
  3  not exhaustive and no failure found (--depth, --strategy simulation, --timeout, Ctrl-C):
     some verdicts are undecided";

const MERGE_EXIT_CODES: &str = "\
Exit codes:
  0  every shard searched its part to the end and every property holds (each sometimes-property
     found its example in some shard)
  1  a property fails: a counterexample in some shard, or, every shard being exhaustive, no
     example of a sometimes-property in any
  2  bad input: a file that cannot be read or is not a shard's JSON result, shards of different
     configurations, versions or counts N, a shard given twice, a missing shard
  3  some shard was not exhaustive and nothing failed: some verdicts are undecided";

const REPLAY_EXIT_CODES: &str = "\
Exit codes:
  0  every snapshot passed the trace checker (and, with --expect, matched the expected files)
  1  a snapshot failed the trace checker or differs from the expected files
  2  bad input: an unreadable or malformed file, a command the topology refuses, too few delays,
     no expected file for the --expect prefix, a --trace-out directory that cannot be written";

#[derive(Parser, Debug)]
#[command(
    name = "model",
    about = "Model-check Chandy–Lamport snapshots over the library's own core",
    after_help = "Exit codes: 0 success, 1 a property or snapshot fails, 2 bad input, 3 (check) not exhaustive \
                  and nothing failed. See `model check --help`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check every property; print progress lines, a verdict table and a one-line verdict.
    #[command(after_help = CHECK_EXIT_CODES)]
    Check {
        #[command(flatten)]
        model: ModelArgs,
        #[command(flatten)]
        checker: CheckerArgs,
        /// Print one JSON object instead of the table (progress lines go to stderr either way).
        #[arg(long)]
        json: bool,
    },
    /// Serve stateright's Explorer for the same configuration.
    Explore {
        #[command(flatten)]
        model: ModelArgs,
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: SocketAddr,
    },
    /// List the fault variants.
    Variants,
    /// Replay a scenario (.top + .events) on the deterministic simulator and print its
    /// snapshots in .snap form; with --expect, compare with the expected files.
    #[command(after_help = REPLAY_EXIT_CODES)]
    Replay {
        /// The topology.
        #[arg(long)]
        topology: PathBuf,
        /// The event script.
        #[arg(long)]
        events: PathBuf,
        /// A delay sequence file (one integer a line).
        #[arg(long, conflicts_with = "seed")]
        delays: Option<PathBuf>,
        /// Seed of the delay generator (default 0 when no --delays).
        #[arg(long)]
        seed: Option<u64>,
        /// Compare with PREFIX.snap (one snapshot) or PREFIX0.snap, PREFIX1.snap, ... (several).
        #[arg(long, value_name = "PREFIX")]
        expect: Option<PathBuf>,
        /// Fault variant (see `model variants`).
        #[arg(long, default_value = "none")]
        variant: Variant,
        /// Also write the run as JSON-lines logs into DIR: DIR/<node>.jsonl and DIR/topology.top.
        #[arg(long, value_name = "DIR")]
        trace_out: Option<PathBuf>,
    },
    /// Merge the `--json` results of every shard of a split check (`model check --shard I/N
    /// --json`) into one verdict: the same table, `--json` object and exit codes as `check`.
    #[command(after_help = MERGE_EXIT_CODES)]
    Merge {
        /// The shards' JSON files (every shard of one check, in any order).
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Check the logs of a run (JSON lines, one event a line: any implementation's) against the
    /// theorem: one verdict per snapshot found in the logs, then an overall verdict.
    #[command(after_help = verify_cmd::VERIFY_EXIT_CODES)]
    Verify {
        /// The topology (.top; its tokens are the initial states).
        #[arg(long)]
        topology: PathBuf,
        /// The log files (one per process, or any split of the events).
        #[arg(long, required = true, num_args = 1..)]
        trace: Vec<PathBuf>,
        /// The application that produced the logs.
        #[arg(long, value_enum, default_value = "bank")]
        app: verify_cmd::App,
        /// Print one JSON object instead of the verdict lines.
        #[arg(long)]
        json: bool,
    },
}

/// The model configuration.
#[derive(Args, Debug)]
struct ModelArgs {
    /// The application the houses run.
    #[arg(long, value_enum, default_value = "bank")]
    app: verify_cmd::App,
    /// Houses, 2–16: the most a model state holds (for a .top topology, taken from the file).
    #[arg(long)]
    procs: Option<usize>,
    /// complete, ring, bidi-ring, star, or a FILE.top (the course format: self-links are
    /// ignored with a warning).
    #[arg(long, default_value = "complete")]
    topology: TopologySpec,
    /// Jars per house (default 2, or the file's).
    #[arg(long)]
    tokens: Option<u32>,
    /// Actions per house: one-jar transfers (and sales with --internal), at most 20.
    #[arg(long, default_value_t = 2)]
    sends: u8,
    /// Who may initiate: indices like 0,2, or any. Each initiator alone must reach every house.
    #[arg(long, default_value = "0")]
    initiators: InitiatorSpec,
    /// Snapshot ids 0..S, 1–8.
    #[arg(long, default_value_t = 1)]
    snapshots: u8,
    /// Houses may sell a jar to their port town (an internal step).
    #[arg(long)]
    internal: bool,
    /// Bandits may steal carts in transit (never markers).
    #[arg(long)]
    theft: bool,
    /// Fault variant (see `model variants`).
    #[arg(long, default_value = "none")]
    variant: Variant,
    /// basic, full or literal (default: full; basic with the barrier algorithms).
    #[arg(long)]
    properties: Option<Mode>,
    /// Partial-order reduction: from each state explore only a persistent set of the enabled
    /// steps (same verdicts, fewer states; not with --properties literal or --symmetry).
    #[arg(long)]
    por: bool,
    /// The marker rules: chandy-lamport, aligned (barriers block inputs until all are in) or
    /// unaligned (barriers overtake queued data, which is recorded); the barrier algorithms
    /// with --properties basic.
    #[arg(long, default_value = "chandy-lamport")]
    algorithm: Algorithm,
    /// Barrier algorithms: at most M checkpoints pending at the coordinator, 1–8 (Flink's
    /// default 1). `--snapshots S` is how many the coordinator triggers in a run.
    #[arg(long, value_name = "M", default_value_t = 1)]
    max_concurrent: u8,
    /// Barrier algorithms: up to D declines (a house's state cannot be written), 0–4.
    #[arg(long, value_name = "D", default_value_t = 0)]
    declines: u8,
    /// Barrier algorithms: up to C crashes at any step, 0–4, each followed by recovery from the
    /// latest completed checkpoint.
    #[arg(long, value_name = "C", default_value_t = 0)]
    crashes: u8,
}

/// A count of at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// Seconds, more than 0.
fn seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x < 1e9 => Ok(Duration::from_secs_f64(x)),
        Ok(_) => Err("must be a number of seconds greater than 0".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// How to explore.
#[derive(Args, Debug)]
struct CheckerArgs {
    /// bfs, dfs or simulation (random walks: never exhaustive).
    #[arg(long, default_value = "dfs")]
    strategy: Strategy,
    /// Worker threads (default: all cores).
    #[arg(long, value_parser = positive)]
    threads: Option<usize>,
    /// Symmetry reduction over permutations of houses (DFS and simulation only; at most 10
    /// houses).
    #[arg(long)]
    symmetry: bool,
    /// Explore paths of at most D steps (not exhaustive when a path is cut: exit 3).
    #[arg(long, value_name = "D", value_parser = positive)]
    depth: Option<usize>,
    /// Stop at the first counterexample.
    #[arg(long)]
    stop_on_failure: bool,
    /// Stop after this many seconds and report what was found (not exhaustive: exit 3 unless
    /// something failed). Ctrl-C does the same.
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    timeout: Option<Duration>,
    /// Simulation: seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Simulation: states to generate.
    #[arg(long, default_value_t = 1_000_000, value_parser = positive)]
    max_states: usize,
    /// Address used in Explorer links.
    #[arg(long, default_value = "127.0.0.1:3000")]
    addr: SocketAddr,
    /// Search only shard I of N (0 ≤ I < N) of an exhaustive depth-first check; the N shards'
    /// `--json` results, given to `model merge`, make one verdict.
    #[arg(long, value_name = "I/N")]
    shard: Option<ShardSpec>,
}

/// The most houses `--symmetry` takes: it enumerates every permutation of the houses.
const SYMMETRY_MAX_HOUSES: usize = 10;

impl ModelArgs {
    /// The model, with the topology file's warnings printed to stderr.
    fn build<A: Spec>(&self) -> anyhow::Result<ChandyLamport<A>> {
        let config = Config {
            procs: self.procs,
            topology: self.topology.clone(),
            tokens: self.tokens,
            sends: self.sends,
            initiators: self.initiators.clone(),
            snapshots: self.snapshots,
            internal: self.internal,
            theft: self.theft,
            variant: self.variant,
            mode: self.properties.unwrap_or(match self.algorithm {
                Algorithm::ChandyLamport => Mode::Full,
                _ => Mode::Basic,
            }),
            por: self.por,
            algorithm: self.algorithm,
            checkpointing: Checkpointing {
                max_concurrent: self.max_concurrent,
                declines: self.declines,
                crashes: self.crashes,
            },
        };
        let resolved = config.resolve()?;
        if let Some((p, t)) = chandy_lamport::apps::spec::too_many_tokens::<A>(&resolved.tokens) {
            let source = match &self.topology {
                TopologySpec::File(path) => path.display().to_string(),
                _ => "--tokens".to_string(),
            };
            match p {
                Some(p) => anyhow::bail!(
                    "{source}{}: {t} tokens, but the {} application takes at most {}",
                    if matches!(self.topology, TopologySpec::File(_)) {
                        format!(" (house {})", resolved.topology.name(p))
                    } else {
                        String::new()
                    },
                    A::NAME,
                    A::MAX_TOKENS
                ),
                None => anyhow::bail!(
                    "{source}: {t} tokens in all, but the {} application takes at most {} in all",
                    A::NAME,
                    A::MAX_TOTAL_TOKENS
                ),
            }
        }
        for w in &resolved.warnings {
            eprintln!("warning: {w}");
        }
        Ok(ChandyLamport::<A>::new(resolved))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_BAD_INPUT)
        }
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
            eprintln!("\ninterrupted: reporting what was explored (interrupt again to quit at once)");
        }
    });
    installed.ok().map(|()| flag)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Variants => {
            for v in Variant::ALL {
                println!("{:<28} {}", v.name(), v.description());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Check { model, checker, json } => match model.app {
            verify_cmd::App::Bank => check_cmd::<Bank>(&model, &checker, json),
            verify_cmd::App::Orders => check_cmd::<Orders>(&model, &checker, json),
            verify_cmd::App::Stream => check_cmd::<Stream>(&model, &checker, json),
        },
        Command::Merge { files, json } => merge_cmd(&files, json),
        Command::Verify { topology, trace, app, json } => verify_cmd::run(&topology, &trace, app, json),
        Command::Replay { topology, events, delays, seed, expect, variant, trace_out } => {
            // The topology's warnings (self-links ignored); its errors are reported by the replay.
            if let Ok(top) = TopFile::read(&topology) {
                for w in &top.warnings {
                    eprintln!("warning: {w}");
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
                    print!("{}", outcome.snap_text());
                    std::io::stdout().flush()?;
                    match (outcome.comparison.as_ref(), expect) {
                        (Some(diff), _) if !diff.matches() => {
                            eprintln!("MISMATCH with the expected snapshots:\n{diff}");
                            Ok(ExitCode::from(EXIT_FAIL))
                        }
                        (Some(_), Some(prefix)) => {
                            let n = outcome.blocks.len();
                            eprintln!(
                                "match: {} equal {} (node balances, and recorded messages per destination in order)",
                                if n == 1 { "the snapshot".to_string() } else { format!("all {n} snapshots") },
                                expected_files(&prefix, n)
                            );
                            Ok(ExitCode::SUCCESS)
                        }
                        _ => Ok(ExitCode::SUCCESS),
                    }
                }
                Err(e) if replay_bad_input(&e, request.expect.as_deref()) => Err(e.into()),
                Err(e) => {
                    eprintln!("FAILED: {e}");
                    Ok(ExitCode::from(EXIT_FAIL))
                }
            }
        }
        Command::Explore { model, addr } => match model.app {
            verify_cmd::App::Bank => explore::<Bank>(&model, addr),
            verify_cmd::App::Orders => explore::<Orders>(&model, addr),
            verify_cmd::App::Stream => explore::<Stream>(&model, addr),
        },
    }
}

/// `model explore` for application `A`.
fn explore<A: Spec>(model: &ModelArgs, addr: SocketAddr) -> anyhow::Result<ExitCode> {
    let m = model.build::<A>()?;
    // Fail with a message (not a panic inside the server) if the address is taken.
    drop(TcpListener::bind(addr).with_context(|| format!("cannot serve on {addr}"))?);
    println!("Explorer: http://{addr}/");
    std::io::stdout().flush()?;
    m.checker().serve(addr);
    Ok(ExitCode::SUCCESS)
}

/// `model check` for application `A`.
fn check_cmd<A: Spec>(model: &ModelArgs, checker: &CheckerArgs, json: bool) -> anyhow::Result<ExitCode> {
    if checker.symmetry && model.por {
        anyhow::bail!("{}", model::model::POR_WITH_SYMMETRY);
    }
    if let (Some(shard), Some(strategy)) = (checker.shard, strategy_name(checker.strategy)) {
        anyhow::bail!(
            "--shard {shard} splits an exhaustive depth-first search: use it with --strategy dfs (the default), not \
             --strategy {strategy}"
        );
    }
    if checker.symmetry && checker.strategy == Strategy::Bfs {
        anyhow::bail!("--symmetry is honoured only by --strategy dfs or simulation");
    }
    let m = model.build::<A>()?;
    let houses = m.topology().len();
    if checker.symmetry && houses > SYMMETRY_MAX_HOUSES {
        anyhow::bail!(
            "--symmetry enumerates every permutation of the houses: at most {SYMMETRY_MAX_HOUSES} houses, \
                     this configuration has {houses}"
        );
    }
    let opts = CheckOptions {
        strategy: checker.strategy,
        threads: checker.threads.unwrap_or(CheckOptions::default().threads),
        symmetry: checker.symmetry,
        depth: checker.depth,
        stop_on_failure: checker.stop_on_failure,
        seed: checker.seed,
        max_states: checker.max_states,
        addr: checker.addr.to_string(),
        timeout: checker.timeout,
        interrupt: interrupt_flag(),
        shard: checker.shard,
        ..CheckOptions::default()
    };
    let mut err = std::io::stderr();
    let result = check(m, &opts, Some(&mut err)).map_err(anyhow::Error::msg)?;
    report(&result, json)
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
fn report(result: &model::CheckResult, json: bool) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, result)?;
        writeln!(out)?;
    } else {
        model::run::print_table(result, &mut out)?;
    }
    out.flush()?;
    Ok(ExitCode::from(result.exit_code))
}

/// `model merge`: every shard's result read, then one verdict.
fn merge_cmd(files: &[PathBuf], json: bool) -> anyhow::Result<ExitCode> {
    let mut inputs = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).with_context(|| format!("{name}: cannot read"))?;
        let result: model::CheckResult = serde_json::from_str(&text)
            .with_context(|| format!("{name}: not a result of `model check --shard I/N --json`"))?;
        inputs.push((name, result));
    }
    let merged = model::shard::merge(inputs).map_err(anyhow::Error::msg)?;
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
