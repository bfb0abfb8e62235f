//! Double-double arithmetic: a value held as an unevaluated sum hi + lo of two f64 (|lo| ≤ half
//! an ulp of hi), about 32 significant digits from f64 operations (Dekker 1971; the algorithms
//! of Hida, Li & Bailey, "Algorithms for quad-double precision floating point arithmetic", 2001).
//!
//! The block interior point factorises a Newton block in it where the block's DP rows are stiff
//! enough that f64 would cancel away the identity the block is built on (see
//! `crate::solve::structured::ipm`); [`Real`] lets one factorisation routine serve both precisions.

/// The operations a sparse factorisation needs, in f64 or in double-double.
pub(crate) trait Real: Copy + Default + Send + Sync {
    /// Whether this is [`DoubleDouble`].
    const IS_DOUBLE_DOUBLE: bool;
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The value in double-double, exactly.
    fn to_double_double(self) -> DoubleDouble;
    fn add(self, other: Self) -> Self;
    fn sub(self, other: Self) -> Self;
    fn mul(self, other: Self) -> Self;
    fn div(self, other: Self) -> Self;
    fn sqrt(self) -> Self;
}

impl Real for f64 {
    const IS_DOUBLE_DOUBLE: bool = false;
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn to_double_double(self) -> DoubleDouble {
        DoubleDouble::from_f64(self)
    }
    fn add(self, other: f64) -> f64 {
        self + other
    }
    fn sub(self, other: f64) -> f64 {
        self - other
    }
    fn mul(self, other: f64) -> f64 {
        self * other
    }
    fn div(self, other: f64) -> f64 {
        self / other
    }
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

/// hi + lo.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct DoubleDouble {
    hi: f64,
    lo: f64,
}

impl DoubleDouble {
    /// a + b exactly (Knuth's two-sum).
    fn two_sum(a: f64, b: f64) -> DoubleDouble {
        let s = a + b;
        let b_virtual = s - a;
        DoubleDouble { hi: s, lo: (a - (s - b_virtual)) + (b - b_virtual) }
    }

    /// a + b exactly where |a| ≥ |b|.
    fn quick_two_sum(a: f64, b: f64) -> DoubleDouble {
        let s = a + b;
        DoubleDouble { hi: s, lo: b - (s - a) }
    }

    /// a · b exactly (the rounding error of a product is itself an f64, recovered by one FMA).
    fn two_product(a: f64, b: f64) -> DoubleDouble {
        let p = a * b;
        DoubleDouble { hi: p, lo: a.mul_add(b, -p) }
    }

    fn neg(self) -> DoubleDouble {
        DoubleDouble { hi: -self.hi, lo: -self.lo }
    }

    fn mul_f64(self, b: f64) -> DoubleDouble {
        let p = DoubleDouble::two_product(self.hi, b);
        DoubleDouble::quick_two_sum(p.hi, p.lo + self.lo * b)
    }
}

impl Real for DoubleDouble {
    const IS_DOUBLE_DOUBLE: bool = true;
    fn from_f64(v: f64) -> DoubleDouble {
        DoubleDouble { hi: v, lo: 0.0 }
    }

    fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    fn to_double_double(self) -> DoubleDouble {
        self
    }

    fn add(self, other: DoubleDouble) -> DoubleDouble {
        let s = DoubleDouble::two_sum(self.hi, other.hi);
        let t = DoubleDouble::two_sum(self.lo, other.lo);
        let v = DoubleDouble::quick_two_sum(s.hi, s.lo + t.hi);
        DoubleDouble::quick_two_sum(v.hi, v.lo + t.lo)
    }

    fn sub(self, other: DoubleDouble) -> DoubleDouble {
        self.add(other.neg())
    }

    fn mul(self, other: DoubleDouble) -> DoubleDouble {
        let p = DoubleDouble::two_product(self.hi, other.hi);
        DoubleDouble::quick_two_sum(p.hi, p.lo + (self.hi * other.lo + self.lo * other.hi))
    }

    /// Long division: three f64 quotient digits.
    fn div(self, other: DoubleDouble) -> DoubleDouble {
        let q1 = self.hi / other.hi;
        let r = self.sub(other.mul_f64(q1));
        let q2 = r.hi / other.hi;
        let r = r.sub(other.mul_f64(q2));
        let q3 = r.hi / other.hi;
        DoubleDouble::quick_two_sum(q1, q2).add(DoubleDouble::from_f64(q3))
    }

    /// One Newton step from the f64 root.
    fn sqrt(self) -> DoubleDouble {
        if self.hi.is_nan() || self.hi <= 0.0 {
            return DoubleDouble::from_f64(self.hi.sqrt());
        }
        let root = self.hi.sqrt();
        let residual = self.sub(DoubleDouble::two_product(root, root));
        DoubleDouble::quick_two_sum(root, residual.hi / (2.0 * root))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dd(v: f64) -> DoubleDouble {
        DoubleDouble::from_f64(v)
    }

    #[test]
    fn keeps_what_f64_rounds_away() {
        // (1e20 + 1) − 1e20 is 0 in f64 and 1 in double-double.
        let big = dd(1e20);
        assert_eq!(big.add(dd(1.0)).sub(big).to_f64(), 1.0);
        assert_eq!((1e20 + 1.0) - 1e20, 0.0);
        // (1 + 2^-60)² − 1 = 2^-59 + 2^-120: its leading term survives.
        let x = dd(1.0).add(dd(2f64.powi(-60)));
        assert_eq!(x.mul(x).sub(dd(1.0)).to_f64(), 2f64.powi(-59));
    }

    #[test]
    fn division_and_root_invert_multiplication_to_32_digits() {
        for (a, b) in [(1.0, 3.0), (2.0, 7.0), (1e10, 3e-7), (-5.5, 1.1e3)] {
            let q = dd(a).div(dd(b));
            let back = q.mul(dd(b)).sub(dd(a));
            assert!(back.to_f64().abs() <= 1e-30 * a.abs(), "{a} / {b}: {back:?}");
            let r = dd(b.abs()).sqrt();
            let square = r.mul(r).sub(dd(b.abs()));
            assert!(square.to_f64().abs() <= 1e-30 * b.abs(), "√{b}: {square:?}");
        }
    }
}
