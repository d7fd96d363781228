//! One process: a balance moved by transfers, and the marker rules, behind one lock. A reader
//! thread per incoming channel applies what arrives; any thread may transfer or initiate.
//! Every event is recorded while the lock is held, so the recorder sees the process's events in
//! the order they happen. Its broken copies ([`Bug`]) differ in a few lines each.

use std::collections::{BTreeMap, BTreeSet};

use chandy_lamport::apps::json::{Amount, Balance};
use chandy_lamport::testing::channel::{Delivery, Incoming, Receiver, Sender};
use chandy_lamport::testing::ProcessRecorder;
use chandy_lamport::{ProcessId, SnapshotId};

use crate::sync::{Mutex, MutexGuard};

/// Which copy of the implementation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bug {
    /// The correct one.
    None,
    /// The racing first marker: a reader checks "have I recorded this snapshot?" under the
    /// lock, releases it, and records under a second acquisition. Two readers whose first
    /// markers arrive together both see "no" and both record.
    RacingFirstMarker,
    /// A send between the record and the markers: a reader records under the lock and sends
    /// the markers under a second acquisition; the transfer thread can send in between, a
    /// message after the record that reaches its receiver before the marker.
    SendBetweenRecordAndMarkers,
    /// A recording flag shared by concurrent snapshots: the set of incoming channels "still
    /// being recorded" is one for the process, not one per snapshot, and a receipt goes to the
    /// snapshot recorded last. Two snapshots open at once lose messages from each other's
    /// channel records.
    SharedRecordingFlag,
}

/// What the process's lock guards.
struct State {
    balance: i64,
    /// The outgoing channels (empty once closed).
    outgoing: Vec<Sender<Balance>>,
    closed: bool,
    /// Per snapshot recorded: the incoming channels still being recorded, and the message ids
    /// recorded on each so far.
    recordings: BTreeMap<SnapshotId, BTreeMap<ProcessId, Vec<String>>>,
    /// [`Bug::SharedRecordingFlag`]: the channels being recorded, for whichever snapshot.
    shared_open: BTreeSet<ProcessId>,
    /// [`Bug::SharedRecordingFlag`]: the snapshot recorded last.
    latest: Option<SnapshotId>,
    /// Markers received on each incoming channel.
    markers: BTreeMap<ProcessId, usize>,
    /// Its drivers have made every transfer and initiation they were going to.
    finished: bool,
}

/// One process of the implementation.
pub struct Process {
    recorder: ProcessRecorder<Balance>,
    incoming: Vec<ProcessId>,
    bug: Bug,
    /// How many snapshots the run takes: the process closes its outgoing channels once it has
    /// recorded that many and received that many markers on every incoming channel (a test's
    /// way to end; a real implementation ends otherwise).
    snapshots: usize,
    state: Mutex<State>,
}

impl Process {
    /// A process holding `balance`, with its outgoing channels and the senders of its
    /// incoming ones, recording through `recorder`.
    pub fn new(
        recorder: ProcessRecorder<Balance>,
        balance: i64,
        outgoing: Vec<Sender<Balance>>,
        incoming: Vec<ProcessId>,
        bug: Bug,
        snapshots: usize,
    ) -> Self {
        let markers = incoming.iter().map(|&c| (c, 0)).collect();
        let state = State {
            balance,
            outgoing,
            closed: false,
            recordings: BTreeMap::new(),
            shared_open: BTreeSet::new(),
            latest: None,
            markers,
            finished: false,
        };
        Process { recorder, incoming, bug, snapshots, state: Mutex::new(state) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().expect("a thread of the process panicked holding its lock")
    }

    /// Moves `amount` to the process at the end of outgoing channel `k` (round robin).
    pub fn transfer(&self, k: usize, amount: u64) {
        let mut st = self.lock();
        if st.closed || st.outgoing.is_empty() {
            return;
        }
        st.balance -= amount as i64;
        let balance = Balance(st.balance);
        let out = &st.outgoing[k % st.outgoing.len()];
        out.send(Amount(amount), balance).expect("a receiver reads until its channel closes");
    }

    /// Initiates `snapshot`: records and sends a marker on every outgoing channel, in one step.
    pub fn initiate(&self, snapshot: SnapshotId) {
        let mut st = self.lock();
        if !st.recordings.contains_key(&snapshot) {
            self.record(&mut st, snapshot, None);
            self.send_markers(&mut st, snapshot);
        }
    }

    /// The process's drivers are done; it closes its channels once its snapshots are complete.
    pub fn finish(&self) {
        let mut st = self.lock();
        st.finished = true;
        self.maybe_close(&mut st);
    }

    /// The reader of one incoming channel: applies what arrives until the channel closes.
    pub fn read(&self, rx: Receiver<Balance>) {
        loop {
            match rx.recv() {
                Incoming::Message(delivery) => self.on_message(rx.from(), delivery),
                Incoming::Marker(snapshot) => self.on_marker(rx.from(), snapshot),
                Incoming::Closed => return,
            }
        }
    }

    fn on_message(&self, from: ProcessId, delivery: Delivery<Balance>) {
        let mut st = self.lock();
        st.balance += delivery.payload().0 as i64;
        let (id, _) = delivery.accept(Balance(st.balance));
        if self.bug == Bug::SharedRecordingFlag {
            if let (true, Some(latest)) = (st.shared_open.contains(&from), st.latest) {
                if let Some(ids) = st.recordings.get_mut(&latest).and_then(|open| open.get_mut(&from)) {
                    ids.push(id);
                }
            }
            return;
        }
        for open in st.recordings.values_mut() {
            if let Some(ids) = open.get_mut(&from) {
                ids.push(id.clone());
            }
        }
    }

    fn on_marker(&self, from: ProcessId, snapshot: SnapshotId) {
        match self.bug {
            Bug::RacingFirstMarker => {
                let recorded = self.lock().recordings.contains_key(&snapshot);
                // The lock is released here: another reader can check too.
                let mut st = self.lock();
                if recorded {
                    self.close_channel(&mut st, snapshot, from);
                } else {
                    self.record(&mut st, snapshot, Some(from));
                    self.send_markers(&mut st, snapshot);
                }
            }
            Bug::SendBetweenRecordAndMarkers => {
                let mut st = self.lock();
                if st.recordings.contains_key(&snapshot) {
                    self.close_channel(&mut st, snapshot, from);
                } else {
                    self.record(&mut st, snapshot, Some(from));
                    drop(st);
                    // The transfer thread can take the lock here and send.
                    let mut st = self.lock();
                    self.send_markers(&mut st, snapshot);
                }
            }
            Bug::None | Bug::SharedRecordingFlag => {
                let mut st = self.lock();
                if st.recordings.contains_key(&snapshot) {
                    self.close_channel(&mut st, snapshot, from);
                } else {
                    self.record(&mut st, snapshot, Some(from));
                    self.send_markers(&mut st, snapshot);
                }
            }
        }
        let mut st = self.lock();
        *st.markers.entry(from).or_default() += 1;
        self.maybe_close(&mut st);
    }

    /// Records the process's balance for `snapshot`, as its initiator (`marker` `None`) or on
    /// the first marker, from `marker`; every other incoming channel starts being recorded.
    fn record(&self, st: &mut State, snapshot: SnapshotId, marker: Option<ProcessId>) {
        let balance = Balance(st.balance);
        match marker {
            Some(from) => self.recorder.record_on_marker(snapshot, from, balance),
            None => self.recorder.record_initiated(snapshot, balance),
        }
        let open: BTreeMap<ProcessId, Vec<String>> =
            self.incoming.iter().filter(|&&c| Some(c) != marker).map(|&c| (c, Vec::new())).collect();
        if self.bug == Bug::SharedRecordingFlag {
            st.shared_open = open.keys().copied().collect();
            st.latest = Some(snapshot);
        }
        st.recordings.insert(snapshot, open);
    }

    fn send_markers(&self, st: &mut State, snapshot: SnapshotId) {
        for out in &st.outgoing {
            out.send_marker(snapshot).expect("a receiver reads until its channel closes");
        }
    }

    /// A later marker of `snapshot` from `from`: the channel's record is closed.
    fn close_channel(&self, st: &mut State, snapshot: SnapshotId, from: ProcessId) {
        if self.bug == Bug::SharedRecordingFlag {
            st.shared_open.remove(&from);
        }
        let ids = st.recordings.get_mut(&snapshot).and_then(|open| open.remove(&from)).unwrap_or_default();
        self.recorder.marker_receive(snapshot, from, ids);
    }

    fn maybe_close(&self, st: &mut State) {
        let complete = st.recordings.len() >= self.snapshots
            && self.incoming.iter().all(|c| st.markers.get(c).copied().unwrap_or(0) >= self.snapshots);
        if st.finished && complete && !st.closed {
            st.closed = true;
            for out in st.outgoing.drain(..) {
                out.close().expect("a receiver reads until its channel closes");
            }
        }
    }
}
