//! The per-party mechanisms: each party releases through its own ε-DP mechanism on its own
//! statistic y ∈ Y, quantised to integer weights and certified exactly (the same repair, exact
//! ratio check and rounded-up ε as every artifact: `certify::best_repair`).
//!
//! **Privacy (pure ε, per party).** Each party's release depends only on its own records and is
//! ε-DP with respect to them; the aggregator's posterior is post-processing of the M releases. A
//! record belongs to one party, so the M releases together are ε-DP for every record (parallel
//! composition).

use std::collections::VecDeque;

use ndarray::Array2;

use super::error::Result;
use crate::certify::best_repair;
use crate::eval::Method;
use crate::guard::ArgumentError;
use crate::mechanism::Mechanism;
use crate::model::{Model, Neighbours};
use crate::solve::Solution;

/// Which per-party mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalDesign {
    /// The single-party UBaPP optimum: a Bayes point of the party's own data, shrunk to the prior
    /// (id `ubapp-local`).
    UbappLocal,
    /// A likelihood-preserving release with release space Y (id `geometric-local`): the truncated
    /// geometric on the count for chain and band neighbours, the exponential mechanism on the
    /// neighbour graph's distance otherwise.
    GeometricLocal,
}

impl LocalDesign {
    /// The method it is in a comparison.
    pub fn method(self) -> Method {
        match self {
            LocalDesign::UbappLocal => Method::UbappLocal,
            LocalDesign::GeometricLocal => Method::GeometricLocal,
        }
    }
}

/// One party's certified mechanism.
#[derive(Debug, Clone)]
pub struct LocalMechanism {
    /// Which design.
    pub design: LocalDesign,
    /// The target ε.
    pub eps: f64,
    /// The ε the integer weights certify (≤ `eps`, rounded up).
    pub certified_eps: f64,
    /// `p[k, i]` = Pr(release k | y_i) = w\[k, i\]/T from the certified integer weights.
    pub p: Array2<f64>,
    /// The certified integer weights `columns[i][k]` = w\[k, i\], each column summing to `total`.
    pub columns: Vec<Vec<u64>>,
    /// The column total T.
    pub total: u64,
    /// True when release k is the output grid point θ̃_k (`ubapp-local`), false when it is the
    /// observation y_k ∈ Y (`geometric-local`).
    pub outputs: bool,
}

impl LocalMechanism {
    /// `ubapp-local`: the certified artifact of a solved single-party model (`model` describes one
    /// party's records), exactly as `solve` writes it.
    pub fn ubapp(model: &Model, solution: &Solution) -> Result<LocalMechanism> {
        let m = Mechanism::from_solution(model, solution)?;
        Ok(LocalMechanism::from_artifact(&m))
    }

    /// A party mechanism from a certified artifact (releases are its output grid).
    pub fn from_artifact(m: &Mechanism) -> LocalMechanism {
        LocalMechanism {
            design: LocalDesign::UbappLocal,
            eps: m.eps(),
            certified_eps: m.certified_eps(),
            p: m.probabilities(),
            columns: (0..m.n_observations()).map(|i| m.column(i).to_vec()).collect(),
            total: m.total(),
            outputs: true,
        }
    }

    /// `geometric-local` at ε for one party's records of `model`'s family.
    pub fn geometric(model: &Model, eps: f64) -> Result<LocalMechanism> {
        let neighbours = model.family().neighbours();
        let float = likelihood_preserving(&neighbours, eps)?;
        // The repair candidates are ranked by how far they move P (any of them is certified).
        let price = |q: &Array2<f64>| (q - &float).mapv(f64::abs).sum();
        let release = best_repair(&neighbours, eps, 0.0, &float, &price)?;
        Ok(LocalMechanism {
            design: LocalDesign::GeometricLocal,
            eps,
            certified_eps: release.certificate.certified_eps,
            p: release.probabilities(),
            columns: release.columns,
            total: release.total,
            outputs: false,
        })
    }

    /// The number of possible releases.
    pub fn n_releases(&self) -> usize {
        self.p.nrows()
    }
}

/// Largest |Y| for the exponential mechanism on a neighbour graph (all-pairs distances, |Y|²).
pub(crate) const MAX_GRAPH_RELEASES: usize = 4096;

/// The float release P\[z, y\] (|Y| × |Y|), ε-DP for `neighbours`.
///
/// - Chain (one record moves y by ≤ 1): the truncated geometric, Pr(z | y) ∝ α^{|z−y|} with
///   α = e^{−ε}, the ends absorbing the tails (Ghosh et al. 2009).
/// - Band of width c: the same with α = e^{−ε/c} (one record moves |z − y| by ≤ c).
/// - Graph: the exponential mechanism Pr(z | y) ∝ e^{−ε d(y, z)/2} with d the graph distance
///   (McSherry & Talwar 2007): d moves by ≤ 1 between neighbours, so numerator and normaliser
///   each change by ≤ e^{ε/2}.
pub(crate) fn likelihood_preserving(neighbours: &Neighbours, eps: f64) -> Result<Array2<f64>> {
    Ok(match neighbours {
        Neighbours::Chain { len } => truncated_geometric(*len, (-eps).exp()),
        Neighbours::Band { len, width } => truncated_geometric(*len, (-eps / *width as f64).exp()),
        Neighbours::Graph { len, edges } => {
            if *len > MAX_GRAPH_RELEASES {
                return Err(ArgumentError::new(
                    "geometric-local",
                    format!("needs all distances of the neighbour graph; |Y| = {len} is above {MAX_GRAPH_RELEASES}"),
                )
                .into());
            }
            let d = graph_distances(*len, edges);
            let mut p = Array2::zeros((*len, *len));
            for y in 0..*len {
                let w: Vec<f64> = (0..*len).map(|z| (-eps * d[y][z] as f64 / 2.0).exp()).collect();
                let total: f64 = w.iter().sum();
                for (z, wz) in w.into_iter().enumerate() {
                    p[[z, y]] = wz / total;
                }
            }
            p
        }
    })
}

/// G\[z, y\] of the truncated geometric on {0..n−1}: (1−α)/(1+α) α^{|z−y|} inside, α^{|z−y|}/(1+α)
/// at the two ends.
pub(crate) fn truncated_geometric(n: usize, alpha: f64) -> Array2<f64> {
    Array2::from_shape_fn((n, n), |(z, y)| {
        let d = (z as i64 - y as i64).unsigned_abs() as i32;
        if n == 1 {
            1.0
        } else if z == 0 || z == n - 1 {
            alpha.powi(d) / (1.0 + alpha)
        } else {
            (1.0 - alpha) / (1.0 + alpha) * alpha.powi(d)
        }
    })
}

/// All-pairs shortest-path lengths by breadth-first search (unreachable: |Y|, i.e. far).
fn graph_distances(n: usize, edges: &[(usize, usize)]) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
        adj[b].push(a);
    }
    (0..n)
        .map(|s| {
            let mut d = vec![usize::MAX; n];
            d[s] = 0;
            let mut queue = VecDeque::from([s]);
            while let Some(u) = queue.pop_front() {
                for &v in &adj[u] {
                    if d[v] == usize::MAX {
                        d[v] = d[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            d.into_iter().map(|x| if x == usize::MAX { n } else { x }).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max_ratio(p: &Array2<f64>, neighbours: &Neighbours) -> f64 {
        let mut worst: f64 = 0.0;
        for (a, b) in neighbours.edges() {
            for k in 0..p.nrows() {
                let (x, y) = (p[[k, a]], p[[k, b]]);
                if x > 0.0 || y > 0.0 {
                    worst = worst.max((x / y).max(y / x));
                }
            }
        }
        worst
    }

    #[test]
    fn geometric_local_weights_pass_the_artifacts_own_check() {
        // Released values y/K on [0, 1]: an artifact whose output grid is the counts' proportions.
        let text = "name = \"g\"\nepsilon = [0.7]\n[parameter]\ngrid = { kind = \"midpoint\", points = 9 }\n\
                    prior = { kind = \"uniform\" }\n[observation]\nfamily = \"binomial\"\ntrials = 6\n\
                    [output]\ngrid = { kind = \"explicit\", values = [0.0, 0.16666666666666666, 0.3333333333333333, 0.5, 0.6666666666666666, 0.8333333333333334, 1.0] }\n\
                    [loss]\nkind = \"squared\"\n";
        let model = Model::from_spec(crate::model::ModelSpec::from_toml(text, "test").unwrap()).unwrap();
        let g = LocalMechanism::geometric(&model, 0.7).unwrap();
        assert!(g.certified_eps <= 0.7);
        let artifact = Mechanism::from_weights(model.clone(), 0.7, g.total, g.columns.clone()).unwrap();
        assert_eq!(artifact.certified_eps(), g.certified_eps);
        // And the artifact written and read back verifies again (what `ubapp verify` does).
        let again = Mechanism::from_json_str(&artifact.to_json().to_string(), "test").unwrap();
        assert_eq!(again.probabilities(), g.p);
        // Halving one tight weight (Pr(z = 1 | y = 0)) breaks the certificate.
        let mut broken = g.columns.clone();
        broken[0][0] += broken[0][1] / 2;
        broken[0][1] -= broken[0][1] / 2;
        assert!(Mechanism::from_weights(model, 0.7, g.total, broken).is_err());
    }

    #[test]
    fn every_likelihood_preserving_release_is_eps_dp_and_stochastic() {
        let eps = 0.7;
        let cases = [
            Neighbours::Chain { len: 6 },
            Neighbours::Band { len: 9, width: 3 },
            Neighbours::Graph { len: 4, edges: vec![(0, 1), (1, 2), (2, 3), (0, 3)] },
        ];
        for n in &cases {
            let p = likelihood_preserving(n, eps).unwrap();
            for col in p.columns() {
                assert!((col.sum() - 1.0).abs() < 1e-12);
            }
            let r = max_ratio(&p, n);
            assert!(r <= eps.exp() * (1.0 + 1e-12), "{n:?}: ratio {r}");
            // Not needlessly private either: the chain and band use all of ε.
            if !matches!(n, Neighbours::Graph { .. }) {
                assert!(r >= eps.exp() * (1.0 - 1e-9), "{n:?}: ratio {r}");
            }
        }
    }
}
