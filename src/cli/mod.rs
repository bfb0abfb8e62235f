//! One module per subcommand: validate flags, call the library, print.

pub mod audit;
pub mod bench;
pub mod compare;
pub mod models;
pub mod sample;
pub mod solve;
pub mod verify;
