//! Literal mode: judge a completed snapshot by handing the recorded history to the library's
//! trace checker, exactly as a recorded run of the threaded runtime would be judged.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use chandy_lamport::apps::spec::{Move, Spec, View};
use chandy_lamport::check::{check, Clause};
use chandy_lamport::check::{EventKind, MsgId, Trace};
use chandy_lamport::protocol::{GlobalSnapshot, GlobalState};
use chandy_lamport::{Application, SnapshotId, Topology};

use super::machine::SnapshotModel;
use super::predicates::sound;
use super::stamp::Stamped;
use super::state::{Recorded, StampedApp, StampedMsg, State};

/// The verdicts on one completed snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// (a)
    pub crossing: bool,
    /// (b)
    pub records: bool,
    /// (c)
    pub reachable: bool,
    /// (d)
    pub end_reachable: bool,
    /// Stable detection.
    pub stable: bool,
    /// The stable predicates on S* (bit `i` for predicate `i`).
    pub y_star: u8,
    /// The conserved quantity stolen with messages sent before the cut.
    pub stolen_pre: u64,
    /// S* equals none of the global states the run passed through.
    pub never_occurred: bool,
}

/// Budget of `process` after the events before `position`.
fn budget_at<A: Spec>(trace: &Trace<StampedApp<A>>, sends: u8, process: usize, position: usize) -> u8 {
    let used: u32 = trace.events[..position.min(trace.events.len())]
        .iter()
        .filter(|e| e.process.index() == process)
        .map(|e| match &e.kind {
            EventKind::Send { channel, msg, .. } => u32::from(A::cost(&Move::Send { channel: *channel, msg: msg.msg })),
            EventKind::Internal { step } => u32::from(A::cost(&Move::Internal(*step))),
            _ => 0,
        })
        .sum();
    u32::from(sends).saturating_sub(used) as u8
}

/// The stable predicates on global state `g` with `budgets`.
fn y<A: Spec>(m: &SnapshotModel<A>, g: &GlobalState<StampedApp<A>>, budgets: &[u8]) -> u8 {
    let states: Vec<A> = g.processes.iter().map(|h| h.0).collect();
    let channels: Vec<Vec<A::Msg>> = g.channels.iter().map(|c| c.iter().map(|m| m.msg).collect()).collect();
    m.y(&View {
        topology: m.topology(),
        states: &states,
        budgets,
        channels: &channels,
        initial: m.initial_total(),
        setup: m.setup,
    })
}

type CacheKey = (u64, usize, SnapshotId);

thread_local! {
    /// The properties of one state are evaluated one after the other: judge each history once.
    static CACHE: RefCell<Vec<(CacheKey, Option<Judgement>)>> = const { RefCell::new(Vec::new()) };
}

/// Judges snapshot `id` of `state` (which must carry a history) on what it recorded.
pub fn judge<A: Spec>(m: &SnapshotModel<A>, state: &State<A>, id: SnapshotId, rec: &Recorded<A>) -> Option<Judgement> {
    let history = state.history.as_ref()?;
    let key = (history.digest, history.trace.events.len(), id);
    if let Some(hit) = CACHE.with(|c| c.borrow().iter().find(|(k, _)| *k == key).map(|(_, j)| j.clone())) {
        return hit;
    }
    let judgement = judge_uncached(m, &history.trace, id, rec);
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= 16 {
            c.clear();
        }
        c.push((key, judgement.clone()));
    });
    judgement
}

fn judge_uncached<A: Spec>(
    m: &SnapshotModel<A>,
    trace: &Trace<StampedApp<A>>,
    id: SnapshotId,
    rec: &Recorded<A>,
) -> Option<Judgement> {
    let topology = m.topology();
    let processes = rec.processes.iter().map(|&b| Stamped(b)).collect();
    let snapshot = GlobalSnapshot { id, state: GlobalState { processes, channels: rec.channels.clone() } };
    let report = check(topology, trace, &snapshot).ok()?;
    let cut = report.cut.clone()?;
    let sends = m.cfg.sends;
    let n = topology.len();
    // Thefts of messages sent before the cut count as before the cut.
    let send_pos: HashMap<MsgId, (usize, usize, u64)> = trace
        .events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.kind {
            EventKind::Send { id, msg, .. } => Some((*id, (i, e.process.index(), A::carried(&msg.msg)))),
            _ => None,
        })
        .collect();
    let stolen_pre = trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Lost { id, .. } => send_pos.get(&id).filter(|(i, p, _)| *i < cut[*p]).map(|(_, _, q)| *q),
            _ => None,
        })
        .sum();
    let star_budgets: Vec<u8> = (0..n).map(|p| budget_at(trace, sends, p, cut[p])).collect();
    let y_star = m.y_recorded(rec, &star_budgets);
    let stable = match (&report.begin, &report.end, report.begin_at, report.end_at) {
        (Some(begin), Some(end), Some(b), Some(e)) => {
            let at = |pos: usize| (0..n).map(|p| budget_at(trace, sends, p, pos)).collect::<Vec<_>>();
            sound(y(m, begin, &at(b)), y_star, y(m, end, &at(e + 1)))
        }
        _ => false,
    };
    let never_occurred = m.cfg.internal && !occurred(topology, trace, &snapshot.state);
    Some(Judgement {
        crossing: report.holds(Clause::NoInwardCrossing),
        records: report.holds(Clause::ExactRecords),
        // A log whose states the transitions do not reproduce, or an initiation by a process
        // that may not initiate, leaves the recorded state unexplained.
        reachable: report.holds(Clause::RecordedReachable)
            && report.holds(Clause::LoggedStates)
            && report.holds(Clause::Initiation),
        end_reachable: report.holds(Clause::EndReachable),
        stable,
        y_star,
        stolen_pre,
        never_occurred,
    })
}

/// Whether the run passed through global state `g` (process states and messages in transit). The
/// states are recomputed by the application's transitions, not read from the log.
fn occurred<A: Spec>(topology: &Topology, trace: &Trace<StampedApp<A>>, g: &GlobalState<StampedApp<A>>) -> bool {
    let mut states = trace.initial.clone();
    let mut chans: Vec<VecDeque<(MsgId, StampedMsg<A>)>> = vec![VecDeque::new(); topology.channels().len()];
    let same = |states: &[StampedApp<A>], chans: &[VecDeque<(MsgId, StampedMsg<A>)>]| {
        states == g.processes.as_slice()
            && chans.iter().zip(&g.channels).all(|(c, r)| c.iter().map(|(_, j)| j).eq(r.iter()))
    };
    if same(&states, &chans) {
        return true;
    }
    for e in &trace.events {
        let state = &mut states[e.process.index()];
        // A refused transition changes nothing; the trace checker reports such a log.
        match &e.kind {
            EventKind::Send { channel, id, msg } => {
                chans[channel.index()].push_back((*id, *msg));
                let _ = state.on_send(topology.channel(*channel).to, msg);
            }
            EventKind::Receive { channel, id } => {
                let q = &mut chans[channel.index()];
                if let Some(i) = q.iter().position(|(m, _)| m == id) {
                    if let Some((_, message)) = q.remove(i) {
                        state.on_message(topology.channel(*channel).from, &message);
                    }
                }
            }
            EventKind::Lost { channel, id } => chans[channel.index()].retain(|(m, _)| m != id),
            EventKind::Internal { step } => {
                let _ = state.on_internal(step);
            }
            EventKind::Record { .. } | EventKind::MarkerSend { .. } | EventKind::MarkerReceive { .. } => {}
        }
        if same(&states, &chans) {
            return true;
        }
    }
    false
}
