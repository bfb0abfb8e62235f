//! Which solver to use (the `solver` parameter): the one list of names, and which choices this
//! build can run. Data below the errors that name it; the route a model takes is
//! [`super::route`]'s, the backend a choice runs [`super::strategy::lp_solver`]'s.

use crate::guard::{ArgumentError, Parameter};
use std::fmt;
use std::str::FromStr;

/// Which solver to use: the `solver` parameter (the names are the kebab-case variant names,
/// [`SolverChoice::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolverChoice {
    /// Decided per model: the exact chain solver for chain neighbours and the plain Bayes
    /// program; on the plain program otherwise the block interior point, then on explicit
    /// neighbour graphs HiGHS's interior point and Clarabel (HiGHS first on a symmetric model's
    /// orbit LP), on chains and bands Clarabel and HiGHS; on the (ε, δ), minimax or constrained
    /// programs, which are solved whole, HiGHS's interior point first on a graph, Clarabel first
    /// on a chain or band.
    /// Where that exact route would not fit the memory budget or the time (--max-seconds, else
    /// 10 minutes), the anytime route on plain programs.
    // (The command line's help restates these lines. The decision is `Route::for_model`.)
    Auto,
    /// HiGHS, letting it choose the method (dual simplex on these LPs).
    Highs,
    /// HiGHS dual simplex.
    HighsSimplex,
    /// HiGHS interior point with crossover.
    HighsIpm,
    /// The block interior point built for the UBaPP LP's structure (one sparse factorisation per
    /// output, a dense Schur complement on the column sums), then repricing and the active-set
    /// polish. Plain Bayes programs only.
    BlockIpm,
    /// Clarabel interior point (with a regularisation ladder and the active-set polish).
    Clarabel,
    /// good_lp with its default backend here (HiGHS, else Clarabel, else microlp).
    GoodLp,
    /// good_lp driving HiGHS.
    GoodLpHighs,
    /// good_lp driving Clarabel.
    GoodLpClarabel,
    /// good_lp with microlp (pure-Rust simplex; small problems only).
    GoodLpMicrolp,
    /// The structured chain solver (geometric + remap or column generation, certified).
    Chain,
    /// The anytime route at any size: first-order iterations (restarted PDHG) that never build
    /// the LP, stopping at the certified gap (--gap) or the time limit with an exactly ε-DP
    /// mechanism and a proven lower bound. Plain Bayes programs only.
    Anytime,
}

impl SolverChoice {
    /// Every choice, in the order the command line's help lists them.
    pub const ALL: [SolverChoice; 12] = [
        SolverChoice::Auto,
        SolverChoice::Highs,
        SolverChoice::HighsSimplex,
        SolverChoice::HighsIpm,
        SolverChoice::BlockIpm,
        SolverChoice::Clarabel,
        SolverChoice::GoodLp,
        SolverChoice::GoodLpHighs,
        SolverChoice::GoodLpClarabel,
        SolverChoice::GoodLpMicrolp,
        SolverChoice::Chain,
        SolverChoice::Anytime,
    ];

    /// Every choice, in the order the command line's help lists them.
    pub fn all() -> &'static [SolverChoice] {
        &SolverChoice::ALL
    }

    /// The choice's name (kebab case), the one list of names: what `solver` takes and
    /// [`Display`](fmt::Display) writes.
    pub const fn name(self) -> &'static str {
        match self {
            SolverChoice::Auto => "auto",
            SolverChoice::Highs => "highs",
            SolverChoice::HighsSimplex => "highs-simplex",
            SolverChoice::HighsIpm => "highs-ipm",
            SolverChoice::BlockIpm => "block-ipm",
            SolverChoice::Clarabel => "clarabel",
            SolverChoice::GoodLp => "good-lp",
            SolverChoice::GoodLpHighs => "good-lp-highs",
            SolverChoice::GoodLpClarabel => "good-lp-clarabel",
            SolverChoice::GoodLpMicrolp => "good-lp-microlp",
            SolverChoice::Chain => "chain",
            SolverChoice::Anytime => "anytime",
        }
    }

    /// Other names the choice answers to (`good_lp`, the crate's own spelling).
    pub const fn aliases(self) -> &'static [&'static str] {
        match self {
            SolverChoice::GoodLp => &["good_lp"],
            _ => &[],
        }
    }

    /// The cargo feature(s) a choice needs, if it is not compiled in.
    pub(crate) fn missing_feature(self) -> Option<&'static str> {
        let (needed, present) = match self {
            SolverChoice::Auto | SolverChoice::Chain | SolverChoice::BlockIpm | SolverChoice::Anytime => return None,
            SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm => {
                ("highs", cfg!(feature = "highs"))
            }
            SolverChoice::Clarabel => ("clarabel", cfg!(feature = "clarabel")),
            SolverChoice::GoodLp | SolverChoice::GoodLpMicrolp => ("good_lp", cfg!(feature = "good_lp")),
            SolverChoice::GoodLpHighs => ("good_lp,highs", cfg!(all(feature = "good_lp", feature = "highs"))),
            SolverChoice::GoodLpClarabel => ("good_lp,clarabel", cfg!(all(feature = "good_lp", feature = "clarabel"))),
        };
        (!present).then_some(needed)
    }

    /// True for HiGHS's own choices (direct, not through good_lp): the backends that solve the
    /// orbit LP of a symmetric model.
    pub(crate) fn is_highs(self) -> bool {
        matches!(self, SolverChoice::Highs | SolverChoice::HighsSimplex | SolverChoice::HighsIpm)
    }

    /// True for the choices that run Clarabel (directly or through good_lp).
    pub(crate) fn is_clarabel(self) -> bool {
        matches!(self, SolverChoice::Clarabel | SolverChoice::GoodLpClarabel)
    }

    /// True when this build can run it.
    pub fn is_available(self) -> bool {
        self.missing_feature().is_none()
    }
}

/// The name `solver` takes ([`SolverChoice::name`]).
impl fmt::Display for SolverChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A choice by its name or an alias (exactly, case and all).
impl FromStr for SolverChoice {
    type Err = ArgumentError;
    fn from_str(s: &str) -> Result<Self, ArgumentError> {
        SolverChoice::ALL.into_iter().find(|c| c.name() == s || c.aliases().contains(&s)).ok_or_else(|| {
            let names: Vec<&str> = SolverChoice::ALL.iter().map(|c| c.name()).collect();
            ArgumentError::new(
                Parameter::Solver,
                format!("names no known solver \"{s}\" (expected one of {})", names.join(", ")),
            )
        })
    }
}
