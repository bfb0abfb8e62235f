//! Observation families: likelihood columns sum to 1, and each neighbour graph is exactly the set
//! of pairs induced by "replace one record", checked against brute-force enumeration of datasets.

use std::collections::BTreeSet;
use std::path::Path;

use crate::model::family::{clipped_poisson_pmf, clipped_poisson_sum_pmf};
use crate::model::{Family, Grid, Model};
use ndarray::Array1;

fn edge_set(f: &Family) -> BTreeSet<(usize, usize)> {
    let n = f.neighbours();
    assert_eq!(n.len(), f.observation_count());
    let e: Vec<_> = n.edges().collect();
    assert_eq!(e.len(), n.edge_count(), "edge_count agrees with edges()");
    let set: BTreeSet<_> = e.iter().copied().collect();
    assert_eq!(set.len(), e.len(), "no repeated edges");
    assert!(e.iter().all(|&(a, b)| a < b), "edges listed as (a, b) with a < b");
    set
}

/// All datasets in {0..m−1}^n, as vectors.
fn all_datasets(n: usize, m: usize) -> Vec<Vec<usize>> {
    let mut out = vec![vec![]];
    for _ in 0..n {
        out = out.into_iter().flat_map(|d| (0..m).map(move |v| [d.clone(), vec![v]].concat())).collect();
    }
    out
}

/// Pairs {S(x), S(x')} over all datasets x and all x' that replace one record of x, S(x) ≠ S(x').
fn induced_pairs(n: usize, m: usize, stat: impl Fn(&[usize]) -> usize) -> BTreeSet<(usize, usize)> {
    let mut pairs = BTreeSet::new();
    for x in all_datasets(n, m) {
        let y = stat(&x);
        for r in 0..n {
            for v in 0..m {
                let mut x2 = x.clone();
                x2[r] = v;
                let y2 = stat(&x2);
                if y2 != y {
                    pairs.insert((y.min(y2), y.max(y2)));
                }
            }
        }
    }
    pairs
}

fn assert_columns_sum_to_one(f: &Family, theta: &Grid) {
    let q = f.likelihood_matrix(theta);
    assert_eq!(q.nrows(), f.observation_count());
    for (j, col) in q.columns().into_iter().enumerate() {
        assert!(col.iter().all(|&v| v >= 0.0));
        let s = col.sum();
        assert!((s - 1.0).abs() <= 1e-12, "{}: column {j} (θ = {}) sums to {s}", f.name(), theta.point(j));
    }
}

#[test]
fn binomial_graph_is_exactly_the_induced_pairs_and_columns_sum_to_one() {
    for k in 1..=7u64 {
        let f = Family::Binomial { trials: k };
        let want = induced_pairs(k as usize, 2, |x| x.iter().sum());
        assert_eq!(edge_set(&f), want, "K = {k}");
        assert!(f.neighbours().is_chain());
    }
    assert_columns_sum_to_one(&Family::Binomial { trials: 500 }, &Grid::midpoint(0.0, 1.0, 50));
}

#[test]
fn clipped_poisson_graph_is_the_band_induced_by_record_vectors() {
    for (n, c) in [(1u64, 1u64), (1, 3), (2, 1), (2, 2), (3, 2), (2, 3), (4, 2), (3, 3)] {
        let f = Family::Poisson { records: n, cap: c };
        // Record values after clipping range over {0..c}; y = their sum.
        let want = induced_pairs(n as usize, c as usize + 1, |x| x.iter().sum());
        assert_eq!(edge_set(&f), want, "N = {n}, c = {c}");
        assert_eq!(f.neighbours().is_chain(), c == 1 || n * c <= 1);
    }
}

#[test]
fn clipped_poisson_pmf_matches_direct_enumeration_and_sums_to_one() {
    for &lambda in &[0.0, 1e-3, 0.3, 1.0, 2.5, 10.0, 40.0] {
        for (n, c) in [(1u64, 1u64), (2, 2), (3, 3), (5, 4), (20, 3)] {
            let p = clipped_poisson_sum_pmf(n, c, lambda);
            assert_eq!(p.len(), (n * c) as usize + 1);
            let s: f64 = p.iter().sum();
            assert!((s - 1.0).abs() <= 1e-12, "λ = {lambda}, N = {n}, c = {c}: sum {s}");
        }
        // Independent route for N = 2, c = 3: P(min(X, c) = c) as 1 − Σ_{x<c} (not the incomplete
        // gamma), and the sum's pmf by enumerating both records.
        let c = 3usize;
        let mut base: Vec<f64> =
            (0..c).map(|x| (-lambda).exp() * lambda.powi(x as i32) / (1..=x).product::<usize>() as f64).collect();
        base.push(1.0 - base.iter().sum::<f64>());
        let gamma_route = clipped_poisson_pmf(c as u64, lambda);
        for (a, b) in base.iter().zip(&gamma_route) {
            assert!((a - b).abs() < 1e-13, "λ = {lambda}: {a} vs {b}");
        }
        let mut want = vec![0.0; 2 * c + 1];
        for x1 in 0..=c {
            for x2 in 0..=c {
                want[x1 + x2] += base[x1] * base[x2];
            }
        }
        for (a, b) in clipped_poisson_sum_pmf(2, c as u64, lambda).iter().zip(&want) {
            assert!((a - b).abs() < 1e-13, "λ = {lambda}: {a} vs {b}");
        }
    }
    assert_columns_sum_to_one(&Family::Poisson { records: 20, cap: 3 }, &Grid::midpoint(0.0, 4.0, 40));
}

#[test]
fn multinomial_graph_is_exactly_the_induced_pairs_of_categorical_datasets() {
    for (d, k) in [(2usize, 3u64), (3, 1), (3, 2), (3, 4), (4, 3), (3, 5)] {
        let f = Family::Multinomial { categories: d, records: k };
        let ys = f.observations();
        assert_eq!(ys.len(), f.observation_count());
        let index = |x: &[usize]| {
            let mut counts = vec![0.0; d];
            for &v in x {
                counts[v] += 1.0;
            }
            (0..ys.len()).find(|&i| ys.point(i) == Array1::from(counts.clone())).expect("every count vector is in Y")
        };
        let want = induced_pairs(k as usize, d, index);
        assert_eq!(edge_set(&f), want, "d = {d}, K = {k}");
    }
}

#[test]
fn multinomial_columns_sum_to_one_and_match_the_binomial_for_two_categories() {
    let f = Family::Multinomial { categories: 3, records: 20 };
    assert_columns_sum_to_one(&f, &Grid::simplex_lattice(3, 10));
    let f4 = Family::Multinomial { categories: 4, records: 6 };
    assert_columns_sum_to_one(&f4, &Grid::simplex_lattice(4, 5));
    // d = 2: y = (y_1, K − y_1) with θ = (t, 1 − t) is Binomial(K, t) in y_1.
    let f2 = Family::Multinomial { categories: 2, records: 9 };
    let g2 = Grid::simplex_lattice(2, 7);
    let q2 = f2.likelihood_matrix(&g2);
    let obs = f2.observations();
    for j in 0..g2.len() {
        let t = g2.point(j)[0];
        let b = crate::model::family::binomial_pmf_all(9, t);
        for i in 0..obs.len() {
            let y1 = obs.point(i)[0] as usize;
            assert!((q2[[i, j]] - b[y1]).abs() < 1e-14);
        }
    }
}

#[test]
fn table_family_from_the_bundled_model_sums_to_one_and_keeps_its_edges() {
    let m = Model::load(Path::new("models/prevalence-imperfect-test.toml")).unwrap();
    assert_columns_sum_to_one(&m.family, &m.theta);
    let edges = edge_set(&m.family);
    assert_eq!(edges, (0..40).map(|y| (y, y + 1)).collect());
    assert!(m.family.neighbours().is_chain());
    // The table was generated from Binomial(40, 0.9θ + 0.05(1 − θ)): an independent route.
    let q = m.family.likelihood_matrix(&m.theta);
    for j in 0..m.theta.len() {
        let t = m.theta.point(j)[0];
        let b = crate::model::family::binomial_pmf_all(40, 0.9 * t + 0.05 * (1.0 - t));
        for (i, bi) in b.iter().enumerate() {
            assert!((q[[i, j]] - bi).abs() < 1e-12);
        }
    }
}
