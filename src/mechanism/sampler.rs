//! Exact sampling from integer weights: an unbiased uniform integer below the total (rejection, no
//! modulo bias, no floats) and an integer inverse CDF (binary search on prefix sums).

use rand::Rng;

/// A uniform integer in [0, n) for n ≥ 1, exactly: draw the top ⌈log₂ n⌉ bits of a u64 and reject
/// values ≥ n (never rejects when n is a power of two; otherwise accepts with probability > ½).
pub fn uniform_below<R: Rng + ?Sized>(rng: &mut R, n: u64) -> u64 {
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
pub fn prefix_sums(weights: &[u64]) -> Vec<u64> {
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
pub fn inverse_cdf(cum: &[u64], u: u64) -> usize {
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
