//! Text formats shared with the course scenario suite: topologies (`.top`), event scripts
//! (`.events`) and expected snapshots (`.snap`); and the JSON-lines logs (`.jsonl`) in which any
//! implementation's runs can be checked. Every error names the file and the line.

pub mod events;
pub mod jsonl;
pub mod snap;
pub mod top;

use std::path::Path;

use thiserror::Error;

use crate::protocol::TopologyError;

/// What is wrong with a line.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Problem {
    /// A line that does not have the expected shape.
    #[error("malformed line {text:?}: expected {expected}")]
    Malformed {
        /// What the line should look like.
        expected: &'static str,
        /// The line.
        text: String,
    },
    /// A field that should be a number.
    #[error("bad number {text:?} for {field}")]
    BadNumber {
        /// Which field.
        field: &'static str,
        /// The text found.
        text: String,
    },
    /// The topology it describes is invalid.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// Fewer node lines than the count announced.
    #[error("the first line announces {expected} nodes but only {found} are listed")]
    MissingNodes {
        /// Announced.
        expected: usize,
        /// Listed.
        found: usize,
    },
    /// The file is empty (or only comments).
    #[error("empty file: expected the node count on the first line")]
    Empty,
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// A node id that is not in the topology.
    #[error("unknown node {name}")]
    UnknownNode {
        /// The id given.
        name: String,
    },
    /// A transfer of more tokens than the sender holds.
    #[error("transfer larger than the balance: {node} holds {have} tokens, {want} asked")]
    NotEnoughTokens {
        /// The sender.
        node: String,
        /// Tokens it holds.
        have: u32,
        /// Tokens asked for.
        want: u32,
    },
    /// A transfer of zero tokens.
    #[error("a transfer must carry at least one token")]
    EmptyTransfer,
    /// A transfer between two nodes with no link from the first to the second.
    #[error("no link {from} -> {to}")]
    NoLink {
        /// The sender.
        from: String,
        /// The receiver.
        to: String,
    },
    /// A node listed twice in one snapshot block.
    #[error("node {node} is listed twice in snapshot {snapshot}")]
    DuplicateNode {
        /// The snapshot.
        snapshot: u32,
        /// The node.
        node: String,
    },
    /// A node id that cannot name a node: it holds `->`, which joins a channel's two ends
    /// (`SRC->DST`), so two channels could be spelled alike.
    #[error("node id {name:?} holds \"->\", which joins the two ends of a channel's name (SRC->DST): use another id")]
    BadNodeId {
        /// The id.
        name: String,
    },
    /// A `.top` node line giving the id alone where a token count is needed: the initial
    /// states are made from the counts.
    #[error("node {node} has no token count (its line gives the id alone), and its initial state is made from one")]
    NoTokens {
        /// The node.
        node: String,
    },
    /// An expected `.snap` file with no snapshot block.
    #[error("holds no snapshot: expected a snapshot id line, its `NODE tokens` lines and `SRC DST token(K)` lines")]
    NoSnapshot,
    /// Two blocks with one snapshot id.
    #[error("snapshot {snapshot} appears twice")]
    DuplicateSnapshot {
        /// The snapshot.
        snapshot: u32,
    },
}

/// A problem at a line of a file (`FILE:LINE: problem`, or `FILE: problem` for the whole file).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}{}: {problem}", if *.line == 0 { String::new() } else { format!(":{line}") })]
pub struct FormatError {
    /// The file (or `<input>`).
    pub file: String,
    /// 1-based line number (0 when the whole file is at fault).
    pub line: usize,
    /// What is wrong.
    pub problem: Problem,
}

/// Reads a file to a string, turning I/O errors into a [`FormatError`].
pub(crate) fn read(path: &Path) -> Result<String, FormatError> {
    std::fs::read_to_string(path).map_err(|e| FormatError {
        file: path.display().to_string(),
        line: 0,
        problem: Problem::Io(e.to_string()),
    })
}

/// The lines that carry content: `(line number, trimmed text)`, skipping blanks and `#` comments.
pub(crate) fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}
