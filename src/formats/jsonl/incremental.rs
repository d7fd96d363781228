//! Reading logs a line at a time: each file read as far as needed, each line parsed as it is
//! read, and each process's events handed out in its own `seq` order. Nothing is kept but what
//! has been read and not yet taken. What this reader does not handle in one pass (a line that is
//! not a valid event, `time` instead of `seq`, a loss, a gap, a file given twice, a pipe) stops it with
//! [`NotClean`]: the whole reader ([`super::read_logs`]) then reads the logs and words the
//! problem. The one-pass judge (`crate::logs`) takes the events this reader hands out.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fmt;
use std::fs::File;
use std::path::PathBuf;

use serde::de::{self, IgnoredAny, Visitor};
use serde::{Deserialize, Deserializer};

use super::line::{Kind, LogApp};
use super::logs::{LogProblem, States};
use super::read::Resolver;
use crate::protocol::{Application, ChannelId, ProcessId, SnapshotId, Topology};

/// Where the logs come from.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Files, read a line at a time.
    Files(&'a [PathBuf]),
    /// Texts already read: `(file name, text)` pairs.
    Texts(&'a [(String, String)]),
}

/// Why the one pass stopped: the logs are not clean, or not readable in one pass. The whole
/// reader words the findings or the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotClean(pub &'static str);

impl fmt::Display for NotClean {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// A message id: `m{P}.{N}` (what this crate's drivers write: `P` the sender's index, `N` its
/// send's number), kept as numbers; any other spelling as it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Id {
    Made(u16, u64),
    Other(Box<str>),
}

/// The digits of `s` as a number, when `s` is a number written without leading zeros.
fn number(s: &[u8]) -> Option<u64> {
    if s.is_empty() || (s.len() > 1 && s[0] == b'0') {
        return None;
    }
    s.iter().try_fold(0u64, |n, &d| match d {
        b'0'..=b'9' => n.checked_mul(10)?.checked_add(u64::from(d - b'0')),
        _ => None,
    })
}

impl Id {
    fn new(text: &str) -> Id {
        let made = text.strip_prefix('m').and_then(|rest| {
            let (p, n) = rest.split_once('.')?;
            Some(Id::Made(u16::try_from(number(p.as_bytes())?).ok()?, number(n.as_bytes())?))
        });
        made.unwrap_or_else(|| Id::Other(text.into()))
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message id: a string or a non-negative integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Id, E> {
                Ok(Id::new(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Id, E> {
                Ok(Id::Other(v.to_string().into()))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// A line as serde reads it: the fields of [`super::Line`], strings borrowed from the line.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineRef<'a, M, S, A> {
    #[serde(borrow)]
    process: Cow<'a, str>,
    #[serde(default)]
    seq: Option<u64>,
    /// Read to be valid JSON; `seq` orders the events here.
    #[serde(default, rename = "time")]
    _time: Option<IgnoredAny>,
    kind: Kind,
    snapshot: Option<u32>,
    #[serde(borrow)]
    channel: Option<Cow<'a, str>>,
    msg: Option<Id>,
    payload: Option<M>,
    step: Option<S>,
    initiated: Option<bool>,
    recorded: Option<Vec<Id>>,
    state: Option<A>,
}

/// One event, checked and resolved against the topology.
pub(crate) struct Ev<A: Application> {
    pub(crate) body: EvBody<A>,
    /// The state logged with it.
    pub(crate) state: Option<A>,
}

pub(crate) enum EvBody<A: Application> {
    Send { channel: ChannelId, id: Id, payload: A::Msg },
    Receive { channel: ChannelId, id: Id },
    Internal { step: A::Step },
    Record { snapshot: SnapshotId, initiated: bool },
    MarkerSend { snapshot: Option<SnapshotId>, channel: Option<ChannelId> },
    MarkerReceive { snapshot: Option<SnapshotId>, channel: ChannelId, recorded: Vec<Id> },
}

/// Names resolved against the topology (the whole reader's [`Resolver`]).
struct Names<'t>(Resolver<'t>);

impl<'t> Names<'t> {
    fn new(topology: &'t Topology) -> Self {
        Names(Resolver::new(topology))
    }

    /// The channel named `name`, with `process` at its `outgoing` (sender) or incoming end.
    fn channel(&self, process: ProcessId, name: Option<&str>, outgoing: bool) -> Result<ChannelId, NotClean> {
        let name = name.ok_or(NotClean("an unknown or missing channel"))?;
        self.0.channel(process, name, outgoing).map_err(|problem| match problem {
            LogProblem::UnknownChannel(_) => NotClean("an unknown or missing channel"),
            _ => NotClean("an event at the wrong end of its channel"),
        })
    }

    /// One line: its process, its `seq` and its event. Text that is not UTF-8 is no event.
    fn parse<A: LogApp>(&self, text: &[u8], states: &States<A>) -> Result<(ProcessId, u64, Ev<A>), NotClean> {
        let bad = NotClean("a line that is not an event");
        // Checked whole: serde does not check a string it skips (`time`).
        let text = std::str::from_utf8(text).map_err(|_| NotClean("a line that is not UTF-8"))?;
        let line: LineRef<'_, A::Msg, A::Step, A> = serde_json::from_str(text).map_err(|_| bad.clone())?;
        let kind = line.kind;
        let present = [
            ("snapshot", line.snapshot.is_some()),
            ("channel", line.channel.is_some()),
            ("msg", line.msg.is_some()),
            ("payload", line.payload.is_some()),
            ("step", line.step.is_some()),
            ("initiated", line.initiated.is_some()),
            ("recorded", line.recorded.is_some()),
        ];
        if present.iter().any(|(f, there)| *there && !kind.fields().contains(f)) {
            return Err(bad);
        }
        let process = *self.0.processes.get(line.process.as_ref()).ok_or(NotClean("an unknown process"))?;
        let seq = line.seq.ok_or(NotClean("a line without `seq`"))?;
        let missing = NotClean("a line without a field its kind needs");
        let channel = |outgoing| self.channel(process, line.channel.as_deref(), outgoing);
        let body = match kind {
            Kind::Send => EvBody::Send {
                channel: channel(true)?,
                id: line.msg.ok_or(missing.clone())?,
                payload: line.payload.ok_or(missing)?,
            },
            Kind::Receive => EvBody::Receive { channel: channel(false)?, id: line.msg.ok_or(missing)? },
            Kind::Loss => return Err(NotClean("a loss")),
            Kind::Internal => EvBody::Internal { step: line.step.ok_or(missing)? },
            Kind::Record => {
                if line.state.is_none() && matches!(states, States::Interpreted) {
                    return Err(missing);
                }
                EvBody::Record {
                    snapshot: SnapshotId(line.snapshot.ok_or(missing.clone())?),
                    initiated: line.initiated.ok_or(missing)?,
                }
            }
            Kind::MarkerSend => EvBody::MarkerSend {
                snapshot: line.snapshot.map(SnapshotId),
                channel: match line.channel.as_deref() {
                    Some(name) => Some(self.channel(process, Some(name), true)?),
                    None => None,
                },
            },
            Kind::MarkerReceive => EvBody::MarkerReceive {
                snapshot: line.snapshot.map(SnapshotId),
                channel: channel(false)?,
                recorded: line.recorded.ok_or(missing)?,
            },
        };
        Ok((process, seq, Ev { body, state: line.state }))
    }
}

/// One file or text, read a line at a time.
enum Lines<'a> {
    File(Chunks),
    Text(&'a [u8]),
    Done,
}

/// A file read in large chunks, its lines taken in place.
struct Chunks {
    file: File,
    buf: Vec<u8>,
    /// The unread bytes: `buf[start..end]`.
    start: usize,
    end: usize,
    eof: bool,
}

impl Chunks {
    const SIZE: usize = 1 << 20;

    fn new(file: File) -> Self {
        Chunks { file, buf: vec![0; Chunks::SIZE], start: 0, end: 0, eof: false }
    }

    /// The next line, with its newline if it has one; `None` at the end of the file.
    fn line(&mut self) -> std::io::Result<Option<&[u8]>> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[self.start..self.end]) {
                let line = self.start..self.start + i + 1;
                self.start = line.end;
                return Ok(Some(&self.buf[line]));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                self.start = self.end;
                return Ok(Some(&self.buf[line]));
            }
            // Keep the unfinished line, and read more after it.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = std::io::Read::read(&mut self.file, &mut self.buf[self.end..])?;
            self.end += n;
            self.eof = n == 0;
        }
    }
}

/// One process's events read so far and not yet taken, in its `seq` order.
struct Feed<A: Application> {
    ready: VecDeque<Ev<A>>,
    /// The `seq` due next.
    next: u64,
    /// Events read ahead of a missing `seq`.
    early: BTreeMap<u64, Ev<A>>,
    /// The source its last line came from.
    home: Option<usize>,
}

/// Every process's events, read from the sources as they are asked for.
pub(crate) struct Reader<'a, 't, A: LogApp> {
    names: Names<'t>,
    states: &'a States<A>,
    sources: Vec<Lines<'a>>,
    /// Whether each source's first line is still to be read (a byte-order mark may begin it).
    first: Vec<bool>,
    feeds: Vec<Feed<A>>,
}

impl<'a, 't, A: LogApp> Reader<'a, 't, A> {
    pub(crate) fn new(topology: &'t Topology, source: Source<'a>, states: &'a States<A>) -> Result<Self, NotClean> {
        let sources: Vec<Lines<'a>> = match source {
            Source::Files(files) => {
                // A pipe can be read only once: by the whole reader, which keeps what it reads.
                if !files.iter().all(|path| std::fs::metadata(path).is_ok_and(|m| m.is_file())) {
                    return Err(NotClean("a log that is not a regular file (a pipe is read once)"));
                }
                let mut given = HashSet::new();
                let mut sources = Vec::with_capacity(files.len());
                for path in files {
                    if let Ok(canonical) = std::fs::canonicalize(path) {
                        if !given.insert(canonical) {
                            return Err(NotClean("a file given twice"));
                        }
                    }
                    let file = File::open(path).map_err(|_| NotClean("a file that cannot be read"))?;
                    sources.push(Lines::File(Chunks::new(file)));
                }
                sources
            }
            Source::Texts(texts) => texts.iter().map(|(_, text)| Lines::Text(text.as_bytes())).collect(),
        };
        let feeds = topology
            .processes()
            .map(|_| Feed { ready: VecDeque::new(), next: 0, early: BTreeMap::new(), home: None })
            .collect();
        let first = vec![true; sources.len()];
        let mut reader = Reader { names: Names::new(topology), states, sources, first, feeds };
        // Each source's first event tells whose events it holds.
        for s in 0..reader.sources.len() {
            reader.read_line(s)?;
        }
        Ok(reader)
    }

    /// Reads the next event line of source `s` into its process's feed; false at its end.
    fn read_line(&mut self, s: usize) -> Result<bool, NotClean> {
        loop {
            let text: &[u8] = match &mut self.sources[s] {
                Lines::Done => return Ok(false),
                Lines::File(chunks) => match chunks.line().map_err(|_| NotClean("a read failed"))? {
                    Some(line) => line,
                    None => {
                        self.sources[s] = Lines::Done;
                        return Ok(false);
                    }
                },
                Lines::Text(text) => {
                    if text.is_empty() {
                        self.sources[s] = Lines::Done;
                        return Ok(false);
                    }
                    let end = memchr::memchr(b'\n', text).map_or(text.len(), |i| i + 1);
                    let line = &text[..end];
                    *text = &text[end..];
                    line
                }
            };
            let mut line = text;
            if std::mem::take(&mut self.first[s]) {
                line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
            }
            // Blank (a line blank only by Unicode's other spaces is read as an event, and
            // refused: the whole reader then skips it).
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let (p, seq, ev) = self.names.parse::<A>(line, self.states)?;
            let feed = &mut self.feeds[p.index()];
            feed.home = Some(s);
            match seq.cmp(&feed.next) {
                std::cmp::Ordering::Less => return Err(NotClean("a seq repeated")),
                std::cmp::Ordering::Greater => {
                    if feed.early.insert(seq, ev).is_some() {
                        return Err(NotClean("a seq repeated"));
                    }
                }
                std::cmp::Ordering::Equal => {
                    feed.ready.push_back(ev);
                    feed.next += 1;
                    while let Some(ev) = feed.early.remove(&feed.next) {
                        feed.ready.push_back(ev);
                        feed.next += 1;
                    }
                }
            }
            return Ok(true);
        }
    }

    /// Reads until process `p` has at least `n` events ready; false when its events end first.
    /// Its own source is read first, then the others in turn.
    pub(crate) fn fill(&mut self, p: usize, n: usize) -> Result<bool, NotClean> {
        while self.feeds[p].ready.len() < n {
            match self.feeds[p].home.filter(|&s| !matches!(self.sources[s], Lines::Done)) {
                Some(s) => {
                    self.read_line(s)?;
                }
                None => {
                    let mut any = false;
                    for s in 0..self.sources.len() {
                        any |= self.read_line(s)?;
                    }
                    if !any {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }

    /// Process `p`'s events ready to be taken, in its order.
    pub(crate) fn ready(&mut self, p: usize) -> &mut VecDeque<Ev<A>> {
        &mut self.feeds[p].ready
    }

    /// Whether every source is read to its end and no event waits for a missing `seq`.
    pub(crate) fn finish(&self) -> Result<(), NotClean> {
        if self.sources.iter().any(|s| !matches!(s, Lines::Done)) {
            return Err(NotClean("unread lines"));
        }
        if self.feeds.iter().any(|f| !f.early.is_empty()) {
            return Err(NotClean("a gap in a process's seq"));
        }
        Ok(())
    }
}
