//! What a recovery puts back on the channels: each channel's record in the restored checkpoint,
//! in front of it, oldest first — or, under a recovery fault variant, not quite.

use super::topology::{ChannelId, Topology};
use super::variant::Variant;

/// The contents each channel starts with after a recovery from a checkpoint whose channel
/// records are `records` (by channel index, oldest first). Correct: each record on its own
/// channel, in order. [`Variant::RestoreReversed`]: each record backwards.
/// [`Variant::RestoreMisrouted`]: each process's inputs take the record of its next input (in
/// declaration order, cyclically), so restored items arrive from the wrong upstream process.
pub fn restored_channels<M: Clone>(variant: Variant, topology: &Topology, records: &[Vec<M>]) -> Vec<Vec<M>> {
    let mut out = records.to_vec();
    match variant {
        Variant::RestoreReversed => out.iter_mut().for_each(|r| r.reverse()),
        Variant::RestoreMisrouted => {
            for p in topology.processes() {
                let inputs: &[ChannelId] = topology.incoming(p);
                for (i, c) in inputs.iter().enumerate() {
                    let from = inputs[(i + 1) % inputs.len()];
                    if let (Some(slot), Some(record)) = (out.get_mut(c.index()), records.get(from.index())) {
                        *slot = record.clone();
                    }
                }
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProcessId;

    #[test]
    fn records_go_back_in_order_on_their_channel_unless_a_variant_says_otherwise() {
        // A -> C, B -> C, A -> B: C has two inputs, B one.
        let names = vec!["A".to_string(), "B".to_string(), "C".to_string()];
        let (a, b, c) = (ProcessId(0), ProcessId(1), ProcessId(2));
        let t = Topology::new(names, [(a, c), (b, c), (a, b)]).unwrap();
        let records = vec![vec![1, 2], vec![3], vec![4, 5]];
        assert_eq!(restored_channels(Variant::None, &t, &records), records);
        assert_eq!(restored_channels(Variant::RestoreReversed, &t, &records), [vec![2, 1], vec![3], vec![5, 4]]);
        // C's two inputs swap records; B's one input keeps its own.
        assert_eq!(restored_channels(Variant::RestoreMisrouted, &t, &records), [vec![3], vec![1, 2], vec![4, 5]]);
    }
}
