//! The settings a message may be about, and how it names them: by the field a library user sets
//! ([`Names::Fields`], an error's `Display`) or by the `model` command's flag
//! ([`Names::Flags`], what the command prints). Each message is written once, in a
//! [`Wording::write`] that takes the names to use.

use std::error::Error;
use std::fmt;

/// How a message names a setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Names {
    /// The field of [`Config`](super::config::Config) or
    /// [`CheckOptions`](crate::check::CheckOptions) (`procs`, `checkpointing.max_concurrent`).
    #[default]
    Fields,
    /// The `model` command's flag (`--procs`, `--max-concurrent`).
    Flags,
}

/// A setting of a configuration or a check that a message names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// Processes.
    Procs,
    /// Initial tokens per process.
    Tokens,
    /// Actions per process.
    Sends,
    /// Snapshot ids.
    Snapshots,
    /// Who may initiate.
    Initiators,
    /// The property mode.
    Properties,
    /// Partial-order reduction.
    Por,
    /// The marker rules.
    Algorithm,
    /// Theft of messages in transit.
    Theft,
    /// The fault variant.
    Variant,
    /// Checkpoints pending at once.
    MaxConcurrent,
    /// Declines by processes.
    Declines,
    /// Crashes.
    Crashes,
    /// Failed checkpoints tolerated in a row.
    TolerableFailures,
    /// Symmetry reduction.
    Symmetry,
    /// The shard searched.
    Shard,
    /// The exploration order.
    Strategy,
    /// A search across ranks (a function, not a field: `check_distributed`).
    Distributed,
    /// The depth bound.
    Depth,
}

impl Setting {
    /// The field a library user sets (for [`Setting::Distributed`], the function called).
    pub fn field(self) -> &'static str {
        match self {
            Setting::Procs => "procs",
            Setting::Tokens => "tokens",
            Setting::Sends => "sends",
            Setting::Snapshots => "snapshots",
            Setting::Initiators => "initiators",
            Setting::Properties => "mode",
            Setting::Por => "por",
            Setting::Algorithm => "algorithm",
            Setting::Theft => "theft",
            Setting::Variant => "variant",
            Setting::MaxConcurrent => "checkpointing.max_concurrent",
            Setting::Declines => "checkpointing.declines",
            Setting::Crashes => "checkpointing.crashes",
            Setting::TolerableFailures => "checkpointing.tolerable_failures",
            Setting::Symmetry => "symmetry",
            Setting::Shard => "shard",
            Setting::Strategy => "strategy",
            Setting::Distributed => "check_distributed",
            Setting::Depth => "depth",
        }
    }

    /// The `model` command's flag.
    pub fn flag(self) -> &'static str {
        match self {
            Setting::Procs => "--procs",
            Setting::Tokens => "--tokens",
            Setting::Sends => "--sends",
            Setting::Snapshots => "--snapshots",
            Setting::Initiators => "--initiators",
            Setting::Properties => "--properties",
            Setting::Por => "--por",
            Setting::Algorithm => "--algorithm",
            Setting::Theft => "--theft",
            Setting::Variant => "--variant",
            Setting::MaxConcurrent => "--max-concurrent",
            Setting::Declines => "--declines",
            Setting::Crashes => "--crashes",
            Setting::TolerableFailures => "--tolerable-failures",
            Setting::Symmetry => "--symmetry",
            Setting::Shard => "--shard",
            Setting::Strategy => "--strategy",
            Setting::Distributed => "--distributed",
            Setting::Depth => "--depth",
        }
    }

    /// Its name in `names`.
    pub fn name(self, names: Names) -> &'static str {
        match names {
            Names::Fields => self.field(),
            Names::Flags => self.flag(),
        }
    }

    /// The setting with a value: `procs = 5` or `--procs 5`.
    pub fn with<V: fmt::Display>(self, value: V, names: Names) -> impl fmt::Display {
        struct With<V>(&'static str, &'static str, V);
        impl<V: fmt::Display> fmt::Display for With<V> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}{}", self.0, self.1, self.2)
            }
        }
        With(self.name(names), if names == Names::Flags { " " } else { " = " }, value)
    }
}

/// A message that names settings, written once for both [`Names`].
pub trait Wording {
    /// Writes the message, naming settings as `names` says.
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result;

    /// The message worded with `names` (an error, if `self` is one).
    fn worded(self, names: Names) -> Worded<Self>
    where
        Self: Sized,
    {
        Worded { message: self, names }
    }
}

impl<T: Wording + ?Sized> Wording for &T {
    fn write(&self, f: &mut fmt::Formatter<'_>, names: Names) -> fmt::Result {
        (**self).write(f, names)
    }
}

/// A message with the names it is worded with (see [`Wording::worded`]); an error whose source
/// is the message's.
#[derive(Debug)]
pub struct Worded<E> {
    message: E,
    names: Names,
}

impl<E> Worded<E> {
    /// The message.
    pub fn into_inner(self) -> E {
        self.message
    }
}

impl<E: Wording> fmt::Display for Worded<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.message.write(f, self.names)
    }
}

impl<E: Wording + Error> Error for Worded<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.message.source()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::config::{Checkpointing, Config, ConfigError, Mode};
    use chandy_lamport::Algorithm;

    fn refused(cfg: Config) -> ConfigError {
        cfg.resolve().expect_err("refused")
    }

    #[test]
    fn a_top_without_token_counts_is_refused_naming_the_line_and_tokens_as_field_or_flag() {
        use crate::system::config::TopologySpec;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.top");
        std::fs::write(&path, "2\nA\nB 1\nA B\nB A\n").unwrap();
        let file =
            Config { procs: None, topology: TopologySpec::File(path.clone()), tokens: None, ..Config::default() };
        let e = refused(Config { ..file.clone() });
        let at = format!(
            "{}:2: node A has no token count, but the model makes its initial state from one: give",
            path.display()
        );
        assert_eq!(e.to_string(), format!("{at} `A TOKENS` here, or set tokens for every house"));
        assert_eq!(
            e.worded(Names::Flags).to_string(),
            format!("{at} `A TOKENS` here, or set --tokens for every house")
        );
        // `tokens` gives every house's: the file's counts are not read.
        let resolved = Config { tokens: Some(3), ..file }.resolve().expect("resolves");
        assert_eq!(resolved.tokens, vec![3, 3]);
    }

    #[test]
    fn config_errors_name_fields_and_the_command_words_them_with_flags() {
        let e = refused(Config { procs: Some(17), ..Config::default() });
        assert_eq!(e.to_string(), "procs must be between 2 and 16, got 17");
        assert_eq!(e.worded(Names::Flags).to_string(), "--procs must be between 2 and 16, got 17");
        let e = refused(Config {
            algorithm: Algorithm::Unaligned,
            mode: Mode::Basic,
            checkpointing: Checkpointing { max_concurrent: 2, ..Checkpointing::default() },
            ..Config::default()
        });
        assert_eq!(
            e.to_string(),
            "checkpointing.max_concurrent = 2 cannot be used with algorithm = unaligned: Flink does not support \
             concurrent unaligned checkpoints (use checkpointing.max_concurrent = 1, or algorithm = aligned)"
        );
        let flags = e.worded(Names::Flags).to_string();
        assert!(flags.starts_with("--max-concurrent 2 cannot be used with --algorithm unaligned:"), "{flags}");
        let e = refused(Config {
            checkpointing: Checkpointing { crashes: 1, ..Checkpointing::default() },
            ..Config::default()
        });
        assert_eq!(
            e.to_string(),
            "checkpointing.crashes is for the barrier algorithms' checkpoint coordinator: use it with algorithm = \
             aligned or unaligned"
        );
    }

    #[test]
    fn no_field_wording_names_a_flag() {
        let all = [
            Setting::Procs,
            Setting::Tokens,
            Setting::Sends,
            Setting::Snapshots,
            Setting::Initiators,
            Setting::Properties,
            Setting::Por,
            Setting::Algorithm,
            Setting::Theft,
            Setting::Variant,
            Setting::MaxConcurrent,
            Setting::Declines,
            Setting::Crashes,
            Setting::TolerableFailures,
            Setting::Symmetry,
            Setting::Shard,
            Setting::Strategy,
            Setting::Distributed,
        ];
        for s in all {
            assert!(!s.field().contains("--") && s.flag().starts_with("--"), "{s:?}");
        }
    }
}
