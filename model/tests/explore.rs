//! `model explore` serves stateright's Explorer: its JSON API lists the properties and gives
//! each state with its space-time diagram; a headless browser renders the page.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[cfg(feature = "mpi")]
mod common;

/// The explorer process, killed when dropped.
struct Explorer {
    child: Child,
    addr: String,
}

impl Drop for Explorer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start(args: &[&str]) -> Explorer {
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new(env!("CARGO_BIN_EXE_model"))
        .arg("explore")
        .args(args)
        .args(["--addr", &addr])
        .stdout(Stdio::null())
        .spawn()
        .expect("start model explore");
    let explorer = Explorer { child, addr };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(&explorer.addr).is_err() {
        assert!(Instant::now() < deadline, "the explorer did not start listening on {}", explorer.addr);
        std::thread::sleep(Duration::from_millis(50));
    }
    explorer
}

/// A plain HTTP/1.0 GET; returns the body.
fn get(addr: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(head.starts_with("HTTP/1.") && head.contains(" 200 "), "GET {path}: {head}");
    body.to_string()
}

fn json(addr: &str, path: &str) -> serde_json::Value {
    serde_json::from_str(&get(addr, path)).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

#[test]
fn the_json_api_lists_the_properties_and_draws_each_state() {
    let e = start(&["--procs", "2", "--sends", "1", "--variant", "late-record"]);
    let status = json(&e.addr, "/.status");
    let names: Vec<&str> = status["properties"].as_array().unwrap().iter().map(|p| p[1].as_str().unwrap()).collect();
    assert!(names.contains(&"nothing crosses the cut inward"), "{names:?}");
    assert!(names.contains(&"snapshot terminates"), "{names:?}");
    // The initial state, then the steps from it: each with its action and its diagram.
    let init = json(&e.addr, "/.states");
    assert!(init[0]["svg"].as_str().unwrap().starts_with("<svg"));
    let steps = json(&e.addr, "/.states/0");
    let steps = steps.as_array().unwrap();
    assert!(steps.iter().any(|s| s["action"] == "P0 initiates snapshot 0"), "{steps:?}");
    // Follow the shortest inward crossing under late-record: initiate, send, marker, message.
    let path = "/.states/0/2/0/1";
    let after = json(&e.addr, path);
    let deliver = after.as_array().unwrap().iter().find(|s| s["action"] == "deliver head of P0->P1").unwrap();
    let svg = deliver["svg"].as_str().unwrap();
    assert!(svg.contains("<svg") && svg.contains("</svg>"));
    assert!(svg.contains("#d62728"), "markers are red");
    assert!(svg.contains("records snapshot 0"), "a dot where P0 recorded");
    assert!(
        svg.contains("stroke=\"#f08c00\""),
        "the cart crossing the cut inward is drawn in the warning colour: {svg}"
    );
    // Labels: the message by its sender and number, the marker by its snapshot id.
    assert!(svg.contains(">P0#1</text>"), "the cart's label: {svg}");
    assert!(svg.contains(">M0</text>"), "the marker's label: {svg}");
    // The recorded state at the dot, the channel records beside the cut, a legend.
    assert!(svg.contains(">S0: 2 jars</text>"), "P0's recorded state: {svg}");
    assert!(svg.contains(">snapshot 0: channel records</text>"), "{svg}");
    assert!(svg.contains(">P1-&gt;P0: empty (open)</text>"), "P0's record of P1->P0 is still open: {svg}");
    for key in
        ["cart (sender#n)", "marker (M + snapshot id)", "cart crossing a cut inward", "cut (one colour per snapshot)"]
    {
        assert!(svg.contains(key), "legend entry {key:?} missing: {svg}");
    }
    // The snapshot is not complete yet: no property fails in this state.
    assert!(!svg.contains("fails here"), "{svg}");
    // Two steps on, the snapshot completes and the picture names what fails.
    let done = json(&e.addr, "/.states/0/2/0/1/1");
    let svg = done[1]["svg"].as_str().unwrap();
    assert!(svg.contains(">✗ fails here: nothing crosses the cut inward</text>"), "{svg}");
    assert!(svg.contains(">P1-&gt;P0: empty</text>") && !svg.contains("(open)"), "records closed: {svg}");
}

/// Counterexample to "nothing crosses the cut inward" under late-record (`model check --procs 2
/// --sends 1 --variant late-record --strategy bfs --threads 1`).
const CROSSING_PATH: &str = "0/2/0/1/1/1";

fn chromium() -> Option<String> {
    ["chromium", "chromium-browser"].into_iter().map(String::from).find(|c| {
        Command::new(c).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    })
}

#[test]
fn a_headless_browser_renders_a_non_blank_explorer_page() {
    let Some(browser) = chromium() else {
        // scripts/test-all installs Debian's chromium; without it this check cannot run.
        panic!("chromium is not installed: run scripts/test-all (it installs it) or apt-get install chromium");
    };
    let e = start(&["--procs", "2", "--sends", "1", "--variant", "late-record"]);
    let scratch = tempfile::Builder::new().prefix("explorer-shot-").tempdir().unwrap();
    let dir = scratch.path();
    let shot = dir.join("explorer.png");
    let url = format!("http://{}/#/steps/{CROSSING_PATH}", e.addr);
    let status = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,900",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run chromium");
    assert!(status.success(), "chromium failed on {url}");
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let bytes = &buf[..info.buffer_size()];
    let channels = info.color_type.samples();
    let pixels: Vec<&[u8]> = bytes.chunks(channels).collect();
    let background = pixels[0];
    let differing = pixels.iter().filter(|p| *p != &background).count();
    assert!(
        differing * 100 > pixels.len(),
        "the screenshot is blank: only {differing} of {} pixels differ from the background",
        pixels.len()
    );
    // The diagram is drawn: red markers, the orange crossing message, the red "fails here" line.
    let near = |p: &[u8], rgb: [u8; 3]| p.iter().zip(rgb).all(|(&a, b)| a.abs_diff(b) < 40);
    for (what, rgb) in [
        ("marker red", [0xd6, 0x27, 0x28]),
        ("crossing orange", [0xf0, 0x8c, 0x00]),
        ("failure red", [0xc9, 0x2a, 0x2a]),
    ] {
        let count = pixels.iter().filter(|p| near(p, rgb)).count();
        assert!(count > 20, "{what}: only {count} pixels of that colour in the screenshot");
    }
}

/// `model check ARGS --json --strategy bfs --threads 1`: the counterexample link of `property`.
fn counterexample(args: &[&str], property: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_model"))
        .args(["check", "--json", "--strategy", "bfs", "--threads", "1"])
        .args(args)
        .output()
        .expect("run model check");
    link(&o, args, property)
}

/// The Explorer link of `property`'s counterexample in the output `o` of `model check ARGS --json`.
fn link(o: &std::process::Output, args: &[&str], property: &str) -> String {
    assert_eq!(o.status.code(), Some(1), "{args:?} should fail: {}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let p = v["properties"].as_array().unwrap().iter().find(|p| p["name"] == property).cloned();
    let p = p.unwrap_or_else(|| panic!("{args:?}: no {property}"));
    assert_eq!(p["verdict"], "counterexample", "{args:?}");
    p["link"].as_str().expect("a link").to_string()
}

/// The diagram of the last state `link` (an Explorer link of `model check ARGS`) leads to, as
/// the Explorer started with `args` draws it.
fn last_state(args: &[&str], link: &str) -> String {
    let steps = link.split("#/steps/").nth(1).expect("a steps link");
    let (before, last) = steps.rsplit_once('/').expect("at least one step");
    let e = start(args);
    let next = json(&e.addr, &format!("/.states/{before}"));
    next[last.parse::<usize>().unwrap()]["svg"].as_str().expect("a diagram").to_string()
}

#[test]
fn every_barrier_variant_counterexample_opens_in_the_explorer() {
    // Each Flink bug (and the two coordinator faults) as `model check` finds it; the Explorer
    // started with the same flags follows the link to a last state that fails the property.
    for (args, property) in [
        ("--algorithm aligned --sends 1 --crashes 1 --variant process-after-barrier", "exactly-once: every quiet state is the failure-free run's"),
        ("--algorithm aligned --topology ring --sends 1 --crashes 1 --variant aligned-cycle-no-backedge", "exactly-once: every quiet state is the failure-free run's"),
        ("--algorithm unaligned --sends 1 --crashes 1 --variant partial-output-buffers", "recorded total equals the ledger"),
        ("--algorithm unaligned --topology ring --sends 1 --declines 1 --tolerable-failures 1 --snapshots 2 --variant mixed-barriers-after-decline", "recorded total equals the ledger"),
        ("--algorithm aligned --topology ring --sends 1 --crashes 1 --snapshots 2 --variant trigger-stops-after-abort", "triggering never stops while the job runs"),
        ("--algorithm unaligned --topology dataflow --sends 1 --tokens 1 --crashes 2 --snapshots 2 --variant checkpoint-during-recovery", "exactly-once: every quiet state is the failure-free run's"),
        ("--algorithm unaligned --topology dataflow --sends 1 --tokens 1 --crashes 1 --variant wrong-inflight-channels", "recorded total equals the ledger"),
    ] {
        let args: Vec<&str> = args.split(' ').collect();
        let svg = last_state(&args, &counterexample(&args, property));
        assert!(svg.contains(&format!(">✗ fails here: {property}</text>")), "{args:?}: {svg}");
        if args.contains(&"--crashes") && property.starts_with("exactly-once") {
            assert!(svg.contains("crash ↺"), "{args:?}: the crash is drawn: {svg}");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn a_counterexample_found_across_ranks_opens_in_the_explorer() {
    // `--distributed` on three MPI ranks rebuilds the path across the ranks that own its states;
    // the Explorer started with the same flags (no MPI) follows the link to a last state that
    // fails the property.
    let args = ["--sends", "1", "--variant", "late-record"];
    let property = "nothing crosses the cut inward";
    let o = common::mpirun(3, &[&["check", "--json", "--distributed"][..], &args].concat());
    let svg = last_state(&args, &link(&o, &args, property));
    assert!(svg.contains(&format!(">✗ fails here: {property}</text>")), "{svg}");
}
