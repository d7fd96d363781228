//! Local snapshots, their assembly into a global snapshot, and conservation.

use std::collections::HashMap;

use thiserror::Error;

use super::application::Application;
use super::message::SnapshotId;
use super::topology::{ChannelId, ProcessId, Topology};

/// One process's part of a snapshot: its recorded state and the record of every incoming channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LocalSnapshot<A: Application> {
    /// The snapshot.
    pub snapshot: SnapshotId,
    /// The process.
    pub process: ProcessId,
    /// Its recorded state.
    pub state: A,
    /// Each incoming channel with the messages recorded on it, in arrival order.
    pub channels: Vec<(ChannelId, Vec<A::Msg>)>,
    /// Unaligned barriers only (empty otherwise): each outgoing channel with what its output
    /// buffer held when the barrier overtook it, oldest first — the sender's side of the
    /// channel's state, which follows the receiver's side.
    pub outputs: Vec<(ChannelId, Vec<A::Msg>)>,
}

/// A global state: every process's state and every channel's contents (application messages).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GlobalState<A: Application> {
    /// By process index.
    pub processes: Vec<A>,
    /// By channel index, head first.
    pub channels: Vec<Vec<A::Msg>>,
}

/// A recorded global state S* for one snapshot id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalSnapshot<A: Application> {
    /// The snapshot.
    pub id: SnapshotId,
    /// The recorded states and channel records.
    pub state: GlobalState<A>,
}

/// Something that counts tokens (jars), for conservation checks.
pub trait Tokens {
    /// Tokens held.
    fn tokens(&self) -> u64;
}

impl<A: Application> GlobalState<A>
where
    A: Tokens,
    A::Msg: Tokens,
{
    /// Tokens held by the processes.
    pub fn tokens_in_processes(&self) -> u64 {
        self.processes.iter().map(Tokens::tokens).sum()
    }

    /// Tokens in transit.
    pub fn tokens_in_channels(&self) -> u64 {
        self.channels.iter().flatten().map(Tokens::tokens).sum()
    }

    /// All tokens, held and in transit.
    pub fn total(&self) -> u64 {
        self.tokens_in_processes() + self.tokens_in_channels()
    }
}

/// A local snapshot that does not fit the global snapshot being assembled.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum AssemblyError {
    /// Two parts from one process.
    #[error("snapshot {snapshot}: process {process} sent its part twice")]
    DuplicatePart {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
    },
    /// A part from a process that is not in the topology.
    #[error("snapshot {snapshot}: part from unknown process {process}")]
    UnknownProcess {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
    },
    /// A part whose channel records do not match the process's incoming channels.
    #[error(
        "snapshot {snapshot}: process {process} recorded channels {got:?}, its incoming channels are {expected:?}"
    )]
    WrongChannels {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
        /// Its incoming channels.
        expected: Vec<ChannelId>,
        /// The channels in the part.
        got: Vec<ChannelId>,
    },
    /// A part's output-buffer records (unaligned barriers) do not list exactly the process's
    /// outgoing channels.
    #[error(
        "snapshot {snapshot}: process {process} recorded output buffers {got:?}, its outgoing channels are {expected:?}"
    )]
    WrongOutputs {
        /// The snapshot.
        snapshot: SnapshotId,
        /// The process.
        process: ProcessId,
        /// Its outgoing channels.
        expected: Vec<ChannelId>,
        /// The channels in the part.
        got: Vec<ChannelId>,
    },
}

/// One channel's recorded state in two parts: the receiver's side, then the sender's (unaligned
/// barriers' output buffers).
type Sides<M> = (Vec<M>, Vec<M>);

struct Partial<A: Application> {
    processes: Vec<Option<A>>,
    /// Per channel.
    channels: Vec<Sides<A::Msg>>,
    missing: usize,
}

/// Collects local snapshots, by id, into global snapshots.
pub struct Assembler<A: Application> {
    partial: HashMap<SnapshotId, Partial<A>>,
}

impl<A: Application> Default for Assembler<A> {
    fn default() -> Self {
        Assembler { partial: HashMap::new() }
    }
}

impl<A: Application> Assembler<A> {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one part; returns the global snapshot once every process's part has arrived.
    pub fn add(
        &mut self,
        topology: &Topology,
        local: LocalSnapshot<A>,
    ) -> Result<Option<GlobalSnapshot<A>>, AssemblyError> {
        let snapshot = local.snapshot;
        let process = local.process;
        if process.index() >= topology.len() {
            return Err(AssemblyError::UnknownProcess { snapshot, process });
        }
        let expected = topology.incoming(process).to_vec();
        let got: Vec<ChannelId> = local.channels.iter().map(|(c, _)| *c).collect();
        if got != expected {
            return Err(AssemblyError::WrongChannels { snapshot, process, expected, got });
        }
        let outgoing: Vec<ChannelId> = local.outputs.iter().map(|(c, _)| *c).collect();
        if !outgoing.is_empty() && outgoing != topology.outgoing(process) {
            let expected = topology.outgoing(process).to_vec();
            return Err(AssemblyError::WrongOutputs { snapshot, process, expected, got: outgoing });
        }
        let partial = self.partial.entry(snapshot).or_insert_with(|| Partial {
            processes: vec![None; topology.len()],
            channels: vec![(Vec::new(), Vec::new()); topology.channels().len()],
            missing: topology.len(),
        });
        if partial.processes[process.index()].is_some() {
            return Err(AssemblyError::DuplicatePart { snapshot, process });
        }
        partial.processes[process.index()] = Some(local.state);
        for (c, messages) in local.channels {
            partial.channels[c.index()].0 = messages;
        }
        for (c, messages) in local.outputs {
            partial.channels[c.index()].1 = messages;
        }
        partial.missing -= 1;
        if partial.missing > 0 {
            return Ok(None);
        }
        let Some(done) = self.partial.remove(&snapshot) else { return Ok(None) };
        let processes = done.processes.into_iter().flatten().collect();
        let channels = done
            .channels
            .into_iter()
            .map(|(mut receiver, sender)| {
                receiver.extend(sender);
                receiver
            })
            .collect();
        Ok(Some(GlobalSnapshot { id: snapshot, state: GlobalState { processes, channels } }))
    }

    /// Ids with some parts but not all.
    pub fn incomplete(&self) -> Vec<SnapshotId> {
        let mut ids: Vec<_> = self.partial.keys().copied().collect();
        ids.sort();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::bank::{Bank, Jars};

    fn local(t: &Topology, p: u16, jars: u32, rec: Vec<Vec<u32>>) -> LocalSnapshot<Bank> {
        let channels =
            t.incoming(ProcessId(p)).iter().zip(rec).map(|(&c, v)| (c, v.into_iter().map(Jars).collect())).collect();
        LocalSnapshot {
            snapshot: SnapshotId(0),
            process: ProcessId(p),
            state: Bank::new(jars),
            channels,
            outputs: vec![],
        }
    }

    #[test]
    fn assembles_when_all_parts_arrive_and_counts_tokens() {
        let t = Topology::ring(3).unwrap();
        let mut a = Assembler::new();
        assert_eq!(a.add(&t, local(&t, 0, 1, vec![vec![2]])), Ok(None));
        assert_eq!(a.add(&t, local(&t, 2, 3, vec![vec![]])), Ok(None));
        assert_eq!(a.incomplete(), vec![SnapshotId(0)]);
        let g = a.add(&t, local(&t, 1, 4, vec![vec![5, 6]])).unwrap().unwrap();
        assert_eq!(g.state.tokens_in_processes(), 8);
        assert_eq!(g.state.tokens_in_channels(), 13);
        assert_eq!(g.state.total(), 21);
        assert!(a.incomplete().is_empty());
    }

    #[test]
    fn rejects_duplicates_and_wrong_channels() {
        let t = Topology::ring(3).unwrap();
        let mut a = Assembler::new();
        a.add(&t, local(&t, 0, 1, vec![vec![]])).unwrap();
        assert_eq!(
            a.add(&t, local(&t, 0, 1, vec![vec![]])),
            Err(AssemblyError::DuplicatePart { snapshot: SnapshotId(0), process: ProcessId(0) })
        );
        let mut bad = local(&t, 1, 1, vec![vec![]]);
        bad.channels[0].0 = ChannelId(2);
        assert!(matches!(a.add(&t, bad), Err(AssemblyError::WrongChannels { .. })));
        let mut stranger = local(&t, 1, 1, vec![vec![]]);
        stranger.process = ProcessId(9);
        assert!(matches!(a.add(&t, stranger), Err(AssemblyError::UnknownProcess { .. })));
        // Output-buffer records (unaligned barriers) must list exactly the outgoing channels.
        let mut outputs = local(&t, 1, 1, vec![vec![]]);
        outputs.outputs = vec![(ChannelId(0), vec![])];
        assert_eq!(
            a.add(&t, outputs),
            Err(AssemblyError::WrongOutputs {
                snapshot: SnapshotId(0),
                process: ProcessId(1),
                expected: vec![ChannelId(1)],
                got: vec![ChannelId(0)]
            })
        );
        let mut right = local(&t, 1, 1, vec![vec![]]);
        right.outputs = vec![(ChannelId(1), vec![Jars(4)])];
        assert_eq!(a.add(&t, right), Ok(None));
    }
}
