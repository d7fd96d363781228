//! The search's fast path (`engine::InPlace`): a step taken in the state itself must give the
//! digest of the successor `next_state` builds, and leave the state exactly as it was — on every reachable state and action of small configurations of
//! every mode, algorithm, variant and application.

mod common;

use std::collections::HashSet;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{Algorithm, Variant};
use common::config;
use model::engine::{InPlace, Probe};
use model::system::state::State;
use model::{Config, InitiatorSpec, Mode, SnapshotModel, TopologySpec};
use stateright::Model;

/// Per configuration: states visited; steps taken in place; steps left to be built; whether
/// its steps counted tallies.
fn walk<A: Spec>(cfg: &Config, limit: usize) -> (usize, usize, usize, bool) {
    let m = SnapshotModel::<A>::new(cfg.resolve().expect("valid configuration"));
    let mut seen = HashSet::new();
    let mut stack: Vec<State<A>> = m.init_states();
    let (mut states, mut in_place, mut built) = (0, 0, 0);
    let mut actions = Vec::new();
    while let Some(mut s) = stack.pop() {
        if states == limit || !seen.insert(s.clone()) {
            continue;
        }
        states += 1;
        let original = s.clone();
        let addrs: Vec<_> = s.procs.iter().map(|p| p.addr()).collect();
        let digest = m.digest(&s);
        assert_eq!(digest.is_some(), s.ckpt.is_none() && s.history.is_none() && s.ghost.is_none(), "{cfg:?}");
        if let Some(d) = digest {
            assert_eq!(d, s.digest(), "the digest is the state's");
        }
        // The fingerprint the search stores is the digest's.
        assert_eq!(model::engine::seen::fingerprint(&s), model::engine::seen::fingerprint(&s.digest()));
        m.actions(&s, &mut actions);
        // All of a state's steps probed in one call (as the search does) say what each says alone.
        let mut all = Vec::new();
        if let Some(d) = digest {
            m.probe_all(&mut s, d, &actions, &mut all);
            assert_eq!(all.len(), actions.len());
            assert!(s == original, "{cfg:?}: the state was not put back after its steps");
        }
        for (k, a) in actions.drain(..).enumerate() {
            let next = m.next_state(&s, a);
            if m.pure_steps() {
                // Built again (as the distributed search may): the same successor, nothing counted.
                let counted = m.tallies();
                assert!(m.next_state(&s, a) == next && m.tallies() == counted, "{cfg:?} {a:?}: not pure");
            }
            let alone = digest.map(|d| m.probe(&mut s, d, &a));
            if let Some(alone) = &alone {
                assert_eq!(said(alone), said(&all[k]), "{cfg:?} {a:?}: probed with the others");
            }
            match alone {
                Some(Probe::Digest(digest)) => {
                    in_place += 1;
                    let built = next.as_ref().expect("a step taken in place is a step");
                    assert_eq!(digest, built.digest(), "{cfg:?} {a:?}: the successor's digest");
                }
                Some(Probe::NotAStep) => assert!(next.is_none(), "{cfg:?} {a:?}: a step, said not"),
                Some(Probe::Build) => {
                    // A state the search probes builds only a step the core refuses.
                    assert!(next.as_ref().is_some_and(|n| n.refused.is_some()), "{cfg:?} {a:?}: built, not probed");
                    built += 1;
                }
                None => built += 1,
            }
            assert!(s == original, "{cfg:?} {a:?}: the state was not put back");
            assert!(s.procs.iter().map(|p| p.addr()).eq(addrs.iter().copied()), "{cfg:?} {a:?}: houses replaced");
            if let Some(next) = next {
                stack.push(next);
            }
        }
    }
    // Steps that count tallies are not pure; Chandy–Lamport's are.
    let counted = m.tallies() != Default::default();
    assert!(!(counted && m.pure_steps()), "{cfg:?}: its steps count tallies");
    assert_eq!(m.pure_steps(), !cfg.algorithm.coordinated(), "{cfg:?}");
    (states, in_place, built, counted)
}

/// What a probe said, comparable.
fn said(p: &Probe) -> Option<Option<u64>> {
    match p {
        Probe::Digest(d) => Some(Some(*d)),
        Probe::NotAStep => Some(None),
        Probe::Build => None,
    }
}

fn small(mode: Mode, variant: Variant, algorithm: Algorithm) -> Config {
    let mut cfg = config(3, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0, 1]));
    cfg.mode = mode;
    cfg.variant = variant;
    cfg.algorithm = algorithm;
    cfg.theft = true;
    cfg
}

#[test]
fn a_step_in_place_is_the_built_step_and_is_undone_exactly() {
    let (mut configs, mut in_place, mut built, mut counting) = (0, 0, 0, 0);
    for mode in [Mode::Basic, Mode::Full, Mode::Literal] {
        for variant in Variant::ALL {
            for algorithm in [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned] {
                let cfg = small(mode, variant, algorithm);
                if cfg.resolve().is_err() {
                    continue;
                }
                let (s, i, b, counted) = walk::<Bank>(&cfg, 1500);
                assert!(s > 1, "{cfg:?}");
                configs += 1;
                counting += usize::from(counted);
                in_place += i;
                built += b;
            }
        }
    }
    let (_, i, _, _) = walk::<Orders>(&small(Mode::Basic, Variant::None, Algorithm::ChandyLamport), 3000);
    assert!(i > 0);
    assert!(configs >= 60, "only {configs} configurations resolved");
    // Chandy–Lamport in basic mode steps in place; full mode (ghost data), literal mode and the
    // coordinator's algorithms build every successor.
    assert!(in_place > 50_000 && built > 50_000, "{in_place} in place, {built} built");
    // Some configurations' steps counted tallies (checkpoints stored): those are not pure.
    assert!(counting > 0, "no configuration counted tallies");
}

#[test]
fn the_stream_job_s_steps_in_place_too() {
    let cfg = Config { internal: true, ..small(Mode::Basic, Variant::None, Algorithm::ChandyLamport) };
    let (_, i, _, _) = walk::<chandy_lamport::apps::stream::Stream>(&cfg, 3000);
    assert!(i > 1000, "{i} steps in place");
}

#[test]
fn models_on_one_thread_keep_their_own_remembered_steps() {
    // Process 0 starts the same in both, and initiating sends a marker on each of its outgoing
    // channels: two on the complete graph, one on the ring. A step remembered by one model must
    // not answer the other's.
    let model = |topology| {
        let cfg = Config { mode: Mode::Basic, ..config(3, topology, 1, 1, InitiatorSpec::Only(vec![0])) };
        SnapshotModel::<Bank>::new(cfg.resolve().expect("valid configuration"))
    };
    let (complete, ring) = (model(TopologySpec::Complete), model(TopologySpec::Ring));
    let initiate = model::Action::Initiate { process: 0, snapshot: 0 };
    for _ in 0..2 {
        for (m, markers) in [(&complete, 2), (&ring, 1)] {
            let s = &m.init_states()[0];
            let next = m.next_state(s, initiate).expect("house 0 may initiate");
            assert_eq!(next.chans.all().len(), markers, "{:?}", m.topology());
            let digest = m.digest(s).expect("basic mode steps in place");
            let mut s = s.clone();
            assert!(matches!(m.probe(&mut s, digest, &initiate), Probe::Digest(d) if d == next.digest()));
        }
    }
}
