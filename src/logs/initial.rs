//! Each process's initial state, as JSON: `{"P0": STATE, "P1": STATE, …}` (`model verify
//! --initial FILE`).

use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use thiserror::Error;

use crate::protocol::Topology;

/// A file of initial states refused: where (`FILE` or `FILE:LINE`) and why.
#[derive(Debug, Error)]
#[error("{at}: {problem}")]
pub struct InitialError {
    /// The file, and the line where one is to blame.
    pub at: String,
    /// What is wrong there.
    pub problem: InitialProblem,
}

/// What is wrong with a file of initial states.
#[derive(Debug, Error)]
pub enum InitialProblem {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Read(std::io::Error),
    /// Not a JSON object of states the application reads.
    #[error("{message} (column {column})")]
    Json {
        /// serde's message, without its position.
        message: String,
        /// The column.
        column: usize,
    },
    /// A name the topology does not have.
    #[error("unknown process {0:?} (not in the topology)")]
    UnknownProcess(String),
    /// A process given twice.
    #[error("{0} is given twice")]
    Twice(String),
    /// Processes given no state.
    #[error("no initial state for {}", .0.join(", "))]
    Missing(Vec<String>),
}

/// A JSON object's entries, in file order (duplicates kept, to be refused by name).
struct Entries<A>(Vec<(String, A)>);

impl<'de, A: Deserialize<'de>> Deserialize<'de> for Entries<A> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor<A>(PhantomData<A>);
        impl<'de, A: Deserialize<'de>> Visitor<'de> for EntriesVisitor<A> {
            type Value = Entries<A>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object from process names to initial states")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Entries<A>, M::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, A>()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(EntriesVisitor(PhantomData))
    }
}

/// The line of the `nth` (0-based) occurrence of `"name"` as a key in `text`.
fn line_of(text: &str, name: &str, nth: usize) -> usize {
    let key = serde_json::to_string(name).unwrap_or_default();
    text.match_indices(&key).nth(nth).map_or(1, |(i, _)| text[..i].matches('\n').count() + 1)
}

/// Reads `path`: every process of `topology` named once, with a state of the application. A
/// state the application cannot read (a field it does not have, a wrong type) is refused
/// naming the file and line.
pub fn read_initial<A: DeserializeOwned>(path: &Path, topology: &Topology) -> Result<Vec<A>, InitialError> {
    let file = path.display();
    let at = |line: Option<usize>| match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_string(),
    };
    let fail = |line, problem| InitialError { at: at(line), problem };
    let text = std::fs::read_to_string(path).map_err(|e| fail(None, InitialProblem::Read(e)))?;
    let entries: Entries<A> = serde_json::from_str(&text).map_err(|e| {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        fail(Some(e.line()), InitialProblem::Json { message, column: e.column() })
    })?;
    let mut states: Vec<Option<A>> = (0..topology.len()).map(|_| None).collect();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (name, state) in entries.0 {
        let nth = seen.entry(name.clone()).or_default();
        let line = line_of(&text, &name, *nth);
        *nth += 1;
        let p = topology.process(&name).map_err(|_| fail(Some(line), InitialProblem::UnknownProcess(name.clone())))?;
        if states[p.index()].replace(state).is_some() {
            return Err(fail(Some(line), InitialProblem::Twice(name)));
        }
    }
    let missing: Vec<String> =
        topology.processes().filter(|p| states[p.index()].is_none()).map(|p| topology.name(p).to_string()).collect();
    if !missing.is_empty() {
        return Err(fail(None, InitialProblem::Missing(missing)));
    }
    Ok(states.into_iter().flatten().collect())
}
