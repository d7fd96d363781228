//! The recorder: one execution's events, pushed by the implementation under test as they
//! happen, kept per process in the order of the calls.
//!
//! Why its lock is `std`'s, and the order of a process's events: see the module docs of
//! [`crate::testing`].

use std::fmt::Display;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::formats::jsonl::{Kind, Line, LogApp, LogId};
use crate::logs::Semantics;
use crate::protocol::{ProcessId, SnapshotId, Topology};

/// One event as the logs hold it.
pub(super) type Event<A> = Line<<A as crate::protocol::Application>::Msg, <A as crate::protocol::Application>::Step, A>;

/// What the recorder shares among its handles.
pub(super) struct Shared<A: LogApp> {
    pub(super) topology: Topology,
    pub(super) initial: Vec<A>,
    pub(super) semantics: Semantics<A>,
    /// Each process's events, in the order of its calls, and the number of message ids it has
    /// handed out.
    pub(super) processes: Vec<Mutex<ProcessEvents<A>>>,
}

/// One process's events so far.
pub(super) struct ProcessEvents<A: LogApp> {
    pub(super) events: Vec<Event<A>>,
    ids: u64,
}

/// One execution's events, shared by every thread of the implementation under test (clone it:
/// the clones are handles on the same events). Each process records through its
/// [`ProcessRecorder`] ([`Recorder::process`]); when the execution is over,
/// [`Recorder::judge`] gives the library's verdict on it and [`Recorder::assert_holds`] fails
/// the test on anything but a pass.
///
/// `A` is what the states mean, as `model verify --app` says it: [`Opaque`](crate::apps::json::Opaque)
/// (`--app none`), [`Balance`](crate::apps::json::Balance) (`--app balance`) or the
/// implementation's own application.
pub struct Recorder<A: LogApp> {
    pub(super) shared: Arc<Shared<A>>,
}

impl<A: LogApp> Clone for Recorder<A> {
    fn clone(&self) -> Self {
        Recorder { shared: Arc::clone(&self.shared) }
    }
}

impl<A: LogApp> Recorder<A> {
    /// A recorder for one execution of the processes of `topology`, starting in the states
    /// `initial` (one per process, in the topology's order), whose events mean what
    /// `semantics` says ([`Semantics::opaque`], [`Semantics::balance`], [`Semantics::interpreted`]).
    ///
    /// # Panics
    ///
    /// If `initial` does not give one state per process.
    pub fn new(topology: &Topology, initial: Vec<A>, semantics: Semantics<A>) -> Self {
        assert_eq!(
            initial.len(),
            topology.len(),
            "chandy_lamport::testing: {} initial states for {} processes",
            initial.len(),
            topology.len()
        );
        let processes =
            topology.processes().map(|_| Mutex::new(ProcessEvents { events: Vec::new(), ids: 0 })).collect();
        Recorder { shared: Arc::new(Shared { topology: topology.clone(), initial, semantics, processes }) }
    }

    /// The topology the events are recorded against.
    pub fn topology(&self) -> &Topology {
        &self.shared.topology
    }

    /// The recorder of process `process`: every event of that process goes through it.
    ///
    /// # Panics
    ///
    /// If the topology has no such process.
    pub fn process(&self, process: ProcessId) -> ProcessRecorder<A> {
        assert!(
            process.index() < self.shared.topology.len(),
            "chandy_lamport::testing: process {process} is not in the topology ({} processes)",
            self.shared.topology.len()
        );
        ProcessRecorder { shared: Arc::clone(&self.shared), process }
    }

    /// The number of events recorded so far, over all processes.
    pub fn events(&self) -> usize {
        self.shared.processes.iter().map(|p| lock(p).events.len()).sum()
    }
}

/// Takes a process's lock; a thread that panicked while holding it left whole events (a push
/// is the only thing done under it), so a poisoned lock is taken as it is.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where one process records its events: one call per event, right after it happens, under the
/// lock that orders the process's events (see the [`testing` module](crate::testing)). Cheap to clone: every
/// thread of the process may hold one.
///
/// A `state` is the process's state right after the event (on a record, the state recorded):
/// `A` or `None`. It is optional everywhere except on records, where a judge of the
/// application's states ([`Semantics::balance`], [`Semantics::interpreted`]) needs it; where
/// one is given, the judge cross-checks it against the state the transitions produce.
pub struct ProcessRecorder<A: LogApp> {
    shared: Arc<Shared<A>>,
    process: ProcessId,
}

impl<A: LogApp> Clone for ProcessRecorder<A> {
    fn clone(&self) -> Self {
        ProcessRecorder { shared: Arc::clone(&self.shared), process: self.process }
    }
}

impl<A: LogApp> ProcessRecorder<A> {
    /// The process.
    pub fn process(&self) -> ProcessId {
        self.process
    }

    /// The process's name, as the topology and the findings spell it.
    pub fn name(&self) -> &str {
        self.shared.topology.name(self.process)
    }

    /// A message id no other call in the execution gives: `<process>-<n>` (`"P0-3"`). Carry it
    /// in the message: the receiver records the receipt by it.
    pub fn new_message_id(&self) -> String {
        let mut events = lock(&self.shared.processes[self.process.index()]);
        let id = events.ids;
        events.ids += 1;
        format!("{}-{id}", self.name())
    }

    /// The channel between two processes as the logs spell it, `FROM->TO` (a pair the topology
    /// has no channel for is spelled all the same, and the judge refuses it naming the event).
    fn channel(&self, from: ProcessId, to: ProcessId) -> String {
        let topology = &self.shared.topology;
        let name = |p: ProcessId| {
            if p.index() < topology.len() {
                topology.name(p).to_string()
            } else {
                p.to_string()
            }
        };
        format!("{}->{}", name(from), name(to))
    }

    fn event(&self, kind: Kind, state: Option<A>) -> Event<A> {
        Line {
            process: self.name().to_string(),
            seq: None,
            time: None,
            kind,
            snapshot: None,
            channel: None,
            msg: None,
            payload: None,
            step: None,
            initiated: None,
            recorded: None,
            state,
        }
    }

    fn push(&self, events: impl IntoIterator<Item = Event<A>>) {
        lock(&self.shared.processes[self.process.index()]).events.extend(events);
    }

    /// Message `message` (its id) sent to process `to`, carrying `payload`.
    pub fn send(&self, to: ProcessId, message: impl Display, payload: A::Msg, state: impl Into<Option<A>>) {
        let mut e = self.event(Kind::Send, state.into());
        e.channel = Some(self.channel(self.process, to));
        e.msg = Some(LogId(message.to_string()));
        e.payload = Some(payload);
        self.push([e]);
    }

    /// Message `message` received from process `from` and applied.
    pub fn receive(&self, from: ProcessId, message: impl Display, state: impl Into<Option<A>>) {
        let mut e = self.event(Kind::Receive, state.into());
        e.channel = Some(self.channel(from, self.process));
        e.msg = Some(LogId(message.to_string()));
        self.push([e]);
    }

    /// Message `message`, sent by process `from`, lost in transit (recorded by its receiver).
    pub fn loss(&self, from: ProcessId, message: impl Display, state: impl Into<Option<A>>) {
        let mut e = self.event(Kind::Loss, state.into());
        e.channel = Some(self.channel(from, self.process));
        e.msg = Some(LogId(message.to_string()));
        self.push([e]);
    }

    /// An internal step.
    pub fn internal(&self, step: A::Step, state: impl Into<Option<A>>) {
        let mut e = self.event(Kind::Internal, state.into());
        e.step = Some(step);
        self.push([e]);
    }

    fn record_event(&self, snapshot: SnapshotId, initiated: bool, state: Option<A>) -> Event<A> {
        let mut e = self.event(Kind::Record, state);
        e.snapshot = Some(snapshot.0);
        e.initiated = Some(initiated);
        e
    }

    /// The process initiates `snapshot`: it records `state`.
    pub fn record_initiated(&self, snapshot: SnapshotId, state: impl Into<Option<A>>) {
        self.push([self.record_event(snapshot, true, state.into())]);
    }

    /// The first marker of `snapshot`, received from process `from`, makes the process record
    /// `state`: the marker's receipt (closing that channel's record empty) and the record, as one
    /// step that no other event of the process can come between.
    pub fn record_on_marker(&self, snapshot: SnapshotId, from: ProcessId, state: impl Into<Option<A>>) {
        let mut receipt = self.event(Kind::MarkerReceive, None);
        receipt.snapshot = Some(snapshot.0);
        receipt.channel = Some(self.channel(from, self.process));
        receipt.recorded = Some(Vec::new());
        self.push([receipt, self.record_event(snapshot, false, state.into())]);
    }

    /// A marker of `snapshot` sent to process `to`.
    pub fn marker_send(&self, snapshot: SnapshotId, to: ProcessId) {
        let mut e = self.event(Kind::MarkerSend, None);
        e.snapshot = Some(snapshot.0);
        e.channel = Some(self.channel(self.process, to));
        self.push([e]);
    }

    /// A later marker of `snapshot`, received from process `from`: it closes that channel's
    /// record, `recorded` the ids of the messages the process recorded for it (received on it
    /// after recording and before this marker), in order.
    pub fn marker_receive<I: Display>(
        &self,
        snapshot: SnapshotId,
        from: ProcessId,
        recorded: impl IntoIterator<Item = I>,
    ) {
        let mut e = self.event(Kind::MarkerReceive, None);
        e.snapshot = Some(snapshot.0);
        e.channel = Some(self.channel(from, self.process));
        e.recorded = Some(recorded.into_iter().map(|id| LogId(id.to_string())).collect());
        self.push([e]);
    }
}
