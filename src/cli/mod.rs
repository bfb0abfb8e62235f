//! One module per subcommand: validate flags, call the library, print.

pub mod bench;
pub mod solve;
