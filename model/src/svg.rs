//! The space-time diagram of a path, for the Explorer: one line per house, each message an arrow
//! from its send to its receipt (markers red), a dot where each house recorded, the cut of each
//! snapshot as a dashed line through its dots, and any cart crossing a cut inward in orange.

use std::collections::VecDeque;
use std::fmt::Write;

use chandy_lamport::{ChannelId, Message, ProcessId};
use stateright::Model;

use crate::model::{Action, ChandyLamport};
use crate::state::State;

const LEFT: f64 = 70.0;
const STEP: f64 = 64.0;
const TOP: f64 = 30.0;
const LANE: f64 = 70.0;
const WARN: &str = "#f08c00";
const MARKER: &str = "#d62728";
const CART: &str = "#333";
const CUT_COLOURS: [&str; 4] = ["#1f77b4", "#2ca02c", "#9467bd", "#8c564b"];

/// A message in transit, as drawn.
struct Flight {
    sent_at: usize,
    from: usize,
    marker: bool,
    /// Snapshots its sender had recorded when sending.
    post_cut: u32,
}

fn x(t: usize) -> f64 {
    LEFT + STEP * t as f64
}
fn y(lane: usize) -> f64 {
    TOP + LANE * lane as f64
}

fn arrow(out: &mut String, from: (f64, f64), to: (f64, f64), colour: &str, dashed: bool, title: &str) {
    let dash = if dashed { " stroke-dasharray=\"4 3\"" } else { "" };
    let _ = write!(
        out,
        "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-width=\"1.6\"{dash} marker-end=\"url(#head-{})\"><title>{title}</title></line>",
        from.0,
        from.1,
        to.0,
        to.1,
        colour.trim_start_matches('#')
    );
}

/// Draws the path `steps` (each state with the action taken from it).
pub fn space_time(m: &ChandyLamport, steps: &[(State, Option<Action>)]) -> String {
    let t = m.topology();
    let n = t.len();
    let len = steps.len();
    let width = x(len) + 30.0;
    let height = y(n) + 16.0;
    let mut body = String::new();
    let mut flights: Vec<VecDeque<Flight>> = (0..t.channels().len()).map(|_| VecDeque::new()).collect();
    let mut dots: Vec<Vec<(usize, usize)>> = vec![Vec::new(); m.cfg.snapshots as usize];
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
                if let Some(f) = flights[c].remove(index as usize) {
                    let start = (x(f.sent_at), y(f.from));
                    let crossing = f.post_cut & !m.recorded_bits(&before.procs[to]) != 0;
                    let colour = if f.marker {
                        MARKER
                    } else if crossing {
                        WARN
                    } else {
                        CART
                    };
                    let label = m.format_action(action);
                    if matches!(action, Action::Deliver { .. }) {
                        arrow(&mut body, start, (x(time), y(to)), colour, false, &label);
                    } else {
                        let mid = ((start.0 + x(time)) / 2.0, (start.1 + y(to)) / 2.0);
                        arrow(&mut body, start, mid, colour, true, &label);
                        let _ = write!(
                            body,
                            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\" font-size=\"14\" text-anchor=\"middle\">×</text>",
                            mid.0,
                            mid.1 + 5.0
                        );
                    }
                }
            }
            Action::Sell { house } => {
                let _ = write!(
                    body,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"8\" height=\"8\" fill=\"#777\"><title>{}</title></rect>",
                    x(time) - 4.0,
                    y(house as usize) - 4.0,
                    m.format_action(action)
                );
            }
            Action::Transfer { .. } | Action::Initiate { .. } | Action::Flush { .. } => {}
        }
        // New messages: whatever was appended to each channel in this step.
        for (c, chan) in after.chans.iter().enumerate() {
            let kept = before.chans.get(c).len() - usize::from(removed == Some(c));
            for packet in chan.iter().skip(kept) {
                let from = t.channel(ChannelId(c as u32)).from.index();
                flights[c].push_back(Flight {
                    sent_at: time,
                    from,
                    marker: matches!(packet.msg, Message::Marker(_)),
                    post_cut: m.recorded_bits(&after.procs[from]),
                });
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
        for f in queue {
            let colour = if f.marker { MARKER } else { CART };
            let end = (x(len) + 10.0, (y(f.from) + y(to)) / 2.0);
            arrow(&mut body, (x(f.sent_at), y(f.from)), end, colour, true, "in transit");
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
    for p in t.processes() {
        let lane = p.index();
        let _ = write!(
            out,
            "<text x=\"8\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"13\">{}</text><line x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#999\"/>",
            y(lane) + 4.0,
            escape(t.name(ProcessId(lane as u16))),
            y(lane),
            x(len) + 10.0,
            y(lane)
        );
    }
    out.push_str(&body);
    for (s, points) in dots.iter().enumerate() {
        let colour = CUT_COLOURS[s % CUT_COLOURS.len()];
        let mut sorted = points.clone();
        sorted.sort();
        if sorted.len() > 1 {
            let pts: Vec<String> = sorted.iter().map(|&(p, t)| format!("{:.1},{:.1}", x(t), y(p))).collect();
            let _ = write!(
                out,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"><title>cut of snapshot {s}</title></polyline>",
                pts.join(" ")
            );
        }
        for &(p, time) in &sorted {
            let _ = write!(
                out,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{colour}\"><title>{} records snapshot {s}</title></circle>",
                x(time),
                y(p),
                escape(t.name(ProcessId(p as u16)))
            );
        }
    }
    let _ = write!(
        out,
        "<text x=\"8\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"11\" fill=\"#555\">markers red; carts crossing a cut inward orange; dots: recordings; dashed: cuts, carts in transit</text>",
        height - 6.0
    );
    out.push_str("</svg>");
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
