//! Serde helpers for the state's compact parts (see `wire`, which sends states between
//! processes): `SmallVec`s (the library's helper: the workspace's `smallvec` is built without its
//! `serde` feature),
//! shared values (serde's `Arc` support is behind its `rc` feature), and the per-process arrays
//! sent only as long as there are processes.

use serde::de::{Deserializer, Error, SeqAccess, Visitor};
use serde::Deserialize;

/// A `SmallVec`, as a sequence: `#[serde(with = "small")]` (the library's).
pub mod small {
    pub use chandy_lamport::protocol::small::{deserialize, serialize};
}

/// Runs stored flat, as read: the length of each run, then every run's items one after another
/// (a state's channels, its ghost lists), before the lengths are checked.
#[derive(Deserialize)]
#[serde(bound = "I::Item: Deserialize<'de>")]
pub struct Flat<L: smallvec::Array<Item = u8>, I: smallvec::Array> {
    #[serde(with = "small")]
    lens: smallvec::SmallVec<L>,
    #[serde(with = "small")]
    items: smallvec::SmallVec<I>,
}

impl<L: smallvec::Array<Item = u8>, I: smallvec::Array> Flat<L, I> {
    /// The lengths and the items, if the lengths add up to the items; else `mismatch`.
    pub fn checked<E>(self, mismatch: E) -> Result<(smallvec::SmallVec<L>, smallvec::SmallVec<I>), E> {
        match self.lens.iter().map(|&l| usize::from(l)).sum::<usize>() == self.items.len() {
            true => Ok((self.lens, self.items)),
            false => Err(mismatch),
        }
    }
}

/// An optional shared value, as the value (decoded into a new `Arc`): `#[serde(with = "shared")]`.
pub mod shared {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes the value, if any.
    pub fn serialize<T: Serialize, S: Serializer>(v: &Option<Arc<T>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_deref().serialize(s)
    }

    /// Reads an optional value into a new `Arc`.
    pub fn deserialize<'de, T: Deserialize<'de>, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<T>>, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map(Arc::new))
    }
}

/// The first processes' entries of a per-process array of `N` bytes, read from a sequence of at most
/// `N` (the rest 0); [`Prefix::len`] says how many were sent.
pub struct Prefix<const N: usize> {
    /// The array.
    pub bytes: [u8; N],
    /// How many entries were sent.
    pub len: usize,
}

impl<'de, const N: usize> Deserialize<'de> for Prefix<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq<const N: usize>;
        impl<'de, const N: usize> Visitor<'de> for Seq<N> {
            type Value = Prefix<N>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "at most {N} bytes")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Prefix<N>, S::Error> {
                let mut out = Prefix { bytes: [0; N], len: 0 };
                while let Some(b) = seq.next_element()? {
                    if out.len == N {
                        return Err(S::Error::invalid_length(N + 1, &self));
                    }
                    out.bytes[out.len] = b;
                    out.len += 1;
                }
                Ok(out)
            }
        }
        d.deserialize_seq(Seq::<N>)
    }
}
