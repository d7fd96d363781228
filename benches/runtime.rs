//! The threaded runtime's throughput and snapshot cost: 4 houses on a complete graph passing
//! one-jar carts as fast as they go, with no snapshots, with a snapshot every millisecond, and a
//! raw `std::sync::mpsc` baseline moving the same messages between the same threads (same
//! command → send → receive path, same flush-on-shutdown). Also the snapshot latency
//! (initiation to assembled global snapshot), p50 and p99.
//!
//! `cargo bench --bench runtime` — criterion's figures, then one summary with the ratios, all
//! measured in the same run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::runtime::BankCommand;
use chandy_lamport::runtime::{Cluster, Options};
use chandy_lamport::{ProcessId, SnapshotId, Topology};
use criterion::{criterion_group, Criterion, Throughput};

const HOUSES: usize = 4;
const TRANSFERS: usize = 200_000;

fn command(i: usize) -> (ProcessId, BankCommand) {
    let from = i % HOUSES;
    let to = (from + 1 + (i / HOUSES) % (HOUSES - 1)) % HOUSES;
    (ProcessId(from as u16), BankCommand::Transfer { to: ProcessId(to as u16), amount: 1 })
}

/// Moves `TRANSFERS` carts through the runtime; with `snapshot_every`, the main thread starts a
/// snapshot at that interval and waits for it, and the latencies are returned.
fn runtime(snapshot_every: Option<Duration>) -> (Duration, Vec<Duration>) {
    let topology = Topology::complete(HOUSES).expect("4 houses");
    let cluster = Cluster::start(topology, vec![Bank::new(TRANSFERS as u32); HOUSES], Options::default())
        .expect("a valid cluster");
    let start = Instant::now();
    let done = AtomicBool::new(false);
    let mut latencies = Vec::new();
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..TRANSFERS {
                let (from, cmd) = command(i);
                cluster.command(from, cmd).expect("running");
            }
            done.store(true, Ordering::Release);
        });
        if let Some(every) = snapshot_every {
            let mut id = 0u32;
            while !done.load(Ordering::Acquire) {
                let t = Instant::now();
                let at = ProcessId((id as usize % HOUSES) as u16);
                cluster.initiate(SnapshotId(id), at).expect("initiate");
                cluster.wait(SnapshotId(id)).expect("assembled");
                latencies.push(t.elapsed());
                id += 1;
                if let Some(rest) = every.checked_sub(t.elapsed()) {
                    thread::sleep(rest);
                }
            }
        }
    });
    let outcome = cluster.shutdown().expect("clean shutdown");
    assert!(outcome.rejected.is_empty());
    (start.elapsed(), latencies)
}

enum Raw {
    Command(usize),
    Cart(u32),
    Flush,
    Shutdown,
}

/// The same carts through bare mpsc channels: a thread per house, one inbox each; a command
/// makes the house send a cart to a neighbour; shutdown flushes every channel.
fn raw() -> Duration {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..HOUSES).map(|_| mpsc::channel::<Raw>()).unzip();
    let start = Instant::now();
    let handles: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(me, inbox)| {
            let peers = senders.clone();
            thread::spawn(move || {
                let mut jars = TRANSFERS as u32;
                let (mut flushes, mut stopping) = (0, false);
                while let Ok(m) = inbox.recv() {
                    match m {
                        Raw::Command(to) => {
                            jars -= 1;
                            let _ = peers[to].send(Raw::Cart(1));
                        }
                        Raw::Cart(k) => jars += k,
                        Raw::Flush => flushes += 1,
                        Raw::Shutdown => {
                            stopping = true;
                            for (i, p) in peers.iter().enumerate() {
                                if i != me {
                                    let _ = p.send(Raw::Flush);
                                }
                            }
                        }
                    }
                    if stopping && flushes == HOUSES - 1 {
                        break;
                    }
                }
                jars
            })
        })
        .collect();
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..TRANSFERS {
                let (from, BankCommand::Transfer { to, .. }) = command(i) else { unreachable!() };
                let _ = senders[from.index()].send(Raw::Command(to.index()));
            }
        });
    });
    for s in &senders {
        let _ = s.send(Raw::Shutdown);
    }
    let total: u32 = handles.into_iter().map(|h| h.join().expect("house thread")).sum();
    assert_eq!(total as usize, TRANSFERS * HOUSES);
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("carts");
    g.throughput(Throughput::Elements(TRANSFERS as u64)).sample_size(20);
    g.bench_function("raw mpsc", |b| b.iter(raw));
    g.bench_function("runtime, no snapshots", |b| b.iter(|| runtime(None)));
    g.bench_function("runtime, a snapshot every 1 ms", |b| b.iter(|| runtime(Some(Duration::from_millis(1)))));
    g.finish();
}

criterion_group!(benches, bench);

fn median(v: Vec<f64>) -> f64 {
    quartiles(v).1
}

/// The 25th, 50th and 75th percentiles.
fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (at(0.25), at(0.5), at(0.75))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Interleaved rounds of the three, so machine noise hits them alike; each ratio is the median
/// of the per-round ratios.
fn summary() {
    let rounds = 21;
    let (mut raw_rates, mut plain_rates, mut snap_rates) = (Vec::new(), Vec::new(), Vec::new());
    let (mut of_raw, mut overhead) = (Vec::new(), Vec::new());
    let mut latencies = Vec::new();
    for _ in 0..rounds {
        let r = raw().as_secs_f64();
        let p = runtime(None).0.as_secs_f64();
        let (s, l) = runtime(Some(Duration::from_millis(1)));
        let s = s.as_secs_f64();
        raw_rates.push(TRANSFERS as f64 / r);
        plain_rates.push(TRANSFERS as f64 / p);
        snap_rates.push(TRANSFERS as f64 / s);
        of_raw.push(r / p);
        overhead.push(1.0 - p / s);
        latencies.extend(l);
    }
    latencies.sort();
    println!("\nsummary ({rounds} interleaved rounds of {TRANSFERS} carts, 4 houses, complete graph; medians):");
    println!("  raw mpsc                       {:>10.0} carts/s", median(raw_rates));
    let (a, b, c) = quartiles(of_raw);
    println!(
        "  runtime, no snapshots          {:>10.0} carts/s  ({b:.2} of raw; quartiles {a:.2}-{c:.2})",
        median(plain_rates),
    );
    let (a, b, c) = quartiles(overhead);
    println!(
        "  runtime, a snapshot every 1 ms {:>10.0} carts/s  (overhead {:.1}% of throughput; quartiles {:.1}% to {:.1}%)",
        median(snap_rates),
        100.0 * b,
        100.0 * a,
        100.0 * c
    );
    println!(
        "  snapshot latency over {} snapshots: p50 {:?}, p99 {:?}",
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
}
