//! Encoded states on disk: a breadth-first level a rank cannot keep in memory. A [`Spill`] is
//! an unnamed file (gone when it is closed, or when the process dies) written once, then read
//! once from the start, then emptied for the next level. A record is the state's key (8 bytes,
//! little-endian), its encoding's length (4 bytes) and its encoding. Reads and writes go through
//! one buffer of [`BUFFER`] bytes (more only for a state larger than that).

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// The buffer's size: writes and reads of the file are this large.
pub const BUFFER: usize = 1 << 20;

/// A file of encoded states, in the order they were pushed.
pub struct Spill {
    file: File,
    /// Writing: records not yet written. Reading: bytes read and not yet taken, from `at`.
    buf: Vec<u8>,
    at: usize,
    /// Writing: records pushed. Reading: records not yet taken.
    records: usize,
    /// Bytes pushed since the spill was made (its records' headers included).
    pub bytes: u64,
    /// Records pushed since the spill was made.
    pub pushed: u64,
}

impl Spill {
    /// An empty spill in a new unnamed file in `dir`.
    pub fn new(dir: &Path) -> io::Result<Spill> {
        let file = tempfile::tempfile_in(dir)?;
        Ok(Spill { file, buf: Vec::new(), at: 0, records: 0, bytes: 0, pushed: 0 })
    }

    /// Records not yet taken (or, while writing, pushed).
    pub fn left(&self) -> usize {
        self.records
    }

    /// Appends the state with `key` and encoding `state`.
    pub fn push(&mut self, key: u64, state: &[u8]) -> io::Result<()> {
        let len = u32::try_from(state.len()).expect("a state's encoding is under 4 GiB");
        self.buf.extend_from_slice(&key.to_le_bytes());
        self.buf.extend_from_slice(&len.to_le_bytes());
        self.buf.extend_from_slice(state);
        self.records += 1;
        self.pushed += 1;
        self.bytes += 12 + state.len() as u64;
        if self.buf.len() >= BUFFER {
            self.file.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Ends the writing: the records are read from the first.
    pub fn rewind(&mut self) -> io::Result<()> {
        self.file.write_all(&self.buf)?;
        self.buf.clear();
        self.at = 0;
        self.file.seek(SeekFrom::Start(0))?;
        Ok(())
    }

    /// The next record's key and encoding (after [`Spill::rewind`]); `None` after the last.
    pub fn take(&mut self) -> io::Result<Option<(u64, &[u8])>> {
        if self.records == 0 {
            return Ok(None);
        }
        self.fill(12)?;
        let head = &self.buf[self.at..self.at + 12];
        let key = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(head[8..].try_into().expect("4 bytes")) as usize;
        self.fill(12 + len)?;
        let start = self.at + 12;
        self.at = start + len;
        self.records -= 1;
        Ok(Some((key, &self.buf[start..start + len])))
    }

    /// Reads until `need` bytes from `at` are in the buffer (a buffer's worth, or up to the
    /// file's end, at a time).
    fn fill(&mut self, need: usize) -> io::Result<()> {
        if self.buf.len() - self.at >= need {
            return Ok(());
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = need.max(BUFFER) - self.buf.len();
        (&self.file).take(want as u64).read_to_end(&mut self.buf)?;
        if self.buf.len() < need {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the spill file ends inside a record"));
        }
        Ok(())
    }

    /// Empties it (the file too) for the next level's records.
    pub fn clear(&mut self) -> io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.buf.clear();
        self.at = 0;
        self.records = 0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_in_order_across_buffers() {
        let mut spill = Spill::new(&std::env::temp_dir()).expect("a spill file");
        // Records of many sizes, one larger than the buffer, so reads refill mid-record.
        let states: Vec<Vec<u8>> = (0..3000u32)
            .map(|i| (0..(i * 37 % 1500) + if i == 1000 { BUFFER as u32 } else { 0 }).map(|b| b as u8).collect())
            .collect();
        // Small records wait in the buffer: the file is written a buffer at a time.
        spill.push(1, &[1; 100]).expect("pushed");
        assert_eq!(spill.file.metadata().expect("metadata").len(), 0);
        spill.clear().expect("cleared");
        spill.pushed = 0;
        spill.bytes = 0;
        for round in 0..2 {
            for (i, s) in states.iter().enumerate() {
                spill.push(i as u64 * 3 + round, s).expect("pushed");
            }
            assert_eq!(spill.left(), states.len());
            spill.rewind().expect("rewound");
            for (i, s) in states.iter().enumerate() {
                let (k, got) = spill.take().expect("read").expect("a record");
                assert_eq!((k, got), (i as u64 * 3 + round, &s[..]));
            }
            assert!(spill.take().expect("read").is_none());
            assert_eq!(spill.left(), 0);
            spill.clear().expect("cleared");
            assert_eq!(spill.file.metadata().expect("metadata").len(), 0, "the file is emptied");
        }
        assert_eq!(spill.pushed, 6000);
        let sizes: u64 = states.iter().map(|s| 12 + s.len() as u64).sum();
        assert_eq!(spill.bytes, 2 * sizes);
    }

    #[test]
    fn a_truncated_file_is_an_error() {
        let mut spill = Spill::new(&std::env::temp_dir()).expect("a spill file");
        spill.push(7, &[1; 100]).expect("pushed");
        spill.rewind().expect("rewound");
        spill.file.set_len(50).expect("truncated");
        let err = spill.take().expect_err("a record cut short");
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
