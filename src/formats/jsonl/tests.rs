//! The reader and writer on small logs.

use super::write::to_lines;
use super::*;
use crate::apps::bank::{Bank, Jars, Sale};
use crate::check::{EventKind, MsgId};
use crate::protocol::{ChannelId, ProcessId, SnapshotId, Topology};

/// The anomalies the judge finds in each claim of `logs` (the reader reads the claims; the judge,
/// `crate::logs`, judges them), states interpreted.
fn judged<A: LogApp>(logs: &Logs<A>) -> Vec<Vec<crate::logs::Anomaly>> {
    crate::logs::judge_claims(&topology(), logs, false)
}

/// [`judged`] with opaque states.
fn judged_opaque<A: LogApp>(logs: &Logs<A>) -> Vec<Vec<crate::logs::Anomaly>> {
    crate::logs::judge_claims(&topology(), logs, true)
}

fn topology() -> Topology {
    Topology::complete(2).unwrap()
}

fn read(texts: &[(&str, &str)]) -> Result<Logs<Bank>, LogError> {
    let texts: Vec<(String, String)> = texts.iter().map(|(f, t)| (f.to_string(), t.to_string())).collect();
    parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts, &States::Interpreted)
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
/// P1 initiates too: it records before P0's cart arrives, so its record of P0->P1 holds it.
const P1: &str = r#"{"process":"P1","seq":1,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":2,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":3,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
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
            (1, EventKind::Record { snapshot: s, initiated: true }),
            (1, EventKind::MarkerSend { snapshot: s, channel: c10 }),
            (1, EventKind::Receive { channel: c01, id }),
            (1, EventKind::MarkerReceive { snapshot: s, channel: c01 }),
            (0, EventKind::MarkerReceive { snapshot: s, channel: c10 }),
            (0, EventKind::Internal { step: Sale(2) }),
        ]
    );
    let lines: Vec<String> = logs.locations.iter().map(ToString::to_string).collect();
    assert_eq!(lines[..5], ["a.jsonl:1", "a.jsonl:2", "a.jsonl:3", "b.jsonl:2", "b.jsonl:1"]);
    assert_eq!(lines[7..], ["a.jsonl:5", "a.jsonl:6"]);
    assert_eq!(logs.trace.events[2].state, None);
    assert_eq!(logs.names[&id], LogId("7".into()));
    assert_eq!(logs.claims.len(), 1);
    let claim = &logs.claims[0];
    assert_eq!((claim.records.clone(), claim.closes.clone()), (vec![Some(1), Some(3)], vec![Some(6), Some(7)]));
    let snapshot = claim.snapshot.clone().unwrap();
    assert_eq!(snapshot.state.processes, vec![Bank::new(7), Bank::new(10)]);
    assert_eq!(snapshot.state.channels, vec![vec![Jars(3)], vec![]]);
    assert!(judged(&logs)[0].is_empty());
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
    let first = Location { file: "b.jsonl".into(), line: 4 };
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"loss","channel":"P0->P1","msg":"7"}"#).2,
        LogProblem::ReceivedTwice { id: LogId("7".into()), first: Location { line: 3, ..first } }
    );
    let first = Location { file: "a.jsonl".into(), line: 1 };
    assert_eq!(
        bad(r#"{"process":"P1","seq":4,"kind":"send","channel":"P1->P0","msg":7,"payload":1}"#).2,
        LogProblem::DuplicateId { id: LogId("7".into()), first }
    );
    let (_, _, p) = bad(r#"{"process":"P1","seq":4,"kind":"receive","channel":"P0->P1","msg":-1}"#);
    assert!(p.to_string().contains("a string or a non-negative integer"), "{p}");
}

#[test]
fn a_cycle_is_refused() {
    // P0 receives P1's message before sending its own; P1 receives P0's before sending.
    let a = r#"{"process":"P0","seq":0,"kind":"receive","channel":"P1->P0","msg":"b"}
{"process":"P0","seq":1,"kind":"send","channel":"P0->P1","msg":"a","payload":1}"#;
    let b = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"a"}
{"process":"P1","seq":1,"kind":"send","channel":"P1->P0","msg":"b","payload":1}"#;
    let (file, line, p) = problem(&[("a.jsonl", a), ("b.jsonl", b)]);
    assert_eq!((file.as_str(), line), ("a.jsonl", 1));
    let sent_at = Some(Location { file: "b.jsonl".into(), line: 2 });
    assert_eq!(p, LogProblem::Cycle { what: "message \"b\"".into(), sent_at: sent_at.clone() });
    // Each process waits for the other's marker before sending its own.
    let a = r#"{"process":"P0","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P1->P0","recorded":[]}
{"process":"P0","seq":1,"kind":"marker-send","snapshot":0,"channel":"P0->P1"}"#;
    let b = r#"{"process":"P1","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[]}
{"process":"P1","seq":1,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}"#;
    let what = "the marker of snapshot 0 on P1->P0".to_string();
    assert_eq!(problem(&[("a.jsonl", a), ("b.jsonl", b)]), ("a.jsonl".into(), 1, LogProblem::Cycle { what, sent_at }));
}

#[test]
fn anomalies_and_incomplete_snapshots() {
    // P1 never closes P0->P1 in this log: the snapshot is not assembled.
    let p1: String = P1.lines().filter(|l| !l.contains("marker-receive")).collect::<Vec<_>>().join("\n");
    let logs = read(&[("a.jsonl", P0), ("b.jsonl", &p1)]).unwrap();
    assert_eq!(logs.claims[0].snapshot, None);
    assert_eq!(logs.claims[0].closes[0], None);
    // A record claiming a message of another channel.
    let p0 = P0.replace(r#""recorded":[]"#, r#""recorded":["7"]"#);
    let logs = read(&[("a.jsonl", &p0), ("b.jsonl", P1)]).unwrap();
    let anomalies = &judged(&logs)[0];
    assert_eq!(anomalies.len(), 1);
    assert_eq!(
        anomalies[0].message,
        "P0's record of P1->P0 for snapshot 0 claims message \"7\", which was sent on P0->P1"
    );
    let at: Vec<String> = anomalies[0].at.iter().map(|(role, l)| format!("{role} at {l}")).collect();
    assert_eq!(at, ["marker receipt at a.jsonl:5", "send at a.jsonl:1"]);
}

/// The anomalies of one claim, as `message @ role at file:line, ...`.
fn anomalies(texts: &[(&str, &str)]) -> Vec<String> {
    let logs = read(texts).unwrap();
    judged(&logs)
        .into_iter()
        .flatten()
        .map(|a| {
            let at: Vec<String> = a.at.iter().map(|(role, l)| format!("{role} at {l}")).collect();
            format!("{} @ {}", a.message, at.join(", "))
        })
        .collect()
}

#[test]
fn every_recorded_id_is_a_message_received_between_the_record_and_the_marker() {
    // Never sent.
    let p1 = P1.replace(r#""recorded":["7"]"#, r#""recorded":["nine"]"#);
    assert_eq!(
        anomalies(&[("a.jsonl", P0), ("b.jsonl", &p1)]),
        ["P1's record of P0->P1 for snapshot 0 claims message \"nine\", which no log sends @ marker receipt at b.jsonl:4"]
    );
    // Claimed twice.
    let p1 = P1.replace(r#""recorded":["7"]"#, r#""recorded":["7","7"]"#);
    assert_eq!(
        anomalies(&[("a.jsonl", P0), ("b.jsonl", &p1)]),
        ["P1's record of P0->P1 for snapshot 0 claims message \"7\" twice @ marker receipt at b.jsonl:4"]
    );
    // P1 closes P0->P1 (it recorded first), claiming "7", which it receives only after the marker.
    let p1 = r#"{"process":"P1","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":1,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":2,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
{"process":"P1","seq":3,"kind":"receive","channel":"P0->P1","msg":"7"}
"#;
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", p1)]);
    assert!(found.contains(&"P1's record of P0->P1 for snapshot 0 claims message \"7\", which P1 receives only after that marker: the marker overtook it, or the record holds a message not yet received @ marker receipt at b.jsonl:3, send at a.jsonl:1, receipt at b.jsonl:4".to_string()), "{found:#?}");
    // A first marker (the one the process records on) with a record that is not empty.
    let p1 = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":1,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
{"process":"P1","seq":2,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":13,"sold":0}}
{"process":"P1","seq":3,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
"#;
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", p1)]);
    assert_eq!(found, ["P1's record of P0->P1 for snapshot 0 claims \"7\", but that marker is the first of snapshot 0 to reach P1, which records on it: by the marker rule the record of P0->P1 is empty @ marker receipt at b.jsonl:2"]);
    // Received before the record.
    let p1 = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":13,"sold":0}}
{"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":3,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":["7"]}
"#;
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", p1)]);
    assert_eq!(found, ["P1's record of P0->P1 for snapshot 0 claims message \"7\", which P1 received before it recorded @ marker receipt at b.jsonl:4, send at a.jsonl:1, receipt at b.jsonl:1, record at b.jsonl:2"]);
    // Lost, and never received.
    let lost = p1.replace(r#""kind":"receive""#, r#""kind":"loss""#);
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", &lost)]);
    assert_eq!(found, ["P1's record of P0->P1 for snapshot 0 claims message \"7\", which was lost in transit @ marker receipt at b.jsonl:4, send at a.jsonl:1, loss at b.jsonl:1"]);
    let never: String = p1
        .lines()
        .skip(1)
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        .replace("\"seq\":1", "\"seq\":0")
        .replace("\"seq\":2", "\"seq\":1")
        .replace("\"seq\":3", "\"seq\":2");
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", &never)]);
    assert_eq!(found, ["P1's record of P0->P1 for snapshot 0 claims message \"7\", which P1 never receives @ marker receipt at b.jsonl:3, send at a.jsonl:1"]);
}

#[test]
fn a_record_logged_before_its_marker_receipt_reads_as_after_it() {
    let after = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":1,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[]}
{"process":"P1","seq":2,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":13,"sold":0}}
{"process":"P1","seq":3,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
"#;
    let before = after
        .replace(r#""seq":2,"kind":"record""#, r#""seq":1,"kind":"record""#)
        .replace(r#""seq":1,"kind":"marker-receive""#, r#""seq":2,"kind":"marker-receive""#);
    let (a, b) = (
        read(&[("a.jsonl", P0), ("b.jsonl", after)]).unwrap(),
        read(&[("a.jsonl", P0), ("b.jsonl", &before)]).unwrap(),
    );
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.claims[0].snapshot, b.claims[0].snapshot);
    assert!(judged(&b)[0].is_empty());
    // With a marker-send between them too; but not with a receipt between them.
    let sends_first = r#"{"process":"P1","seq":0,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":13,"sold":0}}
{"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":3,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[]}
"#;
    assert_eq!(read(&[("a.jsonl", P0), ("b.jsonl", sends_first)]).unwrap().trace, a.trace);
    let receipt_between = r#"{"process":"P1","seq":0,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":1,"kind":"receive","channel":"P0->P1","msg":"7"}
{"process":"P1","seq":2,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[]}
{"process":"P1","seq":3,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
"#;
    let found = anomalies(&[("a.jsonl", P0), ("b.jsonl", receipt_between)]);
    assert!(found[0].starts_with("P1 records for snapshot 0 as caused by a marker (\"initiated\": false), but no marker of snapshot 0 reached it before @ record at b.jsonl:1"), "{found:#?}");
}

#[test]
fn written_lines_read_back_to_the_same_run() {
    let logs = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
    let snapshot = logs.claims[0].snapshot.clone().unwrap();
    let lines = to_lines(&topology(), &logs.trace, &[snapshot]).unwrap();
    assert!(lines[1][3].contains(r#""recorded":["m0.0"]"#), "{}", lines[1][3]);
    let texts: Vec<(String, String)> =
        lines.iter().enumerate().map(|(p, l)| (format!("P{p}.jsonl"), l.join("\n"))).collect();
    let again: Logs<Bank> =
        parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts, &States::Interpreted).unwrap();
    assert_eq!(again.trace, logs.trace);
    assert_eq!(again.claims[0].snapshot, logs.claims[0].snapshot);
}

#[test]
fn values_are_named_by_their_field_and_a_line_is_an_object() {
    let bad = |line: &str| problem(&[("a.jsonl", &format!("{P0}{line}\n")), ("b.jsonl", P1)]);
    let (_, line, p) = bad(r#"{"process":"P0","seq":1180591620717411303424,"kind":"internal","step":1}"#);
    assert_eq!(line, 7);
    assert!(p.to_string().starts_with("not an event: `seq`: invalid type: floating point"), "{p}");
    let (_, _, p) = bad(r#"{"process":"P0","seq":5,"kind":"internal","step":"two"}"#);
    assert!(p.to_string().starts_with("not an event: `step`: invalid type: string \"two\", expected"), "{p}");
    assert_eq!(bad(r#"[1, 2]"#).2, LogProblem::BadValue("a line is one JSON object (an event), not an array".into()));
    assert!(matches!(bad(r#"{"process": "P0", "seq": 5,"#).2, LogProblem::Malformed(_)));
    // A process's first event must be seq 0.
    let late = r#"{"process":"P0","seq":1,"kind":"internal","step":1}"#;
    assert_eq!(
        *read(&[("a.jsonl", late)]).unwrap_err().problem,
        LogProblem::SeqGap { process: "P0".into(), expected: 0, found: 1 }
    );
    // A field missing from the line itself has no path to name.
    assert_eq!(bad(r#"{"process":"P0","seq":5}"#).2, LogProblem::BadValue("missing field `kind` (column 24)".into()));
}

#[test]
fn a_byte_order_mark_is_no_part_of_the_first_line() {
    let logs = read(&[("a.jsonl", &format!("\u{feff}{P0}")), ("b.jsonl", P1)]).unwrap();
    assert_eq!(logs.trace.events.len(), 9);
}

#[test]
fn files_given_twice_and_text_that_is_not_utf8_are_refused() {
    let scratch = tempfile::Builder::new().prefix("jsonl-unit-").tempdir().unwrap();
    let dir = scratch.path();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, P0).unwrap();
    let mut bytes = P1.as_bytes().to_vec();
    bytes.extend(b"{\"process\":\"P1\",\"seq\":4,\"kind\":\"internal\",\"step\":\xff}\n");
    std::fs::write(&b, bytes).unwrap();
    let read = |files: &[std::path::PathBuf]| {
        read_logs(&topology(), vec![Bank::new(10), Bank::new(10)], files, &States::Interpreted).unwrap_err()
    };
    let e = read(&[a.clone(), b.clone()]);
    assert_eq!((e.file, e.line, *e.problem), (b.display().to_string(), 5, LogProblem::NotUtf8));
    let again = dir.join(".").join("a.jsonl");
    let e = read(&[a.clone(), again.clone()]);
    assert_eq!(
        (e.file, e.line, *e.problem),
        (again.display().to_string(), 0, LogProblem::GivenTwice(a.display().to_string()))
    );
}

#[test]
fn a_dangling_receipt_is_left_out_and_the_snapshots_it_touches_are_not_judged() {
    // P0's log cut mid-line after its record: P1's receipt of P0's later cart dangles.
    let p0 = r#"{"process":"P0","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P0","seq":1,"kind":"marker-send","snapshot":0,"channel":"P0->P1"}
{"process":"P0","seq":2,"kind":"send","chan"#;
    let p1 = r#"{"process":"P1","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[]}
{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0"}
{"process":"P1","seq":3,"kind":"receive","channel":"P0->P1","msg":"late"}
{"process":"P1","seq":4,"kind":"internal","step":1,"state":{"jars":9,"sold":1}}
{"process":"P1","seq":5,"kind":"record","snapshot":1,"initiated":true,"state":{"jars":9,"sold":1}}
"#;
    let logs = read(&[("a.jsonl", p0), ("b.jsonl", p1)]).unwrap();
    let messages: Vec<String> = logs.damage.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        [
            "the file ends mid-line (a line of P0): the line is not read, and the last event read from it is at a.jsonl:2",
            "P1 receives message \"late\" on P0->P1 that P0's log never sends: P0's log is incomplete (it ends at a.jsonl:2), and the snapshots whose cut or channel records this may belong to are not judged, nor P1's states after it",
        ]
    );
    assert_eq!(logs.damage[1].process, Some(ProcessId(0)));
    // Only the receipt is left out: P1's other events are whole, its states from the receipt
    // on unknown (the cart's size is).
    assert_eq!(logs.damaged, [true, false]);
    assert_eq!(logs.kept, [(2, 2), (6, 5)]);
    assert_eq!(logs.dangling, [vec![], vec![3]]);
    assert_eq!(logs.trace.events.len(), 7);
    let internal = logs.origins.iter().position(|&o| o == (1, 4)).unwrap();
    assert_eq!(logs.unknown, [None, Some(internal)]);
    // Snapshot 0 is not judged: P0 never closes P1->P0 in what was read, and its log is
    // damaged. Snapshot 1 is incomplete too (P0 never records it); were it complete, its cut at
    // P1 would hold the dangling receipt.
    assert_eq!(logs.claims.len(), 2);
    assert!(
        logs.claims[0].unjudged.as_ref().unwrap().contains("the damaged log of P0 did not hold"),
        "{:?}",
        logs.claims[0].unjudged
    );
    assert!(logs.claims[1].unjudged.as_ref().unwrap().contains("P0"), "{:?}", logs.claims[1].unjudged);
    // Whole files: a process with no events is damage too.
    let logs = read(&[("a.jsonl", "")]).unwrap();
    assert!(logs.damage.is_empty(), "no events at all is no run (the caller refuses it)");
    let logs = read(&[("b.jsonl", "{\"process\":\"P1\",\"seq\":0,\"kind\":\"internal\",\"step\":1}\n")]).unwrap();
    assert_eq!(logs.damage[0].message, "P0 has no events in the logs: its log is missing or empty");
    assert_eq!(logs.damaged, [true, false]);
}

#[test]
fn time_orders_a_process_without_seq_and_markers_may_leave_out_channel_and_snapshot() {
    let untimed = |text: &str, times: &[&str]| -> String {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .zip(times)
            .map(|(l, t)| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v.as_object_mut().unwrap().remove("seq");
                v["time"] = serde_json::from_str(t).unwrap();
                format!("{v}\n")
            })
            .collect()
    };
    let whole = read(&[("a.jsonl", P0), ("b.jsonl", P1)]).unwrap();
    // P0 by RFC 3339 times (two time zones), P1 by numbers, written backwards.
    let p0 = untimed(
        &P0.replace(r#""snapshot":0,"channel":"P0->P1"}"#, "}").replace(r#""marker-send","#, r#""marker-send""#),
        &[
            r#""2026-12-02T10:00:00Z""#,
            r#""2026-12-02T11:00:01+01:00""#,
            "\"2026-12-02T10:00:02Z\"",
            "\"2026-12-02T10:00:02.5Z\"",
            "\"2026-12-02T10:00:03Z\"",
        ],
    );
    let p1 = untimed(
        &P1.replace(r#""kind":"marker-receive","snapshot":0,"#, r#""kind":"marker-receive","#),
        &["2.5", "1.5", "3", "4.5"],
    );
    let timed = read(&[("a.jsonl", &p0), ("b.jsonl", &p1)]).unwrap();
    assert_eq!(timed.trace, whole.trace);
    assert_eq!(timed.claims[0].snapshot, whole.claims[0].snapshot);
    let problem = |p1: &str| *read(&[("a.jsonl", &p0), ("b.jsonl", p1)]).unwrap_err().problem;
    assert_eq!(
        problem(&p1.replace("\"time\":4.5", "\"time\":3.0")),
        LogProblem::TimeTie {
            process: "P1".into(),
            time: "3.0".into(),
            other: Location { file: "b.jsonl".into(), line: 3 }
        }
    );
    assert!(matches!(
        problem(&p1.replace("\"time\":4.5", "\"time\":\"2026-12-02T10:00:00Z\"")),
        LogProblem::MixedTimes { .. }
    ));
    assert!(matches!(problem(&p1.replace("\"time\":4.5", "\"time\":true")), LogProblem::BadTime(_)));
    assert!(matches!(problem(&p1.replace("\"time\":4.5", "\"seq\":3")), LogProblem::MixedOrder { .. }));
    assert_eq!(problem(&p1.replace(",\"time\":4.5", "")), LogProblem::NoOrder);
    // A marker-send without snapshot before any record cannot be placed.
    let early = r#"{"process":"P0","seq":0,"kind":"marker-send"}"#;
    assert!(matches!(*read(&[("a.jsonl", early)]).unwrap_err().problem, LogProblem::MarkerSnapshot(_)));
}

#[test]
fn a_record_before_a_marker_whose_snapshot_damage_hides_is_no_claim() {
    let p0 = r#"{"process":"P0","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P0","seq":1,"kind":"marker-se"#;
    let p1 = r#"{"process":"P1","seq":0,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":1,"kind":"marker-receive","channel":"P0->P1","recorded":[]}
"#;
    let logs = read(&[("a.jsonl", p0), ("b.jsonl", p1)]).unwrap();
    assert_eq!(logs.damage.len(), 2, "{:?}", logs.damage);
    assert!(logs.damage[1].message.starts_with("P1 receives a marker on P0->P1 that P0's log never sends"));
    assert_eq!(logs.claims.len(), 1);
    assert_eq!(judged(&logs)[0], vec![]);
    assert!(logs.claims[0].unjudged.is_some());
}

#[test]
fn opaque_records_are_compared_with_the_state_logged_last_before_them() {
    use crate::apps::json::{Json, Opaque};
    let read_opaque = |p0: &str| {
        let texts = vec![("a.jsonl".to_string(), p0.to_string()), ("b.jsonl".to_string(), P1.to_string())];
        let blank = Opaque(Json(serde_json::Value::Null));
        parse_logs(&topology(), vec![blank.clone(), blank.clone()], &texts, &States::Opaque { blank }).unwrap()
    };
    let same = read_opaque(P0);
    assert_eq!(judged_opaque(&same)[0], vec![]);
    // P0 records 8 jars where it logged 7 just before; a record without a state is blank.
    let other =
        read_opaque(&P0.replace(
            r#""initiated":true,"state":{"jars":7,"sold":0}"#,
            r#""initiated":true,"state":{"jars":8,"sold":0}"#,
        ));
    let found = judged_opaque(&other);
    let messages: Vec<&str> = found[0].iter().map(|a| a.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            r#"P0 records the state {"jars":8,"sold":0} for snapshot 0, but the state it logged last before recording is {"jars":7,"sold":0}"#
        ]
    );
    let at: Vec<String> = found[0][0].at.iter().map(|(r, l)| format!("{r} at {l}")).collect();
    assert_eq!(at, ["record at a.jsonl:2", "state logged at a.jsonl:1"]);
    let stateless = read_opaque(&P0.replace(r#""initiated":true,"state":{"jars":7,"sold":0}"#, r#""initiated":true"#));
    assert_eq!(judged_opaque(&stateless)[0], vec![]);
    let snapshot = stateless.claims[0].snapshot.as_ref().expect("assembled with a blank state");
    assert_eq!(snapshot.state.processes[0], Opaque(Json(serde_json::Value::Null)));
    // Interpreted states are not compared here (the checker recomputes them).
    let texts = vec![
        (
            "a.jsonl".to_string(),
            P0.replace(
                r#""initiated":true,"state":{"jars":7,"sold":0}"#,
                r#""initiated":true,"state":{"jars":8,"sold":0}"#,
            ),
        ),
        ("b.jsonl".to_string(), P1.to_string()),
    ];
    let logs = parse_logs(&topology(), vec![Bank::new(10), Bank::new(10)], &texts, &States::Interpreted).unwrap();
    assert_eq!(judged(&logs)[0], vec![]);
}

#[test]
fn integer_times_keep_their_precision() {
    // Beyond 2^53 (as nanoseconds since an epoch are) a float cannot tell these apart.
    for times in [["-9007199254740993", "-9007199254740992"], ["18446744073709551614", "18446744073709551615"]] {
        let p1: String = [
            r#"{"process":"P1","kind":"internal","step":1,"time":T}"#,
            r#"{"process":"P1","kind":"internal","step":1,"time":T}"#,
        ]
        .iter()
        .zip(times)
        .map(|(l, t)| format!("{}\n", l.replace('T', t)))
        .collect();
        let logs = read(&[("b.jsonl", &p1)]).unwrap_or_else(|e| panic!("{times:?}: {e}"));
        assert_eq!(logs.trace.events.len(), 2);
    }
}

#[test]
fn the_unjudged_reason_names_at_most_five_damaged_logs() {
    let reason = |n: usize| {
        let t = Topology::complete(n).unwrap();
        let p0 =
            r#"{"process":"P0","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":1,"sold":0}}"#;
        let texts = vec![("a.jsonl".to_string(), p0.to_string())];
        let logs = parse_logs(&t, vec![Bank::new(1); n], &texts, &States::Interpreted).unwrap();
        logs.claims[0].unjudged.clone().unwrap()
    };
    assert!(reason(6).ends_with("the damaged logs of P1, P2, P3, P4, P5 did not hold"), "{}", reason(6));
    assert!(reason(7).ends_with("the damaged logs of P1, P2, P3, P4, P5, … (6 in all) did not hold"), "{}", reason(7));
    assert!(reason(2).ends_with("the damaged log of P1 did not hold"), "{}", reason(2));
}

#[test]
fn unlabelled_marker_receipts_take_the_snapshots_of_the_markers_sent_in_their_order() {
    let p0 = r#"{"process":"P0","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P0","seq":1,"kind":"marker-send","snapshot":0,"channel":"P0->P1"}
{"process":"P0","seq":2,"kind":"record","snapshot":1,"initiated":true,"state":{"jars":10,"sold":0}}
{"process":"P0","seq":3,"kind":"marker-send","snapshot":1,"channel":"P0->P1"}
"#;
    let p1 = r#"{"process":"P1","seq":0,"kind":"marker-receive","channel":"P0->P1","recorded":[]}
{"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":{"jars":10,"sold":0}}
{"process":"P1","seq":2,"kind":"marker-receive","channel":"P0->P1","recorded":[]}
{"process":"P1","seq":3,"kind":"record","snapshot":1,"initiated":false,"state":{"jars":10,"sold":0}}
"#;
    let logs = read(&[("a.jsonl", p0), ("b.jsonl", p1)]).unwrap();
    let received: Vec<SnapshotId> = logs
        .trace
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::MarkerReceive { snapshot, .. } => Some(snapshot),
            _ => None,
        })
        .collect();
    assert_eq!(received, [SnapshotId(0), SnapshotId(1)]);
    assert!(judged(&logs).iter().all(Vec::is_empty), "{:?}", logs.claims);
    assert!(logs.claims.iter().all(|c| c.closes[0].is_some()), "{:?}", logs.claims);
}
