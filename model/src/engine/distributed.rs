//! One exhaustive search across many processes (`model check --distributed`): the states are
//! partitioned, not the paths. Every state has one owner, the rank its fingerprint maps to
//! ([`owner`]), which alone decides whether it is new: its seen set holds exactly the
//! fingerprints it owns, each with its parent's. A rank sends each successor's fingerprint to the
//! successor's owner, which answers new or seen; exactly one of the ranks that reach a state is
//! told it is new (the first asked), and that rank expands it. So every state is searched once,
//! whatever the number of ranks: the unique-state count is that of a single search.
//!
//! **Where a state is expanded.** The owner decides, but the state itself stays with the rank
//! that made it: only its fingerprint (8 bytes, and the parent's) travels, never the state, so
//! a step costs a rank the same wherever its successor's owner is, but for those 17 bytes. The
//! levels are then evened out: before a level is expanded, the ranks over the level's mean
//! (rounded up) send their excess to those under it ([`even_out`]), encoded ([`Wire`]).
//!
//! **Level-synchronous breadth-first search, asynchronous within a level.** The ranks expand
//! the states at depth `d`, each at its own pace: a rank expands its share a [`SLICE`] at a
//! time, settles the successors it owns, and gathers the others' fingerprints (with their
//! parents') by owner, sending an owner a message of them (`ASK`) once it holds [`BATCH`] (or
//! sooner, see [`HOLD`]); between two slices it takes in the messages that have arrived: asks,
//! which it answers at once (one byte each, new or seen: `ANSWER`), and answers, which tell it
//! which of its successors are new, kept for depth `d + 1`. A rank does not ask again about a
//! fingerprint it remembers asking about (`Asked`), and has at most [`WINDOW`] messages to one
//! owner unanswered (it answers the others' asks until it may send). No rank waits for another
//! within a level but at that window: the pauses of one rank (its seen set doubling, another
//! process on its core) do not stop the others.
//!
//! **Termination** of a level: once a rank has expanded its share and every ask it sent is
//! answered, it enters a barrier without waiting at it (`MPI_Ibarrier`), answering asks until
//! every rank has entered. Then nothing is in flight: a rank enters only once each of its asks
//! is answered, so every ask was received (its owner answered it) and every answer was received
//! (its asker was waiting for it); and no rank sends again before the next level, which starts
//! with a collective reduction every rank takes part in (the states at depth `d + 1`, summed:
//! the search ends when the sum is 0, every rank agreeing, as they all compute the same sum).
//! This is the termination of Hoefler et al.'s non-blocking consensus (NBX, 2010), with the
//! answers in the place of synchronous sends: no token passing (Safra) is needed, because every
//! message is answered and a rank knows when all of its own have been. A stop (timeout,
//! interrupt) is seen by each rank itself, which then takes no more states; the reduction at
//! the level's end tells every rank whether any stopped.
//!
//! **Judging and paths.** Each rank judges the states it expands, as the depth-first engine
//! does ([`is_discovery`]), and keeps each property's first discovery; since the levels are
//! searched in order, a property's discovery at the smallest depth over the ranks is at a
//! shortest path's end. Each rank's seen set maps a fingerprint to its parent's, so the path is
//! rebuilt backwards, one collective lookup per step, to an initial state, and rank 0 replays it
//! forward, choosing at each step the action whose successor has the next fingerprint. The
//! search stops early as the depth-first engine does (every property decided, or a failure with
//! `stop_on_failure`), but at the end of a level: the counts of a stopped search do not depend
//! on the number of ranks. Which rank is told first that a state is new depends on timing, and
//! with it the parent recorded and which of equally short paths is shown, and what the ranks
//! send each other ([`Traffic`]); the counts, the verdicts and the paths' lengths do not.

use std::hash::Hash;
use std::io;
use std::path::Path;

use stateright::{Expectation, Model};
use thiserror::Error;

use super::dfs::{is_discovery, Found, Limits};
use super::in_place::{InPlace, Probe};
use super::ranks::{Message, Ranks};
use super::seen::{fingerprint, fingerprint_of, Fingerprint, Representative};
use super::spill::Spill;
use super::wire::{framed, Wire};
use tables::{init_parent, key, Asked, Parents};

/// States a rank sends in one exchange when a level is evened out.
pub const CHUNK: usize = 4096;

/// The most states the moves that even out a level bring into one rank (kept in memory, encoded,
/// whether or not the rank's level is on disk: at most about 8 MB at 116 bytes a state).
pub const MOVE_CAP: u64 = 16 * CHUNK as u64;

/// The rank that owns fingerprint `fp` among `ranks` (its high bits; the seen set's slots use
/// the low ones).
pub fn owner(fp: Fingerprint, ranks: usize) -> usize {
    ((u128::from(fp) * ranks as u128) >> 64) as usize
}

/// The states of one depth that a rank is to expand: those it made itself, as they are; those
/// other ranks sent it to even out the level, encoded one after another; and, once the rank's
/// memory is past its budget, any new one it made encoded in a [`Spill`] on disk.
struct Level<S> {
    live: Vec<(S, u64)>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
    keys: Vec<u64>,
    /// Encoded states already taken.
    taken: usize,
    disk: Spill,
}

impl<S> Level<S> {
    fn new(disk: Spill) -> Self {
        Level { live: Vec::new(), bytes: Vec::new(), ends: Vec::new(), keys: Vec::new(), taken: 0, disk }
    }

    fn push_encoded(&mut self, key: u64, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.ends.push(self.bytes.len());
        self.keys.push(key);
    }

    /// States not yet taken.
    fn len(&self) -> usize {
        self.live.len() + self.keys.len() - self.taken + self.disk.left()
    }

    /// Moves up to `n` states into `into` (decoding with `decode`).
    fn take(&mut self, n: usize, into: &mut Vec<(S, u64)>, decode: impl Fn(&[u8]) -> S) -> io::Result<()> {
        let live = n.min(self.live.len());
        into.extend(self.live.drain(self.live.len() - live..));
        for _ in live..n {
            if let Some(&k) = self.keys.get(self.taken) {
                let start = if self.taken == 0 { 0 } else { self.ends[self.taken - 1] };
                into.push((decode(&self.bytes[start..self.ends[self.taken]]), k));
                self.taken += 1;
            } else if let Some((k, bytes)) = self.disk.take()? {
                into.push((decode(bytes), k));
            } else {
                break;
            }
        }
        Ok(())
    }

    /// Its last state is in: what is on disk is read from the first.
    fn seal(&mut self) -> io::Result<()> {
        self.disk.rewind()
    }

    /// Empties it, keeping its allocations (and their pages), and its file.
    fn clear(&mut self) -> io::Result<()> {
        self.live.clear();
        self.bytes.clear();
        self.ends.clear();
        self.keys.clear();
        self.taken = 0;
        self.disk.clear()
    }
}

/// What crossed between the ranks, and how the states were shared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    /// Ranks.
    pub ranks: usize,
    /// Successors' fingerprints sent to another rank (their owner).
    pub fingerprints_sent: u64,
    /// Successors' fingerprints owned by another rank and not sent: the rank had asked about
    /// them before (a repeat the owner would answer "seen").
    #[serde(default)]
    pub fingerprints_cached: u64,
    /// States sent to another rank to even out a level (every other state is expanded by the
    /// rank that made it).
    pub states_sent: u64,
    /// Bytes sent to other ranks (fingerprints, answers, states).
    pub bytes_sent: u64,
    /// Messages of asks and of answers sent to other ranks (not counting the collective
    /// operations: the moves that even out a level, and the sums).
    #[serde(default)]
    pub messages_sent: u64,
    /// The most unique states one rank owns.
    pub largest_share: u64,
    /// The most states one rank expanded.
    #[serde(default)]
    pub largest_expanded: u64,
    /// The largest peak resident memory of one rank, in bytes (0 if unknown).
    pub largest_peak_bytes: u64,
    /// The ranks' peak resident memory together, in bytes (0 if unknown).
    pub total_peak_bytes: u64,
    /// States written to disk, all ranks (kept there until their level was expanded).
    #[serde(default)]
    pub spilled_states: u64,
    /// Bytes written to disk, all ranks.
    #[serde(default)]
    pub spilled_bytes: u64,
    /// The smallest memory budget of a rank, in bytes: the resident memory past which it kept
    /// its levels on disk (`--rank-memory`, or by default half the memory its machine had
    /// available, shared by the ranks on that machine).
    #[serde(default)]
    pub rank_memory: u64,
}

/// The counts after a level, for a progress line (rank 0).
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// States generated so far (with repeats), all ranks.
    pub states: u64,
    /// Unique states so far, all ranks.
    pub unique: u64,
    /// The depth being expanded (the initial states at 1).
    pub depth: usize,
    /// Resident memory of all ranks together, in bytes (0 if unknown).
    pub resident: u64,
}

/// What a rank is told and asked while it searches.
pub struct Hooks<'a> {
    /// Whether to stop now (read by every rank before each slice it takes; any rank's `true`
    /// stops all at the end of the level).
    pub stop: &'a dyn Fn() -> bool,
    /// This process's resident and peak resident memory in bytes (0 if unknown).
    pub memory: fn() -> (u64, u64),
    /// Called on rank 0 after every level.
    pub progress: &'a mut dyn FnMut(&Progress),
    /// Where the levels go when memory runs short.
    pub disk: Disk<'a>,
}

/// When and where a rank keeps breadth-first levels on disk.
#[derive(Clone, Copy, Debug)]
pub struct Disk<'a> {
    /// The resident memory (as [`Hooks::memory`] reads it, every few slices) at or past which
    /// a rank writes the new states it keeps for the next level to disk (0: all of them;
    /// `u64::MAX`: none).
    pub budget: u64,
    /// The directory of each rank's two files (unnamed: they go when the search ends).
    pub dir: &'a Path,
}

/// A finished distributed search, as rank `rank` sees it.
pub struct Searched<A> {
    /// States generated (with repeats) plus the initial states, all ranks.
    pub states: usize,
    /// Unique states, all ranks.
    pub unique: usize,
    /// The depth of the deepest states reached (the initial states at 1), as the depth-first
    /// engine counts it: judged or cut by the depth bound.
    pub max_depth: usize,
    /// Rank 0: every property's first discovery (at the smallest depth). Empty elsewhere.
    pub found: Found<A>,
    /// Stopped by a rank's [`Hooks::stop`].
    pub stopped: bool,
    /// The traffic between the ranks.
    pub traffic: Traffic,
}

/// Why a distributed search failed.
#[derive(Debug, Error)]
pub enum SearchError {
    /// The model has an eventually-property, which the search does not judge.
    #[error("the distributed search does not judge eventually-properties")]
    Eventually,
    /// This rank cannot make its files for the levels kept on disk.
    #[error("cannot make a file in {}: {error}", dir.display())]
    Files {
        /// The directory.
        dir: std::path::PathBuf,
        /// Why.
        #[source]
        error: io::Error,
    },
    /// Other ranks cannot make their files.
    #[error("{} cannot make files in {}", ranks_named(*ranks), dir.display())]
    OtherRanksFiles {
        /// How many ranks.
        ranks: u64,
        /// The directory.
        dir: std::path::PathBuf,
    },
    /// No rank holds a state on a discovery's path (this fingerprint's).
    #[error("a discovery's path was lost: no rank holds fingerprint {0:#x}")]
    Lost(u64),
    /// A discovery's path does not replay from this initial state.
    #[error("a discovery's path cannot be replayed from initial state {0}")]
    Replay(usize),
}

/// Searches `model` from its initial states with the ranks of `ranks` (see the module
/// documentation). Every rank calls it with the same model, limits and symmetry.
pub fn search<M, R>(
    model: &M,
    ranks: &R,
    limits: Limits,
    symmetry: Representative<M::State>,
    hooks: Hooks<'_>,
) -> Result<Searched<M::Action>, SearchError>
where
    M: Wire + InPlace,
    M::State: Hash + Clone,
    M::Action: Clone,
    R: Ranks + ?Sized,
{
    let (me, n) = (ranks.rank(), ranks.size());
    let properties = model.properties();
    if properties.iter().any(|p| p.expectation == Expectation::Eventually) {
        return Err(SearchError::Eventually);
    }
    // Each rank's two files (this level's and the next's), checked by every rank together.
    let dir = hooks.disk.dir;
    let files = Spill::new(dir).and_then(|a| Ok((a, Spill::new(dir)?)));
    let mut failed = [u64::from(files.is_err())];
    ranks.sum(&mut failed);
    let (this, after) = match files {
        Ok(files) if failed[0] == 0 => files,
        Ok(_) => return Err(SearchError::OtherRanksFiles { ranks: failed[0], dir: dir.to_path_buf() }),
        Err(e) => return Err(SearchError::Files { dir: dir.to_path_buf(), error: e }),
    };
    let on_disk = |what: &str, e: io::Error| -> ! {
        panic!("rank {me}: {what} the breadth-first level kept on disk in {}: {e}", dir.display())
    };
    let inits = model.init_states();
    let mut table = Parents::new();
    let mut recent = Asked::new();
    let mut level: Level<M::State> = Level::new(this);
    let mut states = 0u64;
    for (i, s) in inits.iter().enumerate() {
        if me == 0 {
            states += 1;
        }
        let k = key(fingerprint_of(s, symmetry));
        if owner(k, n) == me && table.insert(k, init_parent(i)) {
            level.live.push((s.clone(), k));
        }
    }
    let mut first: Vec<Option<(usize, u64)>> = vec![None; properties.len()];
    // Properties some rank has found (as of the last level).
    let mut known = vec![false; properties.len()];
    let mut traffic = Traffic { ranks: n, ..Traffic::default() };
    let (mut depth, mut max_depth, mut stopped) = (1, 0, false);
    let mut expanded = 0u64;
    let mut actions = Vec::new();
    let mut next: Level<M::State> = Level::new(after);
    let mut flight: Flight<M> = Flight::new(n, hooks.disk.budget == 0);
    let mut out = vec![Vec::new(); n];
    let mut arrived = vec![Vec::new(); n];
    let mut parents: Vec<(M::State, u64)> = Vec::new();
    let mut successors: Vec<(M::Action, Option<M::State>, u64)> = Vec::new();
    // A successor built for its fingerprint and owned elsewhere: kept until its owner answers
    // only where building it again would count twice; else built again if new (holding every
    // one asked about and dropping those seen, cold, cost more: in full mode 5% of the user
    // time at 2 ranks, 9% at 4).
    let hold_built = !model.pure_steps();
    let decode = |bytes: &[u8]| {
        model.decode(bytes).unwrap_or_else(|e| panic!("rank {me}: a state received does not decode: {e}"))
    };
    'search: loop {
        let mut counts = vec![0; n];
        counts[me] = level.len() as u64;
        ranks.sum(&mut counts);
        if counts.iter().sum::<u64>() == 0 {
            break;
        }
        max_depth = depth;
        if limits.target_max_depth.is_some_and(|t| depth >= t) {
            break;
        }
        // The level evened out: ranks over their share send states to ranks under it, at most
        // CHUNK states from a rank per exchange.
        let moves = even_out(&counts, MOVE_CAP);
        let mut given = vec![0u64; n];
        for &(from, to, k) in &moves {
            given[from] += k;
            counts[from] -= k;
            counts[to] += k;
        }
        let mut give: Vec<(usize, u64)> = moves.iter().filter(|m| m.0 == me).map(|m| (m.1, m.2)).collect();
        for _ in 0..given.iter().max().map_or(0, |g| g.div_ceil(CHUNK as u64)) {
            out.iter_mut().for_each(Vec::clear);
            let want = give.iter().map(|g| g.1).sum::<u64>().min(CHUNK as u64) as usize;
            level.take(want, &mut parents, decode).unwrap_or_else(|e| on_disk("reading", e));
            let mut moving = parents.drain(..);
            for (to, left) in &mut give {
                for (t, k) in moving.by_ref().take(*left as usize) {
                    out[*to].extend_from_slice(&k.to_le_bytes());
                    framed(&mut out[*to], |buf| model.encode(&t, buf));
                    *left -= 1;
                    traffic.states_sent += 1;
                }
            }
            assert!(moving.next().is_none(), "rank {me} sends every state it takes to move");
            drop(moving);
            exchange(ranks, &out, &mut arrived, &mut traffic);
            for bytes in &arrived {
                let mut rest = &bytes[..];
                while !rest.is_empty() {
                    let k = u64::from_le_bytes(rest[..8].try_into().expect("8 bytes"));
                    let len = u32::from_le_bytes(rest[8..12].try_into().expect("4 bytes")) as usize;
                    level.push_encoded(k, &rest[12..12 + len]);
                    rest = &rest[12 + len..];
                }
            }
        }
        assert_eq!(level.len() as u64, counts[me], "rank {me} holds its share of the level");
        next.clear().unwrap_or_else(|e| on_disk("emptying", e));
        // The level's states, a slice at a time, the messages that have arrived read between
        // two slices; then the asks left, their answers, and the fence.
        let mut taking = true;
        loop {
            if taking && (hooks.stop)() {
                stopped = true;
                taking = false;
            }
            if taking {
                let mut slice = flight.spare.pop().unwrap_or_default();
                level.take(SLICE, &mut slice, decode).unwrap_or_else(|e| on_disk("reading", e));
                if slice.is_empty() {
                    taking = false;
                    flight.spare.push(slice);
                } else {
                    expanded += slice.len() as u64;
                    for (s, k) in &slice {
                        for ((f, p), &elsewhere) in first.iter_mut().zip(&properties).zip(&known) {
                            if f.is_none() && !elsewhere && is_discovery(p, model, s) {
                                *f = Some((depth, *k));
                            }
                        }
                    }
                    let id = flight.base + flight.held.len() as u64;
                    let mut waiting = 0;
                    // Successors: those owned here are settled now; the others wait for their owner.
                    for (j, (s, k)) in slice.iter_mut().enumerate() {
                        model.actions(s, &mut actions);
                        // Under symmetry a successor's fingerprint is its representative's: built.
                        let digest = if symmetry.is_none() { model.digest(s) } else { None };
                        // All successors first, the table lines of those owned here fetched together.
                        for a in actions.drain(..) {
                            let probe = match digest {
                                Some(d) => model.probe(s, d, &a),
                                None => Probe::Build,
                            };
                            let (built, succ) = match probe {
                                Probe::Digest(d) => (None, key(fingerprint(&d))),
                                Probe::NotAStep => continue,
                                Probe::Build => {
                                    let Some(t) = model.next_state(s, a.clone()) else { continue };
                                    let succ = key(fingerprint_of(&t, symmetry));
                                    (Some(t), succ)
                                }
                            };
                            if owner(succ, n) == me {
                                table.prefetch(succ);
                            } else {
                                recent.prefetch(succ);
                            }
                            successors.push((a, built, succ));
                        }
                        states += successors.len() as u64;
                        for (a, built, succ) in successors.drain(..) {
                            let to = owner(succ, n);
                            if to != me {
                                if !recent.first(succ) {
                                    traffic.fingerprints_cached += 1;
                                    continue;
                                }
                                flight.asks[to].extend_from_slice(&succ.to_le_bytes());
                                flight.asks[to].extend_from_slice(&k.to_le_bytes());
                                flight.filling[to].push((id, j, a, built.filter(|_| hold_built), succ));
                                waiting += 1;
                            } else if table.insert(succ, *k) {
                                let t = built.unwrap_or_else(|| {
                                    model.next_state(s, a).expect("a step taken in place is a step")
                                });
                                flight.keep(model, &mut next, t, succ).unwrap_or_else(|e| on_disk("writing", e));
                            }
                        }
                    }
                    flight.held_states += slice.len();
                    flight.held.push_back((slice, waiting));
                    flight.release();
                    for to in 0..n {
                        if flight.asks[to].len() >= BATCH * 16 {
                            flight
                                .send(to, model, ranks, &mut table, &mut next, &mut traffic)
                                .unwrap_or_else(|e| on_disk("writing", e));
                        }
                    }
                    // The memory read every LOOK slices (a look costs some microseconds).
                    if (flight.base + flight.held.len() as u64).is_multiple_of(LOOK) {
                        let (resident, _) = (hooks.memory)();
                        flight.spilling = flight.spilling || resident >= hooks.disk.budget;
                    }
                }
            }
            if !taking || flight.held_states > HOLD {
                for to in 0..n {
                    if !flight.asks[to].is_empty() {
                        flight
                            .send(to, model, ranks, &mut table, &mut next, &mut traffic)
                            .unwrap_or_else(|e| on_disk("writing", e));
                    }
                }
            }
            let idle = !taking && flight.unanswered() > 0;
            while let Some(m) = ranks.poll(idle) {
                flight
                    .serve(m, model, ranks, &mut table, &mut next, &mut traffic)
                    .unwrap_or_else(|e| on_disk("writing", e));
            }
            if !taking && flight.unanswered() == 0 {
                break;
            }
        }
        // Every ask of this rank is answered; once every rank's is, nothing is in flight.
        ranks.fence();
        while !ranks.fenced() {
            if let Some(m) = ranks.poll(true) {
                flight
                    .serve(m, model, ranks, &mut table, &mut next, &mut traffic)
                    .unwrap_or_else(|e| on_disk("writing", e));
            }
        }
        assert!(flight.held.is_empty(), "rank {me} has built every successor it was told is new");
        let (resident, _) = (hooks.memory)();
        // With the counts, which properties some rank has found: the others stop judging them,
        // as a single search does once it has.
        let mut now = [u64::from(stopped), states, table.len as u64, resident].to_vec();
        now.extend(first.iter().map(|f| u64::from(f.is_some())));
        ranks.sum(&mut now);
        for (k, &found) in known.iter_mut().zip(&now[4..]) {
            *k = found > 0;
        }
        if me == 0 {
            (hooks.progress)(&Progress { states: now[1], unique: now[2], depth, resident: now[3] });
        }
        if now[0] > 0 {
            stopped = true;
            break 'search;
        }
        // Every property decided, or a failure when asked to stop at one: over after this level
        // (`known` is every rank's, summed at its end).
        next.seal().unwrap_or_else(|e| on_disk("writing", e));
        std::mem::swap(&mut level, &mut next);
        depth += 1;
        let failed = properties.iter().zip(&known).any(|(p, &d)| d && p.expectation == Expectation::Always);
        if (!properties.is_empty() && known.iter().all(|&d| d)) || (failed && limits.stop_on_failure) {
            break;
        }
    }
    let (_, peak) = (hooks.memory)();
    let spilled = [&level.disk, &next.disk];
    let mut totals = [
        states,
        table.len as u64,
        traffic.fingerprints_sent,
        traffic.states_sent,
        traffic.bytes_sent,
        peak,
        spilled.iter().map(|d| d.pushed).sum(),
        spilled.iter().map(|d| d.bytes).sum(),
        traffic.fingerprints_cached,
        traffic.messages_sent,
    ];
    ranks.sum(&mut totals);
    traffic.spilled_states = totals[6];
    traffic.spilled_bytes = totals[7];
    traffic.fingerprints_cached = totals[8];
    traffic.messages_sent = totals[9];
    let mut largest = [table.len as u64, peak, expanded, u64::MAX - hooks.disk.budget];
    ranks.max(&mut largest);
    traffic.rank_memory = u64::MAX - largest[3];
    traffic.largest_expanded = largest[2];
    traffic.fingerprints_sent = totals[2];
    traffic.states_sent = totals[3];
    traffic.bytes_sent = totals[4];
    traffic.total_peak_bytes = totals[5];
    traffic.largest_share = largest[0];
    traffic.largest_peak_bytes = largest[1];
    // Each property's discovery at the smallest depth (the smallest rank among equals), as
    // `u64::MAX - (depth · n + rank)` under a maximum (0: none).
    let mut best: Vec<u64> =
        first.iter().map(|f| f.map_or(0, |(d, _)| u64::MAX - (d as u64 * n as u64 + me as u64))).collect();
    ranks.max(&mut best);
    let winner = |b: u64| (b != 0).then(|| ((u64::MAX - b) % n as u64) as usize);
    let mut ends: Vec<u64> = first
        .iter()
        .zip(&best)
        .map(|(f, &b)| if winner(b) == Some(me) { f.map_or(0, |(_, k)| k) } else { 0 })
        .collect();
    ranks.sum(&mut ends);
    // Each discovery's chain of fingerprints back to an initial state, one lookup per step.
    let is_init = |k: u64| k > u64::MAX - inits.len() as u64;
    let mut chains: Vec<Vec<u64>> =
        best.iter().zip(&ends).map(|(&b, &e)| if b == 0 { Vec::new() } else { vec![e] }).collect();
    loop {
        let open = |c: &Vec<u64>| c.last().is_some_and(|&k| !is_init(k));
        if !chains.iter().any(open) {
            break;
        }
        let mut parents: Vec<u64> = chains
            .iter()
            .map(|c| match c.last() {
                Some(&k) if open(c) && owner(k, n) == me => table.get(k).unwrap_or(0),
                _ => 0,
            })
            .collect();
        ranks.sum(&mut parents);
        for (c, p) in chains.iter_mut().zip(parents) {
            if open(c) {
                if p == 0 {
                    return Err(SearchError::Lost(c[c.len() - 1]));
                }
                c.push(p);
            }
        }
    }
    // Counters the model keeps of its steps: summed, and not counting the replays below.
    let mut counters = model.counters();
    ranks.sum(&mut counters);
    let mut found = Found::new();
    if me == 0 {
        for (p, chain) in properties.iter().zip(chains) {
            if let Some(path) = replay(model, &inits, &chain, symmetry)? {
                found.insert(p.name, path);
            }
        }
        model.set_counters(&counters);
    }
    Ok(Searched { states: totals[0] as usize, unique: totals[1] as usize, max_depth, found, stopped, traffic })
}

/// A successor waiting for its owner's answer: its parent's slice and place in it, the action,
/// the successor if it was built and kept, and its key.
type Waiting<M> = (u64, usize, <M as Model>::Action, Option<<M as Model>::State>, u64);

/// States of a level taken together, each with its key.
type Slice<M> = Vec<(<M as Model>::State, u64)>;

/// The tag of a message of asks: successors' fingerprints, each with its parent's (16 bytes).
const ASK: u8 = 1;

/// The tag of a message of answers: one byte for each fingerprint of an ask, 1 if it was new.
const ANSWER: u8 = 2;

/// States a rank expands between two looks at the messages that have arrived.
pub const SLICE: usize = 512;

/// Slices between two readings of a rank's memory ([`Hooks::memory`]).
const LOOK: u64 = 8;

/// Asks that make a message to their owner: 64 KiB.
pub const BATCH: usize = 4096;

/// Messages of asks a rank has sent one owner and not had answered, at most: past it, the rank
/// answers the others' asks until that owner has answered one.
pub const WINDOW: usize = 4;

/// States a rank keeps for the asks about their successors, past which it sends every ask it
/// has at once, however few to an owner (with many ranks a message fills slowly).
pub const HOLD: usize = 1 << 16;

/// A rank's asks in flight during a level: those not yet sent, those sent and not answered, the
/// parent states they need once answered, and the answering of other ranks' asks.
struct Flight<M: Model> {
    /// Per owner: asks not yet sent.
    asks: Vec<Vec<u8>>,
    /// Per owner: the successors of `asks`.
    filling: Vec<Vec<Waiting<M>>>,
    /// Per owner: the successors of the messages sent and not answered, in the order sent.
    pending: Vec<std::collections::VecDeque<Vec<Waiting<M>>>>,
    /// Slices of parent states (from the `base`-th of the level on), each with how many of its
    /// successors' asks are not answered.
    held: std::collections::VecDeque<(Slice<M>, usize)>,
    base: u64,
    held_states: usize,
    /// Emptied buffers, kept for their allocations.
    spare: Vec<Slice<M>>,
    spare_waiting: Vec<Vec<Waiting<M>>>,
    /// Messages of asks taken in, emptied: the next asks' buffers.
    spare_bytes: Vec<Vec<u8>>,
    /// New states go to disk.
    spilling: bool,
    encoded: Vec<u8>,
}

impl<M: Wire + InPlace> Flight<M>
where
    M::State: Hash + Clone,
    M::Action: Clone,
{
    fn new(n: usize, spilling: bool) -> Self {
        Flight {
            asks: vec![Vec::new(); n],
            filling: (0..n).map(|_| Vec::new()).collect(),
            pending: (0..n).map(|_| Default::default()).collect(),
            held: Default::default(),
            base: 0,
            held_states: 0,
            spare: Vec::new(),
            spare_waiting: Vec::new(),
            spare_bytes: Vec::new(),
            spilling,
            encoded: Vec::new(),
        }
    }

    /// Messages of asks sent and not answered.
    fn unanswered(&self) -> usize {
        self.pending.iter().map(|p| p.len()).sum()
    }

    /// Keeps `t` (key `k`) for the next level.
    fn keep(&mut self, model: &M, next: &mut Level<M::State>, t: M::State, k: u64) -> io::Result<()> {
        keep(model, next, self.spilling, &mut self.encoded, t, k)
    }

    /// Frees the slices at the front whose asks are all answered.
    fn release(&mut self) {
        while self.held.front().is_some_and(|h| h.1 == 0) {
            let (mut slice, _) = self.held.pop_front().expect("a slice");
            self.held_states -= slice.len();
            self.base += 1;
            slice.clear();
            self.spare.push(slice);
        }
    }

    /// Sends the asks for owner `to`, once it has fewer than [`WINDOW`] messages unanswered
    /// (answering the others' asks meanwhile).
    fn send<R: Ranks + ?Sized>(
        &mut self,
        to: usize,
        model: &M,
        ranks: &R,
        table: &mut Parents,
        next: &mut Level<M::State>,
        traffic: &mut Traffic,
    ) -> io::Result<()> {
        while self.pending[to].len() >= WINDOW {
            if let Some(m) = ranks.poll(true) {
                self.serve(m, model, ranks, table, next, traffic)?;
            }
        }
        let asks = std::mem::replace(&mut self.asks[to], self.spare_bytes.pop().unwrap_or_default());
        traffic.fingerprints_sent += asks.len() as u64 / 16;
        traffic.bytes_sent += asks.len() as u64;
        traffic.messages_sent += 1;
        ranks.post(to, ASK, asks);
        let spare = self.spare_waiting.pop().unwrap_or_default();
        let waiting = std::mem::replace(&mut self.filling[to], spare);
        self.pending[to].push_back(waiting);
        Ok(())
    }

    /// Takes in message `m`: asks to answer (in the seen set, which records the parents), or
    /// answers to asks of this rank (building the successors new to their owner, for the next
    /// level).
    fn serve<R: Ranks + ?Sized>(
        &mut self,
        (from, tag, bytes): Message,
        model: &M,
        ranks: &R,
        table: &mut Parents,
        next: &mut Level<M::State>,
        traffic: &mut Traffic,
    ) -> io::Result<()> {
        let me = ranks.rank();
        match tag {
            ASK => {
                assert_eq!(bytes.len() % 16, 0, "rank {me}: asks of 16 bytes each from rank {from}");
                let mut answers = Vec::with_capacity(bytes.len() / 16);
                for (i, q) in bytes.chunks_exact(16).enumerate() {
                    if let Some(ahead) = bytes.get((i + 8) * 16..(i + 8) * 16 + 8) {
                        table.prefetch(u64::from_le_bytes(ahead.try_into().expect("8 bytes")));
                    }
                    let succ = u64::from_le_bytes(q[..8].try_into().expect("8 bytes"));
                    let parent = u64::from_le_bytes(q[8..].try_into().expect("8 bytes"));
                    answers.push(u8::from(table.insert(succ, parent)));
                }
                traffic.bytes_sent += answers.len() as u64;
                traffic.messages_sent += 1;
                ranks.post(from, ANSWER, answers);
                if self.spare_bytes.len() < self.asks.len() {
                    let mut bytes = bytes;
                    bytes.clear();
                    self.spare_bytes.push(bytes);
                }
            }
            ANSWER => {
                let mut waiting = self.pending[from]
                    .pop_front()
                    .unwrap_or_else(|| panic!("rank {me}: answers from rank {from}, which was not asked"));
                assert_eq!(bytes.len(), waiting.len(), "rank {from} answered every fingerprint sent to it");
                for ((id, j, a, built, succ), &new) in waiting.drain(..).zip(&bytes) {
                    let (slice, left) = &mut self.held[(id - self.base) as usize];
                    *left -= 1;
                    if new == 0 {
                        continue;
                    }
                    let t = built.unwrap_or_else(|| {
                        model.next_state(&slice[j].0, a).expect("a step probed or built before is a step")
                    });
                    keep(model, next, self.spilling, &mut self.encoded, t, succ)?;
                }
                self.spare_waiting.push(waiting);
                self.release();
            }
            _ => panic!("rank {me}: a message of unknown tag {tag} from rank {from}"),
        }
        Ok(())
    }
}

/// Keeps `t` (key `k`) for the next level: as it is, or encoded on disk when `spilling`.
fn keep<M: Wire>(
    model: &M,
    next: &mut Level<M::State>,
    spilling: bool,
    encoded: &mut Vec<u8>,
    t: M::State,
    k: u64,
) -> io::Result<()> {
    if spilling {
        encoded.clear();
        model.encode(&t, encoded);
        next.disk.push(k, encoded)
    } else {
        next.live.push((t, k));
        Ok(())
    }
}

/// The moves that even out a level whose shares are `counts` (one per rank): `(from, to,
/// states)`, the ranks over the level's mean rounded up giving their excess to the ranks under
/// it, in rank order, at most `cap` states into any one rank. Every rank computes the same moves.
pub fn even_out(counts: &[u64], cap: u64) -> Vec<(usize, usize, u64)> {
    let even = counts.iter().sum::<u64>().div_ceil(counts.len().max(1) as u64);
    let mut over = counts.iter().enumerate().filter(|(_, &c)| c > even).map(|(r, &c)| (r, c - even));
    let mut under = counts.iter().enumerate().filter(|(_, &c)| c < even).map(|(r, &c)| (r, (even - c).min(cap)));
    let mut moves = Vec::new();
    let (mut giver, mut taker) = (over.next(), under.next());
    while let (Some((from, excess)), Some((to, room))) = (&mut giver, &mut taker) {
        let k = (*excess).min(*room);
        moves.push((*from, *to, k));
        *excess -= k;
        *room -= k;
        if *excess == 0 {
            giver = over.next();
        }
        if *room == 0 {
            taker = under.next();
        }
    }
    moves
}

/// A discovery's path: the initial state's index and the actions from it.
type Discovery<M> = (usize, Vec<<M as Model>::Action>);

/// "1 rank" or "N ranks".
fn ranks_named(n: u64) -> String {
    if n == 1 {
        "1 rank".into()
    } else {
        format!("{n} ranks")
    }
}

/// All-to-all, counting the bytes that leave this rank.
fn exchange<R: Ranks + ?Sized>(ranks: &R, out: &[Vec<u8>], into: &mut [Vec<u8>], traffic: &mut Traffic) {
    let me = ranks.rank();
    traffic.bytes_sent += out.iter().enumerate().filter(|(r, _)| *r != me).map(|(_, b)| b.len() as u64).sum::<u64>();
    ranks.exchange(out, into);
}

/// The actions from an initial state along `chain` (fingerprints from the discovery back to
/// the initial state's [`init_parent`]): at each step the first action whose successor has the
/// next fingerprint. `None` for an empty chain.
fn replay<M>(
    model: &M,
    inits: &[M::State],
    chain: &[u64],
    symmetry: Representative<M::State>,
) -> Result<Option<Discovery<M>>, SearchError>
where
    M: Model,
    M::State: Hash + Clone,
    M::Action: Clone,
{
    let Some((&init, back)) = chain.split_last() else { return Ok(None) };
    let i = (u64::MAX - init) as usize;
    let lost = || SearchError::Replay(i);
    let mut state = inits.get(i).ok_or_else(lost)?.clone();
    let mut keys = back.iter().rev();
    if keys.next() != Some(&key(fingerprint_of(&state, symmetry))) {
        return Err(lost());
    }
    let mut path = Vec::new();
    let mut actions = Vec::new();
    for &want in keys {
        model.actions(&state, &mut actions);
        let step = actions.drain(..).find_map(|a| {
            let next = model.next_state(&state, a.clone())?;
            (key(fingerprint_of(&next, symmetry)) == want).then_some((a, next))
        });
        let (a, next) = step.ok_or_else(lost)?;
        path.push(a);
        state = next;
    }
    Ok(Some((i, path)))
}

mod tables;
#[cfg(test)]
mod tests;
