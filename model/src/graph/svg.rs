//! The space-time diagram of a path, for the Explorer: one line per process, each message an arrow
//! from its send to its receipt, messages labelled with their identity and markers (red) with their
//! snapshot id, a dot where each process recorded with its recorded state beside it, each
//! snapshot's channel records beside the cuts, the cut of each snapshot as a dashed line through its dots, any message
//! crossing a cut inward in orange, the properties that fail (or find their example) in the last
//! state named at the top, and a legend at the bottom. With the barrier algorithms, also:
//! cancellation barriers (violet), each blocked input as a band along its process's lane while
//! aligned barriers hold it, the coordinator's triggers, stored checkpoints and declines, and
//! each crash as a line across every lane, where what was in transit is lost and the stored
//! channel state sets out again.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write;

use chandy_lamport::apps::spec::Spec;
use chandy_lamport::{ChannelId, Message, ProcessId, SnapshotId};
use stateright::Expectation;

use crate::system::action::{Act, Action};
use crate::system::chans::Tagged;
use crate::system::machine::SnapshotModel;
use crate::system::properties;
use crate::system::state::{State, Stored};

const LEFT: f64 = 70.0;
const STEP: f64 = 64.0;
const BANNER: f64 = 18.0;
const WARN: &str = "#f08c00";
const MARKER: &str = "#d62728";
const CANCEL: &str = "#7048e8";
const BLOCKED: &str = "#ffa94d";
const CRASH: &str = "#e03131";
const MESSAGE: &str = "#333";
const FAIL: &str = "#c92a2a";
const EXAMPLE: &str = "#2b8a3e";
const CUT_COLOURS: [&str; 4] = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];
const FONT: &str = "font-family=\"sans-serif\"";

/// A message's label in the diagram: its sender and its stamp (`P0#2`: P0's second message). In basic
/// mode messages carry no stamp; they are numbered by their sender's sends along this path.
pub fn message_label<M>(tagged: &Tagged<M>, sender: &str, nth: usize) -> String {
    match &tagged.msg {
        Message::App(message) if message.seq > 0 => format!("{sender}#{}", message.seq),
        _ => format!("{sender}#{nth}"),
    }
}

/// A marker's label: `M` and its snapshot id.
pub fn marker_label(snapshot: SnapshotId) -> String {
    format!("M{}", snapshot.0)
}

/// A message in transit, as drawn.
struct Flight {
    sent_at: usize,
    from: usize,
    /// A marker or a cancellation: drawn in `colour`, never recorded.
    marker: bool,
    /// Its colour when `marker` (markers red, cancellations violet).
    colour: &'static str,
    label: String,
    /// Snapshots its sender had recorded when sending.
    post_cut: u32,
}

/// The drawing's geometry.
struct Frame {
    top: f64,
    lane: f64,
}

impl Frame {
    fn y(&self, lane: usize) -> f64 {
        self.top + self.lane * lane as f64
    }
}

fn x(t: usize) -> f64 {
    LEFT + STEP * t as f64
}

fn text(out: &mut String, at: (f64, f64), colour: &str, size: u32, anchor: &str, s: &str) {
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"{size}\" fill=\"{colour}\" text-anchor=\"{anchor}\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\">{}</text>",
        at.0,
        at.1,
        escape(s)
    );
}

fn arrow(out: &mut String, from: (f64, f64), to: (f64, f64), colour: &str, dashed: bool, title: &str, label: &str) {
    let dash = if dashed { " stroke-dasharray=\"4 3\"" } else { "" };
    let _ = write!(
        out,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"1.6\"{dash} marker-end=\"url(#head-{})\"><title>{}</title></line>",
        from.0,
        from.1,
        to.0,
        to.1,
        colour.trim_start_matches('#'),
        escape(title)
    );
    if !label.is_empty() {
        // The label sits a little along the arrow from its start, where arrows overlap least.
        let at = (from.0 + (to.0 - from.0) * 0.35, from.1 + (to.1 - from.1) * 0.35 - 3.0);
        text(out, at, colour, 10, "middle", label);
    }
}

/// What the properties say of the last state of a path: the always-properties it violates and
/// the sometimes-properties it exemplifies (judged by a fresh copy of the model, whose property
/// latches have not been set by other paths).
fn judged<A: Spec>(m: &SnapshotModel<A>, last: &State<A>) -> (Vec<&'static str>, Vec<&'static str>) {
    let fresh = SnapshotModel::<A>::new(m.cfg.clone());
    let (mut fails, mut examples) = (Vec::new(), Vec::new());
    for p in properties::list(&fresh) {
        let holds = (p.condition)(&fresh, last);
        match p.expectation {
            Expectation::Sometimes if holds => examples.push(p.name),
            Expectation::Always if !holds => fails.push(p.name),
            _ => {}
        }
    }
    (fails, examples)
}

/// Draws the path `steps` (each state with the action taken from it).
pub fn space_time<A: Spec>(m: &SnapshotModel<A>, steps: &[(State<A>, Option<Act<A>>)]) -> String {
    let t = m.topology();
    let n = t.len();
    let len = steps.len();
    let (fails, examples) = steps.last().map_or_else(|| (Vec::new(), Vec::new()), |(s, _)| judged(m, s));
    let banners = fails.len() + examples.len();
    let most_incoming = t.processes().map(|p| t.incoming(p).len()).max().unwrap_or(0);
    let f = Frame { top: 30.0 + BANNER * banners as f64, lane: (34.0 + 12.0 * most_incoming as f64).max(70.0) };
    let records_x = x(len) + 40.0;
    let width = (records_x + 190.0).max(720.0);
    let record_rows = dots_possible(m) * (t.channels().len() + 1);
    let legend_top = (f.y(n) + 4.0).max(f.top + 12.0 * record_rows as f64);
    let barriers = m.cfg.algorithm.coordinated();
    let height = legend_top + if barriers { 62.0 } else { 44.0 };
    let mut body = String::new();
    let mut flights: Vec<VecDeque<Flight>> = (0..t.channels().len()).map(|_| VecDeque::new()).collect();
    let mut sent_by = vec![0usize; n];
    let mut dots: Vec<Vec<(usize, usize)>> = vec![Vec::new(); m.cfg.snapshots as usize];
    // The labels of the messages recorded on each (snapshot, channel), in arrival order.
    let mut records: HashMap<(u32, usize), Vec<String>> = HashMap::new();
    // Per channel: since when its receiver has held it blocked (aligned barriers).
    let mut blocked_since: Vec<Option<usize>> = vec![None; t.channels().len()];
    for (k, pair) in steps.windows(2).enumerate() {
        let ((before, action), (after, _)) = (&pair[0], &pair[1]);
        let Some(action) = action else { continue };
        let time = k + 1;
        let mut removed: Option<usize> = None;
        match *action {
            Action::Deliver { channel, index }
            | Action::Steal { channel, index }
            | Action::LoseMarker { channel, index } => {
                let c = channel as usize;
                removed = Some(c);
                let to = t.channel(ChannelId(c as u32)).to.index();
                if let Some(fl) = flights[c].remove(index as usize) {
                    let start = (x(fl.sent_at), f.y(fl.from));
                    let crossing = fl.post_cut & !m.recorded_bits(&before.procs[to]) != 0;
                    let colour = if fl.marker {
                        fl.colour
                    } else if crossing {
                        WARN
                    } else {
                        MESSAGE
                    };
                    let title = format!("{} ({})", m.describe_action(action), fl.label);
                    if matches!(action, Action::Deliver { .. }) {
                        arrow(&mut body, start, (x(time), f.y(to)), colour, false, &title, &fl.label);
                        if !fl.marker {
                            note_recorded(m, before, after, to, c, &fl.label, &mut records);
                        }
                    } else {
                        let mid = ((start.0 + x(time)) / 2.0, (start.1 + f.y(to)) / 2.0);
                        arrow(&mut body, start, mid, colour, true, &title, &fl.label);
                        text(&mut body, (mid.0, mid.1 + 5.0), colour, 14, "middle", "×");
                    }
                }
            }
            Action::Internal { process, .. } => {
                let _ = write!(
                    body,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"#777\"><title>{}</title></rect>",
                    x(time) - 4.0,
                    f.y(process as usize) - 4.0,
                    escape(&m.describe_action(action))
                );
            }
            Action::TimerAtMax => {
                let title = m.describe_action(action);
                mark(&mut body, (x(time), f.top - 14.0), "#495057", &title, "T✗");
            }
            Action::Trigger => {
                let id = before.ckpt.as_ref().map_or(0, |ck| ck.coord.next_id().0);
                let title = format!("the coordinator triggers checkpoint {id}");
                mark(&mut body, (x(time), f.top - 14.0), "#495057", &title, &format!("T{id}"));
            }
            Action::Store { snapshot } => {
                let title = format!("checkpoint {snapshot} complete: stored by the coordinator");
                mark(&mut body, (x(time), f.top - 14.0), EXAMPLE, &title, &format!("✓{snapshot}"));
            }
            Action::Decline { process, snapshot } => {
                let title = m.describe_action(action);
                mark(&mut body, (x(time), f.y(process as usize) + 16.0), FAIL, &title, &format!("✗{snapshot}"));
            }
            Action::Crash => {
                // Everything in transit is lost; the stored channel state sets out again below.
                for (c, queue) in flights.iter_mut().enumerate() {
                    let to = t.channel(ChannelId(c as u32)).to.index();
                    for fl in queue.drain(..) {
                        let start = (x(fl.sent_at), f.y(fl.from));
                        let end = (x(time), (f.y(fl.from) + f.y(to)) / 2.0);
                        let colour = if fl.marker { fl.colour } else { MESSAGE };
                        let title = format!("{} lost in the crash", fl.label);
                        arrow(&mut body, start, end, colour, true, &title, &fl.label);
                    }
                }
                let restored = before.ckpt.as_ref().and_then(|ck| ck.latest.as_ref().map(|l| l.id));
                let what = restored.map_or("the initial states".to_string(), |id| format!("checkpoint {}", id.0));
                let _ = write!(
                    body,
                    "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{CRASH}\" stroke-width=\"3\"><title>crash: every house recovers from {3}</title></line>",
                    x(time),
                    f.y(0) - 12.0,
                    f.y(n.saturating_sub(1)) + 12.0,
                    escape(&what)
                );
                text(
                    &mut body,
                    (x(time), f.y(n.saturating_sub(1)) + 24.0),
                    CRASH,
                    11,
                    "middle",
                    &format!("crash ↺ {what}"),
                );
            }
            Action::Send { .. }
            | Action::Initiate { .. }
            | Action::Flush { .. }
            | Action::Transmit { .. }
            | Action::Ack { .. }
            | Action::Complete { .. } => {}
        }
        // New messages: whatever was appended to each channel in this step (after a crash, every
        // channel's contents: the stored channel state).
        for (c, chan) in after.chans.iter().enumerate() {
            let kept = match action {
                Action::Crash => 0,
                _ => before.chans.get(c).len() - usize::from(removed == Some(c)),
            };
            let from = t.channel(ChannelId(c as u32)).from.index();
            for tagged in chan.iter().skip(kept) {
                let (marker, colour, label) = match tagged.msg {
                    Message::Marker(s) => (true, MARKER, marker_label(s)),
                    Message::Cancel(s) => (true, CANCEL, format!("C{}", s.0)),
                    Message::App(_) => {
                        sent_by[from] += 1;
                        (false, MESSAGE, message_label(tagged, t.name(ProcessId(from as u16)), sent_by[from]))
                    }
                };
                let post_cut = m.recorded_bits(&after.procs[from]);
                flights[c].push_back(Flight { sent_at: time, from, marker, colour, label, post_cut });
            }
        }
        // Aligned barriers: the inputs blocked after this step, as bands along their lanes.
        for (c, ch) in t.channels().iter().enumerate() {
            let id = ChannelId(c as u32);
            let was = before.procs[ch.to.index()].is_blocked(t, id);
            let is = after.procs[ch.to.index()].is_blocked(t, id);
            if is && !was {
                blocked_since[c] = Some(time);
            }
            if was && !is {
                if let Some(since) = blocked_since[c].take() {
                    band(&mut body, &f, t, c, since, time);
                }
            }
        }
        for p in 0..n {
            for id in m.snapshot_ids() {
                if !before.procs[p].has_recorded(id) && after.procs[p].has_recorded(id) {
                    dots[id.0 as usize].push((p, time));
                }
            }
        }
    }
    for (c, since) in blocked_since.iter().enumerate() {
        if let Some(since) = since {
            band(&mut body, &f, t, c, *since, len);
        }
    }
    // Messages still in transit run to the right edge.
    for (c, queue) in flights.iter().enumerate() {
        let to = t.channel(ChannelId(c as u32)).to.index();
        for fl in queue {
            let colour = if fl.marker { fl.colour } else { MESSAGE };
            let end = (x(len) + 10.0, (f.y(fl.from) + f.y(to)) / 2.0);
            let title = format!("{} in transit on {}", fl.label, t.channel_label(ChannelId(c as u32)));
            arrow(&mut body, (x(fl.sent_at), f.y(fl.from)), end, colour, true, &title, &fl.label);
        }
    }
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">"
    );
    out.push_str("<defs>");
    for colour in [WARN, MARKER, MESSAGE, CANCEL] {
        let id = colour.trim_start_matches('#');
        let _ = write!(
            out,
            "<marker id=\"head-{id}\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"{colour}\"/></marker>"
        );
    }
    out.push_str("</defs><rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
    for (i, name) in fails.iter().enumerate() {
        text(&mut out, (8.0, 16.0 + BANNER * i as f64), FAIL, 13, "start", &format!("✗ fails here: {name}"));
    }
    for (i, name) in examples.iter().enumerate() {
        let at = (8.0, 16.0 + BANNER * (fails.len() + i) as f64);
        text(&mut out, at, EXAMPLE, 13, "start", &format!("✓ example of: {name}"));
    }
    for p in t.processes() {
        let lane = p.index();
        text(&mut out, (8.0, f.y(lane) + 4.0), "black", 13, "start", t.name(p));
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
            f.y(lane),
            x(len) + 10.0,
            f.y(lane)
        );
    }
    out.push_str(&body);
    let last = steps.last().map(|(s, _)| s);
    for (s, points) in dots.iter().enumerate() {
        let colour = CUT_COLOURS[s % CUT_COLOURS.len()];
        let id = SnapshotId(s as u32);
        let mut sorted = points.clone();
        sorted.sort();
        if sorted.len() > 1 {
            let pts: Vec<String> = sorted.iter().map(|&(p, t)| format!("{:.1},{:.1}", x(t), f.y(p))).collect();
            let _ = write!(
                out,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>cut of snapshot {s}</title></polyline>",
                pts.join(" ")
            );
        }
        for &(p, time) in &sorted {
            let name = t.name(ProcessId(p as u16));
            let _ = write!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{colour}\"><title>{} records snapshot {s}</title></circle>",
                x(time),
                f.y(p),
                escape(name)
            );
            let held = last.and_then(|st| st.procs[p].slot(id)).and_then(|slot| slot.state.as_ref());
            // Barrier algorithms: a checkpoint the coordinator stored is read from its store.
            let described = match (held, last.and_then(|st| stored(st, id))) {
                (Some(state), _) => state.0.describe_state(),
                (None, Some(stored)) => stored.rec.processes[p].describe_state(),
                (None, None) => continue,
            };
            text(&mut out, (x(time) + 8.0, f.y(p) - 7.0), colour, 11, "start", &format!("S{s}: {described}"));
        }
    }
    // Beside the cuts, at the right: each snapshot's channel records (their messages as the core
    // holds them; "open" until the marker closes them).
    let mut row = f.top - 12.0;
    for (s, _) in dots.iter().enumerate().filter(|(_, d)| !d.is_empty()) {
        let colour = CUT_COLOURS[s % CUT_COLOURS.len()];
        let id = SnapshotId(s as u32);
        text(&mut out, (records_x, row), colour, 11, "start", &format!("snapshot {s}: channel records"));
        row += 13.0;
        for (c, ch) in t.channels().iter().enumerate() {
            let i = t.incoming(ch.to).iter().position(|x| x.index() == c).unwrap_or(0);
            let slot = last.and_then(|st| st.procs[ch.to.index()].slot(id));
            let store = last.and_then(|st| stored(st, id));
            let status = match slot {
                Some(slot) if slot.state.is_some() && slot.marker(i) => "",
                Some(slot) if slot.state.is_some() => " (open)",
                _ if store.is_some() => " (stored)",
                _ => " (not started)",
            };
            // What the core recorded, message for message (stamped messages name themselves; basic
            // mode's alike messages are named by their deliveries along the path).
            let stamped: Vec<String> = slot
                .map(|slot| {
                    slot.record(i)
                        .filter(|message| message.seq > 0)
                        .map(|message| format!("{}#{}", t.name(ch.from), message.seq))
                })
                .into_iter()
                .flatten()
                .chain(store.into_iter().flat_map(|st| {
                    st.rec.channels[c]
                        .iter()
                        .filter(|message| message.seq > 0)
                        .map(|message| format!("{}#{}", t.name(ch.from), message.seq))
                }))
                .collect();
            let messages = if stamped.is_empty() {
                records.get(&(id.0, c)).map_or_else(String::new, |r| r.join(" "))
            } else {
                stamped.join(" ")
            };
            let messages = if messages.is_empty() { "empty".to_string() } else { messages };
            let line = format!("{}: {messages}{status}", t.channel_label(ChannelId(c as u32)));
            text(&mut out, (records_x + 8.0, row), colour, 10, "start", &line);
            row += 12.0;
        }
        row += 4.0;
    }
    legend(&mut out, legend_top);
    if barriers {
        barrier_legend(&mut out, legend_top + 50.0);
    }
    out.push_str("</svg>");
    out
}

/// The barrier algorithms' part of the key, in a third row.
fn barrier_legend(out: &mut String, row: f64) {
    let mut at = 8.0;
    arrow(out, (at, row - 4.0), (at + 26.0, row - 4.0), CANCEL, false, "cancellation", "");
    text(out, (at + 32.0, row), "#333", 11, "start", "cancellation (C + id)");
    at += 170.0;
    let _ = write!(
        out,
        "<line x1=\"{at:.1}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"{BLOCKED}\" stroke-width=\"4\"/>",
        row - 4.0,
        at + 26.0
    );
    text(out, (at + 32.0, row), "#333", 11, "start", "input blocked (aligning)");
    at += 180.0;
    let _ = write!(
        out,
        "<line x1=\"{0:.1}\" y1=\"{1:.1}\" x2=\"{0:.1}\" y2=\"{2:.1}\" stroke=\"{CRASH}\" stroke-width=\"3\"/>",
        at + 4.0,
        row - 12.0,
        row + 2.0
    );
    text(out, (at + 12.0, row), "#333", 11, "start", "crash and recovery");
    at += 140.0;
    text(out, (at, row), "#333", 11, "start", "Tn trigger · ✓n checkpoint stored · ✗n decline");
}

/// The checkpoint the coordinator stored in `s`, if it is `id`.
fn stored<A: Spec>(s: &State<A>, id: SnapshotId) -> Option<&Stored<A>> {
    s.ckpt.as_ref().and_then(|ck| ck.latest.as_deref()).filter(|l| l.id == id)
}

/// A small labelled mark (a trigger, a stored checkpoint, a decline) with its tooltip.
fn mark(out: &mut String, at: (f64, f64), colour: &str, title: &str, label: &str) {
    let _ = write!(out, "<g><title>{}</title>", escape(title));
    text(out, at, colour, 11, "middle", label);
    out.push_str("</g>");
}

/// An input held blocked by aligned barriers from step `from` to step `to`: a band along its
/// receiver's lane, offset by the input's number so that several stay apart.
fn band(out: &mut String, f: &Frame, t: &chandy_lamport::Topology, c: usize, from: usize, to: usize) {
    let ch = t.channel(ChannelId(c as u32));
    let i = t.incoming(ch.to).iter().position(|x| x.index() == c).unwrap_or(0);
    let y = f.y(ch.to.index()) + 4.0 + 4.0 * i as f64;
    let _ = write!(
        out,
        "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{BLOCKED}\" stroke-width=\"4\" stroke-opacity=\"0.8\"><title>{} blocked: its barrier is in, {} waits for the others</title></line>",
        x(from),
        x(to),
        escape(&t.channel_label(ChannelId(c as u32))),
        escape(t.name(ch.to))
    );
}

/// Snapshots that may appear (for the height of the records column).
fn dots_possible<A: Spec>(m: &SnapshotModel<A>) -> usize {
    usize::from(m.cfg.snapshots)
}

/// Adds the label of the message just delivered on `channel` to the records of every snapshot whose
/// record of that channel grew in this step.
fn note_recorded<A: Spec>(
    m: &SnapshotModel<A>,
    before: &State<A>,
    after: &State<A>,
    to: usize,
    channel: usize,
    label: &str,
    records: &mut HashMap<(u32, usize), Vec<String>>,
) {
    let Some(i) = m.topology().incoming(ProcessId(to as u16)).iter().position(|c| c.index() == channel) else {
        return;
    };
    for id in m.snapshot_ids() {
        let count = |s: &State<A>| s.procs[to].slot(id).map_or(0, |slot| slot.record(i).count());
        if count(after) > count(before) {
            records.entry((id.0, channel)).or_default().push(label.to_string());
        }
    }
}

/// The key to the drawing, in two rows below the lanes.
fn legend(out: &mut String, top: f64) {
    let row1 = top + 14.0;
    let row2 = top + 32.0;
    let mut at = 8.0;
    let mut item = |out: &mut String, row: f64, colour: &str, dashed: bool, label: &str| {
        arrow(out, (at, row - 4.0), (at + 26.0, row - 4.0), colour, dashed, label, "");
        text(out, (at + 32.0, row), "#333", 11, "start", label);
        at += 40.0 + 6.2 * label.chars().count() as f64;
    };
    item(out, row1, MESSAGE, false, "cart (sender#n)");
    item(out, row1, MARKER, false, "marker (M + snapshot id)");
    item(out, row1, WARN, false, "cart crossing a cut inward");
    item(out, row1, MESSAGE, true, "in transit, stolen (×) or lost");
    at = 8.0;
    let _ =
        write!(out, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{}\"/>", at + 5.0, row2 - 4.0, CUT_COLOURS[0]);
    text(
        out,
        (at + 14.0, row2),
        "#333",
        11,
        "start",
        "a house records (Sn: its recorded state); channel records at the right",
    );
    at += 420.0;
    let _ = write!(
        out,
        "<line x1=\"{at:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
        row2 - 4.0,
        at + 26.0,
        row2 - 4.0,
        CUT_COLOURS[0]
    );
    text(out, (at + 32.0, row2), "#333", 11, "start", "cut (one colour per snapshot)");
    at += 210.0;
    let _ = write!(out, "<rect x=\"{at:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"#777\"/>", row2 - 8.0);
    text(out, (at + 14.0, row2), "#333", 11, "start", "sale");
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
