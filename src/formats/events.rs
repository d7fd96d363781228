//! `.events`: one command a line — `send SRC DST K`, `snapshot ID`, `tick` or `tick K`.
//!
//! Parsing checks only the shape of each line; node ids are resolved against a topology when the
//! script runs, and every command keeps its line number so a later error (an unknown node, a
//! transfer larger than the balance) can name the file and the line.

use std::path::Path;

use super::{content_lines, read, FormatError, Problem};

/// One command of an event script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `send SRC DST K`: move `tokens` out of `from` at once, towards `to`.
    Send {
        /// The sending node's id.
        from: String,
        /// The receiving node's id.
        to: String,
        /// Tokens moved.
        tokens: u32,
    },
    /// `snapshot ID`: start the next snapshot (ids 0, 1, 2… in file order) at `node`.
    Snapshot {
        /// The initiating node's id.
        node: String,
    },
    /// `tick` or `tick K`: advance time by `count` steps.
    Tick {
        /// Steps.
        count: u64,
    },
}

/// A command and the line it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Step {
    /// 1-based line number.
    pub line: usize,
    /// The command.
    pub command: Command,
}

/// A parsed `.events` file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventsFile {
    /// The file name used in errors.
    pub file: String,
    /// The commands, in file order.
    pub steps: Vec<Step>,
}

const SHAPE: &str = "`send SRC DST K`, `snapshot ID`, `tick` or `tick K`";

impl EventsFile {
    /// Reads an `.events` file.
    pub fn read(path: &Path) -> Result<Self, FormatError> {
        Self::parse(&read(path)?, &path.display().to_string())
    }

    /// Parses `.events` text; `file` names it in errors. Blank lines and `#` comments are skipped.
    pub fn parse(text: &str, file: &str) -> Result<Self, FormatError> {
        let err = |line: usize, problem: Problem| FormatError { file: file.to_string(), line, problem };
        let malformed =
            |line: usize, text: &str| err(line, Problem::Malformed { expected: SHAPE, text: text.to_string() });
        let mut steps = Vec::new();
        for (line, text) in content_lines(text) {
            let fields: Vec<&str> = text.split_whitespace().collect();
            let command = match fields[..] {
                ["send", from, to, k] => {
                    let tokens = k
                        .parse()
                        .map_err(|_| err(line, Problem::BadNumber { field: "tokens", text: k.to_string() }))?;
                    Command::Send { from: from.to_string(), to: to.to_string(), tokens }
                }
                ["snapshot", node] => Command::Snapshot { node: node.to_string() },
                ["tick"] => Command::Tick { count: 1 },
                ["tick", k] => {
                    let count =
                        k.parse().map_err(|_| err(line, Problem::BadNumber { field: "ticks", text: k.to_string() }))?;
                    Command::Tick { count }
                }
                _ => return Err(malformed(line, text)),
            };
            steps.push(Step { line, command });
        }
        Ok(EventsFile { file: file.to_string(), steps })
    }

    /// Number of `snapshot` commands (the snapshot ids are `0..count`).
    pub fn snapshot_count(&self) -> usize {
        self.steps.iter().filter(|s| matches!(s.command, Command::Snapshot { .. })).count()
    }

    /// The error for `problem` at `line` of this file.
    pub fn error(&self, line: usize, problem: Problem) -> FormatError {
        FormatError { file: self.file.clone(), line, problem }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_with_their_lines() {
        let f = EventsFile::parse("# c\nsend N1 N2 3\n\nsnapshot N2\ntick\n  tick 4  \n", "e.events").unwrap();
        let lines: Vec<usize> = f.steps.iter().map(|s| s.line).collect();
        assert_eq!(lines, vec![2, 4, 5, 6]);
        assert_eq!(f.steps[0].command, Command::Send { from: "N1".into(), to: "N2".into(), tokens: 3 });
        assert_eq!(f.steps[1].command, Command::Snapshot { node: "N2".into() });
        assert_eq!(f.steps[2].command, Command::Tick { count: 1 });
        assert_eq!(f.steps[3].command, Command::Tick { count: 4 });
        assert_eq!(f.snapshot_count(), 1);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = EventsFile::parse("tick\nsend N1 N2 x\n", "e.events").unwrap_err();
        assert_eq!((e.line, &e.problem), (2, &Problem::BadNumber { field: "tokens", text: "x".into() }));
        assert!(e.to_string().starts_with("e.events:2: bad number"), "{e}");
        let e = EventsFile::parse("tick -1\n", "e.events").unwrap_err();
        assert_eq!(e.problem, Problem::BadNumber { field: "ticks", text: "-1".into() });
        for bad in ["send N1 N2", "snapshot", "jump N1", "tick 1 2", "snapshot N1 N2"] {
            let e = EventsFile::parse(&format!("tick\n{bad}\n"), "e.events").unwrap_err();
            assert_eq!(e.line, 2, "{bad}");
            assert!(matches!(e.problem, Problem::Malformed { .. }), "{bad}: {e}");
        }
    }
}
