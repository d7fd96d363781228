//! `model merge` on any text: shard results (JSON) separated by NUL bytes. Merged as given (the
//! digest refuses an edited file) and sealed again (so that the checks behind the digest are
//! reached): nothing panics, and a merge that succeeds has every property decided once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use model::check::shards::{merge, seal};
use model::CheckResult;

fuzz_target!(|text: &str| {
    let mut shards = Vec::new();
    for (i, part) in text.split('\0').enumerate() {
        let Ok(result) = serde_json::from_str::<CheckResult>(part) else { return };
        shards.push((format!("shard{i}.json"), result));
    }
    let _ = merge(shards.clone());
    for (_, result) in &mut shards {
        seal(result);
    }
    if let Ok(merged) = merge(shards.clone()) {
        assert_eq!(merged.properties.len(), shards[0].1.properties.len());
        serde_json::to_string(&merged).expect("the merged result is JSON");
    }
});
