//! Opaque states (`--app none`, issue 53): a recorded state is compared only with a state its
//! process logged at the same point of its history, so which lines log a state never changes
//! a verdict on a correct run; a recorded state other than the one logged at the same point is
//! still a finding.

mod common;

use chandy_lamport::apps::json::Opaque;
use chandy_lamport::formats::jsonl::Source;
use chandy_lamport::logs::{judge_logs, Judgement, Reader, Semantics, EXIT_FAIL};
use chandy_lamport::{Topology, Variant};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// Which lines keep their `state`.
#[derive(Clone, Copy, Debug)]
enum Logged {
    None,
    Records,
    Every,
    /// Each line with probability one half, by a seed.
    Random(u64),
}

/// The simulator's logs of a correct run (every line with its state), one text per process;
/// `None` when the run stops or takes no snapshot (then nothing is judged).
fn correct_run(topology: &Topology, seed: u64) -> Option<Vec<(String, Vec<Value>)>> {
    let finished = common::workload(topology, Variant::None, seed).ok()?;
    if finished.snapshots.is_empty() {
        return None;
    }
    let dir = tempfile::Builder::new().prefix("opaque-states-").tempdir().unwrap();
    let files = finished.write_logs(dir.path(), topology).unwrap();
    let texts = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            (name, text.lines().map(|l| serde_json::from_str(l).unwrap()).collect())
        })
        .collect();
    Some(texts)
}

/// The logs with `state` kept only on the lines `logged` says.
fn with_states(logs: &[(String, Vec<Value>)], logged: Logged) -> Vec<(String, String)> {
    let mut rng = StdRng::seed_from_u64(match logged {
        Logged::Random(seed) => seed,
        _ => 0,
    });
    logs.iter()
        .map(|(name, lines)| {
            let text = lines
                .iter()
                .map(|line| {
                    let mut line = line.clone();
                    let keep = match logged {
                        Logged::None => false,
                        Logged::Records => line["kind"] == "record",
                        Logged::Every => true,
                        Logged::Random(_) => rng.random_bool(0.5),
                    };
                    if !keep {
                        line.as_object_mut().unwrap().remove("state");
                    }
                    format!("{line}\n")
                })
                .collect();
            (name.clone(), text)
        })
        .collect()
}

fn judge(topology: &Topology, texts: &[(String, String)], reader: Reader) -> Judgement {
    let initial = vec![Opaque::default(); topology.len()];
    judge_logs(topology, initial, Source::Texts(texts), &Semantics::opaque(), reader, &mut ())
        .unwrap_or_else(|e| panic!("{e}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn which_lines_log_opaque_states_never_changes_a_verdict(
        seed in any::<u64>(),
        ring in any::<bool>(),
        mask in any::<u64>(),
        forged in any::<prop::sample::Index>(),
    ) {
        let topology = if ring { Topology::ring(4).unwrap() } else { Topology::complete(3).unwrap() };
        let Some(logs) = correct_run(&topology, seed) else { return Ok(()) };
        let every = judge(&topology, &with_states(&logs, Logged::Every), Reader::Whole);
        prop_assert!(every.ok, "a correct run: {every:#?}");
        for logged in [Logged::None, Logged::Records, Logged::Random(mask)] {
            for reader in [Reader::OnePass, Reader::Whole] {
                let judgement = judge(&topology, &with_states(&logs, logged), reader);
                prop_assert_eq!(&judgement, &every, "{:?} by {:?}", logged, reader);
            }
        }
        // A record whose state differs from the state logged on the line before it (every line
        // logs one, and a record line follows a line at the same point, or is the first).
        let records: Vec<(usize, usize)> = logs
            .iter()
            .enumerate()
            .flat_map(|(f, (_, lines))| {
                lines.iter().enumerate().filter(|(i, l)| *i > 0 && l["kind"] == "record").map(move |(i, _)| (f, i))
            })
            .collect();
        prop_assume!(!records.is_empty());
        let (f, i) = records[forged.index(records.len())];
        let mut doctored = logs.clone();
        doctored[f].1[i]["state"] = serde_json::json!({"forged": true});
        let at = format!("record at {}:{}", doctored[f].0, i + 1);
        for reader in [Reader::OnePass, Reader::Whole] {
            let judgement = judge(&topology, &with_states(&doctored, Logged::Every), reader);
            prop_assert_eq!(judgement.exit_code, EXIT_FAIL, "{:?}: {:#?}", reader, judgement);
            let found = judgement.snapshots.iter().flat_map(|s| &s.findings).any(|finding| {
                finding.clause == "claims"
                    && finding.message.contains(r#"records the state {"forged":true}"#)
                    && finding.at.first() == Some(&at)
            });
            prop_assert!(found, "{:?}: {:#?}", reader, judgement);
        }
    }
}
