//! The finaliser every part of a state's digest goes through: each part's word (a process, a
//! channel, a snapshot's ghost data, the rest) is Murmur3's finaliser of a fast, fixed hash of
//! the part (the same in every run and every process: shards, `merge`).

/// Murmur3's 64-bit finaliser: a bijection whose every output bit depends on every input bit.
pub(crate) fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Every output bit of `mix` depends on every input bit: flipping one input bit flips about
    /// half the output bits, and distinct inputs give distinct outputs.
    #[test]
    fn mix_spreads_every_bit() {
        let mut flips = 0u64;
        let mut outputs = HashSet::new();
        for x in 0..4096u64 {
            let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            assert!(outputs.insert(mix(x)));
            for bit in 0..64 {
                flips += u64::from((mix(x) ^ mix(x ^ 1 << bit)).count_ones());
            }
        }
        let mean = flips as f64 / (4096.0 * 64.0);
        assert!((31.0..33.0).contains(&mean), "{mean} output bits flip per input bit");
        assert_ne!(mix(0), mix(1));
    }
}
