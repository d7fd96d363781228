//! `.snap`: recorded snapshots, one block per snapshot id — an id line, one `NODE tokens` line per
//! node, and one `SRC DST token(K)` line per recorded in-flight message, in receive order — and
//! the course suite's comparison rules.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use super::{content_lines, read, FormatError, Problem};
use crate::protocol::Topology;

/// One recorded in-flight message: `SRC DST token(K)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SnapMessage {
    /// The sending node.
    pub src: String,
    /// The receiving node.
    pub dst: String,
    /// Tokens carried.
    pub tokens: u64,
}

/// One snapshot: node balances and recorded messages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SnapBlock {
    /// The snapshot id.
    pub id: u32,
    /// `(node, tokens)`, in file order.
    pub balances: Vec<(String, u64)>,
    /// Recorded messages, in file order (receive order per destination).
    pub messages: Vec<SnapMessage>,
}

impl SnapBlock {
    /// Recorded tokens: node balances plus messages.
    pub fn total(&self) -> u64 {
        let held: u64 = self.balances.iter().map(|(_, t)| *t).fold(0, u64::saturating_add);
        self.messages.iter().map(|m| m.tokens).fold(held, u64::saturating_add)
    }

    /// The recorded messages grouped by destination, each group in receive order as `(src, tokens)`.
    pub(crate) fn messages_by_destination(&self) -> BTreeMap<&str, Vec<(&str, u64)>> {
        let mut by: BTreeMap<&str, Vec<(&str, u64)>> = BTreeMap::new();
        for m in &self.messages {
            by.entry(m.dst.as_str()).or_default().push((m.src.as_str(), m.tokens));
        }
        by
    }
}

impl fmt::Display for SnapBlock {
    /// The block in `.snap` form, one line each, ending with a newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.id)?;
        for (node, tokens) in &self.balances {
            writeln!(f, "{node} {tokens}")?;
        }
        for m in &self.messages {
            writeln!(f, "{} {} token({})", m.src, m.dst, m.tokens)?;
        }
        Ok(())
    }
}

/// Writes blocks as `.snap` text, one block after the other.
pub fn write(blocks: &[SnapBlock]) -> String {
    blocks.iter().map(ToString::to_string).collect()
}

/// A parsed `.snap` file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SnapFile {
    /// The file name used in errors and differences.
    pub file: String,
    /// The blocks, in file order.
    pub blocks: Vec<SnapBlock>,
    /// Where each block's lines are, as [`SnapFile::blocks`].
    pub lines: Vec<BlockLines>,
}

/// The 1-based line numbers of a block's lines in its file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockLines {
    /// The snapshot id line.
    pub id: usize,
    /// Each balance's line, as [`SnapBlock::balances`].
    pub balances: Vec<usize>,
    /// Each message's line, as [`SnapBlock::messages`].
    pub messages: Vec<usize>,
}

impl SnapFile {
    /// Reads a `.snap` file.
    pub fn read(path: &Path) -> Result<Self, FormatError> {
        Self::parse(&read(path)?, &path.display().to_string())
    }

    /// Parses `.snap` text; `file` names it in errors. Blank lines and `#` comments are skipped.
    pub fn parse(text: &str, file: &str) -> Result<Self, FormatError> {
        let err = |line: usize, problem: Problem| FormatError { file: file.to_string(), line, problem };
        let mut blocks: Vec<SnapBlock> = Vec::new();
        let mut lines: Vec<BlockLines> = Vec::new();
        let mut ids = BTreeSet::new();
        for (line, text) in content_lines(text) {
            let fields: Vec<&str> = text.split_whitespace().collect();
            if let [id] = fields[..] {
                let id: u32 =
                    id.parse().map_err(|_| err(line, Problem::BadNumber { field: "snapshot id", text: id.into() }))?;
                if !ids.insert(id) {
                    return Err(err(line, Problem::DuplicateSnapshot { snapshot: id }));
                }
                blocks.push(SnapBlock { id, ..SnapBlock::default() });
                lines.push(BlockLines { id: line, ..BlockLines::default() });
                continue;
            }
            let (Some(block), Some(at)) = (blocks.last_mut(), lines.last_mut()) else {
                let expected = "a snapshot id line before balances and messages";
                return Err(err(line, Problem::Malformed { expected, text: text.to_string() }));
            };
            match fields[..] {
                [node, tokens] => {
                    let tokens = tokens
                        .parse()
                        .map_err(|_| err(line, Problem::BadNumber { field: "tokens", text: tokens.into() }))?;
                    if block.balances.iter().any(|(n, _)| n == node) {
                        return Err(err(line, Problem::DuplicateNode { snapshot: block.id, node: node.to_string() }));
                    }
                    block.balances.push((node.to_string(), tokens));
                    at.balances.push(line);
                }
                [src, dst, token] => {
                    let malformed =
                        || err(line, Problem::Malformed { expected: "SRC DST token(K)", text: text.into() });
                    let k = token.strip_prefix("token(").and_then(|t| t.strip_suffix(')')).ok_or_else(malformed)?;
                    let tokens =
                        k.parse().map_err(|_| err(line, Problem::BadNumber { field: "token(K)", text: k.into() }))?;
                    block.messages.push(SnapMessage { src: src.to_string(), dst: dst.to_string(), tokens });
                    at.messages.push(line);
                }
                _ => {
                    let expected = "`ID`, `NODE tokens` or `SRC DST token(K)`";
                    return Err(err(line, Problem::Malformed { expected, text: text.to_string() }));
                }
            }
        }
        Ok(SnapFile { file: file.to_string(), blocks, lines })
    }

    /// Checks an expected file against the `topology` of the run: it holds a snapshot, every
    /// node it names is in the topology, and every recorded message is on one of its channels.
    /// The error names the line (the file, when it holds no snapshot).
    pub fn check(&self, topology: &Topology) -> Result<(), FormatError> {
        let err = |line: usize, problem: Problem| FormatError { file: self.file.clone(), line, problem };
        if self.blocks.is_empty() {
            return Err(err(0, Problem::NoSnapshot));
        }
        let line = |lines: Option<&Vec<usize>>, i: usize| lines.and_then(|l| l.get(i)).copied().unwrap_or(0);
        let node = |name: &str, at: usize| {
            topology.process(name).map_err(|_| err(at, Problem::UnknownNode { name: name.to_string() }))
        };
        for (k, block) in self.blocks.iter().enumerate() {
            let lines = self.lines.get(k);
            for (i, (name, _)) in block.balances.iter().enumerate() {
                node(name, line(lines.map(|l| &l.balances), i))?;
            }
            for (i, m) in block.messages.iter().enumerate() {
                let at = line(lines.map(|l| &l.messages), i);
                let (from, to) = (node(&m.src, at)?, node(&m.dst, at)?);
                if topology.channel_between(from, to).is_none() {
                    return Err(err(at, Problem::NoLink { from: m.src.clone(), to: m.dst.clone() }));
                }
            }
        }
        Ok(())
    }
}

/// How a produced snapshot differs from the expected one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Difference {
    /// Different numbers of snapshots.
    Count {
        /// Expected.
        expected: usize,
        /// Produced.
        got: usize,
    },
    /// An expected snapshot id that was not produced.
    Missing,
    /// A produced snapshot id that is in no expected file.
    Unexpected,
    /// The same snapshot id in two expected files (the first one is compared).
    Duplicate,
    /// A node's recorded balance differs, or the node is on one side only.
    Balance {
        /// The node.
        node: String,
        /// Expected tokens (`None`: not listed).
        expected: Option<u64>,
        /// Produced tokens (`None`: not listed).
        got: Option<u64>,
    },
    /// The ordered list of messages recorded into one destination differs.
    Messages {
        /// The destination node.
        dst: String,
        /// Expected `(src, tokens)`, in receive order.
        expected: Vec<(String, u64)>,
        /// Produced `(src, tokens)`, in receive order.
        got: Vec<(String, u64)>,
    },
    /// A produced snapshot whose recorded tokens do not add up to the total.
    Total {
        /// Node balances plus messages, as recorded.
        recorded: u64,
        /// The total tokens of the run.
        total: u64,
    },
}

fn list(messages: &[(String, u64)]) -> String {
    let items: Vec<String> = messages.iter().map(|(src, t)| format!("{src} token({t})")).collect();
    format!("[{}]", items.join(", "))
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tokens = |t: &Option<u64>| t.map_or("not listed".to_string(), |t| format!("{t} tokens"));
        match self {
            Difference::Count { expected, got } => write!(f, "expected {expected} snapshots, got {got}"),
            Difference::Missing => f.write_str("expected, but the run produced no snapshot with this id"),
            Difference::Unexpected => f.write_str("produced, but no expected file holds this id"),
            Difference::Duplicate => f.write_str("listed again in another expected file"),
            Difference::Balance { node, expected, got } => {
                write!(f, "node {node}: expected {}, got {}", tokens(expected), tokens(got))
            }
            Difference::Messages { dst, expected, got } => {
                let at = expected.iter().zip(got).position(|(a, b)| a != b).unwrap_or(expected.len().min(got.len()));
                write!(
                    f,
                    "messages into {dst}: expected {}, got {} (first difference at message {})",
                    list(expected),
                    list(got),
                    at + 1
                )
            }
            Difference::Total { recorded, total } => {
                write!(f, "recorded {recorded} tokens (nodes plus messages) but the total is {total}")
            }
        }
    }
}

/// One difference, with the expected file and snapshot it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mismatch {
    /// The expected file (or files, for a count difference).
    pub file: String,
    /// The snapshot id, when the difference concerns one snapshot.
    pub snapshot: Option<u32>,
    /// What differs.
    pub difference: Difference,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.snapshot {
            Some(id) => write!(f, "{}: snapshot {id}: {}", self.file, self.difference),
            None => write!(f, "{}: {}", self.file, self.difference),
        }
    }
}

/// The result of comparing produced snapshots with expected files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Comparison {
    /// The expected files compared, in order.
    pub files: Vec<String>,
    /// Snapshots compared (produced).
    pub compared: usize,
    /// Every difference found; empty when everything agrees.
    pub mismatches: Vec<Mismatch>,
}

impl Comparison {
    /// Whether the produced snapshots agree with the expected ones.
    pub fn matches(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl fmt::Display for Comparison {
    /// A one-line verdict, then one line per difference.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.matches() {
            return write!(f, "{} snapshots agree with {}", self.compared, self.files.join(", "));
        }
        write!(f, "{} differences from the expected snapshots:", self.mismatches.len())?;
        for m in &self.mismatches {
            write!(f, "\n  {m}")?;
        }
        Ok(())
    }
}

/// Compares produced blocks with the expected files by the suite's rules: the same number of
/// snapshots; per snapshot id the same node balances and, per destination, the same ordered list
/// of recorded messages (order across destinations is not compared); and, when `total` is
/// given, every produced snapshot's recorded tokens add up to it.
pub fn compare(expected: &[SnapFile], got: &[SnapBlock], total: Option<u64>) -> Comparison {
    let files: Vec<String> = expected.iter().map(|f| f.file.clone()).collect();
    let all_files = match files.as_slice() {
        [] => "<no expected file>".to_string(),
        [one] => one.clone(),
        [first, .., last] => format!("{first} … {last}"),
    };
    let mut mismatches = Vec::new();
    let mut by_id: BTreeMap<u32, (&str, &SnapBlock)> = BTreeMap::new();
    let mut count = 0;
    for f in expected {
        for b in &f.blocks {
            count += 1;
            match by_id.entry(b.id) {
                Entry::Occupied(_) => mismatches.push(Mismatch {
                    file: f.file.clone(),
                    snapshot: Some(b.id),
                    difference: Difference::Duplicate,
                }),
                Entry::Vacant(slot) => {
                    slot.insert((f.file.as_str(), b));
                }
            }
        }
    }
    if count != got.len() {
        let difference = Difference::Count { expected: count, got: got.len() };
        mismatches.push(Mismatch { file: all_files.clone(), snapshot: None, difference });
    }
    let produced: BTreeMap<u32, &SnapBlock> = got.iter().map(|b| (b.id, b)).collect();
    for (&id, &(file, want)) in &by_id {
        let mismatch = |difference| Mismatch { file: file.to_string(), snapshot: Some(id), difference };
        let Some(have) = produced.get(&id) else {
            mismatches.push(mismatch(Difference::Missing));
            continue;
        };
        mismatches.extend(compare_block(want, have).into_iter().map(mismatch));
    }
    for (&id, block) in &produced {
        let file = by_id.get(&id).map_or(all_files.as_str(), |(f, _)| f).to_string();
        if !by_id.contains_key(&id) {
            mismatches.push(Mismatch { file: file.clone(), snapshot: Some(id), difference: Difference::Unexpected });
        }
        if let Some(total) = total.filter(|&t| t != block.total()) {
            let difference = Difference::Total { recorded: block.total(), total };
            mismatches.push(Mismatch { file, snapshot: Some(id), difference });
        }
    }
    Comparison { files, compared: got.len(), mismatches }
}

/// The differences between one expected block and the produced block of the same id.
fn compare_block(want: &SnapBlock, have: &SnapBlock) -> Vec<Difference> {
    let mut out = Vec::new();
    let w: BTreeMap<&str, u64> = want.balances.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let h: BTreeMap<&str, u64> = have.balances.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let nodes: BTreeSet<&str> = w.keys().chain(h.keys()).copied().collect();
    for node in nodes {
        let (expected, got) = (w.get(node).copied(), h.get(node).copied());
        if expected != got {
            out.push(Difference::Balance { node: node.to_string(), expected, got });
        }
    }
    let w = want.messages_by_destination();
    let h = have.messages_by_destination();
    let dsts: BTreeSet<&str> = w.keys().chain(h.keys()).copied().collect();
    let owned = |v: Option<&Vec<(&str, u64)>>| -> Vec<(String, u64)> {
        v.map(|v| v.iter().map(|(s, t)| (s.to_string(), *t)).collect()).unwrap_or_default()
    };
    for dst in dsts {
        let (expected, got) = (owned(w.get(dst)), owned(h.get(dst)));
        if expected != got {
            out.push(Difference::Messages { dst: dst.to_string(), expected, got });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ProcessId;

    const TEXT: &str = "0\nN1 4\nN2 1\nN3 2\nN1 N2 token(3)\nN3 N2 token(2)\nN1 N3 token(1)\n";

    #[test]
    fn parse_then_write_round_trips() {
        let f = SnapFile::parse(TEXT, "x.snap").unwrap();
        assert_eq!(f.blocks.len(), 1);
        assert_eq!(f.blocks[0].total(), 13);
        assert_eq!(write(&f.blocks), TEXT);
        let two = SnapFile::parse(&format!("{TEXT}\n1\nN1 5\n"), "x.snap").unwrap();
        assert_eq!(two.blocks.iter().map(|b| b.id).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn errors_name_the_line() {
        let problem = |text: &str| {
            let e = SnapFile::parse(text, "x.snap").unwrap_err();
            assert!(e.to_string().starts_with(&format!("x.snap:{}:", e.line)), "{e}");
            (e.line, e.problem)
        };
        assert!(matches!(problem("N1 4\n"), (1, Problem::Malformed { .. })));
        assert!(matches!(problem("x\n"), (1, Problem::BadNumber { field: "snapshot id", .. })));
        assert!(matches!(problem("0\nN1 x\n"), (2, Problem::BadNumber { field: "tokens", .. })));
        assert!(matches!(problem("0\nN1 N2 tok(3)\n"), (2, Problem::Malformed { .. })));
        assert!(matches!(problem("0\nN1 N2 token(-3)\n"), (2, Problem::BadNumber { field: "token(K)", .. })));
        assert!(matches!(problem("0\na b c d\n"), (2, Problem::Malformed { .. })));
        assert_eq!(problem("0\nN1 1\nN1 2\n"), (3, Problem::DuplicateNode { snapshot: 0, node: "N1".into() }));
        assert_eq!(problem("0\n\n0\n"), (3, Problem::DuplicateSnapshot { snapshot: 0 }));
    }

    #[test]
    fn check_names_the_line_of_an_unknown_node_or_link() {
        let t = Topology::new(
            vec!["N1".into(), "N2".into(), "N3".into()],
            [(ProcessId(0), ProcessId(1)), (ProcessId(2), ProcessId(1)), (ProcessId(0), ProcessId(2))],
        )
        .unwrap();
        let problem = |text: &str| {
            let e = SnapFile::parse(text, "x.snap").unwrap().check(&t).unwrap_err();
            assert!(e.to_string().starts_with(&format!("x.snap:{}: ", e.line)), "{e}");
            (e.line, e.problem)
        };
        assert_eq!(SnapFile::parse(TEXT, "x.snap").unwrap().check(&t), Ok(()));
        assert_eq!(problem("0\nN1 4\n\nN9 1\n"), (4, Problem::UnknownNode { name: "N9".into() }));
        assert_eq!(problem("0\nN1 4\n1\nN1 N9 token(1)\n"), (4, Problem::UnknownNode { name: "N9".into() }));
        assert_eq!(problem("# c\n0\nN2 N1 token(1)\n"), (3, Problem::NoLink { from: "N2".into(), to: "N1".into() }));
        let e = SnapFile::parse("# nothing\n\n", "x.snap").unwrap().check(&t).unwrap_err();
        assert_eq!((e.line, &e.problem), (0, &Problem::NoSnapshot));
        assert!(e.to_string().starts_with("x.snap: holds no snapshot"), "{e}");
    }

    #[test]
    fn comparison_ignores_order_across_destinations_only() {
        let want = SnapFile::parse(TEXT, "want.snap").unwrap();
        let mut got = want.blocks.clone();
        got[0].messages.swap(1, 2); // N3 N2 and N1 N3: different destinations
        got[0].balances.reverse();
        assert!(compare(std::slice::from_ref(&want), &got, Some(13)).matches());
        got[0].messages.swap(0, 2); // now N3 N2 before N1 N2: same destination reordered
        let c = compare(std::slice::from_ref(&want), &got, Some(13));
        assert_eq!(c.mismatches.len(), 1, "{c}");
        assert!(c.to_string().contains("want.snap: snapshot 0: messages into N2"), "{c}");
    }

    #[test]
    fn comparison_reports_balances_counts_and_totals() {
        let want = SnapFile::parse(TEXT, "want.snap").unwrap();
        let mut got = want.blocks.clone();
        got[0].balances[1].1 = 2;
        got.push(SnapBlock { id: 1, balances: vec![("N1".into(), 13)], messages: vec![] });
        let c = compare(std::slice::from_ref(&want), &got, Some(13));
        let lines: Vec<String> = c.mismatches.iter().map(ToString::to_string).collect();
        assert!(lines.contains(&"want.snap: expected 1 snapshots, got 2".to_string()), "{c}");
        assert!(lines.contains(&"want.snap: snapshot 0: node N2: expected 1 tokens, got 2 tokens".to_string()), "{c}");
        assert!(lines.iter().any(|l| l.contains("snapshot 0: recorded 14 tokens")), "{c}");
        assert!(lines.iter().any(|l| l.contains("snapshot 1: produced, but no expected file")), "{c}");
    }
}
