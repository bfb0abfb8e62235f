//! The exact sampler: each unit of the total maps to exactly its output (checked by enumeration
//! with a counting bit source), and draws from a seeded CSPRNG pass a chi-square goodness-of-fit
//! test against the weights. False-failure rate of the chi-square tests: each rejects at p < 1e-6,
//! three columns are tested, so ≤ 3e-6 over the choice of seed (the seeds are fixed, so the
//! outcome is deterministic).

mod common;

use std::convert::Infallible;

use rand::rngs::StdRng;
use rand::SeedableRng;
use statrs::distribution::{ChiSquared, ContinuousCDF};
use ubapp::mechanism::{audit, AuditOptions, Mechanism, Release};
use ubapp::model::Model;
use ubapp::solve::{solve_model, SolverChoice};

/// A bit source that returns c·2^(64−bits) for c = 0, 1, 2, …: the top `bits` bits count up.
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

/// The dense weights of a release (every release here is small enough for the dense form).
fn dense(release: Release) -> Mechanism {
    release.dense().expect("a dense release").clone()
}

/// A binomial model at ε = 0.5: K = `trials`, M = `points`, uniform prior, squared loss.
fn model(trials: u64, points: usize) -> Model {
    common::binomial_model(trials, points, "squared", &[0.5])
}

#[test]
fn every_unit_of_the_total_maps_to_its_output() {
    // Y = {0, 1}, two outputs, total 16: weights (10, 6) and (6, 10), ratio 5/3 ≤ e^0.6.
    let m = Release::from_weights(model(1, 2), 0.6, 16, vec![vec![10, 6], vec![6, 10]]).unwrap();
    assert!((m.certified_eps() - (10.0f64 / 6.0).ln()).abs() < 1e-12);
    for (i, want) in [(0usize, [10usize, 6]), (1, [6, 10])] {
        let mut rng = Counter { c: 0, bits: 4 };
        let mut counts = [0usize; 2];
        for k in m.sample_batch(i, 16, &mut rng) {
            counts[k] += 1;
        }
        assert_eq!(counts, want, "one full cycle of the 16 units reproduces the weights exactly");
    }
}

#[test]
fn weights_outside_the_certificate_are_refused() {
    let e = Release::from_weights(model(1, 2), 0.5, 16, vec![vec![10, 6], vec![6, 10]]).unwrap_err();
    assert!(e.is_input() && e.to_string().contains("not eps-DP"), "{e}");
    let e = Release::from_weights(model(1, 2), 0.5, 16, vec![vec![12, 4], vec![16, 0]]).unwrap_err();
    assert!(e.to_string().contains("no finite ε"), "{e}");
}

#[test]
fn draws_match_the_weights_chi_square() {
    let model = model(20, 30);
    let sol = solve_model(&model, Some(&[0.5]), SolverChoice::Auto).unwrap().remove(0);
    let m = dense(Release::certify(&model, &sol).unwrap());
    let n = 100_000u64;
    for (seed, i) in [(11u64, 0usize), (12, 10), (13, 20)] {
        let mut rng = StdRng::seed_from_u64(seed);
        let mut counts = vec![0u64; m.n_outputs()];
        for k in m.sample_batch(i, n as usize, &mut rng) {
            counts[k] += 1;
        }
        let probs: Vec<f64> = m.column(i).iter().map(|&w| w as f64 / m.total() as f64).collect();
        // Outputs of weight 0 must never appear.
        for (k, &p) in probs.iter().enumerate() {
            if p == 0.0 {
                assert_eq!(counts[k], 0);
            }
        }
        // Bins with expected count ≥ 5; the rest pooled into one bin (if its expectation ≥ 5).
        let (mut stat, mut bins) = (0.0, 0usize);
        let (mut pool_o, mut pool_e) = (0.0, 0.0);
        for (k, &p) in probs.iter().enumerate() {
            let e = p * n as f64;
            if e >= 5.0 {
                stat += (counts[k] as f64 - e).powi(2) / e;
                bins += 1;
            } else {
                pool_o += counts[k] as f64;
                pool_e += e;
            }
        }
        if pool_e >= 5.0 {
            stat += (pool_o - pool_e).powi(2) / pool_e;
            bins += 1;
        }
        assert!(bins >= 2, "column {i} has too few bins to test");
        let p_value = 1.0 - ChiSquared::new((bins - 1) as f64).unwrap().cdf(stat);
        assert!(p_value > 1e-6, "column {i}: chi-square {stat:.1} on {} df, p = {p_value:e}", bins - 1);
    }
}

#[test]
fn artifact_round_trips_through_json() {
    let model = model(6, 8);
    let sol = solve_model(&model, Some(&[0.3]), SolverChoice::Auto).unwrap().remove(0);
    let m = dense(Release::certify(&model, &sol).unwrap());
    let text = serde_json::to_string(&m.to_json()).unwrap();
    let back = dense(Release::from_json_str(&text, "round-trip").unwrap());
    assert_eq!(back.certified_eps(), m.certified_eps());
    assert_eq!(back.total(), m.total());
    for i in 0..m.n_observations() {
        assert_eq!(back.column(i), m.column(i));
    }
    assert_eq!(back.bayes_risk(), m.bayes_risk());
    assert_eq!(back.provenance, m.provenance);
    assert!(m.certified_eps() <= 0.3);
    // The certified mechanism is a distribution per observation and within a hair of the LP's risk.
    let rel = (m.bayes_risk() - sol.bayes_risk).abs() / sol.bayes_risk;
    assert!(rel < 1e-6, "repair changed the risk by {rel:e} relative");
}

#[test]
fn audit_finds_most_of_a_known_epsilon_and_never_more() {
    // Weights (10, 6) vs (6, 10): the true ε is ln(10/6) = 0.511. With 400k draws per column the
    // Clopper–Pearson bounds (level 0.05/8 each) are within ~1% of each probability, so the
    // empirical lower bound must land in (0.45, 0.511].
    let m = Release::from_weights(model(1, 2), 0.6, 16, vec![vec![10, 6], vec![6, 10]]).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    let mut calls = 0;
    let r = audit(&m, AuditOptions { samples: 400_000, alpha: 0.05, max_pairs: 10 }, &mut rng, &mut |_, _| calls += 1)
        .unwrap();
    assert_eq!(calls, 2);
    assert!(r.empirical_eps_lower > 0.45 && r.empirical_eps_lower <= m.certified_eps(), "{r:?}");
    assert!(r.consistent);
    assert_eq!((r.pairs_tested, r.pairs_total, r.columns_sampled), (1, 1, 2));
}

#[test]
fn audit_tests_a_bounded_subset_of_pairs() {
    let model = model(20, 10);
    let sol = solve_model(&model, Some(&[0.5]), SolverChoice::Auto).unwrap().remove(0);
    let m = dense(Release::certify(&model, &sol).unwrap());
    let mut rng = StdRng::seed_from_u64(6);
    let r = audit(&m, AuditOptions { samples: 2_000, alpha: 0.05, max_pairs: 4 }, &mut rng, &mut |_, _| {}).unwrap();
    assert_eq!((r.pairs_tested, r.pairs_total), (4, 20));
    assert!(r.columns_sampled <= 8);
    assert!(r.empirical_eps_lower <= r.certified_eps);
}
