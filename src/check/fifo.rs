//! FIFO, the theorem's precondition: on every channel, messages and markers are received in the
//! order they were sent. A message stolen in transit leaves its channel wherever it is, so
//! losses take no place in that order.

use std::collections::{HashMap, HashSet};

use super::trace::{EventKind, MsgId, Trace};
use crate::protocol::{Application, SnapshotId};
use crate::protocol::{ChannelId, Topology};

/// What travels on a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Item {
    /// An application message.
    Message(MsgId),
    /// A marker of a snapshot.
    Marker(SnapshotId),
}

/// Something received before something sent ahead of it on the same channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FifoBreak {
    /// The channel.
    pub channel: ChannelId,
    /// What was received too early.
    pub early: Item,
    /// Its send (a position in the trace).
    pub early_send: usize,
    /// Its receipt.
    pub early_receipt: usize,
    /// What it overtook: sent before it on the channel, not yet received (nor lost).
    pub overtaken: Item,
    /// The overtaken item's send.
    pub overtaken_send: usize,
    /// The overtaken item's receipt, if it is ever received.
    pub overtaken_receipt: Option<usize>,
}

/// The first FIFO break of each channel, in channel order. A marker's k-th receipt of a snapshot
/// on a channel is its k-th sending there.
pub fn fifo_breaks<A: Application>(topology: &Topology, trace: &Trace<A>) -> Vec<FifoBreak> {
    let channels = topology.channels().len();
    // Per channel: (item, k-th of its kind, position) of each send and receipt, in order.
    let mut sends: Vec<Vec<((Item, usize), usize)>> = vec![Vec::new(); channels];
    let mut receipts: Vec<Vec<((Item, usize), usize)>> = vec![Vec::new(); channels];
    let mut lost: HashSet<MsgId> = HashSet::new();
    let mut count: HashMap<(ChannelId, SnapshotId, bool), usize> = HashMap::new();
    let mut marker = |channel: ChannelId, snapshot: SnapshotId, sent: bool| {
        let k = count.entry((channel, snapshot, sent)).or_default();
        *k += 1;
        (Item::Marker(snapshot), *k - 1)
    };
    for (position, e) in trace.events.iter().enumerate() {
        match e.kind {
            EventKind::Send { channel, id, .. } => sends[channel.index()].push(((Item::Message(id), 0), position)),
            EventKind::Receive { channel, id } => receipts[channel.index()].push(((Item::Message(id), 0), position)),
            EventKind::Lost { id, .. } => {
                lost.insert(id);
            }
            EventKind::MarkerSend { channel, snapshot } => {
                sends[channel.index()].push((marker(channel, snapshot, true), position));
            }
            EventKind::MarkerReceive { channel, snapshot } => {
                receipts[channel.index()].push((marker(channel, snapshot, false), position));
            }
            _ => {}
        }
    }
    let mut breaks = Vec::new();
    for c in 0..channels {
        let sent: Vec<_> =
            sends[c].iter().filter(|((item, _), _)| !matches!(item, Item::Message(id) if lost.contains(id))).collect();
        let place: HashMap<(Item, usize), usize> = sent.iter().enumerate().map(|(i, (key, _))| (*key, i)).collect();
        let received_at: HashMap<(Item, usize), usize> = receipts[c].iter().copied().collect();
        let mut next = 0;
        for (key, receipt) in &receipts[c] {
            let Some(&i) = place.get(key) else { continue };
            if i < next {
                // Received twice: no valid trace does that.
                continue;
            }
            if i > next {
                let (overtaken, overtaken_send) = *sent[next];
                breaks.push(FifoBreak {
                    channel: ChannelId(c as u32),
                    early: key.0,
                    early_send: sent[i].1,
                    early_receipt: *receipt,
                    overtaken: overtaken.0,
                    overtaken_send,
                    overtaken_receipt: received_at.get(&overtaken).copied(),
                });
                break;
            }
            next += 1;
        }
    }
    breaks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apps::bank::{Bank, Jars};
    use crate::check::Event;
    use crate::protocol::{Initiators, ProcessId};

    fn trace(kinds: Vec<(u16, EventKind<Jars, crate::apps::bank::Sale>)>) -> Trace<Bank> {
        let events = kinds.into_iter().map(|(p, kind)| Event { process: ProcessId(p), kind, state: None }).collect();
        Trace { initial: vec![Bank::new(5), Bank::new(5)], initiators: Initiators::Any, events }
    }

    #[test]
    fn overtaking_is_found_and_losses_take_no_place() {
        let t = Topology::complete(2).unwrap();
        let c = t.channel_between(ProcessId(0), ProcessId(1)).unwrap();
        let (m0, m1, m2) = (MsgId::new(ProcessId(0), 0), MsgId::new(ProcessId(0), 1), MsgId::new(ProcessId(0), 2));
        let s = SnapshotId(0);
        let send = |id| (0, EventKind::Send { channel: c, id, msg: Jars(1) });
        let receive = |id| (1, EventKind::Receive { channel: c, id });
        // In order, with a message lost from the middle.
        let fine = trace(vec![
            send(m0),
            send(m1),
            (0, EventKind::MarkerSend { snapshot: s, channel: c }),
            send(m2),
            receive(m0),
            (1, EventKind::Lost { channel: c, id: m1 }),
            (1, EventKind::MarkerReceive { snapshot: s, channel: c }),
            receive(m2),
        ]);
        assert_eq!(fifo_breaks(&t, &fine), vec![]);
        // m2, sent after the marker, is received before it.
        let mut events = fine.events.clone();
        events.swap(6, 7);
        let broken = Trace { events, ..fine.clone() };
        assert_eq!(
            fifo_breaks(&t, &broken),
            vec![FifoBreak {
                channel: c,
                early: Item::Message(m2),
                early_send: 3,
                early_receipt: 6,
                overtaken: Item::Marker(s),
                overtaken_send: 2,
                overtaken_receipt: Some(7),
            }]
        );
        // m1 overtakes m0, which is never received.
        let never = trace(vec![send(m0), send(m1), receive(m1)]);
        let found = fifo_breaks(&t, &never);
        assert_eq!(
            (found[0].early, found[0].overtaken, found[0].overtaken_receipt),
            (Item::Message(m1), Item::Message(m0), None)
        );
        // Two markers of one snapshot on a channel are told apart by their order: the second,
        // sent after m0, overtakes it.
        let marker = || (0, EventKind::MarkerSend { snapshot: s, channel: c });
        let marked = || (1, EventKind::MarkerReceive { snapshot: s, channel: c });
        let twice = trace(vec![marker(), send(m0), marker(), marked(), marked(), receive(m0)]);
        assert_eq!(
            fifo_breaks(&t, &twice),
            vec![FifoBreak {
                channel: c,
                early: Item::Marker(s),
                early_send: 2,
                early_receipt: 4,
                overtaken: Item::Message(m0),
                overtaken_send: 1,
                overtaken_receipt: Some(5),
            }]
        );
        let ordered = trace(vec![marker(), send(m0), marker(), marked(), receive(m0), marked()]);
        assert_eq!(fifo_breaks(&t, &ordered), vec![]);
    }
}
