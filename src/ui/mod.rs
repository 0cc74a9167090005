//! Everything that reaches the terminal. The only module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod output;
