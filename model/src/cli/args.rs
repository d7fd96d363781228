//! The command line: the commands and their flags (clap), and the model a command's flags
//! describe.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{Algorithm, Variant};
use clap::{Args, Parser, Subcommand};

use super::output::note;
use super::verify;
use crate::check::options::Strategy;
use crate::engine::shard::ShardSpec;
use crate::system::config::{Checkpointing, Config, InitiatorSpec, Mode, TopologySpec};
use crate::system::machine::SnapshotModel;
use crate::system::setting::{Names, Wording};

const CHECK_EXIT_CODES: &str = "\
Exit codes:
  0  the search was exhaustive and every property holds (each sometimes-property found its example)
  1  a property fails: a counterexample to an always-property (even in a bounded run), or, after an
     exhaustive search, no example of a sometimes-property
  2  bad input: a bad flag, an impossible configuration, an unreadable or malformed topology file
  3  not exhaustive and no failure found (--depth, --strategy simulation, --timeout, Ctrl-C):
     some verdicts are undecided
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

const MERGE_EXIT_CODES: &str = "\
Exit codes:
  0  every shard searched its part to the end and every property holds (each sometimes-property
     found its example in some shard)
  1  a property fails: a counterexample in some shard, or, every shard being exhaustive, no
     example of a sometimes-property in any
  2  bad input: a file that cannot be read or is not a shard's JSON result, shards of different
     configurations, versions or counts N, a shard given twice, a missing shard
  3  some shard was not exhaustive and nothing failed: some verdicts are undecided
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

const REPLAY_EXIT_CODES: &str = "\
Exit codes:
  0  every snapshot passed the trace checker (and, with --expect, matched the expected files)
  1  a snapshot failed the trace checker or differs from the expected files
  2  bad input: an unreadable or malformed file, a command the topology refuses, too few delays,
     no expected file for the --expect prefix, a --trace-out directory that cannot be written
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

const VARIANTS_EXIT_CODES: &str = "\
Exit codes:
  0  the list was printed
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

const EXPLORE_EXIT_CODES: &str = "\
Exit codes:
  0  the Explorer was served (until the command is stopped)
  2  bad input: a bad flag, an impossible configuration, an address that cannot be served on
  4  the output could not be written (standard output a closed pipe or a full disk): the verdict
     is unknown";

#[derive(Parser, Debug)]
#[command(
    name = "model",
    about = "Model-check Chandy–Lamport snapshots over the library's own core",
    after_help = "Exit codes: 0 success, 1 a property or snapshot fails, 2 bad input, 3 (check, merge, verify) \
                  nothing failed but something went undecided, 4 the output could not be written. Each command's --help lists \
                  its own."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
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
    #[command(after_help = EXPLORE_EXIT_CODES)]
    Explore {
        #[command(flatten)]
        model: ModelArgs,
        /// Address to serve on.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: SocketAddr,
    },
    /// List the fault variants.
    #[command(after_help = VARIANTS_EXIT_CODES)]
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
        /// Fault variant of Chandy-Lamport's marker rules (see `model variants`; the barrier
        /// algorithms' faults are refused).
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
    #[command(after_help = verify::VERIFY_EXIT_CODES)]
    Verify {
        /// The topology (.top; its tokens are the initial states, unless --initial gives them;
        /// with --initial or --app none a node line may give its id alone).
        #[arg(long)]
        topology: PathBuf,
        /// The log files (one per process, or any split of the events).
        #[arg(long, required = true, num_args = 1..)]
        trace: Vec<PathBuf>,
        /// What the logs' states and payloads are: an application of this crate, `balance`
        /// (integers moved by integer payloads) or `none` (opaque JSON, never interpreted).
        #[arg(long, value_enum, default_value = "bank")]
        app: verify::LogKind,
        /// Each process's initial state, as JSON: {"P0": STATE, ...} (default: from the
        /// topology's tokens).
        #[arg(long, value_name = "FILE")]
        initial: Option<PathBuf>,
        /// Print one JSON object instead of the verdict lines.
        #[arg(long)]
        json: bool,
        /// How the logs are read: `stream` (one pass) or `whole` (every event in memory first,
        /// the reader before issue 24; kept for bench/verify.sh).
        #[arg(long, value_enum, default_value = "stream", hide = true)]
        reader: verify::Reader,
    },
}

/// The model configuration.
#[derive(Args, Debug)]
pub(crate) struct ModelArgs {
    /// The application the houses run.
    #[arg(long, value_enum, default_value = "bank")]
    pub(crate) app: verify::App,
    /// Houses, 2–16: the most a model state holds (for a .top topology, taken from the file).
    #[arg(long)]
    pub(crate) procs: Option<usize>,
    /// complete, ring, bidi-ring, star, dataflow (Pi->Pj for every i<j, P0 the one source),
    /// or a FILE.top (the course format: self-links are ignored with a warning). Default:
    /// complete; with --app stream, dataflow.
    #[arg(long)]
    pub(crate) topology: Option<TopologySpec>,
    /// Jars per house (default 2, or the file's, which must then give every house's); on a
    /// dataflow topology, the source's only.
    #[arg(long)]
    pub(crate) tokens: Option<u32>,
    /// Actions per house: one-jar transfers (and sales with --internal), 0–20.
    #[arg(long, default_value_t = 2, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(0..=20))]
    pub(crate) sends: u8,
    /// Who may initiate: indices like 0,2, or any. Each initiator alone must reach every house.
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub(crate) initiators: InitiatorSpec,
    /// Snapshot ids 0..S, 1–8.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub(crate) snapshots: u8,
    /// Houses may sell a jar to their port town (an internal step).
    #[arg(long)]
    pub(crate) internal: bool,
    /// Bandits may steal carts in transit (never markers).
    #[arg(long)]
    pub(crate) theft: bool,
    /// Fault variant (see `model variants`).
    #[arg(long, default_value = "none")]
    pub(crate) variant: Variant,
    /// basic, full or literal (default: full; basic with the barrier algorithms).
    #[arg(long)]
    pub(crate) properties: Option<Mode>,
    /// Partial-order reduction: from each state explore only a persistent set of the enabled
    /// steps (same verdicts, fewer states; not with --properties literal or --symmetry).
    #[arg(long)]
    pub(crate) por: bool,
    /// The marker rules: chandy-lamport, aligned (barriers block inputs until all are in) or
    /// unaligned (barriers overtake queued data, which is recorded); the barrier algorithms
    /// with --properties basic.
    #[arg(long, default_value = "chandy-lamport")]
    pub(crate) algorithm: Algorithm,
    /// Barrier algorithms: at most M checkpoints pending at the coordinator, 1–8 (Flink's
    /// default 1); only 1 with unaligned (Flink has no concurrent unaligned checkpoints).
    /// `--snapshots S` is how many the coordinator triggers in a run.
    #[arg(long, value_name = "M", default_value_t = 1, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub(crate) max_concurrent: u8,
    /// Barrier algorithms: up to D declines (a house's state cannot be written), 0–4.
    #[arg(long, value_name = "D", default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub(crate) declines: u8,
    /// Barrier algorithms: up to C crashes at any step, 0–4, each followed by recovery from the
    /// latest completed checkpoint.
    #[arg(long, value_name = "C", default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub(crate) crashes: u8,
    /// Barrier algorithms: the coordinator tolerates T failed checkpoints in a row, 0–4 (Flink's
    /// default 0); a decline more fails the job over: every house recovers, as in a crash.
    /// Houses not ready (still holding restored data) and cancellations are not failures.
    #[arg(long, value_name = "T", default_value_t = 0, allow_negative_numbers = true, value_parser = clap::value_parser!(u8).range(0..=4))]
    pub(crate) tolerable_failures: u8,
}

/// A count of at least 1.
fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("must be a whole number, at least 1".to_string()),
    }
}

/// A number of MiB, in bytes.
fn mebibytes(s: &str) -> Result<u64, String> {
    s.parse::<u64>()
        .ok()
        .and_then(|m| m.checked_mul(1 << 20))
        .ok_or_else(|| "must be a whole number of MiB (0 to keep every level on disk)".to_string())
}

/// The longest `--timeout`, in seconds (about 31 years: longer is no timeout at all).
const MAX_TIMEOUT: f64 = 1e9;

/// Seconds, more than 0 and less than [`MAX_TIMEOUT`].
fn seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(x) if x > 0.0 && x.is_finite() && x < MAX_TIMEOUT => Ok(Duration::from_secs_f64(x)),
        Ok(_) => Err(format!("must be a number of seconds greater than 0 and less than {MAX_TIMEOUT:e}")),
        Err(e) => Err(e.to_string()),
    }
}

/// How to explore.
#[derive(Args, Debug)]
pub(crate) struct CheckerArgs {
    /// bfs, dfs or simulation (random walks: never exhaustive).
    #[arg(long, default_value = "dfs")]
    pub(crate) strategy: Strategy,
    /// Worker threads, 1 to the machine's cores (default: all cores; more are capped, with a
    /// warning).
    #[arg(long, allow_negative_numbers = true, value_parser = positive)]
    pub(crate) threads: Option<usize>,
    /// Symmetry reduction over permutations of houses (DFS and simulation only; at most 10
    /// houses).
    #[arg(long)]
    pub(crate) symmetry: bool,
    /// Explore paths of at most D steps (not exhaustive when a path is cut: exit 3).
    #[arg(long, value_name = "D", allow_negative_numbers = true, value_parser = positive)]
    pub(crate) depth: Option<usize>,
    /// Stop at the first counterexample.
    #[arg(long)]
    pub(crate) stop_on_failure: bool,
    /// Stop after this many seconds (more than 0, less than 1e9) and report what was found (not
    /// exhaustive: exit 3 unless something failed). Ctrl-C does the same.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true, value_parser = seconds)]
    pub(crate) timeout: Option<Duration>,
    /// Simulation only: the seed (default 0).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Simulation only: states to generate, at least 1 (default 1,000,000).
    #[arg(long, allow_negative_numbers = true, value_parser = positive)]
    pub(crate) max_states: Option<usize>,
    /// Address used in Explorer links.
    #[arg(long, default_value = "127.0.0.1:3000")]
    pub(crate) addr: SocketAddr,
    /// Search only shard I of N (0 ≤ I < N) of an exhaustive depth-first check; the N shards'
    /// `--json` results, given to `model merge`, make one verdict.
    #[arg(long, value_name = "I/N")]
    pub(crate) shard: Option<ShardSpec>,
    /// One search across every process of an MPI job (start it with `mpirun -np N` or
    /// `srun`): each owns the states whose fingerprints map to it, breadth first, level by
    /// level; rank 0 reports. One search thread per process: start more processes to use more
    /// cores. Needs a build with `--features mpi`.
    #[arg(long)]
    pub(crate) distributed: bool,
    /// `--distributed`: a rank keeps the breadth-first levels in memory while its resident
    /// memory is under this many MiB, and writes the new states of each level to disk beyond it
    /// (0: always on disk). Default: half the memory available at the start, shared by the ranks
    /// on the machine.
    #[arg(long, value_name = "MIB", allow_negative_numbers = true, value_parser = mebibytes)]
    pub(crate) rank_memory: Option<u64>,
    /// `--distributed`: the directory for the levels kept on disk (each rank's two unnamed files;
    /// default: the system's temporary directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) spill_dir: Option<PathBuf>,
}

/// The most processes `--symmetry` takes: it enumerates every permutation of them.
pub(crate) const SYMMETRY_MAX_PROCESSES: usize = 10;

impl ModelArgs {
    /// `--topology`, or the default for application `app`: a dataflow job for the stream.
    pub(crate) fn topology(&self, app: &str) -> TopologySpec {
        self.topology.clone().unwrap_or(if app == "stream" { TopologySpec::Dataflow } else { TopologySpec::Complete })
    }

    /// The model, with the topology file's warnings printed to stderr.
    pub(crate) fn build<A: Spec>(&self) -> anyhow::Result<SnapshotModel<A>> {
        let topology = self.topology(A::NAME);
        let config = Config {
            procs: self.procs,
            topology: topology.clone(),
            tokens: self.tokens,
            sends: self.sends,
            initiators: self.initiators.clone(),
            snapshots: self.snapshots,
            internal: self.internal,
            theft: self.theft,
            variant: self.variant,
            mode: self.properties.unwrap_or(if self.algorithm.coordinated() { Mode::Basic } else { Mode::Full }),
            por: self.por,
            algorithm: self.algorithm,
            checkpointing: Checkpointing {
                max_concurrent: self.max_concurrent,
                declines: self.declines,
                crashes: self.crashes,
                tolerable_failures: self.tolerable_failures,
            },
        };
        let resolved = config.resolve().map_err(|e| e.worded(Names::Flags))?;
        if let Some((p, t)) = chandy_lamport::apps::spec::too_many_tokens::<A>(&resolved.tokens) {
            let source = match &topology {
                TopologySpec::File(path) => path.display().to_string(),
                _ => "--tokens".to_string(),
            };
            match p {
                Some(p) => anyhow::bail!(
                    "{source}{}: {t} tokens, but the {} application takes at most {}",
                    if matches!(topology, TopologySpec::File(_)) {
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
            note(format!("warning: {w}"));
        }
        Ok(SnapshotModel::<A>::new(resolved))
    }
}
