//! `--initial FILE`: each process's initial state, as JSON: `{"P0": STATE, "P1": STATE, …}`.

use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use anyhow::{anyhow, bail, Context};
use chandy_lamport::Topology;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

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
pub fn read_initial<A: DeserializeOwned>(path: &Path, topology: &Topology) -> anyhow::Result<Vec<A>> {
    let file = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("{file}: cannot read"))?;
    let entries: Entries<A> = serde_json::from_str(&text).map_err(|e| {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        anyhow!("{file}:{}: --initial: {message} (column {})", e.line(), e.column())
    })?;
    let mut states: Vec<Option<A>> = (0..topology.len()).map(|_| None).collect();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (name, state) in entries.0 {
        let nth = seen.entry(name.clone()).or_default();
        let line = line_of(&text, &name, *nth);
        *nth += 1;
        let p = topology
            .process(&name)
            .map_err(|_| anyhow!("{file}:{line}: --initial: unknown process {name:?} (not in the topology)"))?;
        if states[p.index()].replace(state).is_some() {
            bail!("{file}:{line}: --initial: {name} is given twice");
        }
    }
    let missing: Vec<&str> =
        topology.processes().filter(|p| states[p.index()].is_none()).map(|p| topology.name(p)).collect();
    if !missing.is_empty() {
        bail!("{file}: --initial: no initial state for {}", missing.join(", "));
    }
    Ok(states.into_iter().flatten().collect())
}
