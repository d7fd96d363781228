//! `model verify` on any text: a `.top` file and log files (JSON lines), separated by NUL bytes,
//! judged as the bank's and as balances (when every node has a token count) and as opaque states.
//! Nothing panics or hangs; the report prints, as text and as JSON; a pass is only ever a pass
//! with a snapshot judged; the one-pass reader gives exactly the whole reader's outcome or error.
#![no_main]

use chandy_lamport::apps::bank::Bank;
use chandy_lamport::apps::json::{Balance, Opaque};
use chandy_lamport::apps::spec::{too_many_tokens, Spec};
use chandy_lamport::formats::jsonl::{LogApp, Source};
use chandy_lamport::formats::top::TopFile;
use chandy_lamport::logs::text::print_outcome;
use chandy_lamport::logs::{judge_logs, judge_texts, Reader, Semantics};
use libfuzzer_sys::fuzz_target;

fn judge<A: LogApp>(top: &TopFile, initial: Vec<A>, texts: &[(String, String)], semantics: &Semantics<A>) {
    let whole = judge_logs(&top.topology, initial.clone(), Source::Texts(texts), semantics, Reader::Whole, &mut ());
    let outcome = judge_texts(&top.topology, initial, texts, semantics);
    match (&outcome, &whole) {
        (Ok(one), Ok(whole)) => assert_eq!(one, whole, "the one pass and the whole reader differ"),
        (Err(one), Err(whole)) => assert_eq!(one.to_string(), whole.to_string()),
        _ => panic!(
            "the one pass and the whole reader differ: {:?} / {:?}",
            outcome.as_ref().map(|o| &o.summary),
            whole.as_ref().map(|o| &o.summary)
        ),
    }
    let Ok(outcome) = outcome else { return };
    let mut out = Vec::new();
    print_outcome(&outcome, &mut out).expect("printed to memory");
    serde_json::to_string(&outcome).expect("the report is JSON");
    if outcome.ok {
        assert_eq!(outcome.exit_code, 0);
        assert!(outcome.snapshots.iter().any(|s| s.judged && s.holds), "ok with no snapshot judged");
        assert!(outcome.damage.is_empty() && outcome.run.is_empty());
    } else {
        assert_ne!(outcome.exit_code, 0);
    }
}

fuzz_target!(|text: &str| {
    let mut parts = text.split('\0');
    let Some(Ok(top)) = parts.next().map(|t| TopFile::parse(t, "fuzz.top")) else { return };
    let texts: Vec<(String, String)> =
        parts.enumerate().map(|(i, log)| (format!("P{i}.jsonl"), log.to_string())).collect();
    if texts.is_empty() {
        return;
    }
    let processes = || top.topology.processes();
    // The bank and the balances start from the tokens: a topology without them is judged opaque only.
    if let Ok(tokens) = top.counts() {
        if too_many_tokens::<Bank>(&tokens).is_none() {
            let banks: Vec<Bank> = processes().map(|p| Bank::initial(p, tokens[p.index()])).collect();
            judge(&top, banks, &texts, &Semantics::interpreted());
        }
        let balances = processes().map(|p| Balance(i64::from(tokens[p.index()]))).collect();
        judge(&top, balances, &texts, &Semantics::balance());
    }
    judge(&top, vec![Opaque::default(); top.topology.len()], &texts, &Semantics::opaque());
});
