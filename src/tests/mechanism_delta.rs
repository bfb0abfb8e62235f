//! The (ε, δ) certificate against a brute-force exact computation, the δ repair, and the exact
//! boundary: weights that spend δ are accepted, weights that spend δ plus one unit 1/(den·T) are
//! refused.
//!
//! The brute force shares nothing with `exact::certify_weights_delta` but the definition of the
//! bound num/den ≤ e^ε ([`RatioBound::for_eps`]): it enumerates every event A ⊆ Θ̃ and computes
//! max_A Pr(A|y_a) − (num/den)·Pr(A|y_b) in arbitrary-precision rationals.

use crate::certify::exact::{certify_weights, certify_weights_delta, next_down, PrivacyViolation, RatioBound};
use crate::certify::repair::{quantise, repair_and_quantise_delta, RepairMethod};
use crate::certify::DEFAULT_TOTAL;
use crate::mechanism::Mechanism;
use crate::model::{Model, Neighbours};
use ndarray::Array2;
use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};
use proptest::prelude::*;

use super::common::{binomial, neighbours_strategy};

fn rat(x: f64) -> BigRational {
    BigRational::from_float(x).expect("finite")
}

/// max over ordered neighbour pairs and every event A of Σ_{k∈A} (w[k,a] − (num/den) w[k,b]) / T.
fn brute_delta(columns: &[Vec<u64>], neighbours: &Neighbours, eps: f64, total: u64) -> BigRational {
    let r = RatioBound::for_eps(eps);
    let rho = BigRational::new(BigInt::from(r.num), BigInt::from(r.den));
    let t = BigRational::from_integer(BigInt::from(total));
    let n = columns[0].len();
    let mut best = BigRational::zero(); // the empty event
    for (i, j) in neighbours.edges() {
        for (a, b) in [(i, j), (j, i)] {
            for mask in 1u32..(1 << n) {
                let mut s = BigRational::zero();
                for k in (0..n).filter(|k| mask & (1 << k) != 0) {
                    let wa = BigRational::from_integer(BigInt::from(columns[a][k]));
                    let wb = BigRational::from_integer(BigInt::from(columns[b][k]));
                    s += (wa - &rho * wb) / &t;
                }
                if s > best {
                    best = s;
                }
            }
        }
    }
    best
}

/// `c` is the smallest float ≥ `exact`.
fn is_rounded_up(c: f64, exact: &BigRational) -> bool {
    rat(c) >= *exact && (c == 0.0 || rat(next_down(c)) < *exact)
}

/// Random columns of `n_out` weights summing to `total` (largest-remainder rounding of random reals).
fn columns_strategy(n_obs: usize, n_out: usize) -> impl Strategy<Value = Vec<Vec<f64>>> {
    proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(0.0), 0.0f64..1.0], n_out), n_obs)
}

fn to_weights(reals: &[Vec<f64>], total: u64) -> Vec<Vec<u64>> {
    reals
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c[0] += 1e-3; // a positive sum
            quantise(&c, total)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// On small weights the exact check accepts exactly when the brute force says the weights
    /// spend at most δ, its certified δ is the brute-force value rounded up to a float, and δ = 0
    /// agrees with the pure-ε check. δ is drawn at random or right at the brute-force value (and
    /// the floats next to it), where a wrong rounding direction would show.
    #[test]
    fn exact_delta_check_agrees_with_brute_force(
        neighbours in neighbours_strategy(),
        n_out in 2usize..6,
        log2_total in 1u32..12,
        log_eps in -9.0f64..3.0,
        reals in columns_strategy(6, 5),
        mode in 0usize..5,
        random_delta in 0.0f64..1.0,
    ) {
        let total = 1u64 << log2_total;
        let eps = log_eps.exp();
        let reals: Vec<Vec<f64>> = reals[..neighbours.len()].iter().map(|c| c[..n_out].to_vec()).collect();
        let columns = to_weights(&reals, total);
        let brute = brute_delta(&columns, &neighbours, eps, total);
        let at = brute.to_f64().unwrap().min(next_down(1.0));
        let delta = match mode {
            0 => random_delta,
            1 => at,
            2 => next_down(at).max(0.0),
            3 => crate::certify::exact::next_up(at).min(next_down(1.0)),
            _ => 0.0,
        };
        let got = certify_weights_delta(&columns, neighbours.edges(), eps, delta, total);
        match &got {
            Ok(c) => {
                prop_assert!(brute <= rat(delta), "accepted δ = {} but the weights spend {}", delta, brute);
                prop_assert!(*c <= delta);
                prop_assert!(is_rounded_up(*c, &brute), "certified {} is not {} rounded up", c, brute);
            }
            Err(PrivacyViolation::DeltaExceeds { spent, .. }) => {
                prop_assert!(brute > rat(delta), "refused δ = {} but the weights spend only {}", delta, brute);
                prop_assert!(rat(*spent) > rat(delta));
            }
            Err(e) => prop_assert!(false, "unexpected error {:?}", e),
        }
        if delta == 0.0 {
            // δ = 0 is pure ε: both checks agree on acceptance.
            prop_assert_eq!(got.is_ok(), certify_weights(&columns, neighbours.edges(), eps).is_ok());
            prop_assert_eq!(got.is_ok(), brute.is_zero());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A float P that spends up to 1e-7 relative more than δ (plus ±1e-10 noise and tiny
    /// negatives, as a solver returns it) is repaired by either method into weights with total
    /// 2^52 that the brute force confirms spend at most δ, with the certified δ rounded up.
    #[test]
    fn repaired_delta_mechanisms_are_certified(
        neighbours in neighbours_strategy(),
        n_out in 2usize..6,
        log_eps in -9.0f64..3.0,
        reals in columns_strategy(6, 5),
        excess in 0.0f64..1e-7,
        noise in proptest::collection::vec(-1e-10f64..1e-10, 30),
    ) {
        let eps = log_eps.exp();
        let n_obs = neighbours.len();
        let mut p = Array2::from_shape_fn((n_out, n_obs), |(k, i)| reals[i][k] + if k == 0 { 1e-3 } else { 0.0 });
        for mut c in p.columns_mut() {
            let s = c.sum();
            c /= s;
        }
        for (idx, v) in p.iter_mut().enumerate() {
            *v += noise[idx % noise.len()];
        }
        let spent = crate::lp::delta_spent(&p, &neighbours, eps);
        prop_assume!(spent < 0.999, "δ must stay below 1");
        let delta = (spent * (1.0 - excess)).max(1e-9);
        prop_assert!(!RepairMethod::for_delta(delta).is_empty(), "no repair method for δ = {}", delta);
        for method in RepairMethod::for_delta(delta) {
            let (w, certified, report) = repair_and_quantise_delta(&neighbours, eps, delta, &p, DEFAULT_TOTAL, *method)
                .map_err(|e| TestCaseError::fail(format!("{method:?}: {e}")))?;
            for c in &w {
                prop_assert_eq!(c.iter().sum::<u64>(), DEFAULT_TOTAL);
            }
            prop_assert!(certified <= delta);
            let brute = brute_delta(&w, &neighbours, eps, DEFAULT_TOTAL);
            prop_assert!(brute <= rat(delta), "{:?}: spends {} > δ = {}", method, brute, delta);
            prop_assert!(is_rounded_up(certified, &brute));
            prop_assert_eq!(certify_weights_delta(&w, neighbours.edges(), eps, delta, DEFAULT_TOTAL), Ok(certified));
            // The mixing weight stays near the closed-form bound (excess + margin)/δ, so the
            // released mechanism stays close to P.
            let bound = ((spent - delta).max(0.0) + report.margin + 1e-9) / delta;
            prop_assert!(report.mixing_mass <= bound.min(1.0) * 1.01, "{:?}: t = {} > {}", method, report.mixing_mass, bound);
        }
    }
}

/// Two columns over two outputs whose pair (0, 1) spends S < 2^53 units of 1/(den·T) (so δ = S/(den·T)
/// and δ minus one unit are floats): move m units so that w[0,0]·den − num·w[0,1] is just positive.
fn one_unit_columns(eps: f64, total: u64) -> (Vec<Vec<u64>>, u128, u32) {
    let r = RatioBound::for_eps(eps);
    let half = total as u128 / 2;
    // m = ⌈half·(num − den)/num⌉: then S_01 = num·m − half·(num − den) ∈ [0, num).
    let m = (half * (r.num - r.den)).div_ceil(r.num);
    let cols = vec![vec![half as u64, half as u64], vec![(half - m) as u64, (half + m) as u64]];
    let s = r.num * m - half * (r.num - r.den);
    let p = r.den.trailing_zeros() + total.trailing_zeros();
    (cols, s, p)
}

#[test]
fn one_unit_over_delta_is_refused() {
    let chain = Neighbours::Chain { len: 2 };
    for (eps, total) in [(1e-9, DEFAULT_TOTAL), (1e-3, 8), (0.7, 1 << 20)] {
        let (cols, s, p) = one_unit_columns(eps, total);
        assert!(s > 0 && s < 1 << 53, "S = {s}");
        let unit = |n: u128| n as f64 / 2f64.powi(p as i32); // exact: n < 2^53
        let exact = brute_delta(&cols, &chain, eps, total);
        assert_eq!(exact, rat(unit(s)), "brute force and the construction disagree");
        // Spending exactly δ is fine, and certified δ is exact here.
        assert_eq!(certify_weights_delta(&cols, chain.edges(), eps, unit(s), total), Ok(unit(s)));
        // One unit 1/(den·T) less budget: refused, naming the pair.
        match certify_weights_delta(&cols, chain.edges(), eps, unit(s - 1), total) {
            Err(PrivacyViolation::DeltaExceeds { a: 0, b: 1, spent }) => assert_eq!(spent, unit(s)),
            other => panic!("ε = {eps}, T = {total}: expected a refusal, got {other:?}"),
        }
    }
}

/// K = 1, two grid points, ε = 1e-9 and the given δ.
fn two_point_model(delta: f64) -> Model {
    binomial(1, 2, "squared", &[1e-9]).name("two").top(&format!("delta = {delta:?}")).model()
}

#[test]
fn mechanism_from_weights_refuses_one_unit_over_with_one_sentence() {
    let (cols, s, p) = one_unit_columns(1e-9, DEFAULT_TOTAL);
    let unit = |n: u128| n as f64 / 2f64.powi(p as i32);
    let m = Mechanism::from_weights(two_point_model(unit(s)), 1e-9, DEFAULT_TOTAL, cols.clone()).unwrap();
    assert_eq!((m.delta(), m.certified_delta(), m.certified_eps()), (unit(s), unit(s), 1e-9));
    let e = Mechanism::from_weights(two_point_model(unit(s - 1)), 1e-9, DEFAULT_TOTAL, cols).unwrap_err().to_string();
    assert!(e.contains("y = 0 and y = 1") && e.contains("not (eps, delta)-DP"), "{e}");
    assert_eq!(e.lines().count(), 1);
}

#[test]
fn a_zero_facing_a_positive_weight_spends_delta_instead_of_failing() {
    // Randomised response with one output unreachable from y = 1: pure ε is impossible, (ε, δ) fine.
    let t = DEFAULT_TOTAL;
    let cols = vec![vec![t / 2, t / 4, t / 4], vec![t / 2, t / 2, 0]];
    let chain = Neighbours::Chain { len: 2 };
    assert!(matches!(certify_weights(&cols, chain.edges(), 1.0), Err(PrivacyViolation::Unbounded { .. })));
    // Pair (0, 1) spends 1/4 − e^1·0 on the last output; (1, 0) spends max(0, 1/2 − e·1/4) = 0 there.
    let d = certify_weights_delta(&cols, chain.edges(), 1.0, 0.25, t).unwrap();
    assert_eq!(d, 0.25);
    assert!(certify_weights_delta(&cols, chain.edges(), 1.0, next_down(0.25), t).is_err());
}

#[test]
fn audit_bounds_the_delta_spent_from_below() {
    // Randomised response on two observations at ε = 0.1 with δ = 0.5: each ordered pair spends
    // 3/4 − e^0.1·1/4 ≈ 0.4737 (certified δ a hair above, from the lower bound of e^0.1).
    let model = binomial(1, 2, "squared", &[0.1]).name("rr").top("delta = 0.5").model();
    let t = DEFAULT_TOTAL;
    let m = Mechanism::from_weights(model, 0.1, t, vec![vec![3 * t / 4, t / 4], vec![t / 4, 3 * t / 4]]).unwrap();
    let truth = 0.75 - 0.1f64.exp() * 0.25;
    assert!(m.certified_delta() >= truth && m.certified_delta() - truth < 1e-12, "{}", m.certified_delta());
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(5);
    let opts = crate::mechanism::AuditOptions { samples: 50_000, ..Default::default() };
    let r = crate::mechanism::audit(&m, opts, &mut rng, &mut |_, _| {}).unwrap();
    assert_eq!(r.judged, crate::mechanism::AuditJudgement::Delta);
    assert!(r.consistent);
    // Sound (below the truth) and informative (within a few interval widths of it).
    assert!(r.empirical_delta_lower <= truth && r.empirical_delta_lower > truth - 0.03, "{}", r.empirical_delta_lower);
    // The ε bound is reported, not judged: this mechanism's ratio is 3 > e^0.1.
    assert!(r.empirical_eps_lower > 0.1);
}
