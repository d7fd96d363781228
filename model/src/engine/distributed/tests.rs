//! The distributed search on thread ranks: every rank count finds the single search's states,
//! levels and verdicts.

use super::tables::ASKED;
use super::*;
use crate::engine::ranks::Threads;
use crate::engine::wire::NotAState;
use stateright::Property;

/// Counters from three initial states, 10, 20 and 30: each steps by one while its last
/// digit is below 3 (12 states); 22 fails "never 22", 32 is "reaches 32"'s example.
#[derive(Clone, Copy)]
struct Counters;

impl Model for Counters {
    type State = u8;
    type Action = u8;
    fn init_states(&self) -> Vec<u8> {
        vec![10, 20, 30]
    }
    fn actions(&self, s: &u8, actions: &mut Vec<u8>) {
        if s % 10 < 3 {
            actions.push(1);
        }
    }
    fn next_state(&self, s: &u8, a: u8) -> Option<u8> {
        Some(s + a)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("never 22", |_, s: &u8| *s != 22),
            Property::sometimes("reaches 32", |_, s: &u8| *s == 32),
        ]
    }
}

impl InPlace for Counters {}

impl Wire for Counters {
    fn encode(&self, s: &u8, out: &mut Vec<u8>) {
        out.push(*s);
    }
    fn decode(&self, bytes: &[u8]) -> Result<u8, NotAState> {
        match bytes {
            [s] => Ok(*s),
            _ => Err(NotAState::bytes(format!("{} bytes", bytes.len()))),
        }
    }
}

/// `model` searched on `n` thread ranks, never on disk: each rank's outcome, rank 0's first.
fn on_ranks<M>(n: usize, model: M) -> Vec<Searched<M::Action>>
where
    M: Wire + InPlace + Copy + Send + 'static,
    M::State: Hash + Clone,
    M::Action: Clone + Send,
{
    levels_on(n, model).0
}

/// `model` searched on `n` thread ranks: every rank's outcome, and the depths of rank 0's
/// progress lines.
fn levels_on<M>(n: usize, model: M) -> (Vec<Searched<M::Action>>, Vec<usize>)
where
    M: Wire + InPlace + Copy + Send + 'static,
    M::State: Hash + Clone,
    M::Action: Clone + Send,
{
    let handles = Threads::spawn(n, move |r| {
        let mut depths = Vec::new();
        let disk = Disk { budget: u64::MAX, dir: &std::env::temp_dir() };
        let progress = &mut |p: &Progress| depths.push(p.depth);
        let hooks = Hooks { stop: &|| false, memory: || (0, 0), progress, disk };
        (search(&model, &r, Limits::default(), None, hooks).expect("a search"), depths)
    });
    let (outcomes, depths): (Vec<_>, Vec<_>) = handles.into_iter().map(|h| h.join().unwrap()).unzip();
    assert!(depths[1..].iter().all(Vec::is_empty), "only rank 0 tells the progress");
    (outcomes, depths.into_iter().next().unwrap_or_default())
}

/// A `u32` state's encoding: its 4 bytes.
fn encode_u32(s: &u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&s.to_le_bytes());
}

fn decode_u32(bytes: &[u8]) -> Result<u32, NotAState> {
    Ok(u32::from_le_bytes(bytes.try_into().map_err(|_| NotAState::bytes(format!("{} bytes", bytes.len())))?))
}

#[test]
fn paths_start_at_the_initial_state_they_come_from() {
    for n in [1, 3] {
        let outcomes = on_ranks(n, Counters);
        let first = &outcomes[0];
        // Every property is decided at depth 3: the search ends after it (13, 23 and 33 seen,
        // not judged).
        assert_eq!((first.unique, first.states, first.max_depth), (12, 12, 3), "{n} ranks");
        assert_eq!(first.found.get("never 22"), Some(&(1, vec![1, 1])), "{n} ranks");
        assert_eq!(first.found.get("reaches 32"), Some(&(2, vec![1, 1])), "{n} ranks");
        assert!(outcomes[1..].iter().all(|o| o.found.is_empty() && o.unique == 12));
    }
}

/// Numbers below [`Tree::END`] from 0: `s` steps to `2s + 1`, `2s + 2` and `s + 1` (most
/// states reached more than once, levels of up to tens of thousands of states); 99,999 is
/// "reaches 99,999"'s example.
#[derive(Clone, Copy)]
struct Tree;

impl Tree {
    const END: u32 = 1 << 17;
}

impl Model for Tree {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        actions.extend([2 * s + 1, 2 * s + 2, s + 1].into_iter().filter(|&t| t < Self::END));
    }
    fn next_state(&self, _: &u32, a: u32) -> Option<u32> {
        Some(a)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::sometimes("reaches 99,999", |_, s: &u32| *s == 99_999)]
    }
}

impl InPlace for Tree {}

impl Wire for Tree {
    fn encode(&self, s: &u32, out: &mut Vec<u8>) {
        encode_u32(s, out);
    }
    fn decode(&self, bytes: &[u8]) -> Result<u32, NotAState> {
        decode_u32(bytes)
    }
}

/// Steps of 1 or 2 from 0 up to 60, counting every successor built in `builds`; its steps
/// are said pure if `PURE`, and nothing is said (the default) if not.
#[derive(Clone, Copy)]
struct Steps<const PURE: bool> {
    builds: &'static std::sync::atomic::AtomicUsize,
}

impl<const PURE: bool> Model for Steps<PURE> {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        if *s < 60 {
            actions.extend([1, 2]);
        }
    }
    fn next_state(&self, s: &u32, a: u32) -> Option<u32> {
        self.builds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Some(s + a)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("below 62", |_, s: &u32| *s < 62)]
    }
}

impl InPlace for Steps<false> {}

impl InPlace for Steps<true> {
    fn pure_steps(&self) -> bool {
        true
    }
}

impl<const PURE: bool> Wire for Steps<PURE> {
    fn encode(&self, s: &u32, out: &mut Vec<u8>) {
        encode_u32(s, out);
    }
    fn decode(&self, bytes: &[u8]) -> Result<u32, NotAState> {
        decode_u32(bytes)
    }
}

#[test]
fn a_successor_is_built_again_only_where_steps_are_said_pure() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static KEPT: AtomicUsize = AtomicUsize::new(0);
    static AGAIN: AtomicUsize = AtomicUsize::new(0);
    let kept = &on_ranks(3, Steps::<false> { builds: &KEPT })[0];
    let again = &on_ranks(3, Steps::<true> { builds: &AGAIN })[0];
    for o in [kept, again] {
        assert_eq!((o.unique, o.states), (62, 1 + 2 * 60));
    }
    let generated = kept.states - 1;
    // Nothing said: each successor built once, and kept until its answer.
    assert_eq!(KEPT.load(Ordering::Relaxed), generated);
    // Said pure: the successors told new by another owner built again.
    let built = AGAIN.load(Ordering::Relaxed);
    assert!(built > generated && built < generated + again.unique, "{built} built, {generated} generated");
}

thread_local! {
    /// Looks at the memory so far on this thread: the memory a test's rank "has".
    static LOOKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Memory that grows by one byte a look.
fn growing() -> (u64, u64) {
    let r = LOOKS.with(|c| c.replace(c.get() + 1));
    (r, r)
}

/// [`Tree`] searched on `n` ranks that write the levels to disk from look `budget` on, and
/// rank 0's looks.
fn tree_on(n: usize, budget: u64) -> (Searched<u32>, u64) {
    let handles = Threads::spawn(n, move |r| {
        LOOKS.with(|c| c.set(0));
        let disk = Disk { budget, dir: &std::env::temp_dir() };
        let hooks = Hooks { stop: &|| false, memory: growing, progress: &mut |_| {}, disk };
        let o = search(&Tree, &r, Limits::default(), None, hooks).expect("a search");
        (o, LOOKS.with(|c| c.get()))
    });
    let mut outcomes: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    outcomes.swap_remove(0)
}

#[test]
fn levels_on_disk_search_the_same_states() {
    let (whole, _) = tree_on(1, u64::MAX);
    assert_eq!(whole.unique, Tree::END as usize);
    assert_eq!(whole.traffic.spilled_states, 0);
    let path = whole.found.get("reaches 99,999").expect("an example").clone();
    for n in [1, 3] {
        // Never on disk, always, and from the middle look on (the level then partly in
        // memory, partly on disk).
        let half = tree_on(n, u64::MAX).1 / 2;
        for budget in [u64::MAX, 0, half] {
            let (o, _) = tree_on(n, budget);
            let at = format!("{n} ranks, budget {budget}");
            assert_eq!((o.unique, o.states, o.max_depth), (whole.unique, whole.states, whole.max_depth), "{at}");
            assert_eq!(o.found.get("reaches 99,999").map(|p| p.1.len()), Some(path.1.len()), "{at}");
            let spilled = o.traffic.spilled_states;
            match budget {
                0 => assert_eq!(spilled, o.unique as u64 - 1, "{at}: every state but the initial one"),
                u64::MAX => assert_eq!(spilled, 0, "{at}"),
                _ => assert!(spilled > 1000 && spilled < o.unique as u64 - 1000, "{at}: {spilled}"),
            }
            assert_eq!(o.traffic.spilled_bytes, spilled * 16, "{at}: key, length and 4 bytes each");
            assert_eq!(o.traffic.rank_memory, budget, "{at}");
        }
    }
}

#[test]
fn moves_even_out_a_level() {
    // One rank with everything: the others brought up to the mean rounded up (4), in order.
    assert_eq!(even_out(&[10, 0, 0], u64::MAX), vec![(0, 1, 4), (0, 2, 2)]);
    // Within the mean rounded up: nothing moves.
    assert_eq!(even_out(&[4, 3, 3], u64::MAX), vec![]);
    assert_eq!(even_out(&[3, 4, 3], u64::MAX), vec![]);
    assert_eq!(even_out(&[0, 0], u64::MAX), vec![]);
    // A rank at the mean takes nothing.
    assert_eq!(even_out(&[6, 2, 0, 0], u64::MAX), vec![(0, 2, 2), (0, 3, 2)]);
    // Two givers, one taker; a giver's excess split over two takers.
    assert_eq!(even_out(&[7, 7, 1], u64::MAX), vec![(0, 2, 2), (1, 2, 2)]);
    assert_eq!(even_out(&[1, 9, 2, 0], u64::MAX), vec![(1, 0, 2), (1, 2, 1), (1, 3, 3)]);
    // At most `cap` into a rank: the rest stays where it is.
    assert_eq!(even_out(&[10, 0, 0], 3), vec![(0, 1, 3), (0, 2, 3)]);
    for counts in [[100, 3, 0, 57, 1], [0, 0, 0, 0, 9], [5, 5, 5, 5, 6], [1, 2, 3, 4, 5]] {
        let even = counts.iter().sum::<u64>().div_ceil(5);
        let mut after = counts;
        for (from, to, k) in even_out(&counts, u64::MAX) {
            assert!(k > 0 && counts[from] > even && counts[to] < even, "{counts:?}");
            after[from] -= k;
            after[to] += k;
        }
        assert!(after.iter().all(|&c| c <= even), "{counts:?} -> {after:?}");
    }
}

#[test]
fn every_rank_expands_its_share_of_each_level() {
    // One initial state: without the moves its rank would expand every state.
    for n in [2, 3, 5] {
        let (o, _) = tree_on(n, u64::MAX);
        assert_eq!(o.unique, Tree::END as usize, "{n} ranks");
        // Each level within its mean rounded up: at most one state more per level.
        let (mean, largest) = (o.unique as u64 / n as u64, o.traffic.largest_expanded);
        assert!((mean..=mean + o.max_depth as u64 + 1).contains(&largest), "{n} ranks: {largest}");
        // Few states move: most stay with the rank that made them.
        let sent = o.traffic.states_sent;
        assert!(sent > 0 && sent * 10 < o.unique as u64, "{n} ranks: {sent} states moved");
        assert_eq!(o.traffic.fingerprints_sent * 17 + sent * 16, o.traffic.bytes_sent, "{n} ranks");
        // A message of asks for each of at most a BATCH (and a state's successors) of them,
        // and one of answers for each.
        let (messages, asked) = (o.traffic.messages_sent, o.traffic.fingerprints_sent);
        assert!(messages % 2 == 0 && asked <= messages / 2 * (BATCH as u64 + 3), "{n} ranks: {messages}");
        assert!(messages / 2 > asked / BATCH as u64, "{n} ranks: {messages}");
        // A rank asks about a fingerprint once while it remembers having asked: many of
        // Tree's repeats are made by one rank.
        let (asked, cached) = (o.traffic.fingerprints_sent, o.traffic.fingerprints_cached);
        assert!(cached > asked / 10 && asked + cached < o.states as u64, "{n} ranks: {asked} sent, {cached} not");
    }
}

#[test]
fn a_rank_remembers_its_latest_ask_in_each_slot() {
    let mut recent = Asked::new();
    assert!(recent.first(7) && !recent.first(7) && !recent.first(7));
    // Another key in 7's slot replaces it; a key in another slot does not.
    assert!(recent.first(7 + ASKED as u64) && recent.first(8) && !recent.first(7 + ASKED as u64));
    assert!(recent.first(7) && !recent.first(8));
}

/// 0 steps to each of 1 to `self.0`, which step nowhere, or with `self.1` each to
/// `self.0 + 1`: the owner of 0 makes the whole second level.
#[derive(Clone, Copy)]
struct Star(u32, bool);

impl Model for Star {
    type State = u32;
    type Action = u32;
    fn init_states(&self) -> Vec<u32> {
        vec![0]
    }
    fn actions(&self, s: &u32, actions: &mut Vec<u32>) {
        match *s {
            0 => actions.extend(1..=self.0),
            s if s <= self.0 && self.1 => actions.push(self.0 + 1),
            _ => {}
        }
    }
    fn next_state(&self, _: &u32, a: u32) -> Option<u32> {
        Some(a)
    }
}

impl InPlace for Star {}

impl Wire for Star {
    fn encode(&self, s: &u32, out: &mut Vec<u8>) {
        encode_u32(s, out);
    }
    fn decode(&self, bytes: &[u8]) -> Result<u32, NotAState> {
        decode_u32(bytes)
    }
}

/// [`Star`] of `leaves` on 3 ranks: states moved, the most one rank expanded.
fn star_on_three(leaves: u32) -> (u64, u64) {
    let o = on_ranks(3, Star(leaves, false)).swap_remove(0);
    assert_eq!((o.unique, o.max_depth), (leaves as usize + 1, 2));
    (o.traffic.states_sent, o.traffic.largest_expanded)
}

#[test]
fn a_level_made_on_one_rank_is_shared_over_several_exchanges_up_to_the_cap() {
    // 20,000 leaves on one rank: 6,667 stay, 13,333 move (more than one exchange's CHUNK); that
    // rank expanded the initial state too.
    assert_eq!(star_on_three(20_000), (13_333, 6_668));
    // 300,000: each other rank may take 100,000 but the cap lets in 65,536.
    assert_eq!(MOVE_CAP, 16 * CHUNK as u64, "about 8 MB of states at most");
    assert_eq!(star_on_three(300_000), (2 * MOVE_CAP, 300_001 - 2 * MOVE_CAP));
}

#[test]
fn a_rank_asks_about_a_state_it_reaches_many_times_once() {
    // 0's owner makes the middle level's 3,000 states and asks about those owned elsewhere;
    // the level evened out, each rank expands 1,000, every one stepping to 3,001: each rank
    // that does not own 3,001 asks about it once, not again the other 999 times.
    let o = on_ranks(3, Star(3_000, true)).swap_remove(0);
    assert_eq!((o.unique, o.states, o.max_depth), (3_002, 6_001, 3));
    let owner_of = |s: u32| owner(key(fingerprint_of(&s, None)), 3);
    let (maker, top) = (owner_of(0), owner_of(3_001));
    let middle = (1..=3_000).filter(|&s| owner_of(s) != maker).count() as u64;
    assert_eq!((o.traffic.fingerprints_sent, o.traffic.fingerprints_cached), (middle + 2, 2 * 999));
    // 3,001 is expanded by its owner, which settles it first (before any ask arrives).
    assert_eq!(o.traffic.largest_expanded, 1_001 + u64::from(top == maker));
}

#[test]
fn rank_0_tells_the_progress_after_each_level() {
    for n in [1, 3, 16] {
        let (outcomes, depths) = levels_on(n, Tree);
        let o = &outcomes[0];
        assert_eq!(o.unique, Tree::END as usize, "{n} ranks");
        assert_eq!(depths, (1..=o.max_depth).collect::<Vec<_>>(), "{n} ranks");
    }
}

#[test]
fn a_slice_of_parents_is_kept_until_every_ask_about_its_successors_is_answered() {
    let mut f: Flight<Tree> = Flight::new(3, false);
    // Slices 0 and 1: the first waits for two answers, the second for none.
    f.held.push_back((vec![(1, 11), (2, 12)], 2));
    f.held.push_back((vec![(3, 13)], 0));
    f.held_states = 3;
    f.release();
    assert_eq!((f.base, f.held.len(), f.held_states), (0, 2, 3), "the first slice waits");
    f.held[0].1 = 0;
    f.release();
    assert_eq!((f.base, f.held.len(), f.held_states), (2, 0, 0), "both freed, in order");
    assert!(f.spare.len() == 2 && f.spare.iter().all(Vec::is_empty), "their buffers kept, emptied");
}

#[test]
fn owners_cover_every_rank_evenly() {
    let n = 7;
    let mut counts = [0usize; 7];
    for i in 0..70_000u64 {
        counts[owner(fingerprint(&i), n)] += 1;
    }
    assert!(counts.iter().all(|&c| (9_000..11_000).contains(&c)), "{counts:?}");
    assert_eq!(owner(u64::MAX, n), n - 1);
    assert_eq!(owner(0, n), 0);
}

#[test]
fn the_seen_set_keeps_parents_across_growth() {
    let mut t = Parents::new();
    for k in 1..200_000u64 {
        assert!(t.insert(fingerprint(&k).max(1), k));
    }
    assert!(!t.insert(fingerprint(&5u64).max(1), 0));
    for k in (1..200_000u64).step_by(997) {
        assert_eq!(t.get(fingerprint(&k).max(1)), Some(k));
    }
    assert_eq!(t.get(12345), None);
    assert_eq!(t.len, 199_999);
}

#[test]
fn the_seen_set_doubles_past_three_quarters_full() {
    let mut t = Parents::new();
    let mut k = 0u64;
    let mut fill = |t: &mut Parents, to: usize| {
        while t.len < to {
            k += 1;
            t.insert(fingerprint(&k).max(1), k);
        }
    };
    fill(&mut t, 3 << 14);
    assert_eq!(t.slots.len(), 1 << 16, "at three quarters exactly: not yet");
    fill(&mut t, (3 << 14) + 1);
    assert_eq!(t.slots.len(), 1 << 17, "one more: doubled");
}

#[test]
fn a_count_of_ranks_is_said_in_words() {
    assert_eq!(ranks_named(1), "1 rank");
    assert_eq!(ranks_named(3), "3 ranks");
}
