//! What the harness needs to know about an application beyond its transitions
//! ([`Application`]): what each process may do next, the invariant of recorded states, and the
//! stable predicates to test with the stable-property rule.
//!
//! The model checker, the simulator and the loom/shuttle scenarios are generic over [`Spec`];
//! the bank ([`crate::apps::bank`]) and the orders ([`crate::apps::orders`]) are two implementations, plugged
//! in at the edges (the command line, the examples, the tests).

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::protocol::Application;
use crate::protocol::{ChannelId, ProcessId, Topology};

/// One thing a process may do next on its own initiative.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Move<M, S> {
    /// Send `msg` on `channel`, one of the process's outgoing channels.
    Send {
        /// The channel.
        channel: ChannelId,
        /// The message.
        msg: M,
    },
    /// Take internal step `step`.
    Internal(S),
}

/// A kind of step, for [`Spec::stable_may_turn_on`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// A send (a move).
    Send,
    /// A receipt.
    Receive,
    /// An internal step (a move).
    Internal,
    /// A message lost in transit (the model's theft).
    Theft,
}

/// The harness's options that an application's moves depend on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Setup {
    /// Internal steps are enabled (`--internal`).
    pub internal: bool,
}

/// A global state as a stable predicate sees it: a live state of a run, or a recorded one (the
/// recorded process states, the channel records, and each process's budget when it recorded).
#[derive(Clone, Copy, Debug)]
pub struct View<'a, A: Application> {
    /// The channels.
    pub topology: &'a Topology,
    /// Every process's state, by index.
    pub states: &'a [A],
    /// The moves each process may still make (a bound on the run, not part of the
    /// application), by index.
    pub budgets: &'a [u8],
    /// The application messages in transit on each channel, by channel index.
    pub channels: &'a [Vec<A::Msg>],
    /// The conserved quantity at the start ([`Spec::held`] summed over the initial states).
    pub initial: u64,
    /// The harness's options.
    pub setup: Setup,
}

/// A named predicate of global states that, once true, stays true.
pub struct Stable<A: Application> {
    /// The name, as reported.
    pub name: &'static str,
    /// Whether it holds.
    pub holds: fn(&View<'_, A>) -> bool,
    /// The model also looks for examples, as two sometimes-properties named here: a snapshot
    /// that detects the predicate, and a run where it comes true after a snapshot that saw none
    /// (detection is sound, not instant).
    pub examples: Option<(&'static str, &'static str)>,
}

impl<A: Application> Clone for Stable<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: Application> Copy for Stable<A> {}

impl<A: Application> std::fmt::Debug for Stable<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// An application the harness can drive and check. Model-checked states are small values, so
/// the state, its messages and its steps are `Copy`; and they serialize (serde), so that a
/// distributed search can send a model state to another process.
pub trait Spec:
    Application<
        Msg: Copy + Send + Sync + 'static + Serialize + DeserializeOwned,
        Step: Copy + Send + Sync + 'static + Serialize + DeserializeOwned,
    >
    + Copy
    + Send
    + Sync
    + 'static
    + Serialize
    + DeserializeOwned
{
    /// The name `--app` selects it by.
    const NAME: &'static str;

    /// Whether [`Spec::held`] and [`Spec::carried`] define a conserved quantity: then the
    /// quantity recorded (in processes and in channel records) plus what was lost before the cut
    /// must equal the quantity at the start.
    const CONSERVES: bool = false;

    /// The largest `tokens` [`Spec::initial`] takes; drivers refuse more (naming where the
    /// number came from) rather than let a state silently hold less.
    const MAX_TOKENS: u32 = u32::MAX;

    /// The most tokens [`Spec::initial`] takes over all processes together.
    const MAX_TOTAL_TOKENS: u32 = u32::MAX;

    /// The initial state of process `p` given `tokens` (`--tokens`, or the topology file's), at
    /// most [`Spec::MAX_TOKENS`].
    fn initial(p: ProcessId, tokens: u32) -> Self;

    /// Every move `me` may make now, in a fixed order, whatever its budget (the harness checks
    /// [`Spec::cost`] against it).
    fn moves(
        &self,
        me: ProcessId,
        topology: &Topology,
        setup: &Setup,
        out: &mut dyn FnMut(Move<Self::Msg, Self::Step>),
    );

    /// The budget a move uses (default 1). A move that costs nothing must be bounded by other
    /// moves (e.g. a reply to a request), or the state space is infinite.
    fn cost(_mv: &Move<Self::Msg, Self::Step>) -> u8 {
        1
    }

    /// Whether receipts commute with the receiver's moves, which lets partial-order reduction
    /// (`model check --por`) explore fewer interleavings. Claim it only if, for every state,
    /// every message `m` and every move `mv` enabled in that state (within budget): receiving `m`
    /// disables no move; receiving `m` then making `mv`, and making `mv` then receiving `m`, give
    /// the same state; receipts of two messages commute; and a receipt enables a new move only in
    /// a state where no move is enabled. The default, `false`, is always safe.
    const RECEIPTS_COMMUTE: bool = false;

    /// Whether a process in this state with `budget` left may ever make another move, whatever
    /// it receives meanwhile (partial-order reduction: a process that cannot sends nothing
    /// more). The default, `true`, is always safe.
    fn may_move_again(&self, _budget: u8) -> bool {
        true
    }

    /// Whether stable predicate number `i` of [`Spec::stable`], false before a step of kind
    /// `step` (with options `setup`), may be true after it (partial-order reduction: a snapshot's completing step reads
    /// the predicates, so it does not commute with a step that may turn one on). The default,
    /// `true`, is always safe.
    fn stable_may_turn_on(_i: usize, _step: StepKind, _setup: &Setup) -> bool {
        true
    }

    /// The conserved quantity a process holds (see [`Spec::CONSERVES`]).
    fn held(&self) -> u64 {
        0
    }

    /// The conserved quantity a message carries.
    fn carried(_msg: &Self::Msg) -> u64 {
        0
    }

    /// The stable predicates to check besides [`TERMINATED`], which every application gets.
    fn stable() -> &'static [Stable<Self>] {
        &[]
    }

    /// The same state with every process id in it renamed by `map` (symmetry reduction); the
    /// default suits states that name no process.
    fn relabel(&self, _map: &dyn Fn(ProcessId) -> ProcessId) -> Self {
        *self
    }

    /// The same message with every process id in it renamed by `map`.
    fn relabel_msg(msg: &Self::Msg, _map: &dyn Fn(ProcessId) -> ProcessId) -> Self::Msg {
        *msg
    }

    /// A process state in words, for counterexamples ("2 jars, 1 sold").
    fn describe_state(&self) -> String {
        format!("{self:?}")
    }

    /// A message in words, for counterexamples ("a cart of 1 jar").
    fn describe(msg: &Self::Msg) -> String {
        format!("{msg:?}")
    }

    /// A move in words, for counterexamples ("sends a jar on P0->P1").
    fn describe_move(mv: &Move<Self::Msg, Self::Step>, topology: &Topology) -> String {
        match mv {
            Move::Send { channel, msg } => {
                format!("sends {} on {}", Self::describe(msg), topology.channel_label(*channel))
            }
            Move::Internal(step) => format!("takes internal step {step:?}"),
        }
    }
}

/// Tokens `A` does not take: the first process whose tokens exceed [`Spec::MAX_TOKENS`]
/// (with them), or, with `None` for the process, a total beyond [`Spec::MAX_TOTAL_TOKENS`].
pub fn too_many_tokens<A: Spec>(tokens: &[u32]) -> Option<(Option<ProcessId>, u64)> {
    if let Some((i, &t)) = tokens.iter().enumerate().find(|(_, &t)| t > A::MAX_TOKENS) {
        return Some((Some(ProcessId(i as u16)), u64::from(t)));
    }
    let total: u64 = tokens.iter().map(|&t| u64::from(t)).sum();
    (total > u64::from(A::MAX_TOTAL_TOKENS)).then_some((None, total))
}

/// Whether process `p` of `view` has a move within its budget.
pub fn can_move<A: Spec>(view: &View<'_, A>, p: ProcessId) -> bool {
    let budget = view.budgets[p.index()];
    let mut any = false;
    view.states[p.index()].moves(p, view.topology, &view.setup, &mut |mv| any |= A::cost(&mv) <= budget);
    any
}

/// Distribution terminated: no application message in transit and no process can move again.
pub const TERMINATED: &str = "distribution terminated";

/// [`TERMINATED`]'s predicate.
pub fn terminated<A: Spec>(view: &View<'_, A>) -> bool {
    view.channels.iter().all(Vec::is_empty) && view.topology.processes().all(|p| !can_move(view, p))
}

/// Every way a failure-free run of `initial` can end quiet: the process states of each
/// reachable state where no process can move within its budget (`budgets`, by index) and no
/// message is in transit. The run is the application alone — its moves, FIFO deliveries, and,
/// with `theft`, messages lost in transit — every transition its own. `None` if a move is
/// refused or more than `limit` states are reachable.
pub fn quiet_outcomes<A: Spec>(
    topology: &Topology,
    initial: Vec<A>,
    budgets: &[u8],
    setup: &Setup,
    theft: bool,
    limit: usize,
) -> Option<std::collections::HashSet<Vec<A>>> {
    let channels = vec![Vec::new(); topology.channels().len()];
    quiet_outcomes_from(topology, initial, budgets, channels, setup, theft, limit)
}

/// [`quiet_outcomes`] of a run that starts with `channels[c]` in transit on channel `c` (oldest
/// first): the failure-free continuations of a restored checkpoint.
pub fn quiet_outcomes_from<A: Spec>(
    topology: &Topology,
    initial: Vec<A>,
    budgets: &[u8],
    channels: Vec<Vec<A::Msg>>,
    setup: &Setup,
    theft: bool,
    limit: usize,
) -> Option<std::collections::HashSet<Vec<A>>> {
    type Global<A> = (Vec<A>, Vec<u8>, Vec<std::collections::VecDeque<<A as Application>::Msg>>);
    if channels.len() != topology.channels().len() || budgets.len() != topology.len() {
        return None;
    }
    let start: Global<A> = (initial, budgets.to_vec(), channels.into_iter().map(Into::into).collect());
    let mut seen: std::collections::HashSet<Global<A>> = std::collections::HashSet::new();
    let mut todo = vec![start.clone()];
    seen.insert(start);
    let mut quiet = std::collections::HashSet::new();
    while let Some((states, budgets, channels)) = todo.pop() {
        let mut next: Vec<Global<A>> = Vec::new();
        for p in topology.processes() {
            let mut moves = Vec::new();
            let budget = budgets[p.index()];
            states[p.index()].moves(p, topology, setup, &mut |mv| {
                if A::cost(&mv) <= budget {
                    moves.push(mv);
                }
            });
            for mv in moves {
                let (mut states, mut budgets, mut channels) = (states.clone(), budgets.clone(), channels.clone());
                budgets[p.index()] -= A::cost(&mv);
                match mv {
                    Move::Send { channel, msg } => {
                        states[p.index()].on_send(topology.channel(channel).to, &msg).ok()?;
                        channels[channel.index()].push_back(msg);
                    }
                    Move::Internal(step) => states[p.index()].on_internal(&step).ok()?,
                }
                next.push((states, budgets, channels));
            }
        }
        for (c, queue) in channels.iter().enumerate() {
            let Some(msg) = queue.front() else { continue };
            let ch = topology.channel(ChannelId(c as u32));
            let mut delivered = (states.clone(), budgets.clone(), channels.clone());
            delivered.0[ch.to.index()].on_message(ch.from, msg);
            delivered.2[c].pop_front();
            next.push(delivered);
            if theft {
                let mut lost = (states.clone(), budgets.clone(), channels.clone());
                lost.2[c].pop_front();
                next.push(lost);
            }
        }
        // Quiet: nothing to deliver and no move left.
        if next.is_empty() {
            quiet.insert(states);
            continue;
        }
        for g in next {
            if seen.insert(g.clone()) {
                if seen.len() > limit {
                    return None;
                }
                todo.push(g);
            }
        }
    }
    Some(quiet)
}

/// Every stable predicate of `A`, [`TERMINATED`] first.
pub fn stable_predicates<A: Spec>() -> Vec<Stable<A>> {
    let mut all = vec![Stable { name: TERMINATED, holds: terminated::<A>, examples: None }];
    all.extend_from_slice(A::stable());
    all
}

/// The conserved quantity held by `states` and carried by `channels`.
pub fn accounted<A: Spec>(states: &[A], channels: &[Vec<A::Msg>]) -> u64 {
    states.iter().map(A::held).sum::<u64>() + channels.iter().flatten().map(A::carried).sum::<u64>()
}
