//! The Laplace mechanism on the count (Dwork, McSherry, Nissim & Smith 2006), scaled to a
//! proportion: `(y + Lap(1/ε))/K = y/K + Lap(1/(Kε))`, raw or clamped to [lower, upper].
//!
//! **Privacy (pure ε).** Replacing one record changes y by at most 1 (L1 sensitivity 1), so
//! y + Lap(1/ε) is ε-DP; dividing by K and clamping are post-processing.

use super::count::CountRelease;
use crate::eval::noise::Noise;
use crate::eval::{Method, Privacy, Setting};

/// Laplace on the count, raw (id `laplace-count`) or clamped (id `laplace-count-clamped`).
pub(crate) fn laplace_count(setting: Setting, eps: f64, clamped: bool) -> CountRelease {
    let k = setting.trials as f64;
    let centres = (0..=setting.trials).map(|y| y as f64 / k).collect();
    let noise = Noise::Laplace { b: 1.0 / (k * eps) };
    let (method, clamp) = if clamped {
        (Method::LaplaceCountClamped, Some((setting.lower, setting.upper)))
    } else {
        (Method::LaplaceCount, None)
    };
    CountRelease::new(method, Privacy::Pure { eps }, setting, centres, noise, clamp)
}
