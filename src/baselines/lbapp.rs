//! LBaPP, the Laplace Bayes private point estimator (Lakshminarayanan & Rojas, "A Unified Approach
//! to Differentially Private Bayes Point Estimation", IFAC WC 2023, the paper's baseline):
//!
//! `δ_lpb(y) = (y + 1)/(K + 2) + Lap(0, 1/((K + 2) ε))`, optionally clamped to [lower, upper].
//!
//! **Privacy (pure ε).** (y + 1)/(K + 2) is the posterior mean under a uniform prior; replacing one
//! record changes y by at most 1, hence the mean by at most Δ = 1/(K + 2), and the Laplace
//! mechanism with scale Δ/ε is ε-DP (Dwork et al. 2006). Clamping is post-processing.

use super::count::CountRelease;
use crate::eval::noise::Noise;
use crate::eval::{Method, Privacy, Setting};

/// LBaPP, raw (`clamped = false`, id `lbapp`) or clamped to [lower, upper] (id `lbapp-clamped`).
pub(crate) fn lbapp(setting: Setting, eps: f64, clamped: bool) -> CountRelease {
    let k = setting.trials as f64;
    let centres = (0..=setting.trials).map(|y| (y as f64 + 1.0) / (k + 2.0)).collect();
    let noise = Noise::Laplace { b: 1.0 / ((k + 2.0) * eps) };
    let (method, clamp) =
        if clamped { (Method::LbappClamped, Some((setting.lower, setting.upper))) } else { (Method::Lbapp, None) };
    CountRelease::new(method, Privacy::Pure { eps }, setting, centres, noise, clamp)
}
