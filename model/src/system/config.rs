//! What to model: the processes, their roads, the trade's budget, who initiates, which faults.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use chandy_lamport::formats::top::{TopFile, TopWarning};
use chandy_lamport::formats::{FormatError, Problem};
use chandy_lamport::{Algorithm, Initiators, ProcessId, Topology, TopologyError, Variant};
use thiserror::Error;

use super::setting::{Names, Setting, Wording};
use super::state::MAX_PROCESSES;

/// The channel graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologySpec {
    /// Every process has a road to every other.
    Complete,
    /// One-way ring.
    Ring,
    /// Ring with roads both ways.
    BidiRing,
    /// Hub `P0` with roads both ways to every other process.
    Star,
    /// `Pi -> Pj` for every `i < j`: a dataflow job whose one source, `P0`, holds the tokens
    /// (the other processes none).
    Dataflow,
    /// A `.top` file (its node count and tokens are used; its node lines may give ids alone
    /// when `tokens` gives every process's).
    File(PathBuf),
}

/// An unknown topology name.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown topology {0:?}: expected complete, ring, bidi-ring, star, dataflow or FILE.top")]
pub struct UnknownTopology(pub String);

impl FromStr for TopologySpec {
    type Err = UnknownTopology;
    fn from_str(s: &str) -> Result<Self, UnknownTopology> {
        Ok(match s {
            "complete" => TopologySpec::Complete,
            "ring" => TopologySpec::Ring,
            "bidi-ring" => TopologySpec::BidiRing,
            "star" => TopologySpec::Star,
            "dataflow" => TopologySpec::Dataflow,
            path if path.ends_with(".top") => TopologySpec::File(PathBuf::from(path)),
            other => return Err(UnknownTopology(other.to_string())),
        })
    }
}

impl fmt::Display for TopologySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologySpec::Complete => f.write_str("complete"),
            TopologySpec::Ring => f.write_str("ring"),
            TopologySpec::BidiRing => f.write_str("bidi-ring"),
            TopologySpec::Star => f.write_str("star"),
            TopologySpec::Dataflow => f.write_str("dataflow"),
            TopologySpec::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Who may start a snapshot spontaneously.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InitiatorSpec {
    /// Any process.
    Any,
    /// These process indices.
    Only(Vec<usize>),
}

/// An initiator that is not a process index.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("bad initiator {0:?}: expected indices like 0,2 or any")]
pub struct BadInitiator(pub String);

impl FromStr for InitiatorSpec {
    type Err = BadInitiator;
    fn from_str(s: &str) -> Result<Self, BadInitiator> {
        if s == "any" {
            return Ok(InitiatorSpec::Any);
        }
        s.split(',')
            .map(|x| x.trim().parse::<usize>().map_err(|_| BadInitiator(x.to_string())))
            .collect::<Result<Vec<_>, _>>()
            .map(InitiatorSpec::Only)
    }
}

impl fmt::Display for InitiatorSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitiatorSpec::Any => f.write_str("any"),
            InitiatorSpec::Only(v) => f.write_str(&v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
        }
    }
}

/// How much the model checks, and with how much ghost data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Conservation and termination only, no ghost data at all.
    Basic,
    /// Every property, with minimal incremental ghost data.
    Full,
    /// Every property, checked by replaying the recorded history with the library's trace
    /// checker (small configurations only).
    Literal,
}

/// An unknown property mode.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown property mode {0:?}: expected basic, full or literal")]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, UnknownMode> {
        match s {
            "basic" => Ok(Mode::Basic),
            "full" => Ok(Mode::Full),
            "literal" => Ok(Mode::Literal),
            other => Err(UnknownMode(other.to_string())),
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Basic => "basic",
            Mode::Full => "full",
            Mode::Literal => "literal",
        })
    }
}

/// A model configuration, as given (see [`Config::resolve`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// Number of processes, 2–[`MAX_PROCESSES`] (taken from the file for a `.top` topology).
    pub procs: Option<usize>,
    /// The channel graph.
    pub topology: TopologySpec,
    /// Jars per process (taken from the file for a `.top` topology unless given: then the file
    /// must give every process's).
    pub tokens: Option<u32>,
    /// Actions (one-jar transfers, and sales with `internal`) per process.
    pub sends: u8,
    /// Who may initiate.
    pub initiators: InitiatorSpec,
    /// Snapshot ids `0..snapshots`.
    pub snapshots: u8,
    /// Processes may sell a jar to their port town (an internal step).
    pub internal: bool,
    /// Bandits may steal a message in transit (never a marker).
    pub theft: bool,
    /// Fault variant.
    pub variant: Variant,
    /// Property mode.
    pub mode: Mode,
    /// Partial-order reduction (`--por`): explore a persistent subset of the enabled steps.
    pub por: bool,
    /// The marker rules the processes follow.
    pub algorithm: Algorithm,
    /// The checkpoint coordinator's bounds (barrier algorithms only).
    pub checkpointing: Checkpointing,
}

/// The barrier algorithms' checkpoint coordinator and failures, as bounded in a model run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checkpointing {
    /// At most this many checkpoints pending at once (`--max-concurrent`; Flink's default 1).
    pub max_concurrent: u8,
    /// Up to this many declines by processes in a run (`--declines`).
    pub declines: u8,
    /// Up to this many crashes in a run, each followed by recovery (`--crashes`).
    pub crashes: u8,
    /// Failed checkpoints in a row the coordinator tolerates; one more fails the job over
    /// (`--tolerable-failures`; Flink's default 0).
    pub tolerable_failures: u8,
}

impl Default for Checkpointing {
    fn default() -> Self {
        Checkpointing { max_concurrent: 1, declines: 0, crashes: 0, tolerable_failures: 0 }
    }
}

impl Default for Config {
    /// The default `model check`: 3 processes on a complete graph, 2 jars each, 2 actions each,
    /// process 0 initiates, 1 snapshot, full properties.
    fn default() -> Self {
        Config {
            procs: Some(3),
            topology: TopologySpec::Complete,
            tokens: Some(2),
            sends: 2,
            initiators: InitiatorSpec::Only(vec![0]),
            snapshots: 1,
            internal: false,
            theft: false,
            variant: Variant::None,
            mode: Mode::Full,
            por: false,
            algorithm: Algorithm::ChandyLamport,
            checkpointing: Checkpointing::default(),
        }
    }
}

/// A configuration the model refuses. Each message names its source: the setting (by its
/// [`Config`] field in `Display`, by its flag in [`Wording::worded`] with [`Names::Flags`]), or
/// the file and line.
#[derive(Debug)]
pub enum ConfigError {
    /// `procs` outside 2–[`MAX_PROCESSES`].
    Procs {
        /// Given.
        value: usize,
        /// The most processes a model state holds.
        max: usize,
    },
    /// A topology file with more nodes than a model state holds.
    FileTooLarge {
        /// The file.
        file: String,
        /// The line of the node count.
        line: usize,
        /// Its nodes.
        nodes: usize,
        /// The most processes a model state holds.
        max: usize,
    },
    /// Snapshots outside 1–8.
    Snapshots(u8),
    /// Too many actions for the model's counters.
    Sends(u8),
    /// A topology file that cannot be read or parsed.
    File(FormatError),
    /// A topology file's node line giving the id alone, without `tokens` to give every house's.
    NoTokens {
        /// The file.
        file: String,
        /// The node's line.
        line: usize,
        /// The node.
        node: String,
    },
    /// `procs` disagrees with the topology file.
    ProcsMismatch {
        /// Given.
        procs: usize,
        /// The file.
        file: String,
        /// Nodes in the file.
        nodes: usize,
    },
    /// An initiator index outside the graph.
    Initiator {
        /// The index given.
        index: usize,
        /// Processes.
        procs: usize,
    },
    /// An initiator listed twice.
    DuplicateInitiator(usize),
    /// An initiator whose markers cannot reach every process.
    Unreachable {
        /// The initiator's name.
        name: String,
        /// Its index.
        index: usize,
        /// The processes it cannot reach.
        unreached: Vec<String>,
        /// Where the links come from (` along the links of FILE`, or empty).
        place: String,
    },
    /// Barrier checkpoints' initiators that are not the sources, or do not reach every process
    /// together.
    BarrierInitiators {
        /// What is wrong.
        problem: TopologyError,
        /// Where the links come from (` along the links of FILE`, or empty).
        place: String,
    },
    /// The topology is invalid.
    Topology(TopologyError),
    /// Literal mode on a configuration too large for it.
    TooBigForLiteral {
        /// Processes.
        procs: usize,
        /// Sends.
        sends: u8,
        /// Snapshots.
        snapshots: u8,
    },
    /// Partial-order reduction with literal mode.
    PorLiteral,
    /// A barrier algorithm with a property mode whose ghost data does not model it yet.
    AlgorithmMode {
        /// The algorithm.
        algorithm: Algorithm,
        /// The property mode asked for.
        mode: Mode,
    },
    /// A barrier algorithm with `por`, whose independence argument covers Chandy–Lamport only.
    AlgorithmPor(Algorithm),
    /// Theft with unaligned barriers in full mode.
    UnalignedTheft,
    /// Unaligned checkpoints with more than one pending at once.
    UnalignedConcurrent(u8),
    /// A fault variant of another algorithm than the one checked.
    AlgorithmVariant {
        /// The algorithm.
        algorithm: Algorithm,
        /// The variant.
        variant: Variant,
    },
    /// A checkpoint-coordinator setting with the Chandy–Lamport algorithm, which has no coordinator.
    CoordinatorSetting {
        /// The setting.
        setting: Setting,
    },
    /// A coordinator bound out of range.
    CoordinatorBound {
        /// The setting.
        setting: Setting,
        /// Given.
        value: u8,
        /// The least allowed.
        min: u8,
        /// The most allowed.
        max: u8,
    },
    /// More messages than the ghost data's theft counter holds.
    TheftCount {
        /// Processes.
        processes: usize,
        /// Sends.
        sends: u8,
        /// Their product.
        messages: usize,
    },
}

impl Wording for ConfigError {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result {
        use Setting::*;
        let name = |s: Setting| s.name(names);
        match self {
            ConfigError::Procs { value, max } => write!(f, "{} must be between 2 and {max}, got {value}", name(Procs)),
            ConfigError::FileTooLarge { file, line, nodes, max } => {
                write!(f, "{file}:{line}: {nodes} nodes, but the model holds at most {max} houses")
            }
            ConfigError::Snapshots(n) => write!(f, "{} must be between 1 and 8, got {n}", name(Snapshots)),
            ConfigError::Sends(n) => write!(f, "{} must be at most 20, got {n}", name(Sends)),
            ConfigError::File(e) => write!(f, "{e}"),
            ConfigError::NoTokens { file, line, node } => write!(
                f,
                "{file}:{line}: node {node} has no token count, but the model makes its initial state from one: \
                 give `{node} TOKENS` here, or set {} for every house",
                name(Tokens)
            ),
            ConfigError::ProcsMismatch { procs, file, nodes } => {
                write!(f, "{} disagrees with {file}, which has {nodes} nodes", Procs.with(procs, names))
            }
            ConfigError::Initiator { index, procs } => write!(
                f,
                "{}: initiator {index} is not a process: the topology has processes 0..{procs}",
                name(Initiators)
            ),
            ConfigError::DuplicateInitiator(i) => write!(f, "{} lists house {i} twice", name(Initiators)),
            ConfigError::Unreachable { name: from, index, unreached, place } => write!(
                f,
                "{}: no marker from {from} (house {index}) can reach {}{place}, so a snapshot it starts would never \
                 finish (each initiator alone must reach every house)",
                name(Initiators),
                unreached.join(", ")
            ),
            ConfigError::BarrierInitiators { problem, place } => write!(f, "{}: {problem}{place}", name(Initiators)),
            ConfigError::Topology(e) => write!(f, "{e}"),
            ConfigError::TooBigForLiteral { procs, sends, snapshots } => write!(
                f,
                "{} keeps the whole history in every state: use at most 4 processes, 2 sends and 2 snapshots (got \
                 {procs}, {sends}, {snapshots})",
                Properties.with(Mode::Literal, names)
            ),
            ConfigError::PorLiteral => write!(
                f,
                "{} cannot be used with {}: the history in every state records the order of all steps, so no two \
                 steps commute (use {} or basic)",
                name(Por),
                Properties.with(Mode::Literal, names),
                Properties.with(Mode::Full, names)
            ),
            ConfigError::AlgorithmMode { algorithm, mode } => write!(
                f,
                "{} is checked with {}: the {mode} mode replays the history with the Chandy–Lamport trace checker, \
                 whose logs have no barriers, cancellations or recoveries",
                Algorithm.with(algorithm, names),
                Properties.with("basic or full", names)
            ),
            ConfigError::AlgorithmPor(algorithm) => write!(
                f,
                "{} cannot be used with {}: the reduction's independence argument covers chandy-lamport only \
                 (blocked inputs and output buffers make more steps dependent)",
                Algorithm.with(algorithm, names),
                name(Por)
            ),
            ConfigError::UnalignedTheft => write!(
                f,
                "{} cannot be used with {} {}: the full mode's ghost data counts a stolen cart as lost before the \
                 cut, but an unaligned barrier may already have recorded it as channel state (use {})",
                name(Theft),
                Algorithm.with(chandy_lamport::Algorithm::Unaligned, names),
                Properties.with(Mode::Full, names),
                Properties.with(Mode::Basic, names)
            ),
            ConfigError::UnalignedConcurrent(m) => write!(
                f,
                "{} cannot be used with {}: Flink does not support concurrent unaligned checkpoints (use {}, or {})",
                MaxConcurrent.with(m, names),
                Algorithm.with(chandy_lamport::Algorithm::Unaligned, names),
                MaxConcurrent.with(1, names),
                Algorithm.with(chandy_lamport::Algorithm::Aligned, names)
            ),
            ConfigError::AlgorithmVariant { algorithm, variant } => write!(
                f,
                "{} is a fault of {}, not of {}",
                Variant.with(variant, names),
                Algorithm.with(variant.algorithm(), names),
                Algorithm.with(algorithm, names)
            ),
            ConfigError::CoordinatorSetting { setting } => write!(
                f,
                "{} is for the barrier algorithms' checkpoint coordinator: use it with {}",
                name(*setting),
                Algorithm.with("aligned or unaligned", names)
            ),
            ConfigError::CoordinatorBound { setting, value, min, max } => {
                write!(f, "{} must be between {min} and {max}, got {value}", name(*setting))
            }
            ConfigError::TheftCount { processes, sends, messages } => write!(
                f,
                "{}: {processes} houses x {} = {messages} carts could be stolen, but the model counts stolen jars in \
                 one byte (at most 255)",
                name(Theft),
                Sends.with(sends, names)
            ),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f, Names::Fields)
    }
}

/// As `#[error(transparent)]` would: a wrapped file or topology error is shown as itself.
impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::File(e) => e.source(),
            ConfigError::Topology(e) => e.source(),
            _ => None,
        }
    }
}

impl From<FormatError> for ConfigError {
    fn from(e: FormatError) -> Self {
        ConfigError::File(e)
    }
}

impl From<TopologyError> for ConfigError {
    fn from(e: TopologyError) -> Self {
        ConfigError::Topology(e)
    }
}

/// A configuration checked and made concrete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The channel graph.
    pub topology: Topology,
    /// Initial jars per process.
    pub tokens: Vec<u32>,
    /// Actions per process.
    pub sends: u8,
    /// Which processes may initiate.
    pub initiators: Vec<bool>,
    /// Snapshot ids `0..snapshots`.
    pub snapshots: u8,
    /// Internal steps enabled.
    pub internal: bool,
    /// Theft enabled.
    pub theft: bool,
    /// Fault variant.
    pub variant: Variant,
    /// Property mode.
    pub mode: Mode,
    /// Partial-order reduction.
    pub por: bool,
    /// The marker rules the processes follow.
    pub algorithm: Algorithm,
    /// The checkpoint coordinator's bounds (barrier algorithms only).
    pub checkpointing: Checkpointing,
    /// Lines of the topology file that were ignored (self-links), for the caller to show.
    pub warnings: Vec<TopWarning>,
}

impl Config {
    /// Checks the configuration and builds the topology.
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        if !(1..=8).contains(&self.snapshots) {
            return Err(ConfigError::Snapshots(self.snapshots));
        }
        if self.sends > 20 {
            return Err(ConfigError::Sends(self.sends));
        }
        let mut warnings = Vec::new();
        let (topology, file_tokens, place) = match &self.topology {
            TopologySpec::File(path) => {
                let file = TopFile::read(path)?;
                let nodes = file.topology.len();
                let name = path.display().to_string();
                if let Some(procs) = self.procs.filter(|&p| p != nodes) {
                    return Err(ConfigError::ProcsMismatch { procs, file: name, nodes });
                }
                if nodes > MAX_PROCESSES {
                    return Err(ConfigError::FileTooLarge {
                        file: name,
                        line: file.count_line,
                        nodes,
                        max: MAX_PROCESSES,
                    });
                }
                // A count missing from the file is needed only where `tokens` does not give them all.
                let tokens = match (self.tokens, file.counts()) {
                    (None, Err(FormatError { file, line, problem: Problem::NoTokens { node } })) => {
                        return Err(ConfigError::NoTokens { file, line, node });
                    }
                    (None, Err(e)) => return Err(e.into()),
                    (_, counts) => counts.ok(),
                };
                warnings = file.warnings;
                (file.topology, tokens, format!(" along the links of {name}"))
            }
            spec => {
                let n = self.procs.unwrap_or(3);
                if !(2..=MAX_PROCESSES).contains(&n) {
                    return Err(ConfigError::Procs { value: n, max: MAX_PROCESSES });
                }
                let t = match spec {
                    TopologySpec::Complete => Topology::complete(n),
                    TopologySpec::Ring => Topology::ring(n),
                    TopologySpec::BidiRing => Topology::bidi_ring(n),
                    TopologySpec::Dataflow => Topology::dataflow(n),
                    _ => Topology::star(n),
                }?;
                (t, None, String::new())
            }
        };
        let n = topology.len();
        let tokens = match (self.tokens, file_tokens) {
            (None, Some(file)) => file,
            // Only the dataflow job's source holds tokens.
            (t, _) if self.topology == TopologySpec::Dataflow => {
                (0..n).map(|p| if p == 0 { t.unwrap_or(2) } else { 0 }).collect()
            }
            (t, _) => vec![t.unwrap_or(2); n],
        };
        let initiators = match &self.initiators {
            InitiatorSpec::Any => Initiators::Any,
            InitiatorSpec::Only(list) => {
                if let Some(&index) = list.iter().find(|&&i| i >= n) {
                    return Err(ConfigError::Initiator { index, procs: n });
                }
                if let Some((_, &index)) = list.iter().enumerate().find(|(k, i)| list[..*k].contains(i)) {
                    return Err(ConfigError::DuplicateInitiator(index));
                }
                Initiators::Only(list.iter().map(|&i| ProcessId(i as u16)).collect())
            }
        };
        // Chandy–Lamport: any initiator may start a snapshot alone. Barrier checkpoints: the
        // coordinator triggers every initiator together, at the sources where there are any.
        let checked = if self.algorithm.coordinated() {
            topology.check_sources(&initiators)
        } else {
            topology.check_initiators(&initiators)
        };
        checked.map_err(|e| match e {
            TopologyError::Unreachable { from, unreached } => {
                let index = topology.process(&from).map_or(0, ProcessId::index);
                ConfigError::Unreachable { name: from, index, unreached, place: place.clone() }
            }
            problem @ TopologyError::UnreachableTogether { .. } => {
                ConfigError::BarrierInitiators { problem, place: place.clone() }
            }
            problem @ TopologyError::NotSource { .. } => {
                ConfigError::BarrierInitiators { problem, place: String::new() }
            }
            other => other.into(),
        })?;
        if self.mode == Mode::Literal && (n > 4 || self.sends > 2 || self.snapshots > 2) {
            return Err(ConfigError::TooBigForLiteral { procs: n, sends: self.sends, snapshots: self.snapshots });
        }
        if self.por && self.mode == Mode::Literal {
            return Err(ConfigError::PorLiteral);
        }
        if self.algorithm.coordinated() && self.mode == Mode::Literal {
            return Err(ConfigError::AlgorithmMode { algorithm: self.algorithm, mode: self.mode });
        }
        if self.por && !self.algorithm.por_argued() {
            return Err(ConfigError::AlgorithmPor(self.algorithm));
        }
        if self.algorithm.records_before_receipt() && self.theft && self.mode == Mode::Full {
            return Err(ConfigError::UnalignedTheft);
        }
        let m = self.checkpointing.max_concurrent;
        if !self.algorithm.concurrent_checkpoints() && m > 1 {
            return Err(ConfigError::UnalignedConcurrent(m));
        }
        let c = self.checkpointing;
        if !self.algorithm.coordinated() {
            let defaults = Checkpointing::default();
            let given = [
                (Setting::MaxConcurrent, c.max_concurrent != defaults.max_concurrent),
                (Setting::Declines, c.declines != defaults.declines),
                (Setting::Crashes, c.crashes != defaults.crashes),
                (Setting::TolerableFailures, c.tolerable_failures != defaults.tolerable_failures),
            ];
            if let Some(&(setting, _)) = given.iter().find(|(_, g)| *g) {
                return Err(ConfigError::CoordinatorSetting { setting });
            }
        }
        for (setting, value, min, max) in [
            (Setting::MaxConcurrent, c.max_concurrent, 1, 8),
            (Setting::Declines, c.declines, 0, 4),
            (Setting::Crashes, c.crashes, 0, 4),
            (Setting::TolerableFailures, c.tolerable_failures, 0, 4),
        ] {
            if !(min..=max).contains(&value) {
                return Err(ConfigError::CoordinatorBound { setting, value, min, max });
            }
        }
        if !self.variant.applies_to(self.algorithm) {
            return Err(ConfigError::AlgorithmVariant { algorithm: self.algorithm, variant: self.variant });
        }
        let messages = n * usize::from(self.sends);
        if self.theft && messages > 255 {
            return Err(ConfigError::TheftCount { processes: n, sends: self.sends, messages });
        }
        let initiators = topology.processes().map(|p| initiators.allows(p)).collect();
        Ok(Resolved {
            topology,
            tokens,
            sends: self.sends,
            initiators,
            snapshots: self.snapshots,
            internal: self.internal,
            theft: self.theft,
            variant: self.variant,
            mode: self.mode,
            por: self.por,
            algorithm: self.algorithm,
            checkpointing: self.checkpointing,
            warnings,
        })
    }
}
