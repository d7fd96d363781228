//! What the logs claim about each snapshot, and the claims no correct run makes.

use super::*;
/// The snapshots the logs claim: for every snapshot id mentioned, the records and closes, and
/// the global snapshot when it is complete.
pub(super) fn claims<A: Application>(
    topology: &Topology,
    trace: &Trace<A>,
    origins: &[(usize, usize)],
    recorded_ids: &HashMap<(usize, usize), Vec<MsgId>>,
) -> Vec<Claim<A>> {
    let sends: HashMap<MsgId, (ChannelId, &A::Msg)> = trace
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Send { channel, id, msg } => Some((*id, (*channel, msg))),
            _ => None,
        })
        .collect();
    let mut claims: BTreeMap<SnapshotId, Claim<A>> = BTreeMap::new();
    let mut records: HashMap<(SnapshotId, ChannelId), Vec<MsgId>> = HashMap::new();
    for (position, e) in trace.events.iter().enumerate() {
        let (EventKind::Record { snapshot, .. }
        | EventKind::MarkerSend { snapshot, .. }
        | EventKind::MarkerReceive { snapshot, .. }) = e.kind
        else {
            continue;
        };
        let claim = claims.entry(snapshot).or_insert_with(|| Claim {
            id: snapshot,
            snapshot: None,
            records: vec![None; topology.len()],
            closes: vec![None; topology.channels().len()],
            anomalies: Vec::new(),
        });
        let name = topology.name(e.process);
        match e.kind {
            EventKind::Record { .. } => match claim.records[e.process.index()] {
                Some(_) => claim.anomalies.push(Anomaly {
                    position,
                    message: format!("{name} records its state for snapshot {snapshot} a second time"),
                }),
                None => claim.records[e.process.index()] = Some(position),
            },
            EventKind::MarkerReceive { channel, .. } => {
                let label = topology.channel_label(channel);
                if claim.closes[channel.index()].is_some() {
                    claim.anomalies.push(Anomaly {
                        position,
                        message: format!("the record of {label} for snapshot {snapshot} is closed a second time"),
                    });
                    continue;
                }
                claim.closes[channel.index()] = Some(position);
                let ids = recorded_ids.get(&origins[position]).cloned().unwrap_or_default();
                for id in &ids {
                    match sends.get(id) {
                        Some((sent_on, _)) if *sent_on != channel => claim.anomalies.push(Anomaly {
                            position,
                            message: format!(
                                "the record of {label} claims message {id}, which was sent on {}",
                                topology.channel_label(*sent_on)
                            ),
                        }),
                        _ => {}
                    }
                }
                records.insert((snapshot, channel), ids);
            }
            _ => {}
        }
    }
    for claim in claims.values_mut() {
        let (Some(states), Some(_)) = (
            claim
                .records
                .iter()
                .map(|r| r.and_then(|position| trace.events[position].state.clone()))
                .collect::<Option<Vec<A>>>(),
            claim.closes.iter().copied().collect::<Option<Vec<usize>>>(),
        ) else {
            continue;
        };
        let channels = (0..topology.channels().len())
            .map(|c| {
                let ids = records.get(&(claim.id, ChannelId(c as u32)));
                ids.into_iter().flatten().filter_map(|id| sends.get(id).map(|(_, msg)| (*msg).clone())).collect()
            })
            .collect();
        claim.snapshot = Some(GlobalSnapshot { id: claim.id, state: GlobalState { processes: states, channels } });
    }
    claims.into_values().collect()
}

