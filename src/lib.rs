//! acp-terminal: Agent Client Protocol terminals for Node.js.
//!
//! This file is the napi surface only: exported functions, the `TerminalHandle` class, option
//! and result objects, and the mapping of core errors to JS errors with a `code`. The process
//! logic lives in the core modules below, which know nothing of napi.

#![deny(clippy::all)]

pub mod cgroup;
pub mod error;
pub mod exit;
pub mod fastforward;
pub mod guard;
pub mod keys;
pub mod kill;
pub mod launch;
pub mod output;
pub mod pty;
pub mod registry;
pub mod render;
pub mod spawn;
pub mod terminal;

mod binding;

pub use binding::*;
