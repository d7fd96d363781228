//! What a correct run must show, for any application ([`Spec`]): no message lost or left
//! unsent, no process recording a snapshot that no initiation or marker told it of, every
//! snapshot that was waited for assembled, every assembled snapshot accepted by the trace checker
//! and, when the application conserves a quantity ([`Spec::CONSERVES`]; the bank's jars),
//! conserving it, and every snapshot left open at shutdown reported incomplete, with nothing but
//! the shutdown to explain why. (The text below speaks of houses and carts, the bank's, which
//! the tests plug in; any application's processes and messages are judged the same way.)
//!
//! # Snapshots open at shutdown
//!
//! The runtime records nothing on a house's behalf at shutdown: a house that handles `Shutdown`
//! sends a flush on each outgoing channel and keeps handling what arrives until every incoming
//! channel is flushed, then exits. Everything a house sent before its flush is received
//! (channels are FIFO and the receiver waits for the flush), but a marker sent after it — by a
//! house that records on a marker arriving after its own `Shutdown` — may find the receiver
//! gone. So a snapshot initiated and not waited for may end either assembled (and then it must
//! verify like any other) or open: reported in [`Outcome::incomplete`], with the trace showing it
//! unterminated, and every part of clause (e) it breaks explained by the shutdown
//! ([`open_at_shutdown`]): a house that never recorded was neither asked to initiate nor sent a
//! marker it received, and a channel record that never closed belongs to a sender that never
//! recorded, or whose marker did leave. A house that recorded and sent no marker on some channel,
//! or received a marker and never recorded, is a fault, not a shutdown.

use std::collections::HashSet;

use chandy_lamport::apps::spec::accounted;
use chandy_lamport::check::{unterminated, verify, VerifyError};
use chandy_lamport::runtime::{Outcome, RuntimeError};
use chandy_lamport::{Application, EventKind, GlobalSnapshot, ProcessId, SnapshotId, Spec, Topology, Trace, Violation};

/// Why a run is wrong. A scenario run under loom or shuttle panics with this as the payload
/// (`std::panic::panic_any`), so a test can tell which check failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The cluster itself failed (start, a request, or shutdown).
    Runtime(RuntimeError),
    /// The trace checker rejected a snapshot; for a snapshot never assembled, a part of clause
    /// (e) from [`unterminated`] that the shutdown does not explain.
    Violation(Violation),
    /// The trace checker could not judge a snapshot (malformed trace or snapshot).
    Unjudgeable(String),
    /// A snapshot was never assembled, yet the trace shows it terminated.
    Unassembled(SnapshotId),
    /// The outcome's list of incomplete snapshots is wrong about this one (it lists a snapshot
    /// that was assembled or never initiated, or leaves out one that was never assembled).
    Misreported(SnapshotId),
    /// A house recorded a snapshot that it was neither asked to initiate nor had received a
    /// marker of: a recording no initiation or marker caused (as a shutdown that "completes" a
    /// snapshot by recording on a house's behalf would make).
    Uncaused {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The house.
        process: ProcessId,
    },
    /// A snapshot's recorded quantity (processes plus channels; the bank's jars) differs from
    /// the ledger ([`Spec::held`] at the start).
    NotConserved {
        /// The snapshot.
        snapshot: SnapshotId,
        /// Recorded.
        recorded: u64,
        /// The ledger.
        ledger: u64,
    },
    /// The processes end holding a different quantity than they started with (nothing is in
    /// transit after shutdown).
    Lost {
        /// At the start.
        start: u64,
        /// At the end.
        end: u64,
    },
    /// A command never sent its messages (left unhandled in an inbox).
    Unhandled {
        /// Messages the commands should have sent.
        commanded: usize,
        /// Messages sent.
        sent: usize,
    },
    /// Application messages, or the markers of a snapshot that was assembled, were sent but
    /// never received before the cluster stopped.
    Undelivered {
        /// `"carts"` (application messages) or `"markers"`.
        what: &'static str,
        /// How many were sent.
        sent: usize,
        /// How many were received.
        received: usize,
    },
    /// A process refused a command (the scenarios only issue commands that can be carried out).
    Refused(String),
    /// A snapshot returned by `wait` differs from the one the cluster reports at shutdown, or
    /// is missing there.
    WaitedDiffers(SnapshotId),
    /// The processes ended in other states than the failure-free run's (exactly-once broken).
    NotExactlyOnce {
        /// The failure-free run's end states.
        expected: String,
        /// The end states.
        got: String,
    },
    /// Finishing the run from a completed checkpoint does not end where the failure-free run
    /// does: the checkpoint is not a state the run could have passed through.
    Inconsistent {
        /// The checkpoint.
        snapshot: SnapshotId,
        /// Where the run from it ends.
        got: String,
    },
    /// A checkpoint triggered is neither completed nor aborted, or both, or reported so wrongly.
    Unresolved(SnapshotId),
    /// What `await_checkpoint` returned differs from what the cluster reports at shutdown.
    AwaitedDiffers(SnapshotId),
    /// A recovery did not restart from the latest completed checkpoint (or the initial states).
    WrongRestore {
        /// The incarnation that started wrongly (1: the first after a crash).
        incarnation: usize,
    },
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
    /// The conserved quantity in the system (the ledger; the bank's jars).
    pub ledger: u64,
    /// The quantity recorded in transit ([`Spec::carried`]), per assembled snapshot, by id.
    pub in_transit: Vec<u64>,
    /// Snapshots left open at shutdown (reported incomplete, and explained by the shutdown).
    pub open: Vec<SnapshotId>,
}

/// A run that passed, as the explorations count it.
pub trait Passed {
    /// Whether some snapshot recorded a jar in transit (an exploration that never does has not
    /// reached the cuts where channel recording matters).
    fn jars_in_transit(&self) -> bool;

    /// Whether some snapshot was left open at shutdown.
    fn left_open(&self) -> bool;
}

impl Passed for Judged {
    fn jars_in_transit(&self) -> bool {
        self.in_transit.iter().any(|&jars| jars > 0)
    }

    fn left_open(&self) -> bool {
        !self.open.is_empty()
    }
}

/// A run with nothing to count (the burning house's).
impl Passed for () {
    fn jars_in_transit(&self) -> bool {
        false
    }

    fn left_open(&self) -> bool {
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
    /// Passing runs in which some snapshot was left open at shutdown.
    pub with_open: std::sync::atomic::AtomicUsize,
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
                if passed.left_open() {
                    self.with_open.fetch_add(1, Relaxed);
                }
            }
            Err(failure) => std::panic::panic_any(failure),
        }
    }
}

/// What the main thread asked of a cluster of `A`, and what `wait` gave it.
#[derive(Clone, Debug)]
pub struct Requests<A: Application> {
    /// Application messages the commands issued must send (the scenarios only issue commands
    /// that can be carried out).
    pub sends: usize,
    /// Initiations: each snapshot id with the house asked to initiate it (an id initiated at
    /// two houses appears twice).
    pub initiated: Vec<(SnapshotId, ProcessId)>,
    /// The snapshots `wait` returned (all of them before shutdown).
    pub waited: Vec<GlobalSnapshot<A>>,
}

impl<A: Application> Default for Requests<A> {
    fn default() -> Self {
        Requests { sends: 0, initiated: Vec::new(), waited: Vec::new() }
    }
}

type Kind<A> = EventKind<<A as Application>::Msg, <A as Application>::Step>;

/// Judges a traced run of `A` on `topology`, returning the first failure:
/// 1. no command refused or unhandled, nothing lost (when `A` conserves a quantity), and every
///    message sent also received (the runtime never loses an application message, shutdown or
///    not);
/// 2. every recording caused by an initiation the main thread asked for, or by a marker the
///    house had received ([`Failure::Uncaused`]);
/// 3. each snapshot in id order: when assembled, accepted by [`verify()`], conserving the ledger
///    (when `A` conserves a quantity),
///    equal to what `wait` returned, and every one of its markers received; when not, not
///    waited for, reported incomplete, shown unterminated by [`unterminated`], and every part
///    of clause (e) it breaks explained by the shutdown ([`open_at_shutdown`]);
/// 4. the outcome reports as incomplete exactly the snapshots initiated and never assembled.
///
/// Only markers may go unreceived, and only those of a snapshot left open: a scenario that waits
/// for every snapshot before shutting down has every snapshot assembled, so every marker of its
/// run must be received, as before the runtime stopped completing snapshots at shutdown.
///
/// Loom itself catches a message sent to a thread that has stopped ("Messages leaked"), but
/// drains a stopped thread's inbox silently; the counts here catch what was left in one.
pub fn judge<A: Spec>(topology: &Topology, requests: &Requests<A>, outcome: &Outcome<A>) -> Result<Judged, Failure> {
    let trace = outcome.trace.as_ref().ok_or_else(|| Failure::Unjudgeable("the run was not traced".into()))?;
    let ledger: u64 = trace.initial.iter().map(A::held).sum();
    if let Some(r) = outcome.rejected.first() {
        return Err(Failure::Refused(r.reason.clone()));
    }
    let end: u64 = outcome.states.iter().map(A::held).sum();
    if A::CONSERVES && end != ledger {
        return Err(Failure::Lost { start: ledger, end });
    }
    let count = |kind: &dyn Fn(&Kind<A>) -> bool| trace.events.iter().filter(|e| kind(&e.kind)).count();
    let sent = count(&|k| matches!(k, EventKind::Send { .. }));
    if sent != requests.sends {
        return Err(Failure::Unhandled { commanded: requests.sends, sent });
    }
    let received = count(&|k| matches!(k, EventKind::Receive { .. }));
    if received != sent {
        return Err(Failure::Undelivered { what: "carts", sent, received });
    }
    caused(requests, trace)?;
    let mut ids: Vec<SnapshotId> = requests.initiated.iter().map(|&(id, _)| id).collect();
    ids.sort();
    ids.dedup();
    if let Some(&id) = outcome.incomplete.iter().find(|id| !ids.contains(id)) {
        return Err(Failure::Misreported(id));
    }
    let mut in_transit = Vec::with_capacity(ids.len());
    let mut open = Vec::new();
    for id in ids {
        let waited = requests.waited.iter().find(|w| w.id == id);
        let reported_open = outcome.incomplete.contains(&id);
        let Some(snapshot) = outcome.snapshots.iter().find(|s| s.id == id) else {
            if waited.is_some() {
                return Err(Failure::WaitedDiffers(id));
            }
            let violations = unterminated(topology, trace, id).map_err(|e| Failure::Unjudgeable(e.to_string()))?;
            if violations.is_empty() {
                return Err(Failure::Unassembled(id));
            }
            if let Some(v) = violations.into_iter().find(|v| !open_at_shutdown(topology, requests, trace, v)) {
                return Err(Failure::Violation(v));
            }
            if !reported_open {
                return Err(Failure::Misreported(id));
            }
            open.push(id);
            continue;
        };
        if reported_open {
            return Err(Failure::Misreported(id));
        }
        verified(topology, Some(trace), snapshot)?;
        conserved(snapshot, ledger)?;
        if waited.is_some_and(|w| w != snapshot) {
            return Err(Failure::WaitedDiffers(id));
        }
        // Every marker of an assembled snapshot was received: each house sends one on each
        // outgoing channel, and each channel's record closed on one.
        let sent = count(&|k| matches!(*k, EventKind::MarkerSend { snapshot, .. } if snapshot == id));
        let received = count(&|k| matches!(*k, EventKind::MarkerReceive { snapshot, .. } if snapshot == id));
        if received != sent {
            return Err(Failure::Undelivered { what: "markers", sent, received });
        }
        in_transit.push(snapshot.state.channels.iter().flatten().map(A::carried).sum());
    }
    Ok(Judged { ledger, in_transit, open })
}

/// Every `Record` event in `trace` has a cause: an initiation at that house that the main
/// thread asked for, or a marker of that snapshot the house received before recording.
/// The trace checker's verdict on `snapshot` against `trace` (none: nothing to check against).
pub fn verified<A: Spec>(
    topology: &Topology,
    trace: Option<&Trace<A>>,
    snapshot: &GlobalSnapshot<A>,
) -> Result<(), Failure> {
    let Some(trace) = trace else { return Ok(()) };
    verify(topology, trace, snapshot).map_err(|e| match e {
        VerifyError::Violation(v) => Failure::Violation(v),
        VerifyError::Check(e) => Failure::Unjudgeable(e.to_string()),
    })?;
    Ok(())
}

/// Whether `snapshot` records the `ledger` (for applications with a conserved quantity).
pub fn conserved<A: Spec>(snapshot: &GlobalSnapshot<A>, ledger: u64) -> Result<(), Failure> {
    let recorded = accounted(&snapshot.state.processes, &snapshot.state.channels);
    if A::CONSERVES && recorded != ledger {
        return Err(Failure::NotConserved { snapshot: snapshot.id, recorded, ledger });
    }
    Ok(())
}

fn caused<A: Application>(requests: &Requests<A>, trace: &Trace<A>) -> Result<(), Failure> {
    let mut markers_received = HashSet::new();
    for e in &trace.events {
        match e.kind {
            EventKind::MarkerReceive { snapshot, .. } => {
                markers_received.insert((snapshot, e.process));
            }
            EventKind::Record { snapshot, initiated } => {
                let cause = match initiated {
                    true => requests.initiated.contains(&(snapshot, e.process)),
                    false => markers_received.contains(&(snapshot, e.process)),
                };
                if !cause {
                    return Err(Failure::Uncaused { snapshot, process: e.process });
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether a part of clause (e) that a snapshot left open breaks is explained by the shutdown
/// (see the module documentation):
/// - a house that never recorded: it was not asked to initiate the snapshot (an initiation
///   reaches a house before its `Shutdown`, so it is always handled) and received none of its
///   markers (the correct rules record on the first);
/// - a channel record never closed: its sender never recorded (and so owed no marker; whether
///   that is explained is the sender's own part), or its sender did send the marker on it, and
///   the marker, unreceived, left after the sender's flush and found the receiver gone.
///
/// A sender that recorded without sending a marker on some channel is never explained.
pub fn open_at_shutdown<A: Application>(
    topology: &Topology,
    requests: &Requests<A>,
    trace: &Trace<A>,
    violation: &Violation,
) -> bool {
    let happened = |what: &dyn Fn(&Kind<A>, ProcessId) -> bool| trace.events.iter().any(|e| what(&e.kind, e.process));
    match *violation {
        Violation::NotRecorded { snapshot, process } => {
            !requests.initiated.contains(&(snapshot, process))
                && !happened(&|k, p| {
                    p == process && matches!(*k, EventKind::MarkerReceive { snapshot: s, .. } if s == snapshot)
                })
        }
        Violation::NotClosed { snapshot, channel } => {
            let sender = topology.channel(channel).from;
            let recorded =
                happened(&|k, p| p == sender && matches!(*k, EventKind::Record { snapshot: s, .. } if s == snapshot));
            let marker_left = happened(
                &|k, _| matches!(*k, EventKind::MarkerSend { snapshot: s, channel: c } if s == snapshot && c == channel),
            );
            !recorded || marker_left
        }
        _ => false,
    }
}
