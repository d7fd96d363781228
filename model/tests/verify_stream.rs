//! `model verify` in one pass: the streaming reader gives exactly the whole reader's outcome
//! (verdicts, findings, damage, errors) on the bank's logs and on hundreds of doctored copies of
//! them, and judges clean logs in one pass however their lines are split among files and
//! ordered in them.

mod common;

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::json::Opaque;
use chandy_lamport::apps::spec::Spec;
use chandy_lamport::formats::jsonl::{LogApp, NotClean, Source, States};
use chandy_lamport::logs::{judge_in_one_pass, judge_logs, Judgement, Reader, Semantics};
use chandy_lamport::runtime::workload::{run, Workload};
use chandy_lamport::Topology;
use model::cli::verify::Ticker;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// The bank's logs of a run of 4 processes: `(file name, text)` per process.
fn bank_texts(name: &str, transfers: usize, snapshots: usize) -> Vec<(String, String)> {
    let dir = common::temp_dir("stream", name);
    let mut w = Workload::new(Topology::complete(4).unwrap(), transfers, snapshots);
    w.trace_out = Some(dir.to_path_buf());
    w.seed = 7;
    run(&w).unwrap_or_else(|e| panic!("the bank run fails: {e}"));
    let texts = (0..4)
        .map(|p| {
            let file = format!("P{p}.jsonl");
            let text = std::fs::read_to_string(dir.join(&file)).unwrap();
            (file, text)
        })
        .collect();
    texts
}

fn banks() -> Vec<Bank> {
    Topology::complete(4).unwrap().processes().map(|p| Bank::initial(p, 100)).collect()
}

/// The outcome by `reader`: the JSON report, or the error's text.
fn outcome<A: LogApp>(initial: Vec<A>, texts: &[(String, String)], semantics: &Semantics<A>, reader: Reader) -> String {
    let t = Topology::complete(4).unwrap();
    match judge_logs(&t, initial, Source::Texts(texts), semantics, reader, &mut ()) {
        Ok(outcome) => serde_json::to_string_pretty(&outcome).unwrap(),
        Err(e) => format!("error: {e:#}"),
    }
}

/// Both readers agree on `texts`, as the bank's logs and as opaque ones; returns the bank's
/// outcome.
fn agree(texts: &[(String, String)], what: &str) -> String {
    let bank = outcome(banks(), texts, &Semantics::interpreted(), Reader::OnePass);
    assert_eq!(bank, outcome(banks(), texts, &Semantics::interpreted(), Reader::Whole), "as the bank's logs, {what}");
    let none = || vec![Opaque::default(); 4];
    let opaque = outcome(none(), texts, &Semantics::opaque(), Reader::OnePass);
    assert_eq!(opaque, outcome(none(), texts, &Semantics::opaque(), Reader::Whole), "as opaque logs, {what}");
    bank
}

/// Whether the one pass judges `texts` clean.
fn one_pass(texts: &[(String, String)]) -> Result<usize, NotClean> {
    let t = Topology::complete(4).unwrap();
    judge_in_one_pass(&t, &banks(), Source::Texts(texts), &States::Interpreted, None, &mut |_| {}).map(|c| c.events)
}

fn parse(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn unparse(lines: &[Value]) -> String {
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

#[test]
fn clean_logs_are_judged_in_one_pass_however_their_lines_are_split_and_ordered() {
    let texts = bank_texts("layouts", 600, 4);
    let events = one_pass(&texts).expect("the bank's logs are clean");
    let report = agree(&texts, "as written");
    assert!(report.contains("\"summary\": \"all 4 snapshots hold\""), "{report}");
    let same = |other: &[(String, String)], what: &str| {
        assert_eq!(one_pass(other), Ok(events), "{what}");
        let files: Vec<String> = other.iter().map(|(f, _)| format!("\"{f}\"")).collect();
        let report_here = agree(other, what);
        // The same report but for the files listed.
        let strip = |r: &str| r.lines().filter(|l| !l.contains(".jsonl")).collect::<Vec<_>>().join("\n");
        assert_eq!(strip(&report_here), strip(&report), "{what}");
        assert!(files.iter().all(|f| report_here.contains(f.as_str())), "{what}");
    };
    // The files in the other order.
    let reversed: Vec<_> = texts.iter().rev().cloned().collect();
    same(&reversed, "files reversed");
    // Every process's lines in two files, even and odd lines, and each file's lines reversed.
    let mut split = Vec::new();
    for (file, text) in &texts {
        let lines: Vec<&str> = text.lines().collect();
        for parity in 0..2 {
            let mut part: Vec<&str> = lines.iter().copied().skip(parity).step_by(2).collect();
            part.reverse();
            split.push((format!("{parity}-{file}"), part.iter().map(|l| format!("{l}\n")).collect::<String>()));
        }
    }
    same(&split, "split in two and reversed");
    // Every line in one file, the processes' lines interleaved in turn.
    let all: Vec<Vec<&str>> = texts.iter().map(|(_, t)| t.lines().collect()).collect();
    let longest = all.iter().map(Vec::len).max().unwrap();
    let mut one = String::new();
    for i in 0..longest {
        for lines in &all {
            if let Some(l) = lines.get(i) {
                one.push_str(l);
                one.push('\n');
            }
        }
    }
    same(&[("all.jsonl".to_string(), one)], "one file");
}

#[test]
fn records_logged_before_their_marker_receipt_are_judged_in_one_pass() {
    let texts = bank_texts("record-first", 600, 4);
    let mut moved = 0;
    let texts: Vec<(String, String)> = texts
        .iter()
        .map(|(file, text)| {
            let mut lines = parse(text);
            for i in 1..lines.len() {
                if lines[i]["kind"] == "record" && lines[i]["initiated"] == false {
                    lines.swap(i - 1, i);
                    moved += 1;
                }
            }
            for (seq, l) in lines.iter_mut().enumerate() {
                l["seq"] = Value::from(seq);
            }
            (file.clone(), unparse(&lines))
        })
        .collect();
    assert!(moved >= 8, "{moved}");
    assert!(one_pass(&texts).is_ok());
    agree(&texts, "records first");
}

/// One random change to the logs: what an implementation's bug, a lost line or a bad writer
/// would do.
fn doctor(files: &mut [Vec<Value>], rng: &mut StdRng) -> String {
    let f = rng.random_range(0..files.len());
    let n = files[f].len();
    if n < 2 {
        return "nothing".into();
    }
    let i = rng.random_range(0..n);
    let kind = files[f][i]["kind"].as_str().unwrap_or("").to_string();
    let ids: Vec<Value> = files.iter().flatten().filter(|l| l["kind"] == "send").map(|l| l["msg"].clone()).collect();
    let any_id = |rng: &mut StdRng| ids[rng.random_range(0..ids.len())].clone();
    let line = &mut files[f][i];
    match rng.random_range(0..16) {
        0 => {
            files[f].remove(i);
            format!("line {i} of {f} ({kind}) removed")
        }
        1 => {
            files[f].remove(i);
            for (seq, l) in files[f].iter_mut().enumerate() {
                l["seq"] = Value::from(seq);
            }
            format!("line {i} of {f} ({kind}) removed, seq renumbered")
        }
        2 if i + 1 < n => {
            files[f].swap(i, i + 1);
            let (a, b) = (files[f][i]["seq"].clone(), files[f][i + 1]["seq"].clone());
            files[f][i]["seq"] = b;
            files[f][i + 1]["seq"] = a;
            format!("lines {i} and {} of {f} swapped", i + 1)
        }
        3 if line.get("payload").is_some() => {
            line["payload"] = Value::from(line["payload"].as_u64().unwrap_or(0) + 1);
            format!("payload of line {i} of {f}")
        }
        4 if line.get("state").is_some() => {
            line["state"]["jars"] = Value::from(line["state"]["jars"].as_u64().unwrap_or(0) + 1);
            format!("state of line {i} of {f} ({kind})")
        }
        5 if kind == "marker-receive" => {
            let mut recorded = line["recorded"].as_array().cloned().unwrap_or_default();
            match (recorded.is_empty(), rng.random_bool(0.5)) {
                (false, true) => {
                    recorded.remove(rng.random_range(0..recorded.len()));
                }
                (false, false) if recorded.len() > 1 => recorded.reverse(),
                _ => recorded.push(any_id(rng)),
            }
            line["recorded"] = Value::from(recorded);
            format!("recorded list of line {i} of {f}")
        }
        6 if line.get("snapshot").is_some() => {
            line["snapshot"] = Value::from(line["snapshot"].as_u64().unwrap_or(0) + 1);
            format!("snapshot of line {i} of {f} ({kind})")
        }
        7 if kind == "record" => {
            line["initiated"] = Value::from(!line["initiated"].as_bool().unwrap_or(false));
            format!("initiated flipped on line {i} of {f}")
        }
        8 if line.get("msg").is_some() => {
            line["msg"] = any_id(rng);
            format!("msg of line {i} of {f} ({kind})")
        }
        9 if kind.starts_with("marker") => {
            let field = if kind == "marker-send" && rng.random_bool(0.5) { "channel" } else { "snapshot" };
            line.as_object_mut().unwrap().remove(field);
            format!("{field} removed from line {i} of {f} ({kind})")
        }
        10 if kind == "receive" => {
            line["kind"] = Value::from("loss");
            line.as_object_mut().unwrap().remove("state");
            format!("receipt on line {i} of {f} made a loss")
        }
        11 => {
            let copy = line.clone();
            files[f].insert(i, copy);
            format!("line {i} of {f} ({kind}) twice")
        }
        12 if kind == "send" || kind == "receive" => {
            let channel = line["channel"].as_str().unwrap_or("").to_string();
            let (from, to) = channel.split_once("->").unwrap_or(("P0", "P1"));
            let other = (0..4).map(|p| format!("P{p}")).find(|p| p != from && p != to).unwrap();
            line["channel"] =
                Value::from(if kind == "send" { format!("{from}->{other}") } else { format!("{other}->{to}") });
            format!("channel of line {i} of {f} ({kind})")
        }
        13 => {
            line.as_object_mut().unwrap().remove("seq");
            line["time"] = Value::from(i);
            format!("time instead of seq on line {i} of {f}")
        }
        14 => {
            let tail = files[f].split_off(i);
            format!("{f} cut at line {i} ({} lines gone)", tail.len())
        }
        _ => {
            let moved = files[f].remove(i);
            let g = (f + 1) % files.len();
            let at = rng.random_range(0..files[g].len());
            files[g].insert(at, moved);
            format!("line {i} of {f} ({kind}) moved to file {g}")
        }
    }
}

#[test]
fn both_readers_agree_on_hundreds_of_doctored_logs() {
    let texts = bank_texts("doctored", 150, 3);
    let files: Vec<Vec<Value>> = texts.iter().map(|(_, t)| parse(t)).collect();
    let mut rng = StdRng::seed_from_u64(24);
    let (mut clean, mut changed) = (0, 0);
    let cases: usize = std::env::var("VERIFY_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(600);
    for case in 0..cases {
        let mut doctored = files.clone();
        let mut what = Vec::new();
        for _ in 0..rng.random_range(1..=2) {
            what.push(doctor(&mut doctored, &mut rng));
        }
        let mut texts: Vec<(String, String)> =
            doctored.iter().enumerate().map(|(p, lines)| (format!("P{p}.jsonl"), unparse(lines))).collect();
        if case % 7 == 0 {
            // A file cut short mid-line.
            let text = &mut texts[case % 4].1;
            let cut = text.trim_end().len().saturating_sub(9);
            text.truncate(cut);
        }
        let report = agree(&texts, &format!("case {case}: {}", what.join("; ")));
        if one_pass(&texts).is_ok() {
            clean += 1;
        } else if !report.contains("\"ok\": true") {
            changed += 1;
        }
    }
    eprintln!("{changed} found, {clean} clean");
    // Most changes are found (some, such as a line moved to another file, change nothing).
    assert!(changed > 300 && clean > 10, "{changed} found, {clean} clean");
}

/// Progress lines written to memory.
#[derive(Clone, Default)]
struct Lines(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn progress_lines_tell_events_read_snapshots_judged_and_the_rate() {
    // Around 100,000 events: how many depends on the threads' order (a transfer a process has
    // not the jars for when it comes is not sent). At 40,000 transfers the logs held 76,000 to
    // 78,000 lines here, and once, on a loaded machine, no progress line came (its first is at
    // 65,536 events); at 60,000, 98,000 to 116,000.
    let texts = bank_texts("progress", 60_000, 3);
    let logged: usize = texts.iter().map(|(_, text)| text.lines().count()).sum();
    let t = Topology::complete(4).unwrap();
    let lines = Lines::default();
    let mut ticker = Ticker::to(std::time::Duration::ZERO, Box::new(lines.clone()));
    let outcome =
        judge_logs(&t, banks(), Source::Texts(&texts), &Semantics::interpreted(), Reader::OnePass, &mut ticker);
    assert!(outcome.unwrap().ok);
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let first = text.lines().next().unwrap_or_default();
    let read: usize = first
        .strip_prefix("verifying: ")
        .and_then(|r| r.split(' ').next())
        .unwrap_or_default()
        .replace(',', "")
        .parse()
        .unwrap_or(0);
    assert!((65_536..70_000).contains(&read) && first.contains(" events read, "), "{logged} lines logged: {text}");
    assert!(first.contains(" snapshots judged, ") || first.contains(" snapshot judged, "), "{text}");
    assert!(first.contains(" events/s") && first.ends_with(" s"), "{text}");
    // Logs with findings are read again, whole: said after progress lines, never before.
    let mut doctored = texts.clone();
    doctored[0].1 = doctored[0].1.replacen("\"jars\":", "\"jars\":1", 1);
    let lines = Lines::default();
    let mut ticker = Ticker::to(std::time::Duration::ZERO, Box::new(lines.clone()));
    let outcome =
        judge_logs(&t, banks(), Source::Texts(&doctored), &Semantics::interpreted(), Reader::OnePass, &mut ticker);
    assert_eq!(outcome.unwrap().exit_code, 1);
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    assert!(text.is_empty() || text.ends_with(": reading the logs whole to word the findings\n"), "{text}");
    let quiet = Lines::default();
    let mut ticker = Ticker::to(std::time::Duration::from_secs(3600), Box::new(quiet.clone()));
    judge_logs(&t, banks(), Source::Texts(&doctored), &Semantics::interpreted(), Reader::OnePass, &mut ticker).unwrap();
    assert!(quiet.0.lock().unwrap().is_empty(), "no line before the first interval");
}

#[test]
fn files_are_read_in_chunks_whatever_their_line_ends_and_blank_lines() {
    let texts = bank_texts("files", 20_000, 3);
    let dir = common::temp_dir("stream", "files-written");
    let t = Topology::complete(4).unwrap();
    let mut paths = Vec::new();
    for (p, (file, text)) in texts.iter().enumerate() {
        // Several megabytes each: read in more than one chunk. A byte-order mark, CRLF line
        // ends, blank lines, and no newline after the last line.
        let text = match p {
            // A line longer than the reader's chunk: JSON may hold any amount of white space.
            3 => text.replacen("\"kind\"", &format!("{}\"kind\"", " ".repeat(3 << 20)), 1),
            0 => format!("\u{feff}{}", text.replace('\n', "\r\n")),
            1 => text.replace('\n', "\n \n\t\n"),
            _ => text.trim_end().to_string(),
        };
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    let one = judge_in_one_pass(&t, &banks(), Source::Files(&paths), &States::Interpreted, None, &mut |_| {});
    assert!(one.is_ok(), "{one:?}");
    let by = |reader| {
        let o = judge_logs(&t, banks(), Source::Files(&paths), &Semantics::interpreted(), reader, &mut ());
        serde_json::to_string(&o.unwrap()).unwrap()
    };
    assert_eq!(by(Reader::OnePass), by(Reader::Whole));
    // A byte that is not UTF-8 inside a string the reader skips (`time`) is still refused.
    let mut bytes = std::fs::read(&paths[2]).unwrap();
    let at = bytes.windows(8).position(|w| w == b"\"seq\":5,").unwrap();
    bytes.splice(at..at, b"\"time\":\"\xff\",".iter().copied());
    std::fs::write(&paths[2], bytes).unwrap();
    let o = judge_logs(&t, banks(), Source::Files(&paths), &Semantics::interpreted(), Reader::OnePass, &mut ());
    let e = o.expect_err("not UTF-8");
    assert!(format!("{e:#}").ends_with("not UTF-8 text: JSON lines are UTF-8"), "{e:#}");
}

#[test]
fn logs_read_from_pipes_are_read_once_by_the_whole_reader() {
    let texts = bank_texts("pipes", 300, 2);
    let dir = common::temp_dir("stream", "pipes-written");
    let t = Topology::complete(4).unwrap();
    // P0's log doctored (a finding), and given through a pipe, as `<(zcat P0.jsonl.gz)` does.
    let doctored = texts[0].1.replacen("\"jars\":", "\"jars\":1", 1);
    let pipe = dir.join("P0.pipe");
    let made = std::process::Command::new("mkfifo").arg(&pipe).status().expect("mkfifo runs");
    assert!(made.success());
    let mut paths = vec![pipe.clone()];
    for (file, text) in &texts[1..] {
        std::fs::write(dir.join(file), text).unwrap();
        paths.push(dir.join(file));
    }
    let writer = std::thread::spawn(move || std::fs::write(&pipe, doctored).unwrap());
    let by_pipe = judge_logs(&t, banks(), Source::Files(&paths), &Semantics::interpreted(), Reader::OnePass, &mut ());
    writer.join().unwrap();
    let by_pipe = by_pipe.unwrap();
    let mut texts = texts;
    texts[0].1 = texts[0].1.replacen("\"jars\":", "\"jars\":1", 1);
    let by_text = judge_logs(&t, banks(), Source::Texts(&texts), &Semantics::interpreted(), Reader::Whole, &mut ());
    let by_text = by_text.unwrap();
    assert_eq!(by_pipe.exit_code, 1);
    let messages = |o: &Judgement| o.run.iter().map(|f| f.message.clone()).collect::<Vec<_>>();
    assert_eq!((by_pipe.events, &by_pipe.snapshots), (by_text.events, &by_text.snapshots));
    assert_eq!(messages(&by_pipe), messages(&by_text));
    assert_eq!(by_pipe.run[0].at, [format!("event at {}:1", paths[0].display())]);
}
