//! Numerical quadrature: Gauss–Legendre rules and an adaptive Gauss–Legendre integrator that
//! compares a rule on an interval with the same rule on its halves.

/// Gauss–Legendre nodes and weights on [−1, 1] with `n` points (Newton iteration on P_n).
pub(crate) fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    assert!(n >= 1, "a rule needs at least one node");
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        // Initial guess (Tricomi), then Newton on the three-term recurrence.
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            let pn = if n == 1 { z } else { p1 };
            let pm = if n == 1 { 1.0 } else { p0 };
            dp = n as f64 * (z * pn - pm) / (z * z - 1.0);
            let dz = pn / dp;
            z -= dz;
            if dz.abs() < 1e-16 {
                break;
            }
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        let wi = 2.0 / ((1.0 - z * z) * dp * dp);
        w[i] = wi;
        w[n - 1 - i] = wi;
    }
    if n % 2 == 1 {
        x[n / 2] = 0.0;
    }
    (x, w)
}

/// A fixed Gauss–Legendre rule, mapped to any interval.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    x: Vec<f64>,
    w: Vec<f64>,
}

impl Rule {
    /// The `n`-point rule.
    pub(crate) fn new(n: usize) -> Rule {
        let (x, w) = gauss_legendre(n);
        Rule { x, w }
    }

    /// Nodes and weights mapped to [a, b].
    pub(crate) fn on(&self, a: f64, b: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
        let (h, m) = (0.5 * (b - a), 0.5 * (a + b));
        self.x.iter().zip(&self.w).map(move |(&x, &w)| (m + h * x, h * w))
    }

    /// ∫_a^b f.
    pub(crate) fn integrate(&self, a: f64, b: f64, f: &mut impl FnMut(f64) -> f64) -> f64 {
        self.on(a, b).map(|(x, w)| w * f(x)).sum()
    }
}

thread_local! {
    static RULE10: Rule = Rule::new(10);
}

/// ∫_a^b f by adaptive bisection with a 10-point Gauss–Legendre rule: an interval is accepted when
/// the rule on it and on its two halves agree to `tol` (absolute; halved at each level) or to 1e-13
/// relative; at most 30 levels.
pub(crate) fn adaptive(a: f64, b: f64, tol: f64, f: &mut impl FnMut(f64) -> f64) -> f64 {
    fn rec(rule: &Rule, a: f64, b: f64, whole: f64, tol: f64, depth: u32, f: &mut impl FnMut(f64) -> f64) -> f64 {
        let m = 0.5 * (a + b);
        let l = rule.integrate(a, m, f);
        let r = rule.integrate(m, b, f);
        // Accept on the absolute tolerance, or when the estimates agree to 1e-13 relative (below
        // that, differences are rounding and bisecting further would never end).
        let diff = (l + r - whole).abs();
        if diff <= tol || diff <= 1e-13 * (l + r).abs() || depth == 0 || m <= a || m >= b {
            l + r
        } else {
            rec(rule, a, m, l, 0.5 * tol, depth - 1, f) + rec(rule, m, b, r, 0.5 * tol, depth - 1, f)
        }
    }
    if a >= b {
        return 0.0;
    }
    RULE10.with(|rule| {
        let whole = rule.integrate(a, b, f);
        rec(rule, a, b, whole, tol, 30, f)
    })
}

/// ∫_a^b f where f may vary on the length scale `scale` near the points in `peaks`: the interval is
/// first cut at each peak and at geometric distances scale·2^i from it, so a sharp peak is never
/// missed by the first coarse rule, then each piece is integrated adaptively.
pub(crate) fn adaptive_peaked(
    a: f64,
    b: f64,
    peaks: &[f64],
    scale: f64,
    tol: f64,
    f: &mut impl FnMut(f64) -> f64,
) -> f64 {
    if a >= b {
        return 0.0;
    }
    let mut cuts = vec![a, b];
    for &p in peaks {
        if p > a && p < b {
            cuts.push(p);
        }
        if scale > 0.0 && scale.is_finite() {
            let mut d = scale / 8.0;
            while d < b - a {
                for c in [p - d, p + d] {
                    if c > a && c < b {
                        cuts.push(c);
                    }
                }
                d *= 2.0;
            }
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let n = (cuts.len() - 1) as f64;
    cuts.windows(2).map(|w| adaptive(w[0], w[1], tol / n, f)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        for n in [1, 2, 5, 10, 33, 64] {
            let r = Rule::new(n);
            for deg in 0..(2 * n) {
                let got = r.integrate(0.0, 1.0, &mut |x| x.powi(deg as i32));
                let want = 1.0 / (deg as f64 + 1.0);
                assert!((got - want).abs() < 1e-13, "n = {n}, degree {deg}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn adaptive_peaked_finds_a_narrow_exponential() {
        let b = 1e-5;
        let got = adaptive_peaked(-1.0, 1.0, &[0.3], b, 1e-14, &mut |x| (-(x - 0.3f64).abs() / b).exp() / (2.0 * b));
        assert!((got - 1.0).abs() < 1e-10, "{got}");
    }
}
