//! One queue per channel: what is in transit, each entry with the tick it is due at.

use std::collections::VecDeque;

use rand::rngs::StdRng;
use rand::Rng;

use crate::check::MsgId;
use crate::protocol::SnapshotId;

/// What travels: an application message with its trace id, or a marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wire<M> {
    App(MsgId, M),
    Marker(SnapshotId),
}

#[derive(Clone, Copy, Debug)]
struct InFlight<M> {
    due: u64,
    wire: Wire<M>,
}

/// How a link hands out its messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// Only the head, once it is due (a head not yet due blocks the messages behind it).
    Fifo,
    /// Any due message, chosen at random (the `non-fifo` channel fault).
    Any,
}

/// The messages in transit on one channel, in sending order; `M` is the application's message.
#[derive(Clone, Debug)]
pub(crate) struct Link<M> {
    queue: VecDeque<InFlight<M>>,
}

impl<M> Default for Link<M> {
    fn default() -> Self {
        Link { queue: VecDeque::new() }
    }
}

impl<M: Clone> Link<M> {
    pub(crate) fn push(&mut self, due: u64, wire: Wire<M>) {
        self.queue.push_back(InFlight { due, wire });
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The earliest tick at which this link can deliver something.
    pub(crate) fn next_due(&self, order: Order) -> Option<u64> {
        match order {
            Order::Fifo => self.queue.front().map(|m| m.due),
            Order::Any => self.queue.iter().map(|m| m.due).min(),
        }
    }

    /// Takes the message delivered at tick `now`, if one is due.
    pub(crate) fn take_due(&mut self, now: u64, order: Order, rng: &mut StdRng) -> Option<Wire<M>> {
        let index = match order {
            Order::Fifo => self.queue.front().filter(|m| m.due <= now).map(|_| 0)?,
            Order::Any => {
                let due: Vec<usize> = (0..self.queue.len()).filter(|&i| self.queue[i].due <= now).collect();
                match due.len() {
                    0 => return None,
                    1 => due[0],
                    n => due[rng.random_range(0..n)],
                }
            }
        };
        self.queue.remove(index).map(|m| m.wire)
    }

    /// The application messages in transit, head first.
    pub(crate) fn app_messages(&self) -> Vec<M> {
        self.queue
            .iter()
            .filter_map(|m| match &m.wire {
                Wire::App(_, msg) => Some(msg.clone()),
                Wire::Marker(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn fifo_head_not_due_blocks_the_rest() {
        let mut rng = StdRng::seed_from_u64(0);
        let mut l = Link::<u32>::default();
        l.push(5, Wire::Marker(SnapshotId(0)));
        l.push(2, Wire::Marker(SnapshotId(1)));
        assert_eq!(l.next_due(Order::Fifo), Some(5));
        assert_eq!(l.take_due(4, Order::Fifo, &mut rng), None);
        assert_eq!(l.take_due(5, Order::Fifo, &mut rng), Some(Wire::Marker(SnapshotId(0))));
        assert_eq!(l.take_due(5, Order::Fifo, &mut rng), Some(Wire::Marker(SnapshotId(1))));
        assert_eq!(l.len(), 0);
    }

    #[test]
    fn any_order_takes_a_due_message_behind_the_head() {
        let mut rng = StdRng::seed_from_u64(0);
        let mut l = Link::<u32>::default();
        l.push(5, Wire::Marker(SnapshotId(0)));
        l.push(2, Wire::Marker(SnapshotId(1)));
        assert_eq!(l.next_due(Order::Any), Some(2));
        assert_eq!(l.take_due(2, Order::Any, &mut rng), Some(Wire::Marker(SnapshotId(1))));
    }
}
