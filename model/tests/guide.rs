//! The user guide's commands, run: every command in a `console` block of `docs/src/*.md` and of
//! `README.md` runs here, from the repository's root, and must exit with the status its
//! `# exit N` annotation documents and print every output line the guide shows under it. A
//! command block that is not run must say why in a comment on its first line (the second after
//! a `#!` line): `recipe, not run by the tests`. The convention is described at the top of the guide (`docs/src/introduction.md`).
//!
//! `model ARGS` and `cargo run --release -p model -- ARGS` run this test's `model` binary;
//! `cargo run --release [-p model] --example NAME -- ARGS` runs that example's binary from the
//! same target directory, built first if it is missing. `../shared/cos418` becomes
//! `$COS418_DATA` when that is set.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

/// How many commands each file runs. A command that disappears from the guide (or a block
/// that stops being run) fails the test until this table is updated on purpose.
const COMMANDS: &[(&str, usize)] = &[
    ("README.md", 1),
    ("docs/src/SUMMARY.md", 0),
    ("docs/src/introduction.md", 1),
    ("docs/src/main-job.md", 7),
    ("docs/src/properties.md", 4),
    ("docs/src/big-configurations.md", 3),
    ("docs/src/reduction.md", 5),
    ("docs/src/scale-out.md", 6),
    ("docs/src/checkpoints.md", 9),
    ("docs/src/your-application.md", 4),
    ("docs/src/checking-logs.md", 12),
    ("docs/src/fault-variants.md", 5),
    ("docs/src/loggers.md", 7),
    ("docs/src/your-rust-implementation.md", 1),
    ("docs/src/performance.md", 2),
    ("docs/src/cross-checks.md", 2),
    ("docs/src/tests.md", 0),
    ("docs/src/reference.md", 9),
];

/// The README's limit (issue 26), counted as `wc -w` counts.
const README_WORDS: usize = 1500;

/// No single command may take longer than this; the whole guide runs in well under five minutes.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// The note a block of commands that is not run carries on its first line.
const RECIPE: &str = "recipe, not run by the tests";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// A documented command: where it is, its text (continuations joined), its exit status, and the
/// output lines the guide shows under it.
#[derive(Debug)]
struct Documented {
    at: String,
    text: String,
    exit: i32,
    expect: Vec<String>,
}

/// The guide's files: README.md, then every chapter in `docs/src`.
fn files() -> Vec<PathBuf> {
    let root = root();
    let mut chapters: Vec<PathBuf> = fs::read_dir(root.join("docs/src"))
        .expect("docs/src exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    let mut all = vec![root.join("README.md")];
    all.extend(chapters);
    all
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root()).unwrap_or(path).display().to_string()
}

/// Splits `# exit N` off the end of a command.
fn exit_annotation(text: &str) -> Option<(String, i32)> {
    let at = text.rfind('#')?;
    let code = text[at + 1..].trim().strip_prefix("exit")?.trim().parse().ok()?;
    Some((text[..at].trim_end().to_string(), code))
}

/// Every documented command of one file; an error for a command without its exit status, output
/// before any command, or a block of commands that is neither run nor marked as a recipe.
fn parse(path: &Path) -> Result<Vec<Documented>, String> {
    let name = relative(path);
    let source = fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let lines: Vec<&str> = source.lines().collect();
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].trim_start().strip_prefix("```") else {
            i += 1;
            continue;
        };
        let lang = lang.trim().to_string();
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end].trim() != "```" {
            end += 1;
        }
        if end == lines.len() {
            return Err(format!("{name}:{}: a code block that never closes", i + 1));
        }
        let body = &lines[start..end];
        if lang == "console" {
            console_block(&name, start, body, &mut commands)?;
        } else {
            let shell = matches!(lang.as_str(), "sh" | "bash" | "shell");
            let has_commands = body.iter().any(|l| {
                let l = l.trim_start();
                l.starts_with("$ ") || l.starts_with("model ") || l.starts_with("cargo ")
            });
            if (shell || has_commands) && !body.iter().take(2).any(|l| l.contains(RECIPE)) {
                return Err(format!(
                    "{name}:{}: a ```{lang} block of commands: make it a ```console block the tests run, \
                     or say in a comment on its first line (the second after a `#!` line) \"{RECIPE}\" and why",
                    i + 1
                ));
            }
        }
        i = end + 1;
    }
    Ok(commands)
}

fn console_block(name: &str, start: usize, body: &[&str], commands: &mut Vec<Documented>) -> Result<(), String> {
    let mut open: Option<(usize, String)> = None; // a command still continued with `\`
    let before = commands.len();
    for (k, line) in body.iter().enumerate() {
        let at = format!("{name}:{}", start + k + 1);
        if let Some((first, mut text)) = open.take() {
            text.push('\n');
            text.push_str(line);
            if line.ends_with('\\') {
                open = Some((first, text));
            } else {
                commands.push(finish(name, first, &text)?);
            }
        } else if let Some(command) = line.strip_prefix("$ ") {
            if line.ends_with('\\') {
                open = Some((start + k + 1, command.to_string()));
            } else {
                commands.push(finish(name, start + k + 1, command)?);
            }
        } else if !line.trim().is_empty() {
            if commands.len() == before {
                return Err(format!("{at}: output before any command in a ```console block"));
            }
            commands.last_mut().expect("a command").expect.push(line.trim().to_string());
        }
    }
    if let Some((first, _)) = open {
        return Err(format!("{name}:{first}: a command continued with `\\` past the end of its block"));
    }
    Ok(())
}

fn finish(name: &str, line: usize, text: &str) -> Result<Documented, String> {
    let at = format!("{name}:{line}");
    let (text, exit) = exit_annotation(text)
        .ok_or_else(|| format!("{at}: a command without its documented exit status (`# exit N` at its end)"))?;
    Ok(Documented { at, text, exit, expect: Vec::new() })
}

/// `…` stands for any text; the first piece starts the line, the last one ends it.
fn matches(pattern: &str, line: &str) -> bool {
    let line = line.trim();
    let pieces: Vec<&str> = pattern.split('…').collect();
    let Some(rest) = line.strip_prefix(pieces[0]) else { return false };
    if pieces.len() == 1 {
        return rest.is_empty();
    }
    let mut rest = rest;
    let last = pieces[pieces.len() - 1];
    for piece in &pieces[1..pieces.len() - 1] {
        match rest.find(piece) {
            Some(p) => rest = &rest[p + piece.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// The command as bash runs it: the documented `cargo run` forms become the built binaries, and
/// the course suite's folder `$COS418_DATA` when set.
fn rewrite(text: &str) -> Result<String, String> {
    let mut text = text.to_string();
    for prefix in ["cargo run --release -p model --example ", "cargo run --release --example "] {
        while let Some(at) = text.find(prefix) {
            let after = &text[at + prefix.len()..];
            let name: String = after.chars().take_while(|c| !c.is_whitespace()).collect();
            let package = if prefix.contains("-p model") { "model" } else { "chandy-lamport" };
            let binary = example(&name, package)?;
            let mut rest = &after[name.len()..];
            if let Some(r) = rest.strip_prefix(" --") {
                rest = r;
            }
            text = format!("{}{}{}", &text[..at], binary.display(), rest);
        }
    }
    text = text.replace("cargo run --release -p model -- ", "model ");
    if text.contains("cargo ") {
        return Err("a ```console command may run `model` and the examples, not cargo".into());
    }
    if let Some(data) = std::env::var_os("COS418_DATA") {
        let data = root().join(data);
        text = text.replace("../shared/cos418", &data.display().to_string());
    }
    Ok(text)
}

/// An example's binary, next to this test's `model` binary; built when it is missing.
fn example(name: &str, package: &str) -> Result<PathBuf, String> {
    let model = PathBuf::from(env!("CARGO_BIN_EXE_model"));
    let profile_dir = model.parent().expect("the profile directory");
    let binary = profile_dir.join("examples").join(name);
    if !binary.is_file() {
        let target = profile_dir.parent().expect("the target directory");
        // Built with this binary's own profile (release, or cargo-mutants'), into its directory.
        let profile = profile_dir.file_name().and_then(|n| n.to_str()).expect("a profile directory");
        let profile = if profile == "debug" { "dev" } else { profile };
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["build", "--profile", profile, "-p", package, "--example", name, "--target-dir"])
            .arg(target)
            .current_dir(root())
            .status()
            .map_err(|e| format!("cargo build --example {name}: {e}"))?;
        if !status.success() || !binary.is_file() {
            return Err(format!("cargo build --example {name} failed"));
        }
    }
    Ok(binary)
}

/// A directory `guide-bin-<random>` holding `model`, the binary under test, to put first on
/// `PATH`; removed (with its contents) on drop.
fn bin_dir() -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("guide-bin-").tempdir().expect("a temporary directory");
    let link = dir.path().join("model");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_model"), &link).expect("a link to the model binary");
    dir
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    seconds: f64,
}

fn run(text: &str, bins: &Path, scratch: &Path) -> Ran {
    let path = format!("{}:{}", bins.display(), std::env::var("PATH").unwrap_or_default());
    let out = scratch.join("stdout");
    let err = scratch.join("stderr");
    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(text)
        .current_dir(root())
        .env("PATH", path)
        .stdin(Stdio::null())
        .process_group(0)
        .stdout(File::create(&out).expect("a stdout file"))
        .stderr(File::create(&err).expect("a stderr file"))
        .spawn()
        .expect("bash runs");
    let code = loop {
        if let Some(status) = child.try_wait().expect("wait for the command") {
            break status.code();
        }
        if started.elapsed() > COMMAND_TIMEOUT {
            // The command's own process group (bash and what it started), by its id.
            let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
            let _ = child.wait();
            break None;
        }
        sleep(Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
    Ran { code, stdout: read(&out), stderr: read(&err), seconds: started.elapsed().as_secs_f64() }
}

#[test]
fn readme_is_at_most_1500_words() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let words = readme.split_whitespace().count();
    assert!(
        words <= README_WORDS,
        "README.md has {words} words; the limit is {README_WORDS}: move reference into docs/"
    );
}

#[test]
fn every_block_of_commands_is_run_or_a_recipe() {
    let mut counts = BTreeMap::new();
    for file in files() {
        let commands = parse(&file).unwrap_or_else(|e| panic!("{e}"));
        counts.insert(relative(&file), commands.len());
    }
    let pinned: BTreeMap<String, usize> = COMMANDS.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    assert_eq!(
        counts, pinned,
        "the guide's files and how many commands each runs (left) differ from COMMANDS in model/tests/guide.rs (right)"
    );
}

/// Every relative link to a Markdown file, in the README and between chapters, names a file
/// that exists (mdBook does not check them).
#[test]
fn every_link_to_a_chapter_resolves() {
    let mut broken = Vec::new();
    for file in files() {
        let text = fs::read_to_string(&file).expect("a guide file");
        for (k, line) in text.lines().enumerate() {
            for piece in line.split("](").skip(1) {
                let target = piece.split(')').next().unwrap_or("");
                let path = target.split('#').next().unwrap_or("");
                if path.contains("://") || !path.ends_with(".md") {
                    continue;
                }
                if !file.parent().expect("a folder").join(path).is_file() {
                    broken.push(format!("{}:{}: {target}", relative(&file), k + 1));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links to missing files:\n{}", broken.join("\n"));
}

/// Every file or folder of the repository the guide names in backquotes (`src/…`,
/// `model/tests/…`, …) exists, so a move cannot leave the guide pointing at nothing. A name
/// followed by "(now" is history, kept with its new name beside it.
#[test]
fn every_source_path_the_guide_names_exists() {
    const ROOTS: &[&str] =
        &["src/", "model/", "loom-tests/", "tests/", "examples/", "bench/", "benches/", "scripts/", ".ci/", "loggers/"];
    let mut missing = Vec::new();
    let mut named = 0;
    for file in files() {
        let text = fs::read_to_string(&file).expect("a guide file");
        for (k, line) in text.lines().enumerate() {
            for (i, piece) in line.split('`').enumerate() {
                let history = line.split('`').nth(i + 1).is_some_and(|after| after.trim_start().starts_with("(now"));
                if i % 2 == 0 || history || !ROOTS.iter().any(|r| piece.starts_with(r)) || piece.contains(' ') {
                    continue;
                }
                named += 1;
                let path = piece.trim_end_matches(['.', ',', ':']);
                if !root().join(path).exists() {
                    missing.push(format!("{}:{}: {path}", relative(&file), k + 1));
                }
            }
        }
    }
    assert!(named > 20, "the guide names only {named} source paths: is the scan broken?");
    assert!(missing.is_empty(), "the guide names paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_guides_commands_run_as_documented() {
    let bins_dir = bin_dir();
    let bins = bins_dir.path();
    let scratch = bins.join("out");
    fs::create_dir_all(&scratch).expect("a scratch directory");
    fs::create_dir_all(root().join("target/guide")).expect("target/guide");
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut ran = 0;
    let all: Vec<Documented> = files().iter().flat_map(|file| parse(file).unwrap_or_else(|e| panic!("{e}"))).collect();
    for c in all {
        let text = match rewrite(&c.text) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: {e}", c.at));
                continue;
            }
        };
        let r = run(&text, bins, &scratch);
        ran += 1;
        eprintln!("{:6.1}s  exit {:>4}  {}  $ {}", r.seconds, format!("{:?}", r.code), c.at, c.text.replace('\n', " "));
        let mut problems = Vec::new();
        match r.code {
            None => problems.push(format!("no exit status (timed out after {COMMAND_TIMEOUT:?}, or killed)")),
            Some(code) if code != c.exit => problems.push(format!("exit {code}, documented {}", c.exit)),
            _ => {}
        }
        let lines: Vec<&str> = r.stdout.lines().chain(r.stderr.lines()).collect();
        for want in c.expect.iter().filter(|w| w.as_str() != "...") {
            if !lines.iter().any(|l| matches(want, l)) {
                problems.push(format!("no output line matches {want:?}"));
            }
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{}: $ {}\n  {}\n  --- stdout (last 40 lines)\n{}\n  --- stderr (last 20 lines)\n{}",
                c.at,
                c.text,
                problems.join("\n  "),
                tail(&r.stdout, 40),
                tail(&r.stderr, 20)
            ));
        }
    }
    eprintln!("{ran} commands in {:.1} s", started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} of {ran} documented commands fail:\n\n{}", failures.len(), failures.join("\n\n"));
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_matcher_and_the_parser_work() {
    assert!(matches("all 9 properties hold (exhaustive, … states)", "all 9 properties hold (exhaustive, 38 states)"));
    assert!(!matches("all 9 properties hold (exhaustive, … states)", "4 properties fail: …"));
    assert!(matches("snapshot terminates … holds", "snapshot terminates     always   holds  "));
    assert!(!matches("holds", "holds too"));
    assert!(matches("a…b…c", "aXbYc"));
    assert!(!matches("a…b…c", "aXcYb"));
    assert_eq!(exit_annotation("model check --sends 0   # exit 1"), Some(("model check --sends 0".into(), 1)));
    assert_eq!(exit_annotation("model check"), None);
    let mut commands = Vec::new();
    assert!(console_block("x.md", 1, &["$ model check"], &mut commands).is_err());
    assert!(console_block("x.md", 1, &["holds"], &mut commands).is_err());
    console_block("x.md", 1, &["$ model check \\", "  --sends 1  # exit 0", "", "all … hold"], &mut commands).unwrap();
    assert_eq!(commands.len(), 1);
    assert_eq!(commands[0].text, "model check \\\n  --sends 1");
    assert_eq!(commands[0].expect, vec!["all … hold".to_string()]);
}
