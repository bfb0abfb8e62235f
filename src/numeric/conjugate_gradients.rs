//! Preconditioned conjugate gradients (Hestenes & Stiefel 1952; Golub & Van Loan, *Matrix
//! Computations*, 4th ed., Alg. 11.5.1) on a symmetric positive definite system known only
//! through its products. The block interior point takes them on its Schur complement where the
//! dense factor dropped pivots whose directions the right-hand side does not leave free: with the
//! factor, those pivots floored, as the preconditioner ([`super::dense_cholesky::DenseCholesky::
//! solve_floored`]) the preconditioned matrix is the identity but for a few directions, and the
//! gradients reach the solution in as many steps.

use super::dense_cholesky::dot;

/// A x = `b` from the start `x`, with A given by `apply` and the preconditioner M⁻¹ by
/// `precondition`, in at most `steps` steps, stopping once the residual's largest entry is
/// `reduction` times the start's; returns the iterate whose residual (by the recurrence) was the
/// smallest met, and that residual's largest entry. A step along a direction of no positive
/// curvature (rounding, or A not positive definite) ends the iteration.
pub(crate) fn solve(
    apply: impl Fn(&[f64]) -> Vec<f64>,
    precondition: impl Fn(&[f64]) -> Vec<f64>,
    b: &[f64],
    mut x: Vec<f64>,
    steps: usize,
    reduction: f64,
) -> (Vec<f64>, f64) {
    let mut residual: Vec<f64> = b.iter().zip(apply(&x)).map(|(b, ax)| b - ax).collect();
    let start = largest(&residual);
    let mut best = (x.clone(), start);
    let mut z = precondition(&residual);
    let mut direction = z.clone();
    let mut rz = dot(&residual, &z);
    for _ in 0..steps {
        if best.1 <= reduction * start {
            break;
        }
        let q = apply(&direction);
        let curvature = dot(&direction, &q);
        if !(curvature > 0.0 && rz > 0.0) {
            break;
        }
        let alpha = rz / curvature;
        x.iter_mut().zip(&direction).for_each(|(x, d)| *x += alpha * d);
        residual.iter_mut().zip(&q).for_each(|(r, q)| *r -= alpha * q);
        let size = largest(&residual);
        if size < best.1 {
            best = (x.clone(), size);
        }
        z = precondition(&residual);
        let rz_next = dot(&residual, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        direction.iter_mut().zip(&z).for_each(|(d, z)| *d = z + beta * *d);
    }
    best
}

fn largest(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::numeric::dense_cholesky::DenseCholesky;

    /// Deterministic values in [−0.5, 0.5).
    fn values(len: usize, seed: u64) -> Vec<f64> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ seed;
        (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
            })
            .collect()
    }

    /// A = C diag(pivots) Cᵀ, C unit lower triangular: A's Cholesky pivots are `pivots`.
    struct WithPivots {
        c: Vec<f64>,
        pivots: Vec<f64>,
    }

    impl WithPivots {
        fn new(pivots: Vec<f64>) -> WithPivots {
            let n = pivots.len();
            let below = values(n * n, 1);
            let c = (0..n * n)
                .map(|p| match (p / n).cmp(&(p % n)) {
                    std::cmp::Ordering::Equal => 1.0,
                    std::cmp::Ordering::Greater => 0.6 * below[p],
                    std::cmp::Ordering::Less => 0.0,
                })
                .collect();
            WithPivots { c, pivots }
        }

        /// A's entries, rounded: a tiny pivot is lost in them to cancellation.
        fn matrix(&self) -> Vec<f64> {
            let n = self.pivots.len();
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] = (0..=i.min(j)).map(|t| self.c[i * n + t] * self.pivots[t] * self.c[j * n + t]).sum();
                }
            }
            a
        }

        /// A x as C (pivots ∘ Cᵀ x): each direction to its own relative rounding (as the
        /// interior point applies its Schur complement through the outputs' blocks).
        fn times(&self, x: &[f64]) -> Vec<f64> {
            let n = x.len();
            let scaled: Vec<f64> =
                (0..n).map(|t| self.pivots[t] * (t..n).map(|j| self.c[j * n + t] * x[j]).sum::<f64>()).collect();
            (0..n).map(|i| (0..=i).map(|t| self.c[i * n + t] * scaled[t]).sum()).collect()
        }

        /// A⁻¹ b as C⁻ᵀ (C⁻¹ b / pivots), by substitution.
        fn solve(&self, b: &[f64]) -> Vec<f64> {
            let n = b.len();
            let mut y = b.to_vec();
            for i in 0..n {
                y[i] -= (0..i).map(|t| self.c[i * n + t] * y[t]).sum::<f64>();
            }
            y.iter_mut().zip(&self.pivots).for_each(|(y, p)| *y /= p);
            for i in (0..n).rev() {
                y[i] -= (i + 1..n).map(|j| self.c[j * n + i] * y[j]).sum::<f64>();
            }
            y
        }
    }

    #[test]
    fn the_floored_factor_lets_the_gradients_solve_for_dropped_pivots() {
        let n = 90;
        // Two pivots of 1e-14 fall under the factor's drop threshold (1e-13 of their diagonal).
        let a = WithPivots::new((0..n).map(|i| if i == n - 1 || i == n - 4 { 1e-14 } else { 1.0 }).collect());
        let factor = DenseCholesky::factorise(n, a.matrix(), 1);
        assert_eq!(factor.dropped, 2);
        // A right-hand side of 1e-9 (as the column sums' leftover in the interior point's end
        // game): its solution is about 1e5 along the small directions.
        let b: Vec<f64> = values(n, 2).iter().map(|r| 1e-9 * r).collect();
        let exact = a.solve(&b);
        let error =
            |x: &[f64]| largest(&x.iter().zip(&exact).map(|(x, e)| x - e).collect::<Vec<_>>()) / largest(&exact);
        let left = |x: &[f64]| largest(&b.iter().zip(a.times(x)).map(|(b, ax)| b - ax).collect::<Vec<_>>());
        let mut dropped = b.clone();
        factor.solve(&mut dropped, 1);
        // Leaving the small directions at 0 leaves the right-hand side's part along them.
        assert!(error(&dropped) > 0.9, "error {:e}", error(&dropped));
        assert!(left(&dropped) > 1e-10, "left {:e}", left(&dropped));
        let precondition = |r: &[f64]| {
            let mut z = r.to_vec();
            factor.solve_floored(&mut z, 1);
            z
        };
        let (x, residual) = solve(|x| a.times(x), precondition, &b, dropped.clone(), 2 * factor.dropped + 3, 1e-12);
        // The gradients find the solution (about 1e5 along the small directions) to its rounding;
        // what A x leaves of b is then the rounding of A x (x's size times 1e-16), not b's part
        // along the small directions.
        assert!(error(&x) < 1e-9, "error {:e}", error(&x));
        assert!(left(&x) < 0.1 * left(&dropped), "left {:e}", left(&x));
        assert!(residual < 1e-9 * largest(&b), "the recurrence says {residual:e}");
    }

    #[test]
    fn with_an_exact_preconditioner_one_step_solves() {
        let n = 40;
        let a = WithPivots::new((0..n).map(|i| if i == n - 1 { 1e-3 } else { 1.0 }).collect());
        let factor = DenseCholesky::factorise(n, a.matrix(), 1);
        assert_eq!(factor.dropped, 0);
        let b: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let precondition = |r: &[f64]| {
            let mut z = r.to_vec();
            factor.solve(&mut z, 1);
            z
        };
        let (x, residual) = solve(|x| a.times(x), precondition, &b, vec![0.0; n], 1, 0.0);
        assert!(residual < 1e-9 * largest(&b), "residual {residual:e}");
        let check: Vec<f64> = b.iter().zip(a.times(&x)).map(|(b, ax)| b - ax).collect();
        assert!(largest(&check) < 1e-9 * largest(&b));
    }
}
