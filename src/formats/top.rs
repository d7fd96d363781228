//! `.top`: the node count, then `ID tokens` per node, then one `SRC DST` line per one-way link.
//! A node line may give the id alone (`ID`): what reads no initial state from the tokens (opaque
//! states, `--app none`; initial states given another way) needs none, and what does asks
//! [`TopFile::counts`], which refuses a node without a count, naming its line, rather than
//! taking 0.
//! As the course format says, a self-link is ignored: the parser skips it and returns a
//! [`TopWarning`] naming its line, for the caller to show.
//!
//! A node id is any run of characters other than whitespace (which separates the fields) that
//! does not hold `->`: channels are spelled `SRC->DST` (in messages and in the `.jsonl` logs), and
//! an id holding `->` would let two channels be spelled alike (`A->B` to `C`, `A` to `B->C`).
//! An id cannot start with `#` either, since such a line is a comment.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

use super::{content_lines, read, FormatError, Problem};
use crate::protocol::{ProcessId, Topology, TopologyError};

/// What joins a channel's two ends in its name; no node id holds it.
const ARROW: &str = "->";

/// What a node line looks like, for errors.
const NODE_LINE: &str = "ID tokens, or ID alone";

/// A topology with each node's initial tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopFile {
    /// The file, as errors name it.
    pub file: String,
    /// Processes named by their ids, channels in file order.
    pub topology: Topology,
    /// Initial tokens of each process: `None` where its line gives the id alone. Whoever needs
    /// a count asks [`TopFile::counts`].
    pub tokens: Vec<Option<u32>>,
    /// The line of the node count (for errors about the file as a whole).
    pub count_line: usize,
    /// The line of each node, by process index.
    pub node_lines: Vec<usize>,
    /// Lines the course format ignores (self-links), in file order.
    pub warnings: Vec<TopWarning>,
}

/// A line of a `.top` file that was ignored, as the course format says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopWarning {
    /// The file.
    pub file: String,
    /// 1-based line number.
    pub line: usize,
    /// The node whose link to itself was ignored.
    pub self_link: String,
}

impl fmt::Display for TopWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: self-link {} {} ignored (the course format ignores self-links)",
            self.file, self.line, self.self_link, self.self_link
        )
    }
}

impl TopFile {
    /// Reads a `.top` file.
    pub fn read(path: &Path) -> Result<Self, FormatError> {
        Self::parse(&read(path)?, &path.display().to_string())
    }

    /// Parses `.top` text; `file` names it in errors and warnings. Duplicate nodes or links,
    /// unknown nodes and node ids holding `->` are errors naming the line; self-links are skipped
    /// with a warning.
    pub fn parse(text: &str, file: &str) -> Result<Self, FormatError> {
        let err = |line: usize, problem: Problem| FormatError { file: file.to_string(), line, problem };
        let mut lines = content_lines(text);
        let (first, count_text) = lines.next().ok_or_else(|| err(0, Problem::Empty))?;
        let count: usize = count_text
            .parse()
            .map_err(|_| err(first, Problem::BadNumber { field: "node count", text: count_text.to_string() }))?;
        if count < 2 {
            return Err(err(first, TopologyError::TooFewProcesses { count }.into()));
        }
        let max = usize::from(u16::MAX) + 1;
        if count > max {
            return Err(err(first, TopologyError::TooManyProcesses { count, max }.into()));
        }
        let mut names = Vec::with_capacity(count);
        let mut tokens = Vec::with_capacity(count);
        let mut node_lines = Vec::with_capacity(count);
        let mut index: HashMap<String, u16> = HashMap::new();
        let mut last = first;
        while names.len() < count {
            let Some((n, line)) = lines.next() else {
                return Err(err(last, Problem::MissingNodes { expected: count, found: names.len() }));
            };
            last = n;
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (id, t) = match fields[..] {
                [id] => (id, None),
                [id, t] => match t.parse::<u32>() {
                    Ok(t) => (id, Some(t)),
                    // `N1 N2` where a node was due: the links started before the announced count.
                    Err(_) if index.contains_key(t) || index.contains_key(id) => {
                        return Err(err(n, Problem::MissingNodes { expected: count, found: names.len() }));
                    }
                    Err(_) => return Err(err(n, Problem::BadNumber { field: "tokens", text: t.to_string() })),
                },
                _ => return Err(err(n, Problem::Malformed { expected: NODE_LINE, text: line.to_string() })),
            };
            if id.contains(ARROW) {
                return Err(err(n, Problem::BadNodeId { name: id.to_string() }));
            }
            if index.insert(id.to_string(), names.len() as u16).is_some() {
                return Err(err(n, TopologyError::DuplicateProcess { name: id.to_string() }.into()));
            }
            names.push(id.to_string());
            tokens.push(t);
            node_lines.push(n);
        }
        let mut links = Vec::new();
        let mut seen = HashSet::new();
        let mut warnings = Vec::new();
        for (n, line) in lines {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [a, b] = fields[..] else {
                return Err(err(n, Problem::Malformed { expected: "SRC DST", text: line.to_string() }));
            };
            let lookup = |name: &str| {
                index
                    .get(name)
                    .map(|&i| ProcessId(i))
                    .ok_or_else(|| err(n, TopologyError::UnknownProcess { name: name.to_string() }.into()))
            };
            let (from, to) = (lookup(a)?, lookup(b)?);
            if from == to {
                warnings.push(TopWarning { file: file.to_string(), line: n, self_link: a.to_string() });
                continue;
            }
            if !seen.insert((from, to)) {
                return Err(err(n, TopologyError::DuplicateChannel { from: a.to_string(), to: b.to_string() }.into()));
            }
            links.push((from, to));
        }
        let topology = Topology::new(names, links).map_err(|e| err(0, e.into()))?;
        Ok(TopFile { file: file.to_string(), topology, tokens, count_line: first, node_lines, warnings })
    }

    /// Each process's token count, for whoever makes initial states from them; an error naming
    /// the first node line that gives the id alone ([`Problem::NoTokens`]): a missing count is
    /// never taken as 0.
    pub fn counts(&self) -> Result<Vec<u32>, FormatError> {
        self.tokens
            .iter()
            .enumerate()
            .map(|(p, t)| {
                t.ok_or_else(|| FormatError {
                    file: self.file.clone(),
                    line: self.node_lines.get(p).copied().unwrap_or(0),
                    problem: Problem::NoTokens { node: self.topology.names()[p].clone() },
                })
            })
            .collect()
    }
}

/// The `.top` text of `topology` with `tokens[i]` at process `i`: the node count, one `ID tokens`
/// line per process (`ID` alone where `tokens[i]` is `None`), one `SRC DST` line per channel, in
/// the topology's order (so that [`TopFile::parse`] gives the same topology and tokens back).
/// `tokens` are counts (`u32`) or counts that may be missing (`Option<u32>`, as
/// [`TopFile::tokens`]). `None` when the counts differ or a name could not be read back (empty,
/// holding whitespace or `->`, or starting with `#`).
pub fn write<T: Copy + Into<Option<u32>>>(topology: &Topology, tokens: &[T]) -> Option<String> {
    if tokens.len() != topology.len() {
        return None;
    }
    let readable =
        |n: &str| !n.is_empty() && !n.starts_with('#') && !n.contains(char::is_whitespace) && !n.contains(ARROW);
    if !topology.names().iter().all(|n| readable(n)) {
        return None;
    }
    let mut text = format!("{}\n", topology.len());
    for (name, &t) in topology.names().iter().zip(tokens) {
        match t.into() {
            Some(t) => text.push_str(&format!("{name} {t}\n")),
            None => text.push_str(&format!("{name}\n")),
        }
    }
    for c in topology.channels() {
        text.push_str(&format!("{} {}\n", topology.name(c.from), topology.name(c.to)));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> (usize, Problem) {
        let e = TopFile::parse(text, "t.top").unwrap_err();
        let at = if e.line == 0 { "t.top:".to_string() } else { format!("t.top:{}:", e.line) };
        assert!(e.to_string().starts_with(&at), "{e}");
        (e.line, e.problem)
    }

    #[test]
    fn parses_nodes_links_and_comments() {
        let f = TopFile::parse("# c\n3\nN1 10\nN2 3\n\nN3 0\nN1 N2\n# x\nN2 N3\nN3 N1\n", "t.top").unwrap();
        assert_eq!(f.tokens, vec![Some(10), Some(3), Some(0)]);
        assert_eq!(f.counts(), Ok(vec![10, 3, 0]));
        assert_eq!(f.topology.names(), &["N1", "N2", "N3"]);
        assert_eq!(f.topology.channels().len(), 3);
        assert_eq!(f.topology.channel_label(crate::protocol::ChannelId(2)), "N3->N1");
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(problem(""), (0, Problem::Empty));
        assert_eq!(problem("x\n"), (1, Problem::BadNumber { field: "node count", text: "x".into() }));
        assert_eq!(problem("1\nA 1\n"), (1, TopologyError::TooFewProcesses { count: 1 }.into()));
        assert_eq!(
            problem("100000000000000\n"),
            (1, TopologyError::TooManyProcesses { count: 100000000000000, max: 65536 }.into())
        );
        assert_eq!(problem("2\nA 1\n"), (2, Problem::MissingNodes { expected: 2, found: 1 }));
        assert_eq!(problem("2\nA 1\nB 2 3\n"), (3, Problem::Malformed { expected: NODE_LINE, text: "B 2 3".into() }));
        assert_eq!(problem("2\nA 1\nB -1\n"), (3, Problem::BadNumber { field: "tokens", text: "-1".into() }));
        assert_eq!(problem("2\nA 1\nA 2\n"), (3, TopologyError::DuplicateProcess { name: "A".into() }.into()));
        assert_eq!(problem("2\nA 1\nB->C 2\n"), (3, Problem::BadNodeId { name: "B->C".into() }));
        assert_eq!(problem("2\n->B 1\nC 2\n"), (2, Problem::BadNodeId { name: "->B".into() }));
        assert_eq!(problem("2\nA 1\nB 2\nA C\n"), (4, TopologyError::UnknownProcess { name: "C".into() }.into()));
        // Links where a node was due: the count announces more nodes than are listed.
        assert_eq!(problem("3\nA 1\nB 2\nA B\n"), (4, Problem::MissingNodes { expected: 3, found: 2 }));
        assert_eq!(
            problem("2\nA 1\nB 2\nA B\nA B\n"),
            (5, TopologyError::DuplicateChannel { from: "A".into(), to: "B".into() }.into())
        );
        assert_eq!(
            problem("2\nA 1\nB 2\nA B C\n"),
            (4, Problem::Malformed { expected: "SRC DST", text: "A B C".into() })
        );
    }

    #[test]
    fn write_gives_back_the_same_topology_and_tokens() {
        let t = Topology::bidi_ring(4).unwrap();
        let text = write(&t, &[1, 2, 3, 4]).unwrap();
        let f = TopFile::parse(&text, "w.top").unwrap();
        assert_eq!((&f.topology, f.counts()), (&t, Ok(vec![1, 2, 3, 4])));
        assert_eq!(write(&t, &[1, 2, 3]), None);
        let spaced = Topology::new(vec!["A B".into(), "C".into()], [(ProcessId(0), ProcessId(1))]).unwrap();
        assert_eq!(write(&spaced, &[1, 1]), None);
        let arrow = Topology::new(vec!["A->B".into(), "C".into()], [(ProcessId(0), ProcessId(1))]).unwrap();
        assert_eq!(write(&arrow, &[1, 1]), None);
    }

    #[test]
    fn a_node_line_may_give_the_id_alone() {
        let f = TopFile::parse("2\nA\nB 3\nA B\nB A\n", "t.top").unwrap();
        assert_eq!(f.tokens, vec![None, Some(3)]);
        assert_eq!(f.topology.names(), &["A", "B"]);
        assert_eq!(f.topology.channels().len(), 2);
        // A links line where a node was due is still told apart from an id alone.
        assert_eq!(problem("3\nA\nB\nA B\n"), (4, Problem::MissingNodes { expected: 3, found: 2 }));
    }

    #[test]
    fn counts_refuse_a_node_without_one_naming_its_line() {
        let f = TopFile::parse("# ids\n3\nA 1\nB\nC\nA B\nB C\n", "t.top").unwrap();
        let e = f.counts().unwrap_err();
        assert_eq!((e.line, &e.problem), (4, &Problem::NoTokens { node: "B".into() }));
        assert_eq!(
            e.to_string(),
            "t.top:4: node B has no token count (its line gives the id alone), and its initial state is made from one"
        );
    }

    #[test]
    fn write_gives_back_ids_without_counts() {
        let t = Topology::ring(3).unwrap();
        let tokens = [None, Some(5), None];
        let text = write(&t, &tokens).unwrap();
        assert!(text.starts_with("3\nP0\nP1 5\nP2\n"), "{text}");
        let f = TopFile::parse(&text, "w.top").unwrap();
        assert_eq!((f.topology, f.tokens), (t.clone(), tokens.to_vec()));
        assert_eq!(write(&t, &[None::<u32>; 2]), None);
    }

    #[test]
    fn missing_file_is_an_error_naming_it() {
        let e = TopFile::read(Path::new("/nonexistent/x.top")).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/x.top: cannot read"), "{e}");
    }

    #[test]
    fn self_links_are_ignored_with_a_warning_naming_the_line() {
        let f = TopFile::parse("2\nA 1\nB 2\nA B\nB B\nB A\n", "t.top").unwrap();
        assert_eq!(f.topology.channels().len(), 2);
        assert_eq!(f.warnings, vec![TopWarning { file: "t.top".into(), line: 5, self_link: "B".into() }]);
        assert_eq!(f.warnings[0].to_string(), "t.top:5: self-link B B ignored (the course format ignores self-links)");
        assert_eq!((f.count_line, f.node_lines.as_slice()), (1, &[2, 3][..]));
    }
}
