//! The reader and writer on small logs.

use super::*;
use crate::apps::bank::{Bank, Jars, Sale};

fn topology() -> Topology {
    Topology::complete(2).unwrap()
}

fn read(texts: &[(&str, &str)]) -> Result<Logs<Bank>, LogError> {
    let texts: Vec<(String, String)> = texts.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect();
    parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts)
}

fn problem(texts: &[(&str, &str)]) -> (String, usize, LogProblem) {
    let e = read(texts).unwrap_err();
    let at = if e.line == 0 { format!("{}:", e.file) } else { format!("{}:{}:", e.file, e.line) };
    assert!(e.to_string().starts_with(&at), "{e}");
    (e.file, e.line, *e.problem)
}

const P0: &str = r#"{"process":"P0","seq":0,"kind":"send","channel":"P0->P1","msg":7,"payload":3,"state":{"jars":7,"sold":0}}
{"process":"P0","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":7,"sold":0}}
{"process":"P0","seq":2,"kind":"marker-send","snapshot":0,"channel":"P0->P1"}

{"process":"P0","seq":3,"kind":"marker-receive","snapshot":0,"channel":"P1->P0","recorded":[]}
{"process":"P0","seq":4,"kind":"internal","step":2,"state":{"jars":5,"sold":2}}
"#;
const P1: &str = r#"{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
{"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":3,"kind":"receive","channel":"P0->P1","msg":"7"}
"#;

#[test]
fn reads_a_run_in_causal_order_and_assembles_its_snapshot() {
    let logs = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
    let t = topology();
    let (c01, c10) = (t.channel_between(ProcessId(0), ProcessId(1)).unwrap(), ChannelId(1));
    assert_eq!(t.channel_label(c10), "P1->P0");
    let id = MsgId::new(ProcessId(0), 0);
    let kinds: Vec<_> = logs.trace.events.iter().map(|e| (e.process.0, e.kind.clone())).collect();
    let s = SnapshotId(0);
    assert_eq!(
        kinds,
        vec![
            (0, EventKind::Send { channel: c01, id, msg: Jars(3) }),
            (0, EventKind::Record { snapshot: s, initiated: true }),
            (0, EventKind::MarkerSend { snapshot: s, channel: c01 }),
            (1, EventKind::MarkerReceive { snapshot: s, channel: c01 }),
            (1, EventKind::Record { snapshot: s, initiated: false }),
            (1, EventKind::MarkerSend { snapshot: s, channel: c10 }),
            (1, EventKind::Receive { channel: c01, id }),
            (0, EventKind::MarkerReceive { snapshot: s, channel: c10 }),
            (0, EventKind::Internal { step: Sale(2) }),
        ]
    );
    let lines: Vec<String> = logs.locations.iter().map(ToString::to_string).collect();
    assert_eq!(lines[..4], ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3", "b.jsonl:2"]);
    assert_eq!(lines[7..], ["a.jsonl:5", "a.jsonl:6"]);
    assert_eq!(logs.trace.events[2].state, None);
    assert_eq!(logs.names[&id], LogId("7".into()));
    assert_eq!(logs.claims.len(), 1);
    let claim = &logs.claims[0];
    assert_eq!((claim.records.clone(), claim.closes.clone()), (vec![Some(1), Some(4)], vec![Some(3), Some(7)]));
    let snapshot = claim.snapshot.clone().unwrap();
    assert_eq!(snapshot.state.processes, vec![Bank::new(7), Bank::new(10)]);
    assert_eq!(snapshot.state.channels, vec![vec![Jars(3)], vec![]]);
    assert!(claim.anomalies.is_empty());
    let report = crate::check::check(&t, &logs.trace, &snapshot).unwrap();
    assert_eq!(report.violations, vec![]);
}

#[test]
fn bad_lines_are_named_by_file_and_line() {
    let bad = |line: &str| problem(&[("a.jsonl", P0), ("b.jsonl", &format!("{P1}{line}\n"))]);
    let (file, line, p) = bad("{\"process\":\"P1\",");
    assert_eq!((file.as_str(), line), ("b.jsonl", 5));
    assert!(matches!(p, LogProblem::Malformed(_)), "{p}");
    let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"teleport"}"#);
    assert!(p.to_string().contains("unknown variant `teleport`"), "{p}");
    let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"internal","step":1,"colour":"red"}"#);
    assert!(p.to_string().contains("unknown field `colour`"), "{p}");
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"internal","step":1,"msg":3}"#).2,
        LogProblem::ExtraField { kind: "internal", field: "msg" }
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P0","payload":1}"#).2,
        LogProblem::MissingField { kind: "send", field: "msg" }
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"record","snapshot":1,"initiated":true}"#).2,
        LogProblem::MissingField { kind: "record", field: "state" }
    );
    assert_eq!(
        bad(r#"{"process":"P7","seq":4,"kind":"internal","step":1}"#).2,
        LogProblem::UnknownProcess("P7".into())
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P1","msg":"x","payload":1}"#).2,
        LogProblem::UnknownChannel("P1->P1".into())
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P0->P1","msg":"x","payload":1}"#).2,
        LogProblem::WrongEnd { process: "P1".into(), channel: "P0->P1".into(), end: "sender" }
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":5,"kind":"internal","step":1}"#).2,
        LogProblem::SeqGap { process: "P1".into(), expected: 4, found: 5 }
    );
    let first = Location { file: "b.jsonl".into(), line: 4 };
    assert_eq!(
        bad(r#"{"process":"P1","seq":3,"kind":"internal","step":1}"#),
        ("b.jsonl".into(), 5, LogProblem::SeqRepeated { process: "P1".into(), seq: 3, first })
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"receive","channel":"P0->P1","msg":"8"}"#).2,
        LogProblem::NeverSent { what: "receipt", id: LogId("8".into()) }
    );
    let first = Location { file: "b.jsonl".into(), line: 4 };
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"loss","channel":"P0->P1","msg":"7"}"#).2,
        LogProblem::ReceivedTwice { id: LogId("7".into()), first }
    );
    let first = Location { file: "a.jsonl".into(), line: 1 };
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P0","msg":7,"payload":1}"#).2,
        LogProblem::DuplicateId { id: LogId("7".into()), first }
    );
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"marker-receive","snapshot":1,"channel":"P0->P1","recorded":[]}"#).2,
        LogProblem::MarkerNeverSent { snapshot: SnapshotId(1), channel: "P0->P1".into() }
    );
    let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"receive","channel":"P0->P1","msg":-1}"#);
    assert!(p.to_string().contains("a string or a non-negative integer"), "{p}");
}

#[test]
fn a_recorded_id_never_sent_and_a_cycle_are_refused() {
    let p1 = P1.replace(r#""recorded":["7"]"#, r#""recorded":["nine"]"#);
    assert_eq!(
        problem(&[("a.jsonl", P0), ("b.jsonl", &p1)]),
        ("b.jsonl".into(), 2, LogProblem::RecordedNeverSent { id: LogId("nine".into()) })
    );
    // P0 receives P1's message before sending its own; P1 receives P0's before sending.
    let a = r#"{"process":"P0","seq":0,"kind":"receive","channel":"P1->P0","msg":"b"}
{"process":"P0","seq":1,"kind":"send","channel":"P0->P1","msg":"a","payload":1}"#;
    let b = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"a"}
{"process":"P1","seq":1,"kind":"send","channel":"P1->P0","msg":"b","payload":1}"#;
    let (file, line, p) = problem(&[("a.jsonl", a), ("b.jsonl", b)]);
    assert_eq!((file.as_str(), line), ("a.jsonl", 1));
    let sent_at = Some(Location { file: "b.jsonl".into(), line: 2 });
    assert_eq!(p, LogProblem::Cycle { what: format!("message {}", MsgId::new(ProcessId(1), 0)), sent_at });
}

#[test]
fn anomalies_and_incomplete_snapshots() {
    // P1 never closes P0->P1 in this log: the snapshot is not assembled.
    let p1: String = P1.lines().filter(|l| !l.contains("\"seq\":0")).collect::<Vec<_>>().join("\n");
    let p1 =
        p1.replace("\"seq\":1", "\"seq\":0").replace("\"seq\":2", "\"seq\":1").replace("\"seq\":3", "\"seq\":2");
    let logs = read(&[("a.jsonl", P0), ("b.jsonl", &p1)]).unwrap();
    assert_eq!(logs.claims[0].snapshot, None);
    assert_eq!(logs.claims[0].closes[0], None);
    // A record claiming a message of another channel.
    let p0 = P0.replace(r#""recorded":[]"#, r#""recorded":["7"]"#);
    let logs = read(&[("a.jsonl", &p0), ("b.jsonl", P1)]).unwrap();
    let anomalies = &logs.claims[0].anomalies;
    assert_eq!(anomalies.len(), 1);
    assert!(anomalies[0].message.contains("the record of P1->P0 claims message m0.0, which was sent on P0->P1"));
    assert_eq!(logs.locations[anomalies[0].position].to_string(), "a.jsonl:5");
}

#[test]
fn written_lines_read_back_to_the_same_run() {
    let logs = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
    let snapshot = logs.claims[0].snapshot.clone().unwrap();
    let lines = to_lines(&topology(), &logs.trace, &[snapshot]).unwrap();
    assert!(lines[1][0].contains(r#""recorded":["m0.0"]"#), "{}", lines[1][0]);
    let texts: Vec<(String, String)> =
        lines.iter().enumerate().map(|(p, l)| (format!("P{p}.jsonl"), l.join("\n"))).collect();
    let again: Logs<Bank> = parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts).unwrap();
    assert_eq!(again.trace, logs.trace);
    assert_eq!(again.claims[0].snapshot, logs.claims[0].snapshot);
}
