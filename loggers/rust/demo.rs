//! The Rust logger's test: 3 processes (threads) P0..P2 trade integer balances over in-memory
//! FIFO queues (`mpsc` channels), one per channel, and P0 initiates snapshots 0 and 1; each
//! process logs with `snapshot_log.rs` to `OUTDIR/P<i>.jsonl` (their topology: `loggers/demo.top`).
//!
//! `rustc --edition 2021 loggers/rust/demo.rs -o demo && ./demo OUTDIR [--bug | --stress]`
//!
//! `--bug` breaks the marker rule: P0 sends its round's transfers after recording and before its
//! markers, so the first process to receive P0's marker has received a transfer sent after P0's
//! cut before recording: `model verify` must report an inward crossing.

mod snapshot_log;

use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use snapshot_log::SnapshotLog;

const N: usize = 3;
const ROUNDS: usize = 10;
/// P0 initiates snapshot `s` at round `r`: `(r, s)`.
const SNAPSHOT_AT: [(usize, u32); 2] = [(2, 0), (6, 1)];

enum Item {
    Message { msg: String, amount: i64 },
    Marker(u32),
}

struct Process {
    me: usize,
    log: SnapshotLog,
    peers: Vec<usize>,
    outs: HashMap<usize, Sender<Item>>,
    ins: HashMap<usize, Receiver<Item>>,
    balance: i64,
    /// Snapshot -> source -> ids received since recording, while the channel is open.
    recording: HashMap<u32, HashMap<usize, Vec<String>>>,
    /// Messages and markers received from each source.
    counts: HashMap<usize, (usize, usize)>,
}

impl Process {
    fn open(&self, except: Option<usize>) -> HashMap<usize, Vec<String>> {
        self.peers.iter().filter(|&&p| Some(p) != except).map(|&p| (p, Vec::new())).collect()
    }

    fn send_markers(&self, snap: u32) {
        for &dst in &self.peers {
            self.outs[&dst].send(Item::Marker(snap)).expect("the receiver outlives the sender");
            self.log.marker_send(snap, Some(&format!("P{}->P{dst}", self.me))).expect("log");
        }
    }

    fn handle(&mut self, src: usize, item: Item) {
        let channel = format!("P{src}->P{}", self.me);
        match item {
            Item::Marker(snap) => {
                self.counts.get_mut(&src).unwrap().1 += 1;
                if let Some(open) = self.recording.get_mut(&snap) {
                    // A later marker closes its channel's record.
                    let ids = open.remove(&src).expect("a channel closes once");
                    self.log.marker_receive(snap, &channel, &ids).expect("log");
                } else {
                    // The first marker: record, the channel closed empty.
                    let open = self.open(Some(src));
                    self.recording.insert(snap, open);
                    self.log.record(snap, Some(&channel), Some(&self.balance.to_string())).expect("log");
                    self.send_markers(snap);
                }
            }
            Item::Message { msg, amount } => {
                self.counts.get_mut(&src).unwrap().0 += 1;
                self.balance += amount;
                for open in self.recording.values_mut() {
                    if let Some(ids) = open.get_mut(&src) {
                        ids.push(msg.clone());
                    }
                }
                self.log.receive(&channel, &msg, Some(&self.balance.to_string())).expect("log");
            }
        }
    }

    fn poll(&mut self) -> bool {
        let mut handled = false;
        for src in self.peers.clone() {
            while let Ok(item) = self.ins[&src].try_recv() {
                self.handle(src, item);
                handled = true;
            }
        }
        handled
    }

    fn run(mut self, bug: bool) {
        for r in 0..ROUNDS {
            let snap = SNAPSHOT_AT.iter().find(|&&(at, _)| at == r && self.me == 0).map(|&(_, s)| s);
            if let Some(snap) = snap {
                let open = self.open(None);
                self.recording.insert(snap, open);
                self.log.record(snap, None, Some(&self.balance.to_string())).expect("log");
                if !bug {
                    self.send_markers(snap);
                }
            }
            for dst in self.peers.clone() {
                let amount = ((r + self.me + dst) % 4) as i64; // 0 is a ping
                self.balance -= amount;
                let msg = self.log.new_id();
                self.outs[&dst]
                    .send(Item::Message { msg: msg.clone(), amount })
                    .expect("the receiver outlives the sender");
                let channel = format!("P{}->P{dst}", self.me);
                self.log.send(&channel, &msg, &amount.to_string(), Some(&self.balance.to_string())).expect("log");
            }
            if let (Some(snap), true) = (snap, bug) {
                self.send_markers(snap);
            }
            self.poll();
        }
        while self.counts.values().any(|&c| c != (ROUNDS, SNAPSHOT_AT.len())) {
            if !self.poll() {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }
}

/// `--stress`: 4 threads log through one logger at once, each a send and a record on a marker
/// 250 times, to `OUTDIR/stress.jsonl` (the test checks the lines are whole, numbered, paired).
fn stress(out: &str) {
    let log = SnapshotLog::create("P0", format!("{out}/stress.jsonl")).expect("the log file");
    std::thread::scope(|s| {
        for t in 0..4 {
            let log = &log;
            s.spawn(move || {
                for i in 0..250u32 {
                    let state = i.to_string();
                    log.send("P0->P1", &log.new_id(), &state, Some(&state)).expect("log");
                    log.record(t * 1000 + i, Some("P1->P0"), Some(&state)).expect("log");
                }
            });
        }
    });
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (out, bug) = (&args[1], args.get(2).is_some_and(|a| a == "--bug"));
    std::fs::create_dir_all(out).expect("the output directory");
    if args.get(2).is_some_and(|a| a == "--stress") {
        return stress(out);
    }
    let mut outs: Vec<HashMap<usize, Sender<Item>>> = (0..N).map(|_| HashMap::new()).collect();
    let mut ins: Vec<HashMap<usize, Receiver<Item>>> = (0..N).map(|_| HashMap::new()).collect();
    for a in 0..N {
        for b in (0..N).filter(|&b| b != a) {
            let (tx, rx) = channel();
            outs[a].insert(b, tx);
            ins[b].insert(a, rx);
        }
    }
    let threads: Vec<_> = (0..N)
        .zip(outs.into_iter().zip(ins))
        .map(|(me, (outs, ins))| {
            let log = SnapshotLog::create(&format!("P{me}"), format!("{out}/P{me}.jsonl")).expect("the log file");
            let peers = (0..N).filter(|&p| p != me).collect::<Vec<_>>();
            let counts = peers.iter().map(|&p| (p, (0, 0))).collect();
            let process = Process { me, log, peers, outs, ins, balance: 100, recording: HashMap::new(), counts };
            std::thread::spawn(move || process.run(bug))
        })
        .collect();
    for t in threads {
        t.join().expect("a process panicked");
    }
}
