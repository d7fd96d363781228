//! The space-time diagram of a path, for the Explorer: one line per house, each message an arrow
//! from its send to its receipt, carts labelled with their identity and markers (red) with their
//! snapshot id, a dot where each house recorded with its recorded state beside it, each
//! snapshot's channel records beside the cuts, the cut of each snapshot as a dashed line through its dots, any cart
//! crossing a cut inward in orange, the properties that fail (or find their example) in the last
//! state named at the top, and a legend at the bottom.

use std::collections::{HashMap, VecDeque};
use std::fmt::Write;

use chandy_lamport::spec::Spec;
use chandy_lamport::{ChannelId, Message, ProcessId, SnapshotId};
use stateright::{Expectation, Model};

use crate::model::{Act, Action, ChandyLamport};
use crate::state::{Packet, State};

const LEFT: f64 = 70.0;
const STEP: f64 = 64.0;
const BANNER: f64 = 18.0;
const WARN: &str = "#f08c00";
const MARKER: &str = "#d62728";
const CART: &str = "#333";
const FAIL: &str = "#c92a2a";
const EXAMPLE: &str = "#2b8a3e";
const CUT_COLOURS: [&str; 4] = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];
const FONT: &str = "font-family=\"sans-serif\"";

/// A cart's label in the diagram: its sender and its stamp (`P0#2`: P0's second cart). In basic
/// mode carts carry no stamp; they are numbered by their sender's sends along this path.
pub fn cart_label<M>(packet: &Packet<M>, sender: &str, nth: usize) -> String {
    match &packet.msg {
        Message::App(cart) if cart.seq > 0 => format!("{sender}#{}", cart.seq),
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
    marker: bool,
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
fn judged<A: Spec>(m: &ChandyLamport<A>, last: &State<A>) -> (Vec<&'static str>, Vec<&'static str>) {
    let fresh = ChandyLamport::<A>::new(m.cfg.clone());
    let (mut fails, mut examples) = (Vec::new(), Vec::new());
    for p in fresh.properties() {
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
pub fn space_time<A: Spec>(m: &ChandyLamport<A>, steps: &[(State<A>, Option<Act<A>>)]) -> String {
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
    let height = legend_top + 44.0;
    let mut body = String::new();
    let mut flights: Vec<VecDeque<Flight>> = (0..t.channels().len()).map(|_| VecDeque::new()).collect();
    let mut sent_by = vec![0usize; n];
    let mut dots: Vec<Vec<(usize, usize)>> = vec![Vec::new(); m.cfg.snapshots as usize];
    // The labels of the carts recorded on each (snapshot, channel), in arrival order.
    let mut records: HashMap<(u32, usize), Vec<String>> = HashMap::new();
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
                        MARKER
                    } else if crossing {
                        WARN
                    } else {
                        CART
                    };
                    let title = format!("{} ({})", m.format_action(action), fl.label);
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
            Action::Internal { house, .. } => {
                let _ = write!(
                    body,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"#777\"><title>{}</title></rect>",
                    x(time) - 4.0,
                    f.y(house as usize) - 4.0,
                    escape(&m.format_action(action))
                );
            }
            Action::Send { .. }
            | Action::Initiate { .. }
            | Action::Flush { .. }
            | Action::Transmit { .. }
            | Action::Trigger
            | Action::Ack { .. }
            | Action::Decline { .. }
            | Action::Crash => {}
        }
        // New messages: whatever was appended to each channel in this step.
        for (c, chan) in after.chans.iter().enumerate() {
            let kept = before.chans.get(c).len() - usize::from(removed == Some(c));
            let from = t.channel(ChannelId(c as u32)).from.index();
            for packet in chan.iter().skip(kept) {
                let (marker, label) = match packet.msg {
                    Message::Marker(s) => (true, marker_label(s)),
                    Message::Cancel(s) => (true, format!("C{}", s.0)),
                    Message::App(_) => {
                        sent_by[from] += 1;
                        (false, cart_label(packet, t.name(ProcessId(from as u16)), sent_by[from]))
                    }
                };
                let post_cut = m.recorded_bits(&after.procs[from]);
                flights[c].push_back(Flight { sent_at: time, from, marker, label, post_cut });
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
    // Messages still in transit run to the right edge.
    for (c, queue) in flights.iter().enumerate() {
        let to = t.channel(ChannelId(c as u32)).to.index();
        for fl in queue {
            let colour = if fl.marker { MARKER } else { CART };
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
    for colour in [WARN, MARKER, CART] {
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
            let Some(state) = last.and_then(|st| st.procs[p].slot(id)).and_then(|slot| slot.state.as_ref()) else {
                continue;
            };
            text(
                &mut out,
                (x(time) + 8.0, f.y(p) - 7.0),
                colour,
                11,
                "start",
                &format!("S{s}: {}", state.describe_state()),
            );
        }
    }
    // Beside the cuts, at the right: each snapshot's channel records (their carts as the core
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
            let status = match slot {
                Some(slot) if slot.state.is_some() && slot.marker(i) => "",
                Some(slot) if slot.state.is_some() => " (open)",
                _ => " (not started)",
            };
            // What the core recorded, cart for cart (stamped carts name themselves; basic
            // mode's alike carts are named by their deliveries along the path).
            let stamped: Vec<String> = slot
                .map(|slot| {
                    slot.record(i).filter(|cart| cart.seq > 0).map(|cart| format!("{}#{}", t.name(ch.from), cart.seq))
                })
                .into_iter()
                .flatten()
                .collect();
            let carts = if stamped.is_empty() {
                records.get(&(id.0, c)).map_or_else(String::new, |r| r.join(" "))
            } else {
                stamped.join(" ")
            };
            let carts = if carts.is_empty() { "empty".to_string() } else { carts };
            let line = format!("{}: {carts}{status}", t.channel_label(ChannelId(c as u32)));
            text(&mut out, (records_x + 8.0, row), colour, 10, "start", &line);
            row += 12.0;
        }
        row += 4.0;
    }
    legend(&mut out, legend_top);
    out.push_str("</svg>");
    out
}

/// Snapshots that may appear (for the height of the records column).
fn dots_possible<A: Spec>(m: &ChandyLamport<A>) -> usize {
    usize::from(m.cfg.snapshots)
}

/// Adds the label of the cart just delivered on `channel` to the records of every snapshot whose
/// record of that channel grew in this step.
fn note_recorded<A: Spec>(
    m: &ChandyLamport<A>,
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
    item(out, row1, CART, false, "cart (sender#n)");
    item(out, row1, MARKER, false, "marker (M + snapshot id)");
    item(out, row1, WARN, false, "cart crossing a cut inward");
    item(out, row1, CART, true, "in transit, stolen (×) or lost");
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
