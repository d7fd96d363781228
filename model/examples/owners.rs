//! A measurement behind the scale-out guide: would `--distributed` ask less if a state's owner
//! were chosen by part of the state? A breadth-first search of the reference configuration in
//! basic mode (3 processes, complete graph, 2 jars, K transfers each, process 0 initiates one
//! snapshot) counts, for owners by the whole state (as the search does, by another hash), by every
//! process, by processes 0 and 1 and by process 0, the share of successors owned by their parent's owner
//! (no ask needed) and the largest share of the states over the mean, at N = 2, 16, 64 and 256.
//!
//! `cargo run --release -p model --example owners [-- K]` (default K = 2: 2,009,291 states)

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use chandy_lamport::apps::bank::Bank;
use model::system::state::State;
use model::{Config, InitiatorSpec, Mode, SnapshotModel, TopologySpec};
use rustc_hash::FxHasher;
use stateright::Model;

const RANKS: [u64; 4] = [2, 16, 64, 256];
const OWNERS: [&str; 4] = ["whole state", "every house", "houses 0 and 1", "house 0"];

/// A well-mixed word of `x`.
fn mix(x: u64) -> u64 {
    let mut h = FxHasher::default();
    x.hash(&mut h);
    h.finish().wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 1
}

/// The words that choose a state's owner, one for each of [`OWNERS`].
fn words(s: &State<Bank>) -> [u64; 4] {
    let h: Vec<u64> = s.procs.iter().map(|p| p.hash_word()).collect();
    let mut whole = FxHasher::default();
    s.hash(&mut whole);
    [
        mix(whole.finish()),
        mix(h.iter().enumerate().fold(0, |a, (i, w)| a ^ w.rotate_left(21 * i as u32))),
        mix(h[0] ^ h[1].rotate_left(21)),
        mix(h[0]),
    ]
}

fn main() {
    let sends: u8 = match std::env::args().nth(1).map(|k| k.parse()) {
        None => 2,
        Some(Ok(k)) => k,
        Some(Err(e)) => {
            eprintln!("owners: K must be a number (0-255): {e}");
            std::process::exit(2);
        }
    };
    let config = Config {
        procs: Some(3),
        topology: TopologySpec::Complete,
        tokens: Some(2),
        sends,
        initiators: InitiatorSpec::Only(vec![0]),
        snapshots: 1,
        mode: Mode::Basic,
        ..Config::default()
    };
    let model = SnapshotModel::<Bank>::new(config.resolve().expect("the reference configuration"));
    let mut level = model.init_states();
    let mut seen: HashSet<u64> = level.iter().map(|s| words(s)[0]).collect();
    // Per owner choice and count of ranks: successors kept by their parent's owner; states per rank.
    let mut kept = [[0u64; RANKS.len()]; OWNERS.len()];
    let mut shares: Vec<Vec<Vec<u64>>> =
        (0..OWNERS.len()).map(|_| RANKS.iter().map(|&n| vec![0; n as usize]).collect()).collect();
    let (mut states, mut successors, mut actions) = (0u64, 0u64, Vec::new());
    while !level.is_empty() {
        let mut next = Vec::new();
        for s in &level {
            states += 1;
            let from = words(s);
            for (o, w) in from.iter().enumerate() {
                for (i, &n) in RANKS.iter().enumerate() {
                    shares[o][i][(w % n) as usize] += 1;
                }
            }
            model.actions(s, &mut actions);
            for a in actions.drain(..) {
                let Some(t) = model.next_state(s, a) else { continue };
                successors += 1;
                let to = words(&t);
                for o in 0..OWNERS.len() {
                    for (i, &n) in RANKS.iter().enumerate() {
                        kept[o][i] += u64::from(to[o] % n == from[o] % n);
                    }
                }
                if seen.insert(to[0]) {
                    next.push(t);
                }
            }
        }
        level = next;
    }
    println!("K={sends}: {states} states, {successors} successors");
    println!("owners by        N: successors kept by their parent's owner; largest share / mean");
    for (o, name) in OWNERS.iter().enumerate() {
        let mut line = format!("{name:<15}");
        for (i, &n) in RANKS.iter().enumerate() {
            let largest = shares[o][i].iter().max().copied().unwrap_or(0);
            line += &format!(
                "  {n:>3}: {:.3}; {:>5.2}",
                kept[o][i] as f64 / successors as f64,
                largest as f64 * n as f64 / states as f64
            );
        }
        println!("{line}");
    }
}
