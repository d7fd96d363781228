//! Message delays: a fixed sequence (the course suite's `delays.txt`) or a seeded generator.

use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::error::SimError;
use crate::formats::{content_lines, read, FormatError, Problem};

/// The largest delay the seeded generator draws (delays are `0..=MAX_SEEDED_DELAY`).
pub const MAX_SEEDED_DELAY: u32 = 4;

/// A fixed sequence of delays, drawn in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DelaySequence {
    /// Where the values came from, for errors.
    pub file: String,
    /// The delays.
    pub values: Vec<u32>,
}

impl DelaySequence {
    /// A sequence from values; `file` names it in errors.
    pub fn new(file: impl Into<String>, values: Vec<u32>) -> Self {
        DelaySequence { file: file.into(), values }
    }

    /// Reads a delay file: one non-negative integer a line (blank lines and `#` comments skipped).
    pub fn read(path: &Path) -> Result<Self, FormatError> {
        Self::parse(&read(path)?, &path.display().to_string())
    }

    /// Parses delay text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Self, FormatError> {
        let values = content_lines(text)
            .map(|(line, t)| {
                t.parse().map_err(|_| FormatError {
                    file: file.to_string(),
                    line,
                    problem: Problem::BadNumber { field: "delay", text: t.to_string() },
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(DelaySequence::new(file, values))
    }
}

/// Where the simulator takes message delays from: every send, application message or marker,
/// draws one delay `d` and is due `1 + d` ticks later.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DelaySource {
    /// A fixed sequence; running out of it is an error.
    Sequence(DelaySequence),
    /// A generator (`StdRng`) with this seed, drawing `0..=MAX_SEEDED_DELAY`.
    Seeded(u64),
}

/// The draws of one run.
pub(crate) enum Delays {
    Sequence { sequence: DelaySequence, next: usize },
    Seeded(Box<StdRng>),
}

impl Delays {
    pub(crate) fn new(source: DelaySource) -> Self {
        match source {
            DelaySource::Sequence(sequence) => Delays::Sequence { sequence, next: 0 },
            DelaySource::Seeded(seed) => Delays::Seeded(Box::new(StdRng::seed_from_u64(seed))),
        }
    }

    /// The next delay.
    pub(crate) fn draw(&mut self) -> Result<u32, SimError> {
        match self {
            Delays::Sequence { sequence, next } => {
                let d = sequence.values.get(*next).copied().ok_or_else(|| SimError::DelaysExhausted {
                    file: sequence.file.clone(),
                    available: sequence.values.len(),
                })?;
                *next += 1;
                Ok(d)
            }
            Delays::Seeded(rng) => Ok(rng.random_range(0..=MAX_SEEDED_DELAY)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_runs_out_with_an_error_naming_the_file() {
        let mut d = Delays::new(DelaySource::Sequence(DelaySequence::parse("3\n\n1\n", "d.txt").unwrap()));
        assert_eq!(d.draw(), Ok(3));
        assert_eq!(d.draw(), Ok(1));
        let e = d.draw().unwrap_err();
        assert_eq!(e, SimError::DelaysExhausted { file: "d.txt".into(), available: 2 });
        assert!(e.to_string().contains("d.txt"), "{e}");
    }

    #[test]
    fn bad_delay_names_file_and_line() {
        let e = DelaySequence::parse("1\n2\nx\n", "d.txt").unwrap_err();
        assert_eq!((e.line, e.problem), (3, Problem::BadNumber { field: "delay", text: "x".into() }));
    }

    #[test]
    fn seeded_delays_are_reproducible_and_bounded() {
        let draws = |seed| {
            let mut d = Delays::new(DelaySource::Seeded(seed));
            (0..200).map(|_| d.draw().unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
        assert!(draws(7).iter().all(|&d| d <= MAX_SEEDED_DELAY));
        assert!((0..=MAX_SEEDED_DELAY).all(|v| draws(7).contains(&v)));
    }
}
