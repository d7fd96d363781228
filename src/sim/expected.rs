//! Finding the expected `.snap` files of a scenario from a prefix: `PREFIX.snap` when it takes
//! one snapshot, `PREFIX0.snap`, `PREFIX1.snap`, … when it takes several.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::error::ReplayError;
use crate::formats::snap::SnapFile;
use crate::protocol::Topology;

/// `PREFIX` + `suffix`.
fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = prefix.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The expected files for a run of `topology` that produced `produced` snapshots, parsed and
/// checked against the topology ([`SnapFile::check`]: an empty file, or one naming a node or
/// channel the topology lacks, is a [`crate::formats::FormatError`] naming the file and line).
///
/// With one snapshot, `PREFIX.snap` if it exists; otherwise the numbered series `PREFIX0.snap`,
/// `PREFIX1.snap`, … (every file of the series that exists, and at least the first `produced`);
/// otherwise `PREFIX.snap`. A file that should be there and is not is
/// [`ReplayError::MissingExpected`]; a series longer than the run shows up as a count
/// difference in the comparison.
pub fn load_expected(prefix: &Path, produced: usize, topology: &Topology) -> Result<Vec<SnapFile>, ReplayError> {
    let read = |path: &Path| -> Result<SnapFile, ReplayError> {
        let file = SnapFile::read(path)?;
        file.check(topology)?;
        Ok(file)
    };
    let single = with_suffix(prefix, ".snap");
    let numbered = |i: usize| with_suffix(prefix, &format!("{i}.snap"));
    let missing = |path: &Path| ReplayError::MissingExpected { path: path.display().to_string(), snapshots: produced };
    if produced == 1 && single.is_file() {
        return Ok(vec![read(&single)?]);
    }
    if numbered(0).is_file() {
        let mut files = Vec::new();
        let mut i = 0;
        loop {
            let path = numbered(i);
            if !path.is_file() {
                if i < produced {
                    return Err(missing(&path));
                }
                return Ok(files);
            }
            files.push(read(&path)?);
            i += 1;
        }
    }
    if single.is_file() {
        return Ok(vec![read(&single)?]);
    }
    Err(missing(&if produced == 1 { single } else { numbered(0) }))
}
