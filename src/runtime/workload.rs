//! A random bank workload on the threaded runtime, every snapshot verified: the shared body of
//! the `bank` example, the runtime tests and the shuttle tests.

use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use thiserror::Error;

use super::bank::BankCommand;
use super::cluster::Cluster;
use super::outcome::{Options, RuntimeError};
use crate::apps::bank::Bank;
use crate::check::{verify, VerifyError};
use crate::formats::jsonl::WriteError;
use crate::protocol::SnapshotId;
use crate::protocol::Variant;
use crate::protocol::{ProcessId, Topology};

/// What to run.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The houses and their channels.
    pub topology: Topology,
    /// Jars each house starts with.
    pub jars: u32,
    /// Transfer commands to issue (some are refused when a house runs short).
    pub transfers: usize,
    /// Snapshots to take, spread over the run, overlapping.
    pub snapshots: usize,
    /// Up to this many initiators per snapshot (at least 1).
    pub max_initiators: usize,
    /// Largest cart.
    pub max_amount: u32,
    /// Seed of the generator choosing transfers and initiators.
    pub seed: u64,
    /// Fault variant of the marker rules.
    pub variant: Variant,
    /// Percentage of commands that are sales to the port town (internal steps) rather than
    /// transfers.
    pub sell_percent: u32,
    /// Pause this long after every 32 commands so deliveries keep up with the commands (none
    /// under loom or shuttle, whose threads are not real).
    pub pace: Option<std::time::Duration>,
    /// Write the run as JSON-lines logs into this directory (`<process>.jsonl` and
    /// `topology.top`, see [`crate::formats::jsonl`]) after shutdown, before the checks, so a
    /// failing run is written too.
    pub trace_out: Option<PathBuf>,
}

impl Workload {
    /// A workload on `topology` with defaults: 100 jars a house, carts of 1..=5 jars, 1–2
    /// initiators per snapshot, seed 1.
    pub fn new(topology: Topology, transfers: usize, snapshots: usize) -> Self {
        Workload {
            topology,
            jars: 100,
            transfers,
            snapshots,
            max_initiators: 2,
            max_amount: 5,
            seed: 1,
            variant: Variant::None,
            sell_percent: 0,
            pace: Some(std::time::Duration::from_micros(100)),
            trace_out: None,
        }
    }
}

/// One verified snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotSummary {
    /// The snapshot.
    pub id: SnapshotId,
    /// Where it was initiated.
    pub initiators: Vec<ProcessId>,
    /// Jars recorded in the houses.
    pub in_houses: u64,
    /// Jars recorded as sold.
    pub sold: u64,
    /// Jars recorded in transit.
    pub in_transit: u64,
    /// Channel records holding at least one cart.
    pub busy_channels: usize,
}

/// Everything a verified run reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadReport {
    /// The snapshots, by id.
    pub snapshots: Vec<SnapshotSummary>,
    /// Jars in the system at the start (and, verified, at the end).
    pub total: u64,
    /// Transfers the houses refused for lack of jars.
    pub refused: usize,
}

/// A run that failed a check.
#[derive(Debug, Error)]
pub enum WorkloadError {
    /// The runtime failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// The trace checker rejected a snapshot.
    #[error("snapshot {snapshot}: {error}")]
    Verify {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Why.
        error: VerifyError,
    },
    /// A snapshot's recorded total (in houses, in transit and sold) differs from the ledger.
    #[error("snapshot {snapshot}: recorded {recorded} jars, the ledger says {ledger}")]
    NotConserved {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Recorded total.
        recorded: u64,
        /// The ledger.
        ledger: u64,
    },
    /// Jars were lost or created by the run itself (e.g. at shutdown).
    #[error("the houses end with {end} jars but started with {start}")]
    Lost {
        /// At the start.
        start: u64,
        /// At the end.
        end: u64,
    },
    /// The logs could not be written ([`Workload::trace_out`]).
    #[error("--trace-out: {0}")]
    Write(#[from] WriteError),
    /// Snapshots that never completed.
    #[error("snapshots {0:?} never completed")]
    Incomplete(Vec<SnapshotId>),
}

/// Runs the workload on a traced cluster, waits for every snapshot, shuts down, and verifies
/// each snapshot with the trace checker and conservation, and the final balances.
pub fn run(w: &Workload) -> Result<WorkloadReport, WorkloadError> {
    let n = w.topology.len();
    let mut rng = StdRng::seed_from_u64(w.seed);
    let options = Options { trace: true, variant: w.variant, ..Options::default() };
    let cluster = Cluster::start(w.topology.clone(), vec![Bank::new(w.jars); n], options)?;
    let start = u64::from(w.jars) * n as u64;
    // Snapshot k starts after transfer number at[k] (spread evenly, so several overlap).
    let at: Vec<usize> = (0..w.snapshots).map(|k| (k + 1) * w.transfers / (w.snapshots + 1)).collect();
    let mut initiators = Vec::new();
    let mut next = 0;
    for i in 0..=w.transfers {
        while next < at.len() && at[next] == i {
            let id = SnapshotId(next as u32);
            let count = rng.random_range(1..=w.max_initiators.clamp(1, n));
            let mut chosen: Vec<ProcessId> = Vec::new();
            while chosen.len() < count {
                let p = ProcessId(rng.random_range(0..n) as u16);
                if !chosen.contains(&p) {
                    cluster.initiate(id, p)?;
                    chosen.push(p);
                }
            }
            initiators.push(chosen);
            next += 1;
        }
        if i == w.transfers {
            break;
        }
        let from = ProcessId(rng.random_range(0..n) as u16);
        if rng.random_range(0..100) < w.sell_percent {
            cluster.command(from, BankCommand::Sell { amount: rng.random_range(1..=w.max_amount.max(1)) })?;
            continue;
        }
        let out = w.topology.outgoing(from);
        if out.is_empty() {
            continue;
        }
        let to = w.topology.channel(out[rng.random_range(0..out.len())]).to;
        let amount = rng.random_range(1..=w.max_amount.max(1));
        cluster.command(from, BankCommand::Transfer { to, amount })?;
        if let Some(pause) = w.pace.filter(|_| i % 32 == 31) {
            std::thread::sleep(pause);
        }
    }
    // Every snapshot completes before shutdown, unless the fault can keep one open for ever
    // (a marker never sent, lost or refused): waiting on it would hang, and the shutdown then
    // reports it incomplete.
    let may_stall = matches!(
        w.variant,
        Variant::NoMarkerForwarding | Variant::SkipOneMarker | Variant::LoseMarkers | Variant::DoubleMarker
    );
    if !may_stall {
        for k in 0..w.snapshots {
            cluster.wait(SnapshotId(k as u32))?;
        }
    }
    let outcome = cluster.shutdown()?;
    if let Some(dir) = &w.trace_out {
        outcome.write_logs(dir, &w.topology, &vec![w.jars; n])?;
    }
    if !outcome.incomplete.is_empty() {
        return Err(WorkloadError::Incomplete(outcome.incomplete));
    }
    let end: u64 = outcome.states.iter().map(|b| u64::from(b.jars) + u64::from(b.sold)).sum();
    if end != start {
        return Err(WorkloadError::Lost { start, end });
    }
    let trace = outcome.trace.ok_or(RuntimeError::Stopped)?;
    let mut summaries = Vec::new();
    for (snapshot, initiators) in outcome.snapshots.iter().zip(initiators) {
        verify(&w.topology, &trace, snapshot)
            .map_err(|error| WorkloadError::Verify { snapshot: snapshot.id, error })?;
        let sold: u64 = snapshot.state.processes.iter().map(|b| u64::from(b.sold)).sum();
        let recorded = snapshot.state.total() + sold;
        if recorded != start {
            return Err(WorkloadError::NotConserved { snapshot: snapshot.id, recorded, ledger: start });
        }
        summaries.push(SnapshotSummary {
            id: snapshot.id,
            initiators,
            in_houses: snapshot.state.tokens_in_processes(),
            sold,
            in_transit: snapshot.state.tokens_in_channels(),
            busy_channels: snapshot.state.channels.iter().filter(|c| !c.is_empty()).count(),
        });
    }
    Ok(WorkloadReport { snapshots: summaries, total: start, refused: outcome.rejected.len() })
}
