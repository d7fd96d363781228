//! Partial-order reduction (`--por`) is sound, shown rather than assumed:
//!
//! 1. the declared independence relation is checked semantically on random reachable states:
//!    two enabled actions it calls independent are each enabled after the other and lead to
//!    equal states (ghost data included) in either order;
//! 2. each chosen set is persistent: on small configurations, every path of actions outside the
//!    set (to a bounded depth) consists of actions independent of every action of the set;
//! 3. verdicts with and without `--por` are equal, on every fault variant and on the tested
//!    configurations, and every counterexample found with `--por` replays on the unreduced
//!    model (stateright's `Path::from_actions`) and fails its property there;
//! 4. the reduced graph reaches exactly the terminal (and the quiescent) states of the full one;
//! 5. the graph is acyclic: every step decreases the bank's measure.

mod common;

use std::collections::{HashMap, HashSet, VecDeque};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::Variant;
use common::{config, run_app, verdicts};
use model::reduce::por::{persistent_set, Analysis};
use model::system::action::Act;
use model::system::state::State;
use model::{Config, InitiatorSpec, Mode, SnapshotModel, Strategy, TopologySpec};
use stateright::{Checker, Expectation, Model, Path};

fn model_of<A: Spec>(c: &Config, por: bool) -> SnapshotModel<A> {
    SnapshotModel::new(Config { por, ..c.clone() }.resolve().expect("valid configuration"))
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }
}

fn step<A: Spec>(m: &SnapshotModel<A>, s: &State<A>, a: Act<A>) -> State<A> {
    m.next_state(s, a).expect("an enabled action has a successor")
}

/// Checks that `a` and `b`, both enabled in `s`, commute: each is enabled after the other (or
/// both refuse alike) and both orders reach equal states.
fn commute<A: Spec>(m: &SnapshotModel<A>, s: &State<A>, a: Act<A>, b: Act<A>, what: &str) {
    let (sa, sb) = (step(m, s, a), step(m, s, b));
    let (ra, rb) = (sa.refused.is_some(), sb.refused.is_some());
    if ra || rb {
        // A refused step is a dead end: independent steps must leave each other's refusal alone.
        assert_eq!(ra, step(m, &sb, a).refused.is_some(), "{what}: {a:?} refused differently after {b:?}");
        assert_eq!(rb, step(m, &sa, b).refused.is_some(), "{what}: {b:?} refused differently after {a:?}");
        return;
    }
    assert!(m.enabled(&sa).contains(&b), "{what}: {a:?} disables {b:?} in {s:#?}");
    assert!(m.enabled(&sb).contains(&a), "{what}: {b:?} disables {a:?} in {s:#?}");
    let (sab, sba) = (step(m, &sa, b), step(m, &sb, a));
    assert!(sab == sba, "{what}: {a:?} and {b:?} do not commute in {s:#?}:\n{sab:#?}\n!=\n{sba:#?}");
}

/// Walks `walks` random paths of the unreduced model of `c` and, in every state on the way,
/// checks every pair of enabled actions the relation declares independent. Returns how many
/// pairs were checked.
fn independence<A: Spec>(c: &Config, walks: usize, seed: u64) -> usize {
    let m = model_of::<A>(c, true);
    let mut rng = Rng(seed | 1);
    let mut checked = 0;
    for _ in 0..walks {
        let mut s = m.init_states().remove(0);
        loop {
            let enabled = m.enabled(&s);
            if enabled.is_empty() {
                break;
            }
            let analysis = Analysis::new(&m, &s, &enabled);
            for (i, &a) in enabled.iter().enumerate() {
                for &b in &enabled[i + 1..] {
                    if !analysis.dependent(&a, &b) {
                        commute(&m, &s, a, b, "declared independent");
                        checked += 1;
                    }
                }
            }
            s = step(&m, &s, enabled[rng.below(enabled.len())]);
        }
    }
    checked
}

fn bank_k(sends: u8) -> Config {
    config(3, TopologySpec::Complete, sends, 1, InitiatorSpec::Only(vec![0]))
}

#[test]
fn declared_independent_actions_commute_on_random_reachable_states() {
    let k2 = bank_k(2);
    let cases: Vec<(&str, Config)> = vec![
        ("bank full K=2", k2.clone()),
        ("bank full K=2, 2 snapshots", Config { snapshots: 2, ..k2.clone() }),
        ("bank full K=2, theft", Config { theft: true, ..k2.clone() }),
        (
            "bank full K=2, internal, any initiator",
            Config { internal: true, initiators: InitiatorSpec::Any, ..k2.clone() },
        ),
        ("bank basic K=2", Config { mode: Mode::Basic, ..k2.clone() }),
        ("bank full K=2, ring of 4", config(4, TopologySpec::Ring, 2, 1, InitiatorSpec::Only(vec![0]))),
    ];
    // The fault variants the reduction applies to (the others keep the full graph).
    let mut cases = cases;
    for variant in [
        Variant::NoChannelRecording,
        Variant::RecordsReversed,
        Variant::RecordTwice,
        Variant::SkipOneMarker,
        Variant::NoMarkerForwarding,
        Variant::LoseMarkers,
        Variant::NonFifo,
    ] {
        cases.push((variant.name(), Config { variant, ..k2.clone() }));
    }
    for (name, c) in cases {
        let pairs = independence::<Bank>(&c, 300, 7);
        assert!(pairs > 1000, "{name}: only {pairs} independent pairs checked");
    }
    let ring = Config { tokens: Some(1), ..config(3, TopologySpec::Ring, 2, 1, InitiatorSpec::Only(vec![0])) };
    assert!(independence::<Orders>(&ring, 300, 11) > 0);
}

/// Every state the reduced search reaches from `c`'s initial state, with its persistent set.
fn reduced_graph<A: Spec>(m: &SnapshotModel<A>) -> Vec<(State<A>, Vec<Act<A>>)> {
    let mut seen = HashSet::new();
    let mut queue: VecDeque<State<A>> = m.init_states().into();
    let mut out = Vec::new();
    while let Some(s) = queue.pop_front() {
        if !seen.insert(s.clone()) {
            continue;
        }
        let set = persistent_set(m, &s);
        for &a in &set {
            queue.push_back(step(m, &s, a));
        }
        out.push((s, set));
    }
    out
}

/// From `t`, every path of at most `depth` actions outside `set` takes only actions independent
/// (semantically) of every action of `set`, which stays enabled.
fn outside_paths<A: Spec>(
    m: &SnapshotModel<A>,
    t: &State<A>,
    set: &[Act<A>],
    depth: usize,
    seen: &mut HashSet<State<A>>,
) -> usize {
    if depth == 0 || !seen.insert(t.clone()) {
        return 0;
    }
    let enabled = m.enabled(t);
    let mut checked = 0;
    for &a in set {
        assert!(enabled.contains(&a), "{a:?} of the persistent set disabled by steps outside it, in {t:#?}");
    }
    for &b in enabled.iter().filter(|b| !set.contains(b)) {
        for &a in set {
            commute(m, t, a, b, "outside the persistent set");
            checked += 1;
        }
        let next = step(m, t, b);
        if next.refused.is_none() {
            checked += outside_paths(m, &next, set, depth - 1, seen);
        }
    }
    checked
}

fn persistence<A: Spec>(c: &Config, depth: usize) -> usize {
    let m = model_of::<A>(c, true);
    let mut checked = 0;
    let mut reduced = 0;
    for (s, set) in reduced_graph(&m) {
        let enabled = m.enabled(&s);
        assert!(set.iter().all(|a| enabled.contains(a)));
        assert_eq!(set.is_empty(), enabled.is_empty());
        // An action other than an initiation whenever there is one (quiescent states).
        if enabled.iter().any(|a| !matches!(a, model::Action::Initiate { .. })) {
            assert!(set.iter().any(|a| !matches!(a, model::Action::Initiate { .. })), "{s:#?}");
        }
        if set.len() < enabled.len() {
            reduced += 1;
        }
        checked += outside_paths(&m, &s, &set, depth, &mut HashSet::new());
    }
    assert!(reduced > 0, "nothing was reduced");
    eprintln!("{checked} pairs checked, {reduced} states reduced");
    checked
}

#[test]
fn chosen_sets_are_persistent_on_small_configurations() {
    assert!(persistence::<Bank>(&bank_k(1), 4) > 1000);
    let two = config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0]));
    assert!(persistence::<Bank>(&two, 6) > 100);
    assert!(persistence::<Bank>(&Config { theft: true, ..two.clone() }, 5) > 100);
    assert!(persistence::<Bank>(&Config { mode: Mode::Basic, ..bank_k(1) }, 4) > 1000);
    assert!(persistence::<Bank>(&Config { snapshots: 2, ..two.clone() }, 4) > 100);
    let ring = Config { tokens: Some(1), ..config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0])) };
    assert!(persistence::<Orders>(&ring, 4) > 0);
    for variant in [Variant::RecordsReversed, Variant::SkipOneMarker, Variant::LoseMarkers, Variant::NonFifo] {
        assert!(persistence::<Bank>(&Config { variant, ..two.clone() }, 4) > 100, "{variant}");
    }
}

/// The bank's measure (README, "Partial-order reduction"): three per unit of budget, two per
/// message and one per marker in transit, and `2·out(p) + 1` per snapshot a process has not recorded.
fn measure(m: &SnapshotModel<Bank>, s: &State<Bank>) -> u64 {
    let t = m.topology();
    let budget: u64 = s.budget.iter().map(|&b| 3 * u64::from(b)).sum();
    let transit: u64 = (0..t.channels().len()).map(|c| (s.chans.get(c).len() + s.messages(c)) as u64).sum();
    let unrecorded: u64 = t
        .processes()
        .map(|p| {
            let open = m.snapshot_ids().filter(|&x| !s.procs[p.index()].has_recorded(x)).count() as u64;
            open * (2 * t.outgoing(p).len() as u64 + 1)
        })
        .sum();
    budget + transit + unrecorded
}

#[test]
fn every_step_decreases_the_measure() {
    let two = config(2, TopologySpec::Complete, 2, 2, InitiatorSpec::Any);
    let mut cases = vec![bank_k(1), Config { theft: true, internal: true, ..bank_k(1) }, two];
    // Every variant but send-before-marker, whose held markers the state does not show.
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport).filter(|&v| v != Variant::SendBeforeMarker) {
        cases.push(Config { variant, ..bank_k(1) });
    }
    for c in cases {
        let m = model_of::<Bank>(&c, false);
        let mut seen = HashSet::new();
        let mut queue: VecDeque<State<Bank>> = m.init_states().into();
        while let Some(s) = queue.pop_front() {
            if !seen.insert(s.clone()) {
                continue;
            }
            for a in m.enabled(&s) {
                let next = step(&m, &s, a);
                if next.refused.is_some() {
                    continue; // a dead end
                }
                assert!(measure(&m, &next) < measure(&m, &s), "{:?}: {a:?} does not decrease the measure", c.variant);
                queue.push_back(next);
            }
        }
    }
}

/// The terminal and the quiescent states reachable in `m`'s graph.
fn ends<A: Spec>(m: &SnapshotModel<A>) -> (usize, HashSet<State<A>>, HashSet<State<A>>) {
    let mut seen = HashSet::new();
    let mut queue: VecDeque<State<A>> = m.init_states().into();
    let (mut terminal, mut quiescent) = (HashSet::new(), HashSet::new());
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        if seen.contains(&s) {
            continue;
        }
        actions.clear();
        m.actions(&s, &mut actions);
        if actions.is_empty() {
            terminal.insert(s.clone());
        }
        if m.is_quiescent(&s) {
            quiescent.insert(s.clone());
        }
        for &a in &actions {
            queue.push_back(step(m, &s, a));
        }
        seen.insert(s);
    }
    (seen.len(), terminal, quiescent)
}

fn same_ends<A: Spec>(name: &str, c: &Config) {
    let (full, terminal, quiescent) = ends(&model_of::<A>(c, false));
    let (reduced, terminal_por, quiescent_por) = ends(&model_of::<A>(c, true));
    assert!(reduced < full, "{name}: {reduced} states with --por, {full} without");
    assert!(!terminal.is_empty(), "{name}");
    assert!(terminal == terminal_por, "{name}: terminal states differ ({} vs {})", terminal.len(), terminal_por.len());
    assert!(quiescent == quiescent_por, "{name}: quiescent states differ");
}

#[test]
fn the_reduced_graph_reaches_every_terminal_and_quiescent_state() {
    same_ends::<Bank>("bank full K=1", &bank_k(1));
    same_ends::<Bank>("bank basic K=1", &Config { mode: Mode::Basic, ..bank_k(1) });
    same_ends::<Bank>("bank full K=1, theft", &Config { theft: true, ..bank_k(1) });
    same_ends::<Bank>("bank full K=1, internal", &Config { internal: true, ..bank_k(1) });
    let two = config(2, TopologySpec::Complete, 2, 2, InitiatorSpec::Any);
    same_ends::<Bank>("bank full 2 houses K=2, 2 snapshots, any initiator", &two);
    let ring = config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0]));
    same_ends::<Orders>("orders ring K=1", &ring);
}

/// Checks `c` with and without `--por` (BFS, one thread) and compares the verdicts; returns
/// the state counts.
fn same_verdicts<A: Spec>(name: &str, c: &Config) -> (usize, usize) {
    let without = run_app::<A>(&Config { por: false, ..c.clone() }, Strategy::Bfs);
    let with = run_app::<A>(&Config { por: true, ..c.clone() }, Strategy::Bfs);
    assert_eq!(verdicts(&with), verdicts(&without), "{name}");
    assert_eq!(with.exit_code, without.exit_code, "{name}");
    assert!(with.unique_states <= without.unique_states, "{name}");
    (without.unique_states, with.unique_states)
}

#[test]
fn verdicts_are_the_same_with_and_without_por() {
    let k1 = bank_k(1);
    let (full, reduced) = same_verdicts::<Bank>("bank full K=1", &k1);
    assert_eq!((full, reduced), (21_752, 6_419));
    same_verdicts::<Bank>("bank basic K=1", &Config { mode: Mode::Basic, ..k1.clone() });
    same_verdicts::<Bank>("bank basic K=2", &Config { mode: Mode::Basic, ..bank_k(2) });
    let (full, reduced) = same_verdicts::<Bank>("bank full K=2", &bank_k(2));
    assert_eq!((full, reduced), (3_270_737, 454_795));
    same_verdicts::<Bank>("theft", &Config { theft: true, ..k1.clone() });
    same_verdicts::<Bank>("internal", &Config { internal: true, ..k1.clone() });
    same_verdicts::<Bank>("2 snapshots", &Config { snapshots: 2, ..k1.clone() });
    same_verdicts::<Bank>("initiators any", &Config { initiators: InitiatorSpec::Any, ..k1.clone() });
    same_verdicts::<Bank>("no sends", &Config { sends: 0, ..k1.clone() });
    let ring = config(3, TopologySpec::Ring, 2, 1, InitiatorSpec::Only(vec![0]));
    let (full, _) = same_verdicts::<Orders>("orders ring", &ring);
    assert_eq!(full, 379_902);
    let stale =
        Config { variant: Variant::StaleState, ..config(3, TopologySpec::Ring, 1, 1, InitiatorSpec::Only(vec![0])) };
    same_verdicts::<Orders>("orders ring stale-state", &stale);
}

/// The discoveries of a BFS check of `m` on one thread.
fn discoveries<A: Spec>(m: SnapshotModel<A>) -> HashMap<&'static str, Path<State<A>, Act<A>>> {
    m.checker().threads(1).spawn_bfs().join().discoveries()
}

/// Replays every discovery of a BFS check of `c` with `--por` on the unreduced model: each path
/// is one of its paths, ending in a state that the unreduced model's property judges alike (a
/// counterexample fails there, an example holds there). Returns the properties discovered.
fn replay_discoveries<A: Spec>(c: &Config, what: &str) -> Vec<&'static str> {
    let unreduced = model_of::<A>(c, false);
    let mut names = Vec::new();
    for (name, path) in discoveries(model_of::<A>(c, true)) {
        let init = path.clone().into_vec()[0].0.clone();
        let last = path.last_state().clone();
        let actions = path.into_actions();
        let replayed = Path::from_actions(&unreduced, init, actions.iter())
            .unwrap_or_else(|| panic!("{what}: the path of {name} does not replay without --por"));
        assert!(*replayed.last_state() == last, "{what}: {name} replays to another state");
        // A fresh model (fresh latches) judges the last state.
        let fresh = model_of::<A>(c, false);
        let p = fresh.properties().into_iter().find(|p| p.name == name).unwrap();
        let holds = (p.condition)(&fresh, &last);
        match p.expectation {
            Expectation::Sometimes => assert!(holds, "{what}: {name} is no example without --por"),
            _ => assert!(!holds, "{what}: {name} is no counterexample without --por"),
        }
        names.push(name);
    }
    names.sort_unstable();
    names
}

#[test]
fn every_variant_fails_alike_with_por_and_its_counterexamples_replay_without() {
    for variant in Variant::of(chandy_lamport::Algorithm::ChandyLamport).filter(|v| *v != Variant::None) {
        // Two processes suffice for the variants that need two messages on a road or two snapshots.
        let c = match variant {
            Variant::RecordsReversed => config(2, TopologySpec::Complete, 2, 1, InitiatorSpec::Only(vec![0])),
            Variant::SwapRecord => config(2, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0])),
            _ => bank_k(1),
        };
        let c = Config { variant, ..c };
        let with = replay_discoveries::<Bank>(&c, variant.name());
        // Where the reduction applies, it reduces.
        let (full, terminal, quiescent) = ends(&model_of::<Bank>(&c, false));
        let (reduced, terminal_por, quiescent_por) = ends(&model_of::<Bank>(&c, true));
        assert!(terminal == terminal_por && quiescent == quiescent_por, "{variant}: other terminal states");
        let reducible = !matches!(
            variant,
            Variant::SendBeforeMarker
                | Variant::CloseAllOnFirstMarker
                | Variant::KeepRecordingAfterMarker
                | Variant::LateRecord
                | Variant::StaleState
                | Variant::SwapRecord
                | Variant::DoubleMarker
        );
        assert_eq!(reduced < full, reducible, "{variant}: {reduced} states with --por, {full} without");
        // Both searches are exhaustive: the same properties have a discovery.
        let mut without: Vec<&str> = discoveries(model_of::<Bank>(&c, false)).into_keys().collect();
        without.sort_unstable();
        assert_eq!(with, without, "{variant}");
        let always =
            model_of::<Bank>(&c, false).properties().into_iter().filter(|p| p.expectation == Expectation::Always);
        assert!(always.map(|p| p.name).any(|n| with.contains(&n)), "{variant}: no counterexample");
    }
}

#[test]
fn examples_found_with_por_replay_without() {
    assert_eq!(replay_discoveries::<Bank>(&bank_k(2), "bank K=2"), ["a channel record holds a message"]);
    let two = Config { snapshots: 2, ..bank_k(1) };
    assert_eq!(replay_discoveries::<Bank>(&two, "2 snapshots").len(), 2);
    let ring = config(3, TopologySpec::Ring, 2, 1, InitiatorSpec::Only(vec![0]));
    assert_eq!(replay_discoveries::<Orders>(&ring, "orders ring").len(), 3);
}
