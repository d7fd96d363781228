//! Processes and the one-way FIFO channels between them.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Index of a process in its [`Topology`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProcessId(pub u16);

impl ProcessId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Index of a one-way channel in its [`Topology`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ChannelId(pub u32);

impl ChannelId {
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A one-way FIFO channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Channel {
    /// The sending end.
    pub from: ProcessId,
    /// The receiving end.
    pub to: ProcessId,
}

/// Who may start a snapshot spontaneously.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Initiators {
    /// Any process.
    Any,
    /// Only these processes.
    Only(Vec<ProcessId>),
}

impl Initiators {
    /// Whether `p` may initiate.
    pub fn allows(&self, p: ProcessId) -> bool {
        match self {
            Initiators::Any => true,
            Initiators::Only(list) => list.contains(&p),
        }
    }
}

/// A topology that breaks a rule of the algorithm or names something that does not exist.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum TopologyError {
    /// Fewer than two processes.
    #[error("a topology needs at least 2 processes, this one has {count}")]
    TooFewProcesses {
        /// How many there are.
        count: usize,
    },
    /// More processes than a [`ProcessId`] can index.
    #[error("a topology can have at most {max} processes, this one has {count}")]
    TooManyProcesses {
        /// How many there are.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A channel from a process to itself.
    #[error("process {process} has a channel to itself")]
    SelfLoop {
        /// The process.
        process: String,
    },
    /// Two processes with one name.
    #[error("process name {name:?} is used twice")]
    DuplicateProcess {
        /// The name.
        name: String,
    },
    /// A name or index that is not a process of the topology.
    #[error("unknown process {name}")]
    UnknownProcess {
        /// The name (or `#index`).
        name: String,
    },
    /// The same channel declared twice.
    #[error("channel {from} -> {to} is declared twice")]
    DuplicateChannel {
        /// Its sender.
        from: String,
        /// Its receiver.
        to: String,
    },
    /// No process may initiate.
    #[error("no initiator: at least one process must be allowed to start a snapshot")]
    NoInitiators,
    /// Barrier checkpoints: the initiators, all triggered together, cannot reach some
    /// processes, so a checkpoint could never complete.
    #[error("no barrier from the initiators {} together can reach {}", from.join(", "), unreached.join(", "))]
    UnreachableTogether {
        /// The initiators.
        from: Vec<String>,
        /// The processes they cannot reach.
        unreached: Vec<String>,
    },
    /// Barrier checkpoints: an initiator with inputs on a topology that has sources.
    #[error(
        "{name} has inputs, but the topology has sources ({}): barrier checkpoints are triggered at the sources \
         only, as Flink's coordinator does",
        sources.join(", ")
    )]
    NotSource {
        /// The initiator.
        name: String,
        /// The sources (processes with no input).
        sources: Vec<String>,
    },
    /// Some processes cannot be reached by a marker from an initiator, so a snapshot it starts
    /// could never terminate.
    #[error("no marker from {from} can reach {}", unreached.join(", "))]
    Unreachable {
        /// The initiator the markers start from.
        from: String,
        /// The processes they cannot reach.
        unreached: Vec<String>,
    },
}

/// Processes with display names, and one-way channels between them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Topology {
    names: Vec<String>,
    channels: Vec<Channel>,
    incoming: Vec<Vec<ChannelId>>,
    outgoing: Vec<Vec<ChannelId>>,
}

impl Topology {
    /// Builds a topology from process names and `(from, to)` channels, rejecting fewer than two
    /// processes, duplicate names, unknown processes, self-loops and duplicate channels.
    pub fn new(
        names: Vec<String>,
        channels: impl IntoIterator<Item = (ProcessId, ProcessId)>,
    ) -> Result<Self, TopologyError> {
        if names.len() < 2 {
            return Err(TopologyError::TooFewProcesses { count: names.len() });
        }
        let max = usize::from(u16::MAX) + 1;
        if names.len() > max {
            return Err(TopologyError::TooManyProcesses { count: names.len(), max });
        }
        let mut seen = HashSet::new();
        for name in &names {
            if !seen.insert(name.as_str()) {
                return Err(TopologyError::DuplicateProcess { name: name.clone() });
            }
        }
        let n = names.len();
        let mut topology =
            Topology { names, channels: Vec::new(), incoming: vec![Vec::new(); n], outgoing: vec![Vec::new(); n] };
        let mut pairs = HashSet::new();
        for (from, to) in channels {
            for p in [from, to] {
                if p.index() >= n {
                    return Err(TopologyError::UnknownProcess { name: p.to_string() });
                }
            }
            if from == to {
                return Err(TopologyError::SelfLoop { process: topology.name(from).to_string() });
            }
            if !pairs.insert((from, to)) {
                return Err(TopologyError::DuplicateChannel {
                    from: topology.name(from).to_string(),
                    to: topology.name(to).to_string(),
                });
            }
            let id = ChannelId(topology.channels.len() as u32);
            topology.channels.push(Channel { from, to });
            topology.outgoing[from.index()].push(id);
            topology.incoming[to.index()].push(id);
        }
        Ok(topology)
    }

    /// Builds a topology from names and `(from, to)` channels given by name.
    pub fn from_names(names: &[&str], links: &[(&str, &str)]) -> Result<Self, TopologyError> {
        let index: HashMap<&str, u16> = names.iter().enumerate().map(|(i, n)| (*n, i as u16)).collect();
        let lookup = |name: &str| {
            index
                .get(name)
                .map(|&i| ProcessId(i))
                .ok_or_else(|| TopologyError::UnknownProcess { name: name.to_string() })
        };
        let channels =
            links.iter().map(|(a, b)| Ok((lookup(a)?, lookup(b)?))).collect::<Result<Vec<_>, TopologyError>>()?;
        Topology::new(names.iter().map(|s| s.to_string()).collect(), channels)
    }

    fn default_names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("P{i}")).collect()
    }

    fn build(n: usize, pairs: impl IntoIterator<Item = (usize, usize)>) -> Result<Self, TopologyError> {
        if n > usize::from(u16::MAX) + 1 {
            return Err(TopologyError::TooManyProcesses { count: n, max: usize::from(u16::MAX) + 1 });
        }
        let mut seen = HashSet::new();
        let channels: Vec<_> = pairs
            .into_iter()
            .filter(|&(a, b)| a != b && seen.insert((a, b)))
            .map(|(a, b)| (ProcessId(a as u16), ProcessId(b as u16)))
            .collect();
        Topology::new(Self::default_names(n), channels)
    }

    /// Every process has a channel to every other process (`P0`..`P{n-1}`).
    pub fn complete(n: usize) -> Result<Self, TopologyError> {
        Self::build(n, (0..n).flat_map(|a| (0..n).map(move |b| (a, b))))
    }

    /// A one-way ring: `Pi -> P(i+1 mod n)`.
    pub fn ring(n: usize) -> Result<Self, TopologyError> {
        Self::build(n, (0..n).map(|i| (i, (i + 1) % n.max(1))))
    }

    /// A ring with channels both ways.
    pub fn bidi_ring(n: usize) -> Result<Self, TopologyError> {
        let m = n.max(1);
        Self::build(n, (0..n).flat_map(|i| [(i, (i + 1) % m), ((i + 1) % m, i)]))
    }

    /// A star: `P0` in the middle with channels both ways to every other process.
    pub fn star(n: usize) -> Result<Self, TopologyError> {
        Self::build(n, (1..n).flat_map(|i| [(0, i), (i, 0)]))
    }

    /// A dataflow graph: `Pi -> Pj` for every `i < j` (acyclic; `P0` its one source, `P(n-1)`
    /// its one sink, every other process joining all those before it).
    pub fn dataflow(n: usize) -> Result<Self, TopologyError> {
        Self::build(n, (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))))
    }

    /// Number of processes.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: a topology has at least two processes.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// All process ids in order.
    pub fn processes(&self) -> impl Iterator<Item = ProcessId> + '_ {
        (0..self.names.len()).map(|i| ProcessId(i as u16))
    }

    /// Display name of a process.
    pub fn name(&self, p: ProcessId) -> &str {
        self.names.get(p.index()).map(String::as_str).unwrap_or("?")
    }

    /// All display names, by process index.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The process with this display name.
    pub fn process(&self, name: &str) -> Result<ProcessId, TopologyError> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| ProcessId(i as u16))
            .ok_or_else(|| TopologyError::UnknownProcess { name: name.to_string() })
    }

    /// Checks that `p` is a process of this topology.
    pub fn check_process(&self, p: ProcessId) -> Result<ProcessId, TopologyError> {
        if p.index() < self.len() {
            Ok(p)
        } else {
            Err(TopologyError::UnknownProcess { name: p.to_string() })
        }
    }

    /// All channels, by channel index.
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// One channel. Panics on an id that is not of this topology.
    pub fn channel(&self, c: ChannelId) -> Channel {
        self.channels[c.index()]
    }

    /// The channel `from -> to`, if there is one.
    pub fn channel_between(&self, from: ProcessId, to: ProcessId) -> Option<ChannelId> {
        self.outgoing.get(from.index())?.iter().copied().find(|&c| self.channels[c.index()].to == to)
    }

    /// Channels into `p`, in declaration order.
    pub fn incoming(&self, p: ProcessId) -> &[ChannelId] {
        self.incoming.get(p.index()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Channels out of `p`, in declaration order.
    pub fn outgoing(&self, p: ProcessId) -> &[ChannelId] {
        self.outgoing.get(p.index()).map(Vec::as_slice).unwrap_or(&[])
    }

    /// A readable channel label, `FROM->TO`.
    pub fn channel_label(&self, c: ChannelId) -> String {
        match self.channels.get(c.index()) {
            Some(ch) => format!("{}->{}", self.name(ch.from), self.name(ch.to)),
            None => format!("channel {}", c.0),
        }
    }

    /// The back edges of a depth-first search from `roots` (in order, then from every process
    /// not reached, by index), by channel index: a channel whose receiver is on the search's
    /// stack when the channel is followed. The other channels form a graph without cycles, so
    /// aligned barriers that wait only for them cannot wait on each other; a topology without
    /// cycles has no back edge at all.
    pub fn back_edges(&self, roots: &[ProcessId]) -> Vec<bool> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            OnStack,
            Done,
        }
        let mut mark = vec![Mark::New; self.len()];
        let mut back = vec![false; self.channels.len()];
        let starts = roots.iter().copied().filter(|p| p.index() < self.len()).chain(self.processes());
        for start in starts {
            if mark[start.index()] != Mark::New {
                continue;
            }
            // Each frame: a process and how many of its outgoing channels were followed.
            let mut stack = vec![(start, 0usize)];
            mark[start.index()] = Mark::OnStack;
            while let Some(&mut (p, ref mut next)) = stack.last_mut() {
                let Some(&c) = self.outgoing(p).get(*next) else {
                    mark[p.index()] = Mark::Done;
                    stack.pop();
                    continue;
                };
                *next += 1;
                let q = self.channels[c.index()].to;
                match mark[q.index()] {
                    Mark::OnStack => back[c.index()] = true,
                    Mark::New => {
                        mark[q.index()] = Mark::OnStack;
                        stack.push((q, 0));
                    }
                    Mark::Done => {}
                }
            }
        }
        back
    }

    fn reachable_from(&self, starts: &[ProcessId]) -> Vec<bool> {
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<ProcessId> = starts.to_vec();
        for p in starts {
            seen[p.index()] = true;
        }
        while let Some(p) = stack.pop() {
            for &c in self.outgoing(p) {
                let q = self.channels[c.index()].to;
                if !seen[q.index()] {
                    seen[q.index()] = true;
                    stack.push(q);
                }
            }
        }
        seen
    }

    fn unreached(&self, seen: &[bool]) -> Vec<String> {
        self.processes().filter(|p| !seen[p.index()]).map(|p| self.name(p).to_string()).collect()
    }

    /// Checks that a snapshot started by any allowed initiator reaches every process: each
    /// initiator on its own (it may start a snapshot alone) must reach every process, so with
    /// [`Initiators::Any`] the graph must be strongly connected. The error names the first
    /// initiator that cannot, and the processes it cannot reach.
    pub fn check_initiators(&self, initiators: &Initiators) -> Result<(), TopologyError> {
        let list = self.initiator_list(initiators)?;
        for &p in &list {
            let unreached = self.unreached(&self.reachable_from(&[p]));
            if !unreached.is_empty() {
                return Err(TopologyError::Unreachable { from: self.name(p).to_string(), unreached });
            }
        }
        Ok(())
    }

    /// The processes `initiators` allows, each checked to be one of the topology's; none is an
    /// error.
    fn initiator_list(&self, initiators: &Initiators) -> Result<Vec<ProcessId>, TopologyError> {
        let list: Vec<ProcessId> = match initiators {
            Initiators::Any => self.processes().collect(),
            Initiators::Only(list) if list.is_empty() => return Err(TopologyError::NoInitiators),
            Initiators::Only(list) => list.clone(),
        };
        for &p in &list {
            self.check_process(p)?;
        }
        Ok(list)
    }

    /// Checks the initiators of barrier checkpoints, which a coordinator triggers all together
    /// (Flink's triggers every source task): together they must reach every process, and where
    /// the topology has sources (processes with no input), every initiator must be one — so
    /// with sources, the initiators are exactly the sources.
    pub fn check_sources(&self, initiators: &Initiators) -> Result<(), TopologyError> {
        let list = self.initiator_list(initiators)?;
        let sources: Vec<ProcessId> = self.processes().filter(|&p| self.incoming(p).is_empty()).collect();
        if !sources.is_empty() {
            if let Some(&p) = list.iter().find(|p| !sources.contains(p)) {
                let sources = sources.iter().map(|&s| self.name(s).to_string()).collect();
                return Err(TopologyError::NotSource { name: self.name(p).to_string(), sources });
            }
        }
        let unreached = self.unreached(&self.reachable_from(&list));
        if !unreached.is_empty() {
            let from = list.iter().map(|&p| self.name(p).to_string()).collect();
            return Err(TopologyError::UnreachableTogether { from, unreached });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_have_the_expected_channels() {
        assert_eq!(Topology::complete(4).unwrap().channels().len(), 12);
        assert_eq!(Topology::ring(4).unwrap().channels().len(), 4);
        assert_eq!(Topology::bidi_ring(4).unwrap().channels().len(), 8);
        assert_eq!(Topology::bidi_ring(2).unwrap().channels().len(), 2);
        assert_eq!(Topology::star(4).unwrap().channels().len(), 6);
        let dataflow = Topology::dataflow(4).unwrap();
        assert_eq!(dataflow.channels().len(), 6);
        assert_eq!((dataflow.incoming(ProcessId(0)).len(), dataflow.outgoing(ProcessId(3)).len()), (0, 0));
        assert_eq!(dataflow.channel_between(ProcessId(1), ProcessId(3)), Some(ChannelId(4)));
        let ring = Topology::ring(3).unwrap();
        assert_eq!(ring.channel_between(ProcessId(2), ProcessId(0)), Some(ChannelId(2)));
        assert_eq!(ring.channel_between(ProcessId(0), ProcessId(2)), None);
        assert_eq!(ring.incoming(ProcessId(0)), &[ChannelId(2)]);
    }

    #[test]
    fn too_few_processes() {
        assert_eq!(Topology::complete(1), Err(TopologyError::TooFewProcesses { count: 1 }));
        assert_eq!(Topology::ring(0), Err(TopologyError::TooFewProcesses { count: 0 }));
    }

    #[test]
    fn self_loop_duplicate_and_unknown() {
        assert_eq!(
            Topology::from_names(&["a", "b"], &[("a", "a")]),
            Err(TopologyError::SelfLoop { process: "a".into() })
        );
        assert_eq!(Topology::from_names(&["a", "a"], &[]), Err(TopologyError::DuplicateProcess { name: "a".into() }));
        assert_eq!(
            Topology::from_names(&["a", "b"], &[("a", "c")]),
            Err(TopologyError::UnknownProcess { name: "c".into() })
        );
        assert_eq!(
            Topology::new(vec!["a".into(), "b".into()], [(ProcessId(0), ProcessId(7))]),
            Err(TopologyError::UnknownProcess { name: "#7".into() })
        );
        assert_eq!(
            Topology::from_names(&["a", "b"], &[("a", "b"), ("a", "b")]),
            Err(TopologyError::DuplicateChannel { from: "a".into(), to: "b".into() })
        );
    }

    #[test]
    fn reachability_from_initiators() {
        let ring = Topology::ring(3).unwrap();
        assert_eq!(ring.check_initiators(&Initiators::Any), Ok(()));
        // a -> b only: a reaches b, b reaches nobody.
        let line = Topology::from_names(&["a", "b", "c"], &[("a", "b"), ("b", "c")]).unwrap();
        assert_eq!(line.check_initiators(&Initiators::Only(vec![ProcessId(0)])), Ok(()));
        assert_eq!(
            line.check_initiators(&Initiators::Only(vec![ProcessId(1)])),
            Err(TopologyError::Unreachable { from: "b".into(), unreached: vec!["a".into()] })
        );
        assert_eq!(
            line.check_initiators(&Initiators::Any),
            Err(TopologyError::Unreachable { from: "b".into(), unreached: vec!["a".into()] })
        );
        assert_eq!(line.check_initiators(&Initiators::Only(vec![])), Err(TopologyError::NoInitiators));
        assert_eq!(
            line.check_initiators(&Initiators::Only(vec![ProcessId(9)])),
            Err(TopologyError::UnknownProcess { name: "#9".into() })
        );
        // Each initiator alone must reach every process: two that together cover the graph are
        // not enough, since either may start a snapshot on its own.
        let split = Topology::from_names(&["a", "b", "c", "d"], &[("a", "b"), ("c", "d")]).unwrap();
        assert_eq!(
            split.check_initiators(&Initiators::Only(vec![ProcessId(0), ProcessId(2)])),
            Err(TopologyError::Unreachable { from: "a".into(), unreached: vec!["c".into(), "d".into()] })
        );
        // a reaches everyone, b does not reach a.
        assert_eq!(
            line.check_initiators(&Initiators::Only(vec![ProcessId(0), ProcessId(1)])),
            Err(TopologyError::Unreachable { from: "b".into(), unreached: vec!["a".into()] })
        );
    }

    #[test]
    fn barrier_initiators_are_the_sources_and_reach_every_process_together() {
        let p = |i: &[u16]| Initiators::Only(i.iter().map(|&i| ProcessId(i)).collect());
        // Two sources a and b feed c: together they reach it, though neither reaches the other.
        let join = Topology::from_names(&["a", "b", "c"], &[("a", "c"), ("b", "c")]).unwrap();
        assert_eq!(join.check_sources(&p(&[0, 1])), Ok(()));
        let missing = TopologyError::UnreachableTogether { from: vec!["a".into()], unreached: vec!["b".into()] };
        assert_eq!(join.check_sources(&p(&[0])), Err(missing));
        let not_source = TopologyError::NotSource { name: "c".into(), sources: vec!["a".into(), "b".into()] };
        assert_eq!(join.check_sources(&p(&[0, 1, 2])), Err(not_source.clone()));
        assert_eq!(join.check_sources(&Initiators::Any), Err(not_source));
        assert_eq!(join.check_sources(&p(&[])), Err(TopologyError::NoInitiators));
        assert_eq!(join.check_sources(&p(&[7])), Err(TopologyError::UnknownProcess { name: "#7".into() }));
        // Chandy–Lamport's rule is stricter: each initiator alone.
        assert!(join.check_initiators(&p(&[0, 1])).is_err());
        // No source (a ring): any initiators that reach everyone together.
        let ring = Topology::ring(3).unwrap();
        assert_eq!(ring.check_sources(&Initiators::Any), Ok(()));
        assert_eq!(ring.check_sources(&p(&[1])), Ok(()));
        // Two islands, each with its source, both initiating: covered.
        let split = Topology::from_names(&["a", "b", "c", "d"], &[("a", "b"), ("c", "d")]).unwrap();
        assert_eq!(split.check_sources(&p(&[0, 2])), Ok(()));
    }

    #[test]
    fn back_edges_close_every_cycle_and_only_cycles() {
        // A ring from process 0: the one edge back into 0.
        let ring = Topology::ring(3).unwrap();
        let back = ring.back_edges(&[ProcessId(0)]);
        let labels: Vec<String> = ring
            .channels()
            .iter()
            .enumerate()
            .filter(|(i, _)| back[*i])
            .map(|(i, _)| ring.channel_label(ChannelId(i as u32)))
            .collect();
        assert_eq!(labels, ["P2->P0"]);
        // From process 1 instead, the edge into 1.
        let back = ring.back_edges(&[ProcessId(1)]);
        let into_1: Vec<bool> = ring.channels().iter().map(|c| c.to == ProcessId(1)).collect();
        assert_eq!(back, into_1);
        // A root that is no process is skipped: the search starts from process 0.
        assert_eq!(ring.back_edges(&[ProcessId(7)]), ring.back_edges(&[ProcessId(0)]));
        assert_eq!(ring.back_edges(&[ProcessId(3)]), ring.back_edges(&[]));
        // No cycle, no back edge.
        let line = Topology::from_names(&["a", "b", "c"], &[("a", "b"), ("b", "c"), ("a", "c")]).unwrap();
        assert!(line.back_edges(&[ProcessId(0)]).iter().all(|b| !b));
        assert!(line.back_edges(&[ProcessId(2)]).iter().all(|b| !b));
        // On every topology: the other edges have no cycle (a topological order exists), and
        // removing any back edge leaves a cycle only if another back edge is on it.
        for t in [Topology::complete(4).unwrap(), Topology::bidi_ring(5).unwrap(), Topology::star(4).unwrap(), ring] {
            let back = t.back_edges(&[ProcessId(0)]);
            let mut indegree = vec![0; t.len()];
            for (i, c) in t.channels().iter().enumerate() {
                if !back[i] {
                    indegree[c.to.index()] += 1;
                }
            }
            let mut ready: Vec<ProcessId> = t.processes().filter(|p| indegree[p.index()] == 0).collect();
            let mut ordered = 0;
            while let Some(p) = ready.pop() {
                ordered += 1;
                for &c in t.outgoing(p) {
                    if !back[c.index()] {
                        let q = t.channel(c).to;
                        indegree[q.index()] -= 1;
                        if indegree[q.index()] == 0 {
                            ready.push(q);
                        }
                    }
                }
            }
            assert_eq!(ordered, t.len(), "the forward edges of {t:?} have a cycle");
            assert!(back.iter().any(|&b| b), "{t:?} has cycles, so some back edge");
        }
    }
}
