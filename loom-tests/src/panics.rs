//! The panic hook for explorations: loom and shuttle explore many runs that panic on purpose (a
//! burning house, a broken runtime's judged failure); one line each instead of a backtrace.

use std::sync::Once;

use crate::fragile::FIRE;
use crate::judge::Failure;

/// Installs, once per process, a hook that prints nothing for a burning house's panic (caught
/// by the runtime), and a one-line summary before the previous hook's report of a judged
/// [`Failure`]; every other panic goes to the previous hook.
pub fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            if payload.downcast_ref::<&str>() == Some(&FIRE) {
                return;
            }
            if let Some(failure) = payload.downcast_ref::<Failure>() {
                eprintln!("run failed: {failure:?}");
            }
            previous(info);
        }));
    });
}

/// The text of a panic payload (a `String` or a `&str`).
pub fn message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a non-string panic".into())
}
