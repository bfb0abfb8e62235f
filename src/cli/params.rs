//! The library's parameters as the command line spells and parses them: the one mapping from a
//! [`Parameter`] to its flag ([`flag`], installed by `main` so every library message names the
//! flag), and clap's parsers for the library's enums ([`SolverChoice`], [`Method`]), whose names
//! the library decides and whose `--help` lines are the command line's.

use std::sync::LazyLock;

use clap::builder::{EnumValueParser, PossibleValue, TypedValueParser};
use clap::ValueEnum;
use ubapp::compare::Method;
use ubapp::guard::Parameter;
use ubapp::solve::SolverChoice;

/// The flag that sets `p`.
pub fn flag(p: Parameter) -> &'static str {
    match p {
        Parameter::Eps => "--eps",
        Parameter::Delta => "--delta",
        Parameter::Solver => "--solver",
        Parameter::MaxSeconds => "--max-seconds",
        Parameter::Out => "--out",
        Parameter::Shard => "--shard",
        Parameter::Trials => "--trials",
        Parameter::Methods => "--methods",
        Parameter::Parties => "--parties",
        Parameter::Samples => "--samples",
        Parameter::Alpha => "--alpha",
        Parameter::MaxPairs => "--max-pairs",
        Parameter::Level => "--level",
        Parameter::Releases => "--release",
        Parameter::MaxEps => "--max-eps",
        Parameter::Fingerprint => "--fingerprint",
        Parameter::Ledger => "--ledger",
        Parameter::Dataset => "--dataset",
        Parameter::Budget => "--budget",
        Parameter::DeltaBudget => "--delta-budget",
    }
}

/// `--solver`'s parser: the library's names and aliases, each with its `--help` line.
pub fn solver() -> impl TypedValueParser<Value = SolverChoice> {
    EnumValueParser::<SolverArg>::new().map(|a: SolverArg| a.0)
}

/// `--methods`' parser (one id; the flag splits the list): the library's ids, each with its
/// `--help` line.
pub fn method() -> impl TypedValueParser<Value = Method> {
    EnumValueParser::<MethodArg>::new().map(|a: MethodArg| a.0)
}

/// A [`SolverChoice`] as clap sees it.
#[derive(Debug, Clone, Copy)]
pub struct SolverArg(SolverChoice);

static SOLVERS: LazyLock<Vec<SolverArg>> = LazyLock::new(|| SolverChoice::ALL.into_iter().map(SolverArg).collect());

impl ValueEnum for SolverArg {
    fn value_variants<'a>() -> &'a [Self] {
        &SOLVERS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(solver_help(self.0)).aliases(self.0.aliases().iter().copied()))
    }
}

/// A [`Method`] as clap sees it.
#[derive(Debug, Clone, Copy)]
pub struct MethodArg(Method);

static METHODS: LazyLock<Vec<MethodArg>> = LazyLock::new(|| Method::ALL.into_iter().map(MethodArg).collect());

impl ValueEnum for MethodArg {
    fn value_variants<'a>() -> &'a [Self] {
        &METHODS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.id()).help(method_help(self.0)))
    }
}

/// `--solver`'s line for each choice in `--help`.
fn solver_help(c: SolverChoice) -> &'static str {
    match c {
        SolverChoice::Auto => "Decided per model: the exact chain solver for chain neighbours and the plain Bayes program; on the plain program otherwise the block interior point, then on explicit neighbour graphs HiGHS's interior point and Clarabel (HiGHS first on a symmetric model's orbit LP), on chains and bands Clarabel and HiGHS; on the (ε, δ), minimax or constrained programs, which are solved whole, HiGHS's interior point first on a graph, Clarabel first on a chain or band. Where that exact route would not fit the memory budget or the time (--max-seconds, else 10 minutes), the anytime route on plain programs",
        SolverChoice::Highs => "HiGHS, letting it choose the method (dual simplex on these LPs)",
        SolverChoice::HighsSimplex => "HiGHS dual simplex",
        SolverChoice::HighsIpm => "HiGHS interior point with crossover",
        SolverChoice::BlockIpm => "The block interior point built for the UBaPP LP's structure (one sparse factorisation per output, a dense Schur complement on the column sums), then repricing and the active-set polish. Plain Bayes programs only",
        SolverChoice::Clarabel => "Clarabel interior point (with a regularisation ladder and the active-set polish)",
        SolverChoice::GoodLp => "good_lp with its default backend here (HiGHS, else Clarabel, else microlp)",
        SolverChoice::GoodLpHighs => "good_lp driving HiGHS",
        SolverChoice::GoodLpClarabel => "good_lp driving Clarabel",
        SolverChoice::GoodLpMicrolp => "good_lp with microlp (pure-Rust simplex; small problems only)",
        SolverChoice::Chain => "The structured chain solver (geometric + remap or column generation, certified)",
        SolverChoice::Anytime => "The anytime route at any size: first-order iterations (restarted PDHG) that never build the LP, stopping at the certified gap (--gap) or the time limit with an exactly ε-DP mechanism and a proven lower bound. Plain Bayes programs only",
    }
}

/// `--methods`' line for each method in `--help`.
fn method_help(m: Method) -> &'static str {
    match m {
        Method::Ubapp => "The solved UBaPP LP",
        Method::UbappUnconstrained => "The UBaPP optimum of the same model without its `[constraints]` (only for a model with constraints): the UBaPP row's risk over this one's is the constraints' price",
        Method::Lbapp => "LBaPP, raw",
        Method::LbappClamped => "LBaPP clamped to [lower, upper]",
        Method::LaplaceCount => "Laplace on the count, raw",
        Method::LaplaceCountClamped => "Laplace on the count, clamped",
        Method::Geometric => "Truncated geometric + Bayes remap",
        Method::Staircase => "The staircase mechanism on the count, clamped (Geng & Viswanath 2016)",
        Method::SmithSa => "Smith's subsample-and-aggregate",
        Method::Cssa => "Chen–Sung CSSA",
        Method::Dssa => "Chen–Sung DSSA",
        Method::Dsaa => "Chen–Sung DSAA",
        Method::LeiPh => "Lei's perturbed histogram, non-negative variant",
        Method::LeiThld => "Lei's perturbed histogram, thresholding",
        Method::Gaussian => "Gaussian mechanism, pooled ((ε, δ))",
        Method::GaussianConventional => "Gaussian mechanism, conventional distributed ((ε, δ))",
        Method::Cape => "CAPE ((ε, δ))",
        Method::UbappLocal => "Each party releases through the single-party UBaPP optimum; exact Bayes aggregate",
        Method::GeometricLocal => "Each party releases a likelihood-preserving geometric count; exact Bayes aggregate",
        Method::GeometricShares => "Noise shares summing to the central two-sided geometric, by secure aggregation",
        Method::GeometricCount => "Each party releases a geometric count; the clamped average of the plug-in estimates",
        Method::GeometricEachCount => "Two-sided geometric noise on each category's count (sensitivity 2) and the clamped plug-in estimate (a multinomial with one data holder)",
        Method::LaplaceEachCount => "Laplace noise of scale 2/ε on each category's count and the clamped plug-in estimate",
        Method::StaircaseEachCount => "The staircase at ε/2 on each category's count and the clamped plug-in estimate",
        Method::GeometricEachCountRemap => "Geometric noise on each count and the Bayes remap (Monte Carlo)",
        Method::LaplaceEachCountRemap => "Laplace noise on each count and the Bayes remap (Monte Carlo)",
        Method::StaircaseEachCountRemap => "The staircase on each count and the Bayes remap (Monte Carlo)",
        Method::LaplaceSum => "Laplace noise on a clipped Poisson sum (sensitivity c), the clamped plug-in estimate",
        Method::LaplaceSumRemap => "Laplace noise on a clipped Poisson sum and the Bayes remap",
        Method::StaircaseSum => "Staircase noise on a clipped Poisson sum (Geng & Viswanath 2016), the clamped plug-in",
        Method::StaircaseSumRemap => "Staircase noise on a clipped Poisson sum and the Bayes remap",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_takes_the_library_names() {
        for c in SolverChoice::ALL {
            assert_eq!(<SolverArg as ValueEnum>::from_str(c.name(), false).map(|a| a.0), Ok(c));
        }
        assert_eq!(<SolverArg as ValueEnum>::from_str("good_lp", false).map(|a| a.0), Ok(SolverChoice::GoodLp));
        for m in Method::ALL {
            assert_eq!(<MethodArg as ValueEnum>::from_str(m.id(), false).map(|a| a.0), Ok(m));
        }
    }
}
