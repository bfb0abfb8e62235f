//! One module per subcommand: validate flags, call the library, print.

pub mod compare;
pub mod solve;
pub mod models;
