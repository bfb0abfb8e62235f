//! The distributed geometric: central accuracy with no trusted party, for counting families whose
//! statistic adds up across parties (binomial counts, clipped Poisson sums).
//!
//! The two-sided geometric G with Pr(G = g) = (1−α)/(1+α) α^{|g|} is the optimal central noise on
//! a count (Ghosh et al. 2009), and it is infinitely divisible: G = X − Y with X, Y independent
//! Geometric(α) on {0, 1, …}, and Geometric(α) is the sum of M independent Pólya (negative
//! binomial) NB(1/M, α) variables, Pr(k) = Γ(k + 1/M)/(k! Γ(1/M)) (1−α)^{1/M} α^k. So if party m
//! adds X_m − Y_m with X_m, Y_m ~ NB(1/M, α) to its count and the parties' noisy counts are summed
//! by secure aggregation, the aggregator sees exactly Σ_m y_m + G: the central mechanism.
//!
//! **Exact share sampler.** α is a rational a/2^32 ≥ e^{−ε}, certified (so −ln α ≤ ε). The pmf
//! ratio f(k+1)/f(k) = α(k + 1/M)/(k + 1) is rational, so the CDF is F(k) = (1−α)^{1/M} G(k) with
//! G(k) rational; X ≤ k iff U < F(k) iff (U/G(k))^M < 1 − α, a comparison of rationals once U
//! is known to enough bits. U is drawn lazily, 64 random bits at a time, and each comparison is
//! decided exactly in big integers: the sample is exactly NB(1/M, α) given ideal random bits (no
//! floating point anywhere), and it terminates with probability 1.
//!
//! **Secure aggregation.** Each party splits its noisy count v_m = y_m + X_m − Y_m into M additive
//! shares in the ring Z/2^64 (M − 1 uniform, the last completing the sum), sends share i to party
//! i, and publishes the sum of the shares it received; the aggregator adds the M published sums
//! mod 2^64 and reads the result as a signed integer: Σ v_m exactly, unless |Σ v_m| ≥ 2^63
//! (probability below α^{2^62}).
//!
//! **Guarantee.** Against the aggregator (honest-but-curious, parties honest): it learns only
//! Σ v_m = Σ y_m + G, which is ε'-DP (ε' = −ln α ≤ ε) for every record, since one record moves
//! Σ y_m by at most its sensitivity Δ (1 for a count, the cap c for a clipped sum, for which
//! [`share_alpha`] takes α ≥ e^{−ε/Δ}). Any M − 1 of the published sums are uniform and
//! independent of the data. Against the aggregator with t colluding parties, who know their own
//! noise: the noise left is X − Y with X, Y ~ NB((M − t)/M, α), whose privacy loss is computed by
//! [`collusion_eps`] (numerically, not certified); it degrades gracefully to ∞ only at t = M.

use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::{One, Zero};
use rand::Rng;

use crate::certify::exact::exp_lower;

/// The denominator of α: α = numerator/2^32.
const ALPHA_BITS: u32 = 32;

/// α = num/2^32, the smallest such dyadic ≥ e^{−ε/Δ} (checked exactly): noise with this α is
/// (−ln α)-DP for a sensitivity-Δ count and −ln α ≤ ε.
pub fn share_alpha(eps: f64, sensitivity: u64) -> u64 {
    let x = eps / sensitivity as f64;
    let lower = exp_lower(x); // ≤ e^x, exactly representable
    let exact = BigRational::from_float(lower).expect("finite");
    let scale = BigRational::from_integer(BigInt::from(1u64 << ALPHA_BITS));
    let mut num = ((1u64 << ALPHA_BITS) as f64 / lower).floor() as u64;
    // Smallest num with num·e_low ≥ 2^32, so num/2^32 ≥ 1/e_low ≥ e^{−x}.
    while BigRational::from_integer(BigInt::from(num)) * &exact < scale {
        num += 1;
    }
    while num > 1 && BigRational::from_integer(BigInt::from(num - 1)) * &exact >= scale {
        num -= 1;
    }
    num.min((1u64 << ALPHA_BITS) - 1)
}

/// The ε the shares' total noise certifies: −ln α (≤ the target ε/Δ per unit of count).
pub fn share_eps(alpha_num: u64) -> f64 {
    -((alpha_num as f64) / (1u64 << ALPHA_BITS) as f64).ln()
}

/// An exact sampler of NB(1/M, α), α = `alpha_num`/2^32.
#[derive(Debug, Clone)]
pub struct PolyaShare {
    parties: u32,
    alpha_num: u64,
}

/// A lazily drawn uniform U ∈ [0, 1): its first `bits` bits as the integer `prefix`.
struct LazyUniform {
    prefix: BigUint,
    bits: u64,
}

impl LazyUniform {
    fn refine(&mut self, rng: &mut dyn Rng) {
        self.prefix = (&self.prefix << 64u32) + BigUint::from(rng.next_u64());
        self.bits += 64;
    }
}

impl PolyaShare {
    /// The share sampler for M parties at α = `alpha_num`/2^32 (0 < α < 1).
    pub fn new(parties: u32, alpha_num: u64) -> PolyaShare {
        assert!(parties >= 1 && alpha_num > 0 && alpha_num < 1 << ALPHA_BITS);
        PolyaShare { parties, alpha_num }
    }

    /// One exact draw.
    pub fn sample(&self, rng: &mut dyn Rng) -> u64 {
        let m = self.parties as u64;
        let two32 = BigInt::from(1u64 << ALPHA_BITS);
        let a = BigInt::from(self.alpha_num);
        // 1 − α = c/2^32.
        let c = &two32 - &a;
        let mut u = LazyUniform { prefix: BigUint::zero(), bits: 0 };
        u.refine(rng);
        // g(k) = Π_{i<k} α(i + 1/M)/(i + 1) = Π a(iM + 1) / (2^32 M (i + 1)) and G(k) = Σ_{i≤k} g(i),
        // exact rationals (kept in lowest terms).
        let mut g = BigRational::one();
        let mut cdf = BigRational::one();
        let mut k: u64 = 0;
        loop {
            // Is U < (1−α)^{1/M} G(k)?  ⇔  (U/G(k))^M < c/2^32, with U ∈ [p, p + 1)/2^bits.
            let (gn, gd) = (cdf.numer().clone(), cdf.denom().clone());
            loop {
                let p = BigInt::from(u.prefix.clone());
                let scale = BigInt::one() << u.bits;
                let rhs = &c * num_traits::pow(&scale * &gn, m as usize);
                if num_traits::pow((&p + 1) * &gd, m as usize) * &two32 <= rhs {
                    return k; // U < (p + 1)/2^bits ≤ F(k).
                }
                if num_traits::pow(&p * &gd, m as usize) * &two32 >= rhs {
                    break; // U ≥ p/2^bits ≥ F(k): go on to k + 1.
                }
                u.refine(rng);
            }
            g *= BigRational::new(&a * BigInt::from(k * m + 1), &two32 * BigInt::from(m * (k + 1)));
            cdf += &g;
            k += 1;
        }
    }

    /// Pr(share = k) in floating point (for tests and reports).
    pub fn pmf(&self, k: u64) -> f64 {
        let r = 1.0 / self.parties as f64;
        let alpha = self.alpha_num as f64 / (1u64 << ALPHA_BITS) as f64;
        let mut p = (1.0 - alpha).powf(r);
        for i in 0..k {
            p *= alpha * (i as f64 + r) / (i as f64 + 1.0);
        }
        p
    }
}

/// One party's noise share X − Y, X, Y ~ NB(1/M, α) independent.
pub fn noise_share(sampler: &PolyaShare, rng: &mut dyn Rng) -> i64 {
    sampler.sample(rng) as i64 - sampler.sample(rng) as i64
}

/// The protocol end to end: each party (a thread) adds its noise share to its count and splits
/// the result into additive shares mod 2^64 sent to the other parties; each publishes the sum of
/// the shares it received; the aggregator adds the published sums. Returns Σ y_m + G.
pub fn secure_noisy_sum(counts: &[u64], alpha_num: u64, seed: u64) -> i64 {
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use std::sync::mpsc;
    let m = counts.len();
    let sampler = PolyaShare::new(m as u32, alpha_num);
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..m).map(|_| mpsc::channel::<u64>()).unzip();
    let published = std::thread::scope(|scope| {
        for (i, &y) in counts.iter().enumerate() {
            let senders = senders.clone();
            let sampler = sampler.clone();
            scope.spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let v = (y as i64 + noise_share(&sampler, &mut rng)) as u64;
                let mut last = v;
                for (to, s) in senders.iter().enumerate() {
                    if to + 1 == senders.len() {
                        s.send(last).expect("party alive");
                    } else {
                        let share = rng.next_u64();
                        last = last.wrapping_sub(share);
                        s.send(share).expect("party alive");
                    }
                }
            });
        }
        drop(senders);
        let handles: Vec<_> =
            receivers.into_iter().map(|rx| scope.spawn(move || rx.iter().fold(0u64, u64::wrapping_add))).collect();
        handles.into_iter().map(|h| h.join().expect("party finished")).collect::<Vec<u64>>()
    });
    published.into_iter().fold(0u64, u64::wrapping_add) as i64
}

/// The privacy loss ε_t = max_z |ln Pr(N = z+1)/Pr(N = z)| of the noise N = X − Y left when t of
/// M parties collude (X, Y ~ NB((M − t)/M, α)), computed in floating point on |z| ≤ `window`
/// (beyond it the ratio tends to α from the geometric tails): a number to report, not a certificate.
pub fn collusion_eps(parties: u32, colluding: u32, alpha_num: u64, window: usize) -> f64 {
    if colluding >= parties {
        return f64::INFINITY;
    }
    let r = (parties - colluding) as f64 / parties as f64;
    let alpha = alpha_num as f64 / (1u64 << ALPHA_BITS) as f64;
    let n = 4 * window + 64;
    let mut f = vec![0.0; n];
    f[0] = (1.0 - alpha).powf(r);
    for k in 1..n {
        f[k] = f[k - 1] * alpha * ((k - 1) as f64 + r) / k as f64;
    }
    let pmf = |z: i64| -> f64 {
        (0..n)
            .filter_map(|x| {
                let y = x as i64 - z;
                (y >= 0 && (y as usize) < n).then(|| f[x] * f[y as usize])
            })
            .sum()
    };
    let mut worst: f64 = 0.0;
    for z in -(window as i64)..(window as i64) {
        let (a, b) = (pmf(z), pmf(z + 1));
        worst = worst.max((a / b).ln().abs());
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;
    use statrs::distribution::{ChiSquared, ContinuousCDF};

    /// Chi-square goodness of fit with cells 0..cells−1 and a tail cell; fails with probability
    /// 1e-6 when the sampler is exact.
    fn chi_square_passes(observed: &[u64], probs: &[f64], draws: u64) -> (f64, f64) {
        let stat: f64 = observed
            .iter()
            .zip(probs)
            .map(|(&o, &p)| {
                let e = p * draws as f64;
                (o as f64 - e).powi(2) / e
            })
            .sum();
        let limit = ChiSquared::new((observed.len() - 1) as f64).unwrap().inverse_cdf(1.0 - 1e-6);
        (stat, limit)
    }

    #[test]
    fn share_alpha_is_a_certified_upper_bound_of_e_to_minus_eps() {
        for eps in [0.01, 0.5, 1.0, 3.0] {
            let a = share_alpha(eps, 1);
            let alpha = a as f64 / 2f64.powi(32);
            assert!(alpha >= (-eps).exp() * (1.0 - 1e-15), "ε {eps}");
            assert!(alpha - (-eps).exp() < 1e-9, "ε {eps}: as tight as 2^-32 allows");
            assert!(share_eps(a) <= eps + 1e-12);
        }
    }

    #[test]
    fn one_share_has_the_exact_polya_distribution() {
        let s = PolyaShare::new(3, 1 << 31); // α = 1/2, shape 1/3
        let mut rng = StdRng::seed_from_u64(1);
        let draws = 20_000u64;
        let cells = 8;
        let mut obs = vec![0u64; cells + 1];
        for _ in 0..draws {
            let k = s.sample(&mut rng) as usize;
            obs[k.min(cells)] += 1;
        }
        let mut probs: Vec<f64> = (0..cells as u64).map(|k| s.pmf(k)).collect();
        probs.push(1.0 - probs.iter().sum::<f64>());
        let (stat, limit) = chi_square_passes(&obs, &probs, draws);
        assert!(stat < limit, "χ² {stat} ≥ {limit}");
    }

    #[test]
    fn the_protocol_output_is_the_count_plus_the_central_two_sided_geometric() {
        // M = 4 parties, α = 1/2: Σ y + G with Pr(G = g) = (1/3)(1/2)^{|g|}.
        let counts = [3u64, 0, 5, 2];
        let alpha_num = 1u64 << 31;
        let draws = 6_000u64;
        let w = 6i64; // cells g = −6..6 and two tails
        let mut obs = vec![0u64; (2 * w + 3) as usize];
        for d in 0..draws {
            let g = secure_noisy_sum(&counts, alpha_num, d) - 10;
            let cell = if g < -w {
                0
            } else if g > w {
                (2 * w + 2) as usize
            } else {
                (g + w + 1) as usize
            };
            obs[cell] += 1;
        }
        let pmf = |g: i64| (1.0 / 3.0) * 0.5f64.powi(g.unsigned_abs() as i32);
        let tail: f64 = 0.5f64.powi(w as i32 + 1) / 3.0 * 2.0; // Σ_{g>w} (1/3)2^{-g} = (2/3)2^{-w-1}
        let mut probs = vec![tail];
        probs.extend((-w..=w).map(pmf));
        probs.push(tail);
        assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let (stat, limit) = chi_square_passes(&obs, &probs, draws);
        assert!(stat < limit, "χ² {stat} ≥ {limit}: {obs:?}");
    }

    #[test]
    fn collusion_weakens_the_guarantee_only_gradually() {
        let a = 1u64 << 31;
        let full = collusion_eps(5, 0, a, 40);
        assert!((full - 2f64.ln()).abs() < 1e-9, "no collusion: the central ε, got {full}");
        let mut last = full;
        for t in 1..5 {
            let e = collusion_eps(5, t, a, 40);
            assert!(e >= last - 1e-12 && e.is_finite(), "t = {t}: {e}");
            last = e;
        }
        assert!(collusion_eps(5, 5, a, 40).is_infinite());
    }
}
