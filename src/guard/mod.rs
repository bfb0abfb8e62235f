//! The boundary with untrusted input, below every other layer: what a file may make the process
//! allocate (`budget`), how files are read (`read`: regular files only, size first, capped), how a
//! string a file supplied is shown ([`text`]: control characters escaped, quoted short) and the
//! one error every layer returns for a caller's value out of range ([`ArgumentError`], naming a
//! [`Parameter`]).

mod argument;
mod budget;
pub(crate) mod json;
pub(crate) mod read;
pub mod text;

pub use argument::{ArgumentError, Parameter};
pub use budget::{MemoryBudget, SizeError, DEFAULT_LIMIT_BYTES, LIMIT_ENV};
