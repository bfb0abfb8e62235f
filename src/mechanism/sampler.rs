//! Exact sampling from integer weights: an unbiased uniform integer below the total (rejection, no
//! modulo bias, no floats) and an integer inverse CDF (binary search on prefix sums).

use rand::Rng;

/// A uniform integer in [0, n) for n ≥ 1, exactly: draw the top ⌈log₂ n⌉ bits of a u64 and reject
/// values ≥ n (never rejects when n is a power of two; otherwise accepts with probability > ½).
pub(crate) fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
    assert!(n >= 1, "uniform_below needs n ≥ 1");
    if n == 1 {
        return 0;
    }
    let bits = 64 - (n - 1).leading_zeros(); // 2^(bits−1) < n ≤ 2^bits
    loop {
        let r = if bits == 64 { rng.next_u64() } else { rng.next_u64() >> (64 - bits) };
        if r < n {
            return r;
        }
    }
}

/// Prefix sums of one column: `cum[k] = w[0] + … + w[k]`.
pub(crate) fn prefix_sums(weights: &[u64]) -> Vec<u64> {
    let mut acc = 0u64;
    weights
        .iter()
        .map(|&w| {
            acc += w;
            acc
        })
        .collect()
}

/// The output index k with `cum[k−1] ≤ u < cum[k]` (so Pr(k) = `w[k]`/total exactly for u uniform
/// below total; zero-weight outputs are never returned).
pub(crate) fn inverse_cdf(cum: &[u64], u: u64) -> usize {
    cum.partition_point(|&c| c <= u)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn inverse_cdf_maps_each_unit_to_its_output() {
        let w = [0u64, 3, 0, 1, 4];
        let cum = prefix_sums(&w);
        let got: Vec<usize> = (0..8).map(|u| inverse_cdf(&cum, u)).collect();
        assert_eq!(got, vec![1, 1, 1, 3, 4, 4, 4, 4]);
    }

    #[test]
    fn uniform_below_stays_in_range_and_hits_every_value() {
        let mut rng = StdRng::seed_from_u64(1);
        for n in [1u64, 2, 3, 5, 7, 8, 1 << 52] {
            for _ in 0..200 {
                assert!(uniform_below(&mut rng, n) < n);
            }
        }
        let mut seen = [false; 5];
        for _ in 0..500 {
            seen[uniform_below(&mut rng, 5) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(uniform_below(&mut rng, u64::MAX) < u64::MAX);
    }
}

#[cfg(test)]
mod rejection_tests {
    use std::convert::Infallible;

    use super::uniform_below;

    /// A bit source counting 0, 1, 2, … in its top `bits` bits.
    struct Counter {
        c: u64,
        bits: u32,
    }

    impl rand::TryRng for Counter {
        type Error = Infallible;
        fn try_next_u32(&mut self) -> Result<u32, Infallible> {
            Ok((self.try_next_u64()? >> 32) as u32)
        }
        fn try_next_u64(&mut self) -> Result<u64, Infallible> {
            let v = self.c << (64 - self.bits);
            self.c = (self.c + 1) % (1 << self.bits);
            Ok(v)
        }
        fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
            for b in dst {
                *b = self.try_next_u64()? as u8;
            }
            Ok(())
        }
    }

    #[test]
    fn uniform_below_rejects_instead_of_folding() {
        // n = 5 uses 3 bits; of the 8 values 5, 6, 7 are rejected, so one cycle yields 0..4 once each.
        let mut rng = Counter { c: 0, bits: 3 };
        let got: Vec<u64> = (0..5).map(|_| uniform_below(&mut rng, 5)).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
    }
}
