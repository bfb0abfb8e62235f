//! Symmetry reduction: the LP of a model whose costs are invariant under permutations of the
//! coordinates (e.g. the multinomial with a symmetric Dirichlet prior and a symmetric loss) is
//! solved over orbits, |G| times smaller.
//!
//! A coordinate permutation σ acts on Y (permuting a count vector's entries) and on Θ̃
//! (permuting a point's coordinates). It is a *symmetry of the LP* when it maps Y and Θ̃ onto
//! themselves, every neighbour pair to a neighbour pair, and leaves every cost unchanged:
//! c\[σk, σi\] = c\[k, i\]. The symmetries found form a group G, and because the LP is convex the
//! average over G of any optimum is an optimum constant on the orbits of G. So it suffices to
//! solve the *orbit LP*, one variable z_O per orbit O of the pairs (k, i):
//!
//! ```text
//! min Σ_O (Σ_{(k,i)∈O} c[k,i]) z_O   s.t.  Σ_k z_{O(k,i)} = 1 for one i per orbit of Y,
//!                                           z_{O(k,a)} − e^ε z_{O(k,b)} ≤ 0 for one DP row per orbit,
//!                                           z ≥ 0,
//! ```
//!
//! and lift: P\[k,i\] = z_{O(k,i)}. Its multipliers lift too: μ_r = μ̂_R / |R| for every DP row r of
//! the orbit R gives full reduced costs equal to the orbit LP's divided by |O| (both are constant
//! on orbits), so the Lagrangian bound (`certify::exact_lagrangian_bound`) of the lifted μ certifies the lifted P
//! against the full LP, without trusting this reduction. Rows whose two sides fall in the same
//! orbit read (1 − e^ε) z ≤ 0 and are dropped (their multiplier is 0).

use std::collections::HashMap;

use ndarray::Array2;
use sprs::CsMat;

use crate::model::{Grid, Neighbours};

/// Largest coordinate count whose permutations are all tried (6! = 720).
const MAX_COORDINATES: usize = 6;

/// Costs equal to this relative tolerance count as invariant.
const COST_TOLERANCE: f64 = 1e-12;

/// A group of LP symmetries (the identity included) and the orbits it induces.
#[derive(Debug, Clone)]
pub(crate) struct Symmetry {
    /// Number of group elements found (the identity included).
    pub group_order: usize,
    /// Orbit of each P variable (k, i), in the LP's variable order i·|Θ̃| + k.
    var_orbit: Vec<u32>,
    /// Number of variable orbits.
    n_var_orbits: usize,
    /// One observation per orbit of Y.
    obs_representatives: Vec<usize>,
    /// DP rows kept (one per orbit, index among the DP rows) and each orbit's size.
    dp_representatives: Vec<(usize, u32)>,
    /// Orbit of each DP row (index into `dp_representatives`), `u32::MAX` for dropped rows.
    dp_orbit: Vec<u32>,
    /// The group: each element's permutation of Y and of Θ̃.
    group: Vec<(Vec<usize>, Vec<usize>)>,
    /// The neighbour pairs, in the LP's edge order.
    edges: Vec<(usize, usize)>,
}

impl Symmetry {
    /// The symmetries of the LP with these costs (C\[i, k\], |Y| × |Θ̃|), observations, outputs and
    /// neighbour relation; `None` when only the identity is found.
    pub(crate) fn find(
        cost: &Array2<f64>,
        observations: &Grid,
        outputs: &Grid,
        neighbours: &Neighbours,
    ) -> Option<Symmetry> {
        let dim = observations.dim();
        if !(2..=MAX_COORDINATES).contains(&dim) || outputs.dim() != dim {
            return None;
        }
        let (n_obs, n_out) = cost.dim();
        let obs_index = point_index(observations);
        let out_index = point_index(outputs);
        let edges: Vec<(usize, usize)> = neighbours.edges().collect();
        let edge_index: HashMap<(usize, usize), usize> = edges.iter().enumerate().map(|(e, &p)| (p, e)).collect();
        let cost_scale = cost.iter().fold(0.0f64, |m, &c| m.max(c.abs()));
        let mut group: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        for sigma in permutations(dim) {
            let Some(obs) = permute_points(observations, &obs_index, &sigma) else { continue };
            let Some(out) = permute_points(outputs, &out_index, &sigma) else { continue };
            let edges_kept = edges.iter().all(|&(a, b)| {
                let (x, y) = (obs[a], obs[b]);
                edge_index.contains_key(&(x.min(y), x.max(y)))
            });
            let costs_kept = (0..n_obs).all(|i| {
                (0..n_out).all(|k| (cost[[obs[i], out[k]]] - cost[[i, k]]).abs() <= COST_TOLERANCE * cost_scale)
            });
            if edges_kept && costs_kept {
                group.push((obs, out));
            }
        }
        if group.len() <= 1 {
            return None;
        }
        Some(Symmetry::from_group(group, n_obs, n_out, &edges))
    }

    /// The orbits of `group` (pairs of permutations of Y and of Θ̃, the identity included) on the
    /// LP's variables and DP rows.
    fn from_group(
        group: Vec<(Vec<usize>, Vec<usize>)>,
        n_obs: usize,
        n_out: usize,
        edges: &[(usize, usize)],
    ) -> Symmetry {
        let edge_index: HashMap<(usize, usize), usize> = edges.iter().enumerate().map(|(e, &p)| (p, e)).collect();
        // Orbits of the variables: the least variable index over the group's images.
        let var = |k: usize, i: usize| i * n_out + k;
        let mut var_orbit = vec![u32::MAX; n_obs * n_out];
        let mut n_var_orbits = 0u32;
        for i in 0..n_obs {
            for k in 0..n_out {
                if var_orbit[var(k, i)] != u32::MAX {
                    continue;
                }
                for (obs, out) in &group {
                    var_orbit[var(out[k], obs[i])] = n_var_orbits;
                }
                n_var_orbits += 1;
            }
        }
        let mut seen = vec![false; n_obs];
        let mut obs_representatives = Vec::new();
        for i in 0..n_obs {
            if !seen[i] {
                obs_representatives.push(i);
                for (obs, _) in &group {
                    seen[obs[i]] = true;
                }
            }
        }
        // DP rows: index (2e + d)·|Θ̃| + k, d = 0 for P[k,a] ≤ e^ε P[k,b], 1 for the reverse.
        let n_dp = 2 * edges.len() * n_out;
        let mut dp_orbit = vec![u32::MAX; n_dp];
        let mut dp_representatives: Vec<(usize, u32)> = Vec::new();
        let mut done = vec![false; n_dp];
        for (e, &(a, b)) in edges.iter().enumerate() {
            for (d, (lhs, rhs)) in [(a, b), (b, a)].into_iter().enumerate() {
                for k in 0..n_out {
                    let r = (2 * e + d) * n_out + k;
                    if done[r] {
                        continue;
                    }
                    let mut members = Vec::new();
                    for (obs, out) in &group {
                        let (x, y) = (obs[lhs], obs[rhs]);
                        let e2 = edge_index[&(x.min(y), x.max(y))];
                        let r2 = (2 * e2 + usize::from(x > y)) * n_out + out[k];
                        if !done[r2] {
                            done[r2] = true;
                            members.push(r2);
                        }
                    }
                    if var_orbit[var(k, lhs)] == var_orbit[var(k, rhs)] {
                        continue; // (1 − e^ε) z ≤ 0: always met
                    }
                    let orbit = dp_representatives.len() as u32;
                    for &m in &members {
                        dp_orbit[m] = orbit;
                    }
                    dp_representatives.push((r, members.len() as u32));
                }
            }
        }
        Symmetry {
            group_order: group.len(),
            var_orbit,
            n_var_orbits: n_var_orbits as usize,
            obs_representatives,
            dp_representatives,
            dp_orbit,
            group,
            edges: edges.to_vec(),
        }
    }

    /// Add to `chosen` (one flag per output) the images of every chosen output under the group,
    /// so that the chosen set is a union of orbits.
    pub(crate) fn close_outputs(&self, chosen: &mut [bool]) {
        let picked: Vec<usize> = (0..chosen.len()).filter(|&k| chosen[k]).collect();
        for k in picked {
            for (_, out) in &self.group {
                chosen[out[k]] = true;
            }
        }
    }

    /// The group acting on the LP restricted to the outputs `keep` (increasing; a union of orbits,
    /// see [`Symmetry::close_outputs`]): `None` when `keep` is not closed under the group.
    pub(crate) fn restricted(&self, keep: &[usize]) -> Option<Symmetry> {
        let n_obs = self.group.first()?.0.len();
        let mut position = vec![usize::MAX; self.group.first()?.1.len()];
        for (pos, &k) in keep.iter().enumerate() {
            position[k] = pos;
        }
        let mut group = Vec::with_capacity(self.group.len());
        for (obs, out) in &self.group {
            let moved: Option<Vec<usize>> =
                keep.iter().map(|&k| Some(position[out[k]]).filter(|&p| p != usize::MAX)).collect();
            group.push((obs.clone(), moved?));
        }
        Some(Symmetry::from_group(group, n_obs, keep.len(), &self.edges))
    }

    /// The orbit LP for ε with objective c / `scale`: (costs, constraint matrix in CSC with the
    /// equality rows first, number of equality rows). DP rows have bounds (−∞, 0].
    pub(crate) fn orbit_lp(&self, cost: &Array2<f64>, neighbours: &Neighbours, eps: f64, scale: f64) -> OrbitLp {
        let (n_obs, n_out) = cost.dim();
        let e_eps = eps.exp();
        let mut costs = vec![0.0; self.n_var_orbits];
        for i in 0..n_obs {
            for k in 0..n_out {
                costs[self.var_orbit[i * n_out + k] as usize] += cost[[i, k]] / scale;
            }
        }
        let edges: Vec<(usize, usize)> = neighbours.edges().collect();
        let n_eq = self.obs_representatives.len();
        // Triplets (row, orbit, value), summed per (row, orbit).
        let mut columns: Vec<Vec<(usize, f64)>> = vec![Vec::new(); self.n_var_orbits];
        for (row, &i) in self.obs_representatives.iter().enumerate() {
            for k in 0..n_out {
                columns[self.var_orbit[i * n_out + k] as usize].push((row, 1.0));
            }
        }
        for (j, &(r, _)) in self.dp_representatives.iter().enumerate() {
            let (block, k) = (r / n_out, r % n_out);
            let (a, b) = edges[block / 2];
            let (lhs, rhs) = if block % 2 == 0 { (a, b) } else { (b, a) };
            columns[self.var_orbit[lhs * n_out + k] as usize].push((n_eq + j, 1.0));
            columns[self.var_orbit[rhs * n_out + k] as usize].push((n_eq + j, -e_eps));
        }
        let mut indptr = vec![0];
        let (mut indices, mut data) = (Vec::new(), Vec::new());
        for mut col in columns {
            col.sort_by_key(|&(r, _)| r);
            let mut last: Option<usize> = None;
            for (r, v) in col {
                if last == Some(r) {
                    *data.last_mut().expect("an entry was pushed for this row") += v;
                } else {
                    indices.push(r);
                    data.push(v);
                    last = Some(r);
                }
            }
            indptr.push(indices.len());
        }
        let n_rows = n_eq + self.dp_representatives.len();
        OrbitLp { costs, a: CsMat::new_csc((n_rows, self.n_var_orbits), indptr, indices, data), n_eq }
    }

    /// The full LP's P variables from the orbit LP's solution z.
    pub(crate) fn lift_primal(&self, z: &[f64]) -> Vec<f64> {
        self.var_orbit.iter().map(|&o| z[o as usize]).collect()
    }

    /// Multipliers of every DP row of the full LP from the orbit LP's DP-row multipliers μ̂:
    /// μ_r = μ̂_R / |R|.
    pub(crate) fn lift_multipliers(&self, mu_hat: &[f64]) -> Vec<f64> {
        self.dp_orbit
            .iter()
            .map(|&o| match self.dp_representatives.get(o as usize) {
                Some(&(_, size)) => mu_hat[o as usize] / f64::from(size),
                None => 0.0,
            })
            .collect()
    }

    /// (variables, rows) of the orbit LP.
    pub(crate) fn reduced_size(&self) -> (usize, usize) {
        (self.n_var_orbits, self.obs_representatives.len() + self.dp_representatives.len())
    }
}

/// The orbit LP: scaled costs, its CSC constraint matrix and how many of its rows (the first)
/// are the equality rows Σ = 1.
#[derive(Debug, Clone)]
pub(crate) struct OrbitLp {
    /// Scaled costs per orbit variable.
    pub costs: Vec<f64>,
    /// Constraint matrix, columns = orbit variables.
    pub a: CsMat<f64>,
    /// Equality rows (bounds [1, 1]); the rest are DP rows (−∞, 0].
    pub n_eq: usize,
}

/// Every point's index by the bit pattern of its coordinates.
fn point_index(grid: &Grid) -> HashMap<Vec<u64>, usize> {
    (0..grid.len()).map(|j| (grid.point(j).iter().map(|x| x.to_bits()).collect(), j)).collect()
}

/// The index map j ↦ index of σ(point j), or `None` if some image is not a point of the grid.
fn permute_points(grid: &Grid, index: &HashMap<Vec<u64>, usize>, sigma: &[usize]) -> Option<Vec<usize>> {
    (0..grid.len())
        .map(|j| {
            let p = grid.point(j);
            let key: Vec<u64> = sigma.iter().map(|&s| p[s].to_bits()).collect();
            index.get(&key).copied()
        })
        .collect()
}

/// All permutations of 0..n (Heap's algorithm), the identity first.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut a: Vec<usize> = (0..n).collect();
    let mut out = vec![a.clone()];
    let mut c = vec![0; n];
    let mut i = 0;
    while i < n {
        if c[i] < i {
            if i % 2 == 0 {
                a.swap(0, i);
            } else {
                a.swap(c[i], i);
            }
            out.push(a.clone());
            c[i] += 1;
            i = 0;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heaps_algorithm_lists_every_permutation_once() {
        let mut p = permutations(4);
        assert_eq!(p.len(), 24);
        p.sort();
        p.dedup();
        assert_eq!(p.len(), 24);
    }
}
