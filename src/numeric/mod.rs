//! Numerics the solvers share, with no knowledge of the LP: the dense Cholesky factorisation of
//! a Schur complement ([`dense_cholesky`]), the sparse one of many matrices on one pattern
//! ([`sparse_cholesky`]), double-double arithmetic for the stiff blocks ([`double_double`]),
//! preconditioned conjugate gradients for the directions a dense factor dropped
//! ([`conjugate_gradients`]), and the run-time proofs of the processor's features that gate their
//! AVX kernels (`cpu`). The block interior point (`crate::solve::structured::ipm`) is their user;
//! nothing here imports the crate.

pub(crate) mod conjugate_gradients;
mod cpu;
pub(crate) mod dense_cholesky;
pub(crate) mod double_double;
pub(crate) mod sparse_cholesky;
