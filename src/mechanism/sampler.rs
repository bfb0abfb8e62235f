//! The exact samplers, integers only: for integer weights an unbiased uniform integer below the
//! total (rejection, no modulo bias, no floats) and an integer inverse CDF (binary search on prefix
//! sums); for the compact form the two-sided geometric at a dyadic ε' = s/2^p ≤ ε (Canonne,
//! Kamath & Steinke 2020, "The discrete Gaussian for differential privacy", Alg. 1–2). ε' is
//! ⌊ε·2^p⌋/2^p with s ≥ 2^31 (relative error < 2^-31): the only floating-point step, and an exact
//! one (scaling by a power of two).

// `!(x >= 0.0)` is meant: it is true for NaN, which must count as a failure.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use rand::{Rng, RngExt};

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

/// ε' = s/t, the dyadic rational ≤ ε the sampler realises exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DyadicEps {
    /// Numerator s ≥ 1.
    pub(crate) s: u128,
    /// Denominator t = 2^p.
    pub(crate) t: u128,
}

impl DyadicEps {
    /// The largest s/2^p ≤ ε with s ≥ 2^31 (0 ≤ p ≤ 100); ε ≥ 2^100 gives 2^100 (nothing is
    /// distinguishable from ∞ there). `None` if ε is not > 0, or so small (< 2^-100) that
    /// no such s ≥ 1 exists.
    pub(crate) fn below(eps: f64) -> Option<DyadicEps> {
        if !(eps > 0.0) {
            return None;
        }
        if eps >= 2f64.powi(100) {
            return Some(DyadicEps { s: 1u128 << 100, t: 1 });
        }
        let p = (31 - eps.log2().floor() as i64).clamp(0, 100) as i32;
        let scaled = (eps * 2f64.powi(p)).floor(); // exact: power-of-two scaling, then floor
        if !(scaled >= 1.0 && scaled < 2f64.powi(100)) {
            return None;
        }
        Some(DyadicEps { s: scaled as u128, t: 1u128 << p })
    }

    /// ε' as a float.
    #[cfg(test)]
    pub(crate) fn value(self) -> f64 {
        self.s as f64 / self.t as f64
    }
}

/// Bernoulli(exp(−num/den)) for 0 ≤ num ≤ den (Canonne–Kamath–Steinke, Alg. 1, first case).
fn bernoulli_exp_le1(num: u128, den: u128, rng: &mut impl Rng) -> bool {
    let mut k: u128 = 1;
    // A ~ Bernoulli(γ/k); stop at the first 0; return whether k is odd.
    while rng.random_range(0..den * k) < num {
        k += 1;
    }
    k % 2 == 1
}

/// Bernoulli(exp(−1)).
fn bernoulli_exp_minus_one(rng: &mut impl Rng) -> bool {
    bernoulli_exp_le1(1, 1, rng)
}

/// Two-sided geometric with Pr(d) ∝ exp(−|d|·s/t) (Canonne–Kamath–Steinke, Alg. 2).
pub(crate) fn discrete_laplace(s: u128, t: u128, rng: &mut impl Rng) -> i128 {
    loop {
        let u = rng.random_range(0..t);
        if !bernoulli_exp_le1(u, t, rng) {
            continue;
        }
        let mut v: u128 = 0;
        while bernoulli_exp_minus_one(rng) {
            v += 1;
        }
        let x = u + t * v;
        let y = (x / s) as i128;
        let negative = rng.random_bool(0.5);
        if negative && y == 0 {
            continue;
        }
        return if negative { -y } else { y };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn dyadic_eps_is_below_and_close() {
        for &e in &[1e-6, 1e-4, 0.1, 1.0, 5.0, 40.0] {
            let d = DyadicEps::below(e).unwrap();
            assert!(d.value() <= e && d.value() > e * (1.0 - 1e-9), "{e}: {}", d.value());
        }
        assert!(DyadicEps::below(0.0).is_none() && DyadicEps::below(f64::NAN).is_none());
        assert!(DyadicEps::below(1e-40).is_none());
        assert_eq!(DyadicEps::below(1e300).unwrap().value(), 2f64.powi(100));
    }

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
