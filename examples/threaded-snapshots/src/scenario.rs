//! A run of the implementation: processes on a topology, each with a reader thread per incoming
//! channel; drivers that transfer and initiate, on threads of their own or on the scenario's
//! thread; every thread joined, and the execution's recorder returned for the judge.

use chandy_lamport::apps::json::Balance;
use chandy_lamport::logs::Semantics;
use chandy_lamport::testing::channel::channel;
use chandy_lamport::testing::Recorder;
use chandy_lamport::{ProcessId, SnapshotId, Topology};

use crate::process::{Bug, Process};
use crate::sync::{thread, Arc};

/// Each process's balance at the start.
pub const INITIAL: i64 = 10;

/// What a run does.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The processes and channels.
    pub topology: Topology,
    /// The copy of the implementation.
    pub bug: Bug,
    /// Who initiates which snapshot (after its driver's first transfer).
    pub initiations: Vec<(ProcessId, SnapshotId)>,
    /// Transfers of 1 each driver makes, round robin over its outgoing channels.
    pub transfers: usize,
    /// Processes whose driver runs on a thread of its own.
    pub driver_threads: Vec<ProcessId>,
    /// Processes whose driver runs on the scenario's own thread, before it joins the others.
    pub main_drivers: Vec<ProcessId>,
}

impl Scenario {
    /// Three processes within loom's 5 threads: `P0->P1`, `P0->P2`, `P1->P2`. The scenario's
    /// thread drives P0 (it initiates); P1's driver has a thread (it transfers to P2 while P1's
    /// reader handles the markers); P2 has two readers (whose first markers can race) and no
    /// driver. Threads: main, P1's driver, P1's reader, P2's two readers. Cut: readers for P0
    /// (it has no incoming channel) and a driver for P2. `snapshots` 1 or 2, both from P0.
    pub fn loom(bug: Bug, snapshots: u32) -> Self {
        Scenario {
            topology: Topology::dataflow(3).expect("three processes"),
            bug,
            initiations: (0..snapshots).map(|s| (ProcessId(0), SnapshotId(s))).collect(),
            transfers: 1,
            driver_threads: vec![ProcessId(1)],
            main_drivers: vec![ProcessId(0)],
        }
    }

    /// `n` processes, every channel both ways, every process with a driver thread and a reader
    /// per incoming channel; P0 initiates snapshot 0 and, with `snapshots` 2, the last process
    /// initiates snapshot 1 at the same time.
    pub fn shuttle(n: usize, bug: Bug, snapshots: u32) -> Self {
        let initiators = [ProcessId(0), ProcessId((n - 1) as u16)];
        Scenario {
            topology: Topology::complete(n).expect("at least two processes"),
            bug,
            initiations: (0..snapshots).map(|s| (initiators[s as usize % 2], SnapshotId(s))).collect(),
            transfers: 3,
            driver_threads: (0..n as u16).map(ProcessId).collect(),
            main_drivers: Vec::new(),
        }
    }

    /// Runs the scenario once and returns its recorder, every thread joined.
    pub fn run(&self) -> Recorder<Balance> {
        let topology = &self.topology;
        let n = topology.len();
        let recorder = Recorder::new(topology, vec![Balance(INITIAL); n], Semantics::balance());
        let mut outgoing: Vec<Vec<_>> = (0..n).map(|_| Vec::new()).collect();
        let mut incoming: Vec<Vec<ProcessId>> = vec![Vec::new(); n];
        let mut readers = Vec::new();
        for c in topology.channels() {
            let (tx, rx) = channel(&recorder, c.from, c.to);
            outgoing[c.from.index()].push(tx);
            incoming[c.to.index()].push(c.from);
            readers.push((c.to, rx));
        }
        let snapshots = self.initiations.len();
        let processes: Vec<Arc<Process>> = outgoing
            .into_iter()
            .zip(incoming)
            .enumerate()
            .map(|(i, (out, inc))| {
                let recorder = recorder.process(ProcessId(i as u16));
                Arc::new(Process::new(recorder, INITIAL, out, inc, self.bug, snapshots))
            })
            .collect();
        for p in topology.processes() {
            if !self.driver_threads.contains(&p) && !self.main_drivers.contains(&p) {
                processes[p.index()].finish();
            }
        }
        let mut threads = Vec::new();
        for (to, rx) in readers {
            let process = Arc::clone(&processes[to.index()]);
            threads.push(thread::spawn(move || process.read(rx)));
        }
        for &p in &self.driver_threads {
            let (process, plan) = (Arc::clone(&processes[p.index()]), self.plan(p));
            threads.push(thread::spawn(move || drive(&process, plan)));
        }
        for &p in &self.main_drivers {
            drive(&processes[p.index()], self.plan(p));
        }
        for t in threads {
            t.join().expect("a thread of the implementation panicked");
        }
        recorder
    }

    fn plan(&self, p: ProcessId) -> Plan {
        let initiations = self.initiations.iter().filter(|(q, _)| *q == p).map(|&(_, s)| s).collect();
        Plan { transfers: self.transfers, initiations }
    }
}

/// What one driver does.
struct Plan {
    transfers: usize,
    initiations: Vec<SnapshotId>,
}

/// A transfer, the initiations, the other transfers; then the process is finished.
fn drive(process: &Process, plan: Plan) {
    for k in 0..plan.transfers.max(1) {
        if k < plan.transfers {
            process.transfer(k, 1);
        }
        if k == 0 {
            for &s in &plan.initiations {
                process.initiate(s);
            }
        }
    }
    process.finish();
}
