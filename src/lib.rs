//! acp-terminal: Agent Client Protocol terminals for Node.js, a Rust core behind a napi-rs
//! binding.
//!
//! The path of one `createTerminal()`:
//! [`binding`] reads the JS arguments into a core request (`binding/options.rs`) ->
//! [`start::start`] plans it ([`spawn::plan`]: program, argv, env, the cwd opened as a
//! descriptor), makes what holds it ([`containment::hold`]: cgroups, or a job), spawns it
//! ([`spawn::spawn`] and the platform launch in [`sys::spawn`]) and starts its
//! [`terminal::Terminal`]: the output pump
//! (`terminal/pump.rs`), the input queue (`terminal/input.rs`) and the exit watch ([`reap`]).
//! Every signal goes through [`containment`] (the one TERM -> grace -> KILL escalation);
//! [`sys::guardian`] kills what is left if Node dies without running our code. Output is retained
//! by [`output`] (raw) or rendered by [`render`] (text mode; [`fastforward`] skips what scrolls off unseen). Everything that differs per
//! operating system sits behind the seams of [`sys`].
//!
//! No napi type appears below [`binding`]: the core is tested with `cargo test` alone.

#![deny(clippy::all)]
// Without the addon (the standalone server's build) the parts only the binding calls are unused.
#![cfg_attr(not(feature = "napi"), allow(dead_code, unused_imports))]

// napi-derive compiles its export registration out of test builds, which leaves the binding
// unreferenced there.
#[cfg_attr(test, allow(dead_code))]
#[cfg(feature = "napi")]
mod binding;
mod containment;
mod error;
mod exit;
mod fastforward;
mod keys;
mod output;
mod pending;
mod reap;
mod registry;
mod render;
mod sandbox;
pub mod server;
#[cfg(feature = "napi")]
mod shell;
mod spawn;
mod start;
mod sys;
mod terminal;
#[cfg(test)]
mod test_util;
