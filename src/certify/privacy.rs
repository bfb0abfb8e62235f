//! The privacy guarantee a mechanism states, and the one a certificate proves: one type for the
//! solved release and every baseline alike.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::PrivacyCertificate;

/// A privacy guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Privacy {
    /// Pure ε-differential privacy.
    Pure {
        /// ε.
        eps: f64,
    },
    /// Approximate (ε, δ)-differential privacy: not comparable with pure ε without saying so.
    Approx {
        /// ε.
        eps: f64,
        /// δ.
        delta: f64,
    },
}

impl Privacy {
    /// ε.
    pub fn eps(self) -> f64 {
        match self {
            Privacy::Pure { eps } | Privacy::Approx { eps, .. } => eps,
        }
    }

    /// δ (0 for pure ε-DP).
    pub fn delta(self) -> f64 {
        match self {
            Privacy::Pure { .. } => 0.0,
            Privacy::Approx { delta, .. } => delta,
        }
    }

    /// True for pure ε-DP.
    pub fn is_pure(self) -> bool {
        matches!(self, Privacy::Pure { .. })
    }

    /// Which kind of guarantee, without its numbers.
    pub fn kind(self) -> PrivacyKind {
        match self {
            Privacy::Pure { .. } => PrivacyKind::PureEps,
            Privacy::Approx { .. } => PrivacyKind::EpsDelta,
        }
    }
}

/// The kind of a privacy guarantee, as labelled in tables (`pure-eps` or `eps-delta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PrivacyKind {
    /// Pure ε-differential privacy (`pure-eps`).
    PureEps,
    /// Approximate (ε, δ)-differential privacy (`eps-delta`).
    EpsDelta,
}

impl PrivacyKind {
    /// The label used in tables and files.
    pub fn label(self) -> &'static str {
        match self {
            PrivacyKind::PureEps => "pure-eps",
            PrivacyKind::EpsDelta => "eps-delta",
        }
    }
}

impl fmt::Display for PrivacyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.label())
    }
}

impl PrivacyCertificate {
    /// The guarantee at the target: ε-DP, or (ε, δ)-DP when δ > 0 (the certified values are at
    /// most these, so the target is what the weights are proven to meet).
    pub fn guarantee(&self) -> Privacy {
        if self.delta > 0.0 {
            Privacy::Approx { eps: self.eps, delta: self.delta }
        } else {
            Privacy::Pure { eps: self.eps }
        }
    }
}
