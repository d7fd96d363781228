//! States on the wire (`engine::Wire`): every reachable state of small configurations of every
//! mode, algorithm (with crashes and declines), variant and application, encoded and decoded,
//! is the state it was — equal, with the same digest and fingerprint — and steps as it did: the
//! same actions, the same successors, the same steps taken in place. Bytes that are not a state
//! of the model are refused, never a panic.

mod common;

use std::collections::{HashSet, VecDeque};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::orders::Orders;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::apps::stream::Stream;
use chandy_lamport::{Algorithm, Variant};
use common::config;
use model::engine::seen::fingerprint;
use model::engine::{InPlace, Probe, Wire};
use model::reduce::symmetry::representative;
use model::system::state::State;
use model::{Checkpointing, Config, InitiatorSpec, Mode, SnapshotModel, TopologySpec};
use stateright::Model;

/// What the round trips met, summed over configurations (so that the test can tell it
/// reached the parts of a state that matter).
#[derive(Default, Debug)]
struct Seen {
    states: usize,
    steps: usize,
    bytes: usize,
    ghost: usize,
    history: usize,
    ckpt: usize,
    stored: usize,
    failed_over: usize,
    refused: usize,
    slots: usize,
    buffered: usize,
    in_transit: usize,
    sym: usize,
}

fn probe<A: Spec>(m: &SnapshotModel<A>, s: &mut State<A>, a: &model::system::Act<A>) -> Option<(u8, u64)> {
    let d = m.digest(s)?;
    Some(match m.probe(s, d, a) {
        Probe::Digest(d) => (0, d),
        Probe::NotAStep => (1, 0),
        Probe::Build => (2, 0),
    })
}

/// Round-trips up to `limit` states of `m` (breadth first, or depth first to reach deep states
/// sooner), checking each; adds to `seen`.
fn walk<A: Spec>(m: &SnapshotModel<A>, limit: usize, depth_first: bool, seen: &mut Seen) {
    let mut visited = HashSet::new();
    let mut queue: VecDeque<State<A>> = m.init_states().into();
    let (mut actions, mut again) = (Vec::new(), Vec::new());
    let mut buf = vec![0xa5, 0x5a];
    let mut states = 0;
    while let Some(s) = if depth_first { queue.pop_back() } else { queue.pop_front() } {
        if states == limit {
            break;
        }
        if !visited.insert(s.clone()) {
            continue;
        }
        states += 1;
        // Appended after what the buffer holds, which is left alone.
        buf.truncate(2);
        m.encode(&s, &mut buf);
        assert_eq!(buf[..2], [0xa5, 0x5a]);
        seen.bytes += buf.len() - 2;
        let mut d = m.decode(&buf[2..]).unwrap_or_else(|e| panic!("{:?}: {e}: {s:?}", m.cfg));
        assert!(d == s, "{:?}: decoded\n{d:?}\nis not\n{s:?}", m.cfg);
        assert_eq!(d.digest(), s.digest(), "{:?}", m.cfg);
        assert_eq!(fingerprint(&d), fingerprint(&s), "{:?}", m.cfg);
        assert_eq!(fingerprint(&representative(&d)), fingerprint(&representative(&s)), "{:?}", m.cfg);
        assert_eq!(m.digest(&d), m.digest(&s));
        // What is re-encoded is what was sent.
        let mut again_bytes = Vec::new();
        m.encode(&d, &mut again_bytes);
        assert_eq!(again_bytes, buf[2..]);

        seen.states += 1;
        seen.ghost += usize::from(s.ghost.is_some());
        seen.history += usize::from(s.history.is_some());
        seen.ckpt += usize::from(s.ckpt.is_some());
        seen.stored += usize::from(s.ckpt.as_ref().is_some_and(|c| c.latest.is_some()));
        seen.failed_over += usize::from(s.ckpt.as_ref().is_some_and(|c| c.failed_over));
        seen.refused += usize::from(s.refused.is_some());
        seen.slots += usize::from(s.procs.iter().any(|p| !p.slots().is_empty()));
        seen.buffered += usize::from(s.procs.iter().any(|p| p.buffered_all().next().is_some()));
        seen.in_transit += usize::from(!s.chans.all().is_empty());
        seen.sym += usize::from(s.sym != 0);

        m.actions(&s, &mut actions);
        m.actions(&d, &mut again);
        assert_eq!(actions, again, "{:?}: the decoded state's actions", m.cfg);
        let mut s_mut = s.clone();
        for a in actions.drain(..) {
            let (next, next_d) = (m.next_state(&s, a), m.next_state(&d, a));
            assert_eq!(next.as_ref().map(fingerprint), next_d.as_ref().map(fingerprint), "{:?} {a:?}", m.cfg);
            assert!(next == next_d, "{:?} {a:?}: the successors differ", m.cfg);
            assert_eq!(probe(m, &mut s_mut, &a), probe(m, &mut d, &a), "{:?} {a:?}: in place", m.cfg);
            seen.steps += 1;
            if let Some(next) = next {
                queue.push_back(next);
            }
        }
        again.clear();
    }
}

fn model<A: Spec>(cfg: &Config) -> Result<SnapshotModel<A>, model::ConfigError> {
    cfg.resolve().map(SnapshotModel::new)
}

fn small(mode: Mode, variant: Variant, algorithm: Algorithm) -> Config {
    let mut cfg = config(3, TopologySpec::Complete, 1, 2, InitiatorSpec::Only(vec![0, 1]));
    cfg.mode = mode;
    cfg.variant = variant;
    cfg.algorithm = algorithm;
    // Theft, but not where the full mode cannot judge it; crashes and declines, and two
    // checkpoints at once where Flink has them.
    cfg.theft = !(algorithm.records_before_receipt() && mode == Mode::Full);
    if algorithm.coordinated() {
        let max_concurrent = if algorithm.concurrent_checkpoints() { 2 } else { 1 };
        cfg.checkpointing = Checkpointing { crashes: 1, declines: 1, tolerable_failures: 1, max_concurrent };
    }
    cfg
}

#[test]
fn every_variant_mode_and_algorithm_round_trips() {
    let (mut seen, mut configs) = (Seen::default(), 0);
    for mode in [Mode::Basic, Mode::Full, Mode::Literal] {
        for variant in Variant::ALL {
            for algorithm in [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned] {
                let Ok(m) = model::<Bank>(&small(mode, variant, algorithm)) else { continue };
                walk(&m, 1000, false, &mut seen);
                configs += 1;
            }
        }
    }
    assert!(configs >= 60, "only {configs} configurations resolved");
    assert!(seen.refused > 0 && seen.slots > 1000 && seen.in_transit > 1000, "{seen:?}");
}

#[test]
fn deep_states_of_each_mode_and_algorithm_round_trip() {
    let mut seen = Seen::default();
    for mode in [Mode::Basic, Mode::Full, Mode::Literal] {
        for algorithm in [Algorithm::ChandyLamport, Algorithm::Aligned, Algorithm::Unaligned] {
            let mut cfg = small(mode, Variant::None, algorithm);
            cfg.procs = Some(2);
            cfg.sends = 2;
            // (Literal mode is for Chandy–Lamport only.)
            let Ok(m) = model::<Bank>(&cfg) else { continue };
            walk(&m, 4000, true, &mut seen);
        }
    }
    assert!(seen.ghost > 1000 && seen.history > 1000 && seen.ckpt > 1000, "{seen:?}");
    assert!(seen.stored > 100 && seen.failed_over > 100 && seen.buffered > 100, "{seen:?}");
}

#[test]
fn every_application_round_trips() {
    let mut seen = Seen::default();
    for mode in [Mode::Basic, Mode::Full, Mode::Literal] {
        let cfg = Config { internal: true, ..small(mode, Variant::None, Algorithm::ChandyLamport) };
        walk(&model::<Orders>(&cfg).unwrap_or_else(|e| panic!("{e}")), 1500, false, &mut seen);
        walk(&model::<Stream>(&cfg).unwrap_or_else(|e| panic!("{e}")), 1500, false, &mut seen);
    }
    // The barrier algorithms, on the orders (the stream job's failure-free run, which the model
    // computes first, takes seconds).
    for (mode, algorithm) in [(Mode::Basic, Algorithm::Unaligned), (Mode::Full, Algorithm::Aligned)] {
        let cfg = Config { internal: true, ..small(mode, Variant::None, algorithm) };
        walk(&model::<Orders>(&cfg).unwrap_or_else(|e| panic!("{e}")), 1500, true, &mut seen);
    }
    assert!(seen.states > 10_000 && seen.ckpt == 3000, "{seen:?}");
}

#[test]
fn states_reduced_by_symmetry_round_trip() {
    let mut seen = Seen::default();
    for mode in [Mode::Basic, Mode::Full] {
        let mut cfg = config(3, TopologySpec::Complete, 2, 1, InitiatorSpec::Any);
        cfg.mode = mode;
        let mut m = model::<Bank>(&cfg).unwrap_or_else(|e| panic!("{e}"));
        assert!(m.enable_symmetry().expect("symmetric") > 1);
        walk(&m, 2000, false, &mut seen);
        // Another model of the configuration (a rank that is a thread of this process) reads
        // the states as its own: the group has one index in the process.
        let mut other = model::<Bank>(&cfg).unwrap_or_else(|e| panic!("{e}"));
        other.enable_symmetry().expect("symmetric");
        let s = m.init_states().remove(0);
        let mut bytes = Vec::new();
        m.encode(&s, &mut bytes);
        assert_eq!(fingerprint(&other.decode(&bytes).expect("decoded")), fingerprint(&s));
        // A model without the symmetry refuses them (their digests would differ).
        let plain = model::<Bank>(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let err = plain.decode(&bytes).expect_err("another group");
        assert!(err.to_string().contains("symmetry group"), "{err}");
    }
    assert_eq!(seen.sym, seen.states, "{seen:?}");
}

/// The K=2 basic configuration (the command's default with `--properties basic`), its first
/// states breadth first: the encoding's size and speed, printed (`--nocapture`); the size is
/// pinned loosely.
#[test]
fn the_encoding_is_small() {
    let cfg = Config { mode: Mode::Basic, ..Config::default() };
    let m = model::<Bank>(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut states = Vec::new();
    let mut visited = HashSet::new();
    let mut queue: VecDeque<State<Bank>> = m.init_states().into();
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        if states.len() == 50_000 {
            break;
        }
        if !visited.insert(s.clone()) {
            continue;
        }
        m.actions(&s, &mut actions);
        queue.extend(actions.drain(..).filter_map(|a| m.next_state(&s, a)));
        states.push(s);
    }
    let mut buf = Vec::with_capacity(1 << 20);
    let start = std::time::Instant::now();
    let mut ends = Vec::with_capacity(states.len());
    for s in &states {
        m.encode(s, &mut buf);
        ends.push(buf.len());
    }
    let encoded = start.elapsed();
    let start = std::time::Instant::now();
    let mut from = 0;
    let mut decoded = 0;
    for &end in &ends {
        let d = m.decode(&buf[from..end]).expect("a state");
        decoded += d.procs.len();
        from = end;
    }
    let took = start.elapsed();
    assert_eq!(decoded, 3 * states.len());
    let n = states.len() as f64;
    println!(
        "{} states: {:.1} bytes/state (max {}), encode {:.0} ns/state, decode {:.0} ns/state",
        states.len(),
        buf.len() as f64 / n,
        ends.iter().scan(0, |prev, &e| Some(e - std::mem::replace(prev, e))).max().unwrap_or(0),
        encoded.as_nanos() as f64 / n,
        took.as_nanos() as f64 / n,
    );
    // About 110 bytes (varints); fixed-width integers would take about 360.
    assert!(buf.len() as f64 / n < 150.0);
}

#[test]
fn bytes_that_are_not_a_state_are_refused() {
    let cfg = small(Mode::Full, Variant::None, Algorithm::Unaligned);
    let m = model::<Bank>(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let mut states = Vec::new();
    let mut queue: VecDeque<State<Bank>> = m.init_states().into();
    let mut actions = Vec::new();
    while states.len() < 300 {
        let s = queue.pop_front().expect("more states");
        m.actions(&s, &mut actions);
        queue.extend(actions.drain(..).filter_map(|a| m.next_state(&s, a)));
        states.push(s);
    }
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut refused, mut tried) = (0, 0);
    for s in &states {
        let mut bytes = Vec::new();
        m.encode(s, &mut bytes);
        // Every truncation, and one byte too many.
        for end in 0..bytes.len() {
            assert!(m.decode(&bytes[..end]).is_err(), "{end} of {} bytes", bytes.len());
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(m.decode(&longer).is_err());
        // Damaged bytes: refused, or (a byte of a value changed) some other state.
        for _ in 0..20 {
            let mut damaged = bytes.clone();
            let at = next() as usize % damaged.len();
            damaged[at] ^= 1 << (next() % 8);
            tried += 1;
            refused += usize::from(m.decode(&damaged).is_err());
        }
    }
    assert!(refused > tried / 10, "{refused} of {tried} damaged states refused");
    // Garbage of every length.
    for len in 0..2000 {
        let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        assert!(m.decode(&bytes).is_err());
        let ff = vec![0xff; len];
        assert!(m.decode(&ff).is_err());
    }
    // A state of another configuration.
    let mut bytes = Vec::new();
    m.encode(&states[10], &mut bytes);
    let other =
        model::<Bank>(&small(Mode::Basic, Variant::None, Algorithm::Unaligned)).unwrap_or_else(|e| panic!("{e}"));
    assert!(other.decode(&bytes).unwrap_err().why.contains("ghost"));
    let two = model::<Bank>(&Config { procs: Some(2), ..cfg }).unwrap_or_else(|e| panic!("{e}"));
    assert!(two.decode(&bytes).is_err());
}
