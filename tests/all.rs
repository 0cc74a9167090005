//! The one integration test binary. Every suite is a module of `suite/` and shares the helpers
//! of `support/`, so the whole dependency tree is linked once, not once per suite.
//!
//! Run one suite with `cargo test --test all SUITE::` (e.g. `cargo test --test all mcp_http::`);
//! `scripts/test.sh` runs everything, with the peer programs installed first.

// `unwrap` and `expect` are how a test fails. Cargo.toml denies them for Ling's code, and
// clippy.toml's `allow-*-in-tests` lifts that only inside `#[test]` functions, not in the helpers
// and fixtures around them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;
