//! Judging a run's logs: reading the events of any implementation of the marker algorithm
//! (JSON lines, see [`crate::formats::jsonl`]), judging every snapshot they mention by the
//! theorem's clauses and the run's own consistency, and the verdicts and findings as data
//! ([`Judgement`]), in the logs' own words: process and channel names as the topology spells
//! them, message ids as the logs spell them, the file:line of every event involved.
//!
//! With an application's states the states are recomputed by its transitions, and the states
//! in the logs only cross-checked, never trusted; with opaque states ([`Semantics::opaque`]) only what
//! needs no application is judged. Clean logs are judged in one pass, memory bounded by what is
//! in flight; logs with a finding (or an error) are then read whole, and the trace checker
//! ([`mod@crate::check`]) words each finding. Both readers give the same outcome
//! ([`Reader`]). [`text`] words an outcome for a terminal. The events come from files, from
//! texts in memory ([`Source`](crate::formats::jsonl::Source)), or pushed one at a time by the driver that makes the run
//! ([`PushedLogs`]).
//!
//! ```
//! use chandy_lamport::apps::json::Balance;
//! use chandy_lamport::formats::jsonl::Source;
//! use chandy_lamport::logs::{judge_logs, Semantics, Reader};
//! use chandy_lamport::Topology;
//!
//! let topology = Topology::ring(2)?;
//! let p0 = r#"{"process":"P0","seq":0,"kind":"record","snapshot":0,"initiated":true,"state":5}
//! {"process":"P0","seq":1,"kind":"marker-send","snapshot":0,"channel":"P0->P1","state":5}
//! {"process":"P0","seq":2,"kind":"marker-receive","snapshot":0,"channel":"P1->P0","recorded":[],"state":5}"#;
//! let p1 = r#"{"process":"P1","seq":0,"kind":"marker-receive","snapshot":0,"channel":"P0->P1","recorded":[],"state":5}
//! {"process":"P1","seq":1,"kind":"record","snapshot":0,"initiated":false,"state":5}
//! {"process":"P1","seq":2,"kind":"marker-send","snapshot":0,"channel":"P1->P0","state":5}"#;
//! let texts = [("P0.jsonl".to_string(), p0.to_string()), ("P1.jsonl".to_string(), p1.to_string())];
//! let initial = vec![Balance(5), Balance(5)];
//! let outcome = judge_logs(&topology, initial, Source::Texts(&texts), &Semantics::balance(), Reader::OnePass, &mut ())?;
//! assert!(outcome.ok, "{}", outcome.summary);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod claims;
mod findings;
mod initial;
mod judge;
mod judgement;
mod onepass;
mod pushed;
mod semantics;
#[cfg(test)]
mod tests;
pub mod text;

pub use claims::{anomalies as judge_claims, Anomaly};
pub use findings::Finding;
pub use initial::{read_initial, InitialError, InitialProblem};
pub use judge::{judge_files, judge_logs, judge_texts, LogsError, Reader, Watch};
pub use judgement::{Judgement, SnapshotVerdict, EXIT_FAIL, EXIT_OK, EXIT_UNDECIDED, MAX_FINDINGS};
pub use onepass::{judge_in_one_pass, Clean, Progress};
pub use pushed::{PushError, PushedLogs};
pub use semantics::{Conserved, Semantics};
