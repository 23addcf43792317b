//! The Windows platform layer of acp-terminal, compiled alone (see Cargo.toml): `sys` is the
//! crate's own `src/sys` directory, and its tree mirrors `crate::sys` so the files compile
//! unchanged.
#![deny(clippy::all)]
// The layer's exports are used by the core, which is not part of this crate.
#![allow(dead_code)]

#[path = "../src/sys"]
pub mod sys {
    pub mod spawn {
        pub mod wincmd;
        #[cfg(windows)]
        mod windows;
        #[cfg(windows)]
        pub use windows::{launch as windows_launch, WinChild, WinLaunch, WinStdio};
    }
    #[path = "job/mod.rs"]
    pub mod job;
    #[cfg(all(windows, test))]
    pub mod wintest;
    #[cfg(windows)]
    pub mod cwd {
        mod windows;
        pub use windows::*;
    }
    #[cfg(windows)]
    pub mod errname {
        mod windows;
        pub use windows::*;
    }
    #[cfg(windows)]
    pub mod exit_watch {
        mod reaped;
        pub use reaped::Reaped;
        mod windows;
        pub use windows::*;
    }
    #[cfg(windows)]
    pub mod pipe {
        mod outcome;
        pub use outcome::ReadOutcome;
        mod windows;
        pub use windows::*;
    }
    #[cfg(windows)]
    pub mod procs {
        mod windows;
        pub use windows::*;
    }
    #[path = "signals/mod.rs"]
    pub mod signals;
    #[cfg(windows)]
    #[path = "pty/mod.rs"]
    pub mod pty;
}
