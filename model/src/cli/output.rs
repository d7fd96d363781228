//! The command's output: every write to standard output checked, and a failed write (a closed
//! pipe, a full disk) reported as what it is — an output failure with its own exit code, never a
//! panic and never "bad input".

use std::io::{self, Write};

use thiserror::Error;

/// The exit code of a command whose output could not be written.
pub const EXIT_OUTPUT: u8 = 4;

/// Writing to standard output failed.
#[derive(Debug, Error)]
#[error("cannot write the output: {0}")]
pub struct OutputError(pub io::Error);

impl From<io::Error> for OutputError {
    fn from(e: io::Error) -> Self {
        OutputError(e)
    }
}

/// Runs `write` on standard output, then flushes it; any failure is an [`OutputError`].
pub fn to_stdout(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    write(&mut out)?;
    out.flush()?;
    Ok(())
}

/// Writes a line to standard error. A failure there cannot be reported anywhere, so it is
/// ignored rather than a panic (as `eprintln!` would be).
pub fn note(line: impl std::fmt::Display) {
    let _ = writeln!(io::stderr(), "{line}");
}

/// Whether `e` is, or was caused by, an output failure.
pub fn is_output_failure(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<OutputError>())
}
