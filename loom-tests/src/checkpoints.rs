//! Checkpointing scenarios (aligned and unaligned barriers, the coordinator, declines, a crash
//! and recovery) for any application, and their judge.
//!
//! A run passes when: no command was refused; the application's conserved quantity (the
//! bank's jars, the stream's items) is what it was at the start; for the stream, the end states
//! are one of the failure-free run's quiet ends (exactly-once, whatever crashed); every checkpoint
//! triggered ended completed or aborted, never both, as `await_checkpoint` said; each
//! completed checkpoint conserves the ledger, is accepted by the trace checker against the
//! trace of the incarnation it completed in (every incarnation that started with empty
//! channels is traced), and, for the stream, finishing the run from it ends in one of the
//! failure-free run's quiet ends; each recovery restarted from the latest completed
//! checkpoint, its states and channel records, or from the initial states when none had
//! completed; and, in the last incarnation, every message sent was received.

use std::collections::HashSet;
use std::fmt::Debug;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::spec::{quiet_outcomes, Move};
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::runtime::{AbortReason, CheckpointOutcome, Cluster, Options, Outcome, Service, StreamCommand};
use chandy_lamport::{
    Algorithm, Application, EventKind, GlobalState, Initiators, ProcessId, Setup, SnapshotId, Spec, Topology, Variant,
};

use crate::judge::{conserved, verified, Failure, Passed};

/// One request of the main thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<C> {
    /// Process `at` handles `command`.
    Command {
        /// The process.
        at: u16,
        /// The command.
        command: C,
    },
    /// The coordinator triggers a checkpoint.
    Trigger,
    /// Wait until the `n`-th checkpoint triggered (from 0) has completed or been aborted.
    Await(usize),
    /// Process `at` declines the next checkpoint it records.
    DeclineNext(u16),
    /// Every process crashes and recovers.
    Crash,
}

/// A checkpointing scenario: the main thread's script on a cluster of `A`, then a shutdown.
#[derive(Clone, Debug)]
pub struct Scenario<A: Service>
where
    A::Command: Clone + Debug,
{
    /// The processes and their channels.
    pub topology: Topology,
    /// Each process's initial state.
    pub initial: Vec<A>,
    /// Where the triggers go.
    pub initiators: Initiators,
    /// Aligned or unaligned.
    pub algorithm: Algorithm,
    /// Checkpoints pending at once.
    pub max_concurrent: usize,
    /// Failed checkpoints in a row tolerated (the scenarios tolerate their declines: every
    /// recovery is a scripted crash).
    pub tolerable_failures: u32,
    /// The script.
    pub steps: Vec<Step<A::Command>>,
    /// The failure-free run's quiet ends, for an application whose runs all end quiet (the
    /// stream: a house with two inputs takes them in any interleaving, so there are several);
    /// `None` for the bank.
    pub expected: Option<HashSet<Vec<A>>>,
}

/// What the main thread got back.
#[derive(Clone, Debug)]
pub struct Requests<A: Application> {
    /// Checkpoints triggered, in order.
    pub triggered: Vec<SnapshotId>,
    /// Each awaited checkpoint and its outcome.
    pub awaited: Vec<(SnapshotId, CheckpointOutcome<A>)>,
    /// The checkpoint each recovery restored (`None`: the initial states).
    pub restored: Vec<Option<SnapshotId>>,
}

/// A run that passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judged {
    /// Checkpoints completed.
    pub completed: usize,
    /// Completed checkpoints that recorded channel state.
    pub with_channel_state: usize,
    /// Checkpoints aborted, with why.
    pub aborted: Vec<(SnapshotId, AbortReason)>,
    /// Recoveries that restored a checkpoint (rather than the initial states).
    pub restored: usize,
}

impl Passed for Judged {
    /// Some checkpoint recorded channel state.
    fn jars_in_transit(&self) -> bool {
        self.with_channel_state > 0
    }

    /// Some checkpoint was aborted.
    fn left_open(&self) -> bool {
        !self.aborted.is_empty()
    }
}

impl<A: Service + Spec> Scenario<A>
where
    A::Command: Clone + Debug,
{
    /// Runs the script with `variant` and judges the outcome.
    pub fn run(&self, variant: Variant) -> Result<Judged, Failure> {
        let (requests, outcome) = self.execute(variant)?;
        self.judge(&requests, &outcome)
    }

    /// Runs the script on a traced cluster and returns what was asked and the outcome.
    pub fn execute(&self, variant: Variant) -> Result<(Requests<A>, Outcome<A>), Failure> {
        let options = Options {
            trace: true,
            variant,
            initiators: self.initiators.clone(),
            algorithm: self.algorithm,
            max_concurrent: self.max_concurrent,
            tolerable_failures: self.tolerable_failures,
        };
        let mut cluster =
            Cluster::start(self.topology.clone(), self.initial.clone(), options).map_err(Failure::Runtime)?;
        let mut requests = Requests { triggered: Vec::new(), awaited: Vec::new(), restored: Vec::new() };
        for step in &self.steps {
            match *step {
                Step::Command { at, ref command } => cluster.command(ProcessId(at), command.clone()),
                Step::Trigger => cluster.trigger_checkpoint().map(|id| requests.triggered.push(id)),
                Step::Await(n) => {
                    let id = *requests.triggered.get(n).ok_or(Failure::Unjudgeable(format!("no checkpoint {n}")))?;
                    cluster.await_checkpoint(id).map(|outcome| requests.awaited.push((id, outcome)))
                }
                Step::DeclineNext(at) => cluster.decline_next(ProcessId(at)),
                Step::Crash => cluster.crash_and_recover().map(|r| requests.restored.push(r)),
            }
            .map_err(Failure::Runtime)?;
        }
        let outcome = cluster.shutdown().map_err(Failure::Runtime)?;
        Ok((requests, outcome))
    }

    /// Judges a run (see the module documentation).
    pub fn judge(&self, requests: &Requests<A>, outcome: &Outcome<A>) -> Result<Judged, Failure> {
        let topology = &self.topology;
        if let Some(r) = outcome.rejected.first() {
            return Err(Failure::Refused(r.reason.clone()));
        }
        let ledger: u64 = self.initial.iter().map(A::held).sum();
        let end: u64 = outcome.states.iter().map(A::held).sum();
        if A::CONSERVES && end != ledger {
            return Err(Failure::Lost { start: ledger, end });
        }
        if let Some(expected) = &self.expected {
            if !expected.contains(&outcome.states) {
                let expected = format!("one of {} failure-free ends", expected.len());
                return Err(Failure::NotExactlyOnce { expected, got: format!("{:?}", outcome.states) });
            }
        }
        // Every checkpoint triggered (by the script, or the final one) ended one way.
        if let Some(&id) = outcome.incomplete.first() {
            return Err(Failure::Unresolved(id));
        }
        if !outcome.triggered.windows(2).all(|w| w[0] < w[1]) {
            return Err(Failure::Unjudgeable(format!("checkpoint ids do not increase: {:?}", outcome.triggered)));
        }
        for &id in &outcome.triggered {
            let completed = outcome.snapshots.iter().any(|s| s.id == id);
            let aborted = outcome.aborted.iter().any(|(a, _)| *a == id);
            if completed == aborted {
                return Err(Failure::Unresolved(id));
            }
        }
        if let Some(id) = requests.triggered.iter().find(|id| !outcome.triggered.contains(id)) {
            return Err(Failure::Unresolved(*id));
        }
        for (id, awaited) in &requests.awaited {
            let reported = match outcome.snapshots.iter().find(|s| s.id == *id) {
                Some(s) => Some(CheckpointOutcome::Completed(s.clone())),
                None => outcome.aborted.iter().find(|(a, _)| a == id).map(|(_, r)| CheckpointOutcome::Aborted(*r)),
            };
            if reported.as_ref() != Some(awaited) {
                return Err(Failure::AwaitedDiffers(*id));
            }
        }
        // Each completed checkpoint, judged on its content.
        let mut with_channel_state = 0;
        for snapshot in &outcome.snapshots {
            let id = snapshot.id;
            let mut lives = outcome.incarnations.iter().filter(|i| i.completed.contains(&id));
            let (Some(life), None) = (lives.next(), lives.next()) else { return Err(Failure::Unresolved(id)) };
            verified(topology, life.trace.as_ref(), snapshot)?;
            conserved(snapshot, ledger)?;
            if let Some(expected) = &self.expected {
                let finished = finish(topology, &snapshot.state)
                    .ok_or_else(|| Failure::Unjudgeable(format!("checkpoint {id}: the run from it does not end")))?;
                if !expected.contains(&finished) {
                    return Err(Failure::Inconsistent { snapshot: id, got: format!("{finished:?}") });
                }
            }
            if snapshot.state.channels.iter().any(|c| !c.is_empty()) {
                with_channel_state += 1;
            }
        }
        // Each recovery restored the latest checkpoint completed before it.
        let mut latest: Option<SnapshotId> = None;
        let mut requested = requests.restored.iter();
        for (k, life) in outcome.incarnations.iter().enumerate() {
            if k > 0 {
                let start = match latest {
                    Some(id) => outcome.snapshots.iter().find(|s| s.id == id).map(|s| s.state.clone()),
                    None => Some(GlobalState {
                        processes: self.initial.clone(),
                        channels: vec![Vec::new(); topology.channels().len()],
                    }),
                };
                if life.restored_from != latest || start.as_ref() != Some(&life.start) {
                    return Err(Failure::WrongRestore { incarnation: k });
                }
                // A requested crash returned what it restored; a failover after failed
                // checkpoints was the cluster's own.
                if !life.failed_over && requested.next() != Some(&latest) {
                    return Err(Failure::WrongRestore { incarnation: k });
                }
            }
            latest = life.completed.iter().copied().max().max(latest);
        }
        // The last incarnation lost nothing at shutdown.
        if let Some(trace) = outcome.incarnations.last().and_then(|i| i.trace.as_ref()) {
            let sent = trace.events.iter().filter(|e| matches!(e.kind, EventKind::Send { .. })).count();
            let received = trace.events.iter().filter(|e| matches!(e.kind, EventKind::Receive { .. })).count();
            if sent != received {
                return Err(Failure::Undelivered { what: "messages", sent, received });
            }
        }
        let restored = outcome.incarnations.iter().filter(|i| i.restored_from.is_some()).count();
        Ok(Judged {
            completed: outcome.snapshots.len(),
            with_channel_state,
            aborted: outcome.aborted.clone(),
            restored,
        })
    }
}

/// Finishes a run from global state `state`, one move or delivery at a time in a fixed order,
/// until nothing moves (`None` past a bound): for an application whose every run ends in the
/// same states (the stream), where a run through `state` ends.
pub fn finish<A: Spec>(topology: &Topology, state: &GlobalState<A>) -> Option<Vec<A>> {
    let mut states = state.processes.clone();
    let mut channels: Vec<std::collections::VecDeque<A::Msg>> =
        state.channels.iter().map(|c| c.iter().cloned().collect()).collect();
    for _ in 0..10_000 {
        let mut moved = false;
        for p in topology.processes() {
            let mut send = None;
            states[p.index()].moves(p, topology, &Setup::default(), &mut |mv| {
                if let (None, Move::Send { channel, msg }) = (&send, mv) {
                    send = Some((channel, msg));
                }
            });
            if let Some((channel, msg)) = send {
                states[p.index()].on_send(topology.channel(channel).to, &msg).ok()?;
                channels[channel.index()].push_back(msg);
                moved = true;
            }
        }
        for (c, queue) in channels.iter_mut().enumerate() {
            if let Some(msg) = queue.pop_front() {
                let ch = topology.channels()[c];
                states[ch.to.index()].on_message(ch.from, &msg);
                moved = true;
            }
        }
        if !moved {
            return Some(states);
        }
    }
    None
}

/// House `from` sends `to` one jar.
fn transfer(from: u16, to: u16) -> Step<BankCommand> {
    Step::Command { at: from, command: BankCommand::Transfer { to: ProcessId(to), amount: 1 } }
}

/// Carts of one jar around the ring `P0 -> P1 -> ... -> P0`.
fn ring(n: usize) -> impl Iterator<Item = Step<BankCommand>> {
    (0..n).map(move |i| transfer(i as u16, ((i + 1) % n) as u16))
}

impl Scenario<Bank> {
    fn bank(n: usize, algorithm: Algorithm, steps: impl IntoIterator<Item = Step<BankCommand>>) -> Self {
        Scenario {
            topology: Topology::complete(n).expect("n >= 2"),
            initial: vec![Bank::new(crate::houses::JARS); n],
            initiators: Initiators::Only(vec![ProcessId(0)]),
            algorithm,
            max_concurrent: 1,
            tolerable_failures: 1,
            steps: steps.into_iter().collect(),
            expected: None,
        }
    }

    /// Complete graph of `n` houses, triggers at `P0`: a cart into `P0`, a checkpoint, carts
    /// around the ring; await it.
    pub fn checkpoint(n: usize, algorithm: Algorithm) -> Self {
        let last = (n - 1) as u16;
        let steps = [transfer(last, 0), Step::Trigger].into_iter().chain(ring(n)).chain([Step::Await(0)]);
        Self::bank(n, algorithm, steps)
    }

    /// Complete graph of `n` houses: `P1` declines the first checkpoint (aborted, with
    /// cancellation barriers), carts around it, a second checkpoint completes.
    pub fn decline(n: usize, algorithm: Algorithm) -> Self {
        let last = (n - 1) as u16;
        let steps = [Step::DeclineNext(1), Step::Trigger, transfer(last, 0), Step::Await(0), Step::Trigger]
            .into_iter()
            .chain(ring(n))
            .chain([Step::Await(1)]);
        Self::bank(n, algorithm, steps)
    }

    /// Complete graph of `n` houses, no failed checkpoint tolerated: a checkpoint completes, a
    /// cart, then `P1` declines the next checkpoint, which fails the job over to the first (the
    /// cart is undone); a third checkpoint completes with carts around it.
    pub fn decline_fails_over(n: usize, algorithm: Algorithm) -> Self {
        let steps =
            [Step::Trigger, Step::Await(0), transfer(0, 1), Step::DeclineNext(1), Step::Trigger, Step::Await(1)]
                .into_iter()
                .chain([Step::Trigger])
                .chain(ring(n))
                .chain([Step::Await(2)]);
        Scenario { tolerable_failures: 0, ..Self::bank(n, algorithm, steps) }
    }

    /// Complete graph of `n` houses: a checkpoint with carts around it, then a crash while the
    /// carts (and maybe the checkpoint) are in flight; the recovery restores the checkpoint if
    /// it completed, and the run goes on with carts around the ring.
    pub fn crash(n: usize, algorithm: Algorithm) -> Self {
        let last = (n - 1) as u16;
        let steps = [transfer(last, 0), Step::Trigger, transfer(0, 1), Step::Crash].into_iter().chain(ring(n).skip(1));
        Self::bank(n, algorithm, steps)
    }

    /// Three houses `P0 -> P1 -> P2` and `P0 -> P2` (no cycle, triggers at `P0`): a
    /// checkpoint, then a cart `P0 -> P2` behind its barrier, and one `P1 -> P2`; await it.
    /// `P2` aligns two inputs: the cart from `P0` must wait for `P1`'s barrier.
    pub fn behind_the_barrier(algorithm: Algorithm) -> Self {
        let topology =
            Topology::from_names(&["P0", "P1", "P2"], &[("P0", "P1"), ("P0", "P2"), ("P1", "P2")]).expect("a topology");
        let steps = vec![Step::Trigger, transfer(0, 2), transfer(1, 2), Step::Await(0)];
        Scenario { topology, ..Self::bank(3, algorithm, steps) }
    }

    /// Complete graph of `n` houses: `P0` sends a cart to `P(n-1)` (its last outgoing
    /// channel) and one to `P1`, with a checkpoint triggered between; await it. Unaligned, the
    /// trigger may overtake `P0`'s output buffer.
    pub fn buffered(n: usize) -> Self {
        let last = (n - 1) as u16;
        let steps = [transfer(0, last), Step::Trigger, transfer(0, 1), Step::Await(0)];
        Self::bank(n, Algorithm::Unaligned, steps)
    }
}

impl Scenario<Stream> {
    /// `n` stream houses, `Pi -> Pj` for every `i < j` (no cycle): `P0` is a source of two
    /// items (and `P1` of one more, from 4 houses on), triggers go to `P0`. The expected ends
    /// are the failure-free run's quiet ones.
    fn stream(n: usize, algorithm: Algorithm, steps: Vec<Step<StreamCommand>>) -> Self {
        let topology = Topology::dataflow(n).expect("a topology");
        let initial: Vec<Stream> = (0..n)
            .map(|i| Stream::new(ProcessId(i as u16), [2, u8::from(n > 3)].get(i).copied().unwrap_or(0)))
            .collect();
        let expected = quiet_outcomes(&topology, initial.clone(), &vec![0; n], &Setup::default(), false, 1 << 20);
        assert!(expected.as_ref().is_some_and(|e| !e.is_empty()), "the failure-free stream run ends");
        Scenario {
            topology,
            initial,
            initiators: Initiators::Only(vec![ProcessId(0)]),
            algorithm,
            max_concurrent: 1,
            tolerable_failures: 1,
            steps,
            expected,
        }
    }

    /// Every source emits everything it has left.
    fn emit_all(n: usize) -> impl Iterator<Item = Step<StreamCommand>> {
        (0..n.min(2)).map(|i| Step::Command { at: i as u16, command: StreamCommand::Emit { count: 8 } })
    }

    /// One item emitted, a checkpoint, a crash while it may be in flight, then every input
    /// emitted again from where the recovery put the sources: the end must be the
    /// failure-free run's (exactly-once).
    pub fn crash(n: usize, algorithm: Algorithm) -> Self {
        let emit = Step::Command { at: 0, command: StreamCommand::Emit { count: 1 } };
        let steps = [emit, Step::Trigger, emit, Step::Crash].into_iter().chain(Self::emit_all(n)).collect();
        Self::stream(n, algorithm, steps)
    }

    /// A checkpoint with an item in flight (its channel state), awaited; a crash; at once the
    /// next checkpoint, while the houses may still take in the restored item; then every input
    /// emitted. A house still holding restored input declines it as not ready.
    pub fn checkpoint_during_recovery(n: usize, algorithm: Algorithm) -> Self {
        let emit = Step::Command { at: 0, command: StreamCommand::Emit { count: 1 } };
        let steps = [emit, Step::Trigger, emit, Step::Await(0), Step::Crash, Step::Trigger]
            .into_iter()
            .chain(Self::emit_all(n))
            .collect();
        Self::stream(n, algorithm, steps)
    }

    /// As [`Scenario::crash`], with the checkpoint awaited before the crash (so the recovery
    /// restores it) and a decline of the checkpoint after the recovery.
    pub fn crash_after_checkpoint(n: usize, algorithm: Algorithm) -> Self {
        let emit = Step::Command { at: 0, command: StreamCommand::Emit { count: 1 } };
        let steps = [emit, Step::Trigger, emit, Step::Await(0), Step::Crash, Step::DeclineNext((n - 1) as u16)]
            .into_iter()
            .chain(Self::emit_all(n))
            .chain([Step::Trigger])
            .collect();
        Self::stream(n, algorithm, steps)
    }
}
