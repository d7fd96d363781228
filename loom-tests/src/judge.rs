//! What a correct run must show: every snapshot assembled, accepted by the trace checker and
//! conserving the ledger, and every jar still in a house once the cluster has shut down.

use chandy_lamport::bank::{Bank, Jars};
use chandy_lamport::runtime::{Outcome, RuntimeError};
use chandy_lamport::verify::{unterminated, verify, VerifyError};
use chandy_lamport::{EventKind, GlobalSnapshot, SnapshotId, Topology, Violation};

/// Why a run is wrong. A scenario run under loom or shuttle panics with this as the payload
/// (`std::panic::panic_any`), so a test can tell which check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The cluster itself failed (start, a request, or shutdown).
    Runtime(RuntimeError),
    /// The trace checker rejected a snapshot; for a snapshot never assembled, clause (e) from
    /// [`unterminated`].
    Violation(Violation),
    /// The trace checker could not judge a snapshot (malformed trace or snapshot).
    Unjudgeable(String),
    /// A snapshot was never assembled, yet the trace shows it terminated.
    Unassembled(SnapshotId),
    /// A snapshot's recorded jars (houses plus channels) differ from the ledger.
    NotConserved {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Jars recorded.
        recorded: u64,
        /// The ledger.
        ledger: u64,
    },
    /// The houses end with a different number of jars than they started with.
    Lost {
        /// At the start.
        start: u64,
        /// At the end.
        end: u64,
    },
    /// A transfer command never became a cart on its way (left unhandled in an inbox).
    Unhandled {
        /// Transfers commanded.
        commanded: usize,
        /// Carts sent.
        sent: usize,
    },
    /// Carts or markers were sent but never received before the cluster stopped.
    Undelivered {
        /// `"carts"` or `"markers"`.
        what: &'static str,
        /// How many were sent.
        sent: usize,
        /// How many were received.
        received: usize,
    },
    /// A house refused a transfer (the scenarios give every house enough jars).
    Refused(String),
    /// A snapshot returned by `wait` differs from the one the cluster reports at shutdown.
    WaitedDiffers(SnapshotId),
    /// An application panicked and the cluster did not report it as expected.
    PanicNotReported {
        /// What `wait` returned.
        wait: String,
        /// What `shutdown` returned.
        shutdown: String,
    },
}

/// A run that passed every check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// Jars in the system (the ledger).
    pub ledger: u64,
    /// Jars recorded in transit, per snapshot, by id.
    pub in_transit: Vec<u64>,
}

/// A run that passed, as the explorations count it.
pub trait Passed {
    /// Whether some snapshot recorded a jar in transit (an exploration that never does has not
    /// reached the cuts where channel recording matters).
    fn jars_in_transit(&self) -> bool;
}

impl Passed for Judged {
    fn jars_in_transit(&self) -> bool {
        self.in_transit.iter().any(|&jars| jars > 0)
    }
}

/// A run with nothing to count (the burning house's).
impl Passed for () {
    fn jars_in_transit(&self) -> bool {
        false
    }
}

/// Counts the runs of an exploration: shared between the runs and the test (std atomics: they
/// count the tool's executions, they are not part of the model).
#[derive(Debug, Default)]
pub struct Tally {
    /// Runs started.
    pub runs: std::sync::atomic::AtomicUsize,
    /// Passing runs in which some snapshot recorded a jar in transit.
    pub with_jars_in_transit: std::sync::atomic::AtomicUsize,
}

impl Tally {
    /// Runs `run` once and counts it; a failing run panics with its [`Failure`] as the payload,
    /// for loom or shuttle to report and for the test to read.
    pub fn run<T: Passed>(&self, run: impl FnOnce() -> Result<T, Failure>) {
        use std::sync::atomic::Ordering::Relaxed;
        self.runs.fetch_add(1, Relaxed);
        match run() {
            Ok(passed) => {
                if passed.jars_in_transit() {
                    self.with_jars_in_transit.fetch_add(1, Relaxed);
                }
            }
            Err(failure) => std::panic::panic_any(failure),
        }
    }
}

/// What the main thread asked of a cluster, and what `wait` gave it.
#[derive(Clone, Debug, Default)]
pub struct Requests {
    /// Transfer commands issued (the scenarios give every house enough jars for all of them).
    pub transfers: usize,
    /// Snapshot ids initiated (an id initiated at two houses appears twice).
    pub initiated: Vec<SnapshotId>,
    /// The snapshots `wait` returned.
    pub waited: Vec<GlobalSnapshot<Bank>>,
}

/// Judges a traced run of the bank on `topology`: no transfer refused, unhandled or lost, every
/// cart and marker sent also received, then each snapshot in id order with [`verify`] (or
/// [`unterminated`] when it was never assembled) and for conservation. Returns the first
/// failure.
///
/// Loom itself catches a message sent to a thread that has stopped ("Messages leaked"), but
/// drains a stopped thread's inbox silently; the counts here catch what was left in one.
pub fn judge(topology: &Topology, requests: &Requests, outcome: &Outcome<Bank>) -> Result<Judged, Failure> {
    let trace = outcome.trace.as_ref().ok_or_else(|| Failure::Unjudgeable("the run was not traced".into()))?;
    let ledger: u64 = trace.initial.iter().map(|b| u64::from(b.jars)).sum();
    if let Some(r) = outcome.rejected.first() {
        return Err(Failure::Refused(r.reason.clone()));
    }
    let end: u64 = outcome.states.iter().map(|b| u64::from(b.jars)).sum();
    if end != ledger {
        return Err(Failure::Lost { start: ledger, end });
    }
    let count = |kind: fn(&EventKind<Jars>) -> bool| trace.events.iter().filter(|e| kind(&e.kind)).count();
    let sent = count(|k| matches!(k, EventKind::Send { .. }));
    if sent != requests.transfers {
        return Err(Failure::Unhandled { commanded: requests.transfers, sent });
    }
    let received = count(|k| matches!(k, EventKind::Receive { .. }));
    if received != sent {
        return Err(Failure::Undelivered { what: "carts", sent, received });
    }
    let (sent, received) =
        (count(|k| matches!(k, EventKind::MarkerSend { .. })), count(|k| matches!(k, EventKind::MarkerReceive { .. })));
    if received != sent {
        return Err(Failure::Undelivered { what: "markers", sent, received });
    }
    let mut ids = requests.initiated.clone();
    ids.sort();
    ids.dedup();
    let mut in_transit = Vec::with_capacity(ids.len());
    for id in ids {
        let Some(snapshot) = outcome.snapshots.iter().find(|s| s.id == id) else {
            let violations = unterminated(topology, trace, id).map_err(|e| Failure::Unjudgeable(e.to_string()))?;
            return Err(violations.into_iter().next().map_or(Failure::Unassembled(id), Failure::Violation));
        };
        verify(topology, trace, snapshot).map_err(|e| match e {
            VerifyError::Violation(v) => Failure::Violation(v),
            VerifyError::Check(e) => Failure::Unjudgeable(e.to_string()),
        })?;
        let recorded = snapshot.state.total();
        if recorded != ledger {
            return Err(Failure::NotConserved { snapshot: id, recorded, ledger });
        }
        if requests.waited.iter().any(|w| w.id == id && w != snapshot) {
            return Err(Failure::WaitedDiffers(id));
        }
        in_transit.push(snapshot.state.tokens_in_channels());
    }
    Ok(Judged { ledger, in_transit })
}
