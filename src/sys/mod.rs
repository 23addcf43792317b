//! Platform seams: every mechanism that differs between operating systems sits behind one small
//! interface here, one directory per concern, with one file per platform selected by `cfg`.
//! Shared logic lives above these modules and never repeats per platform.

pub mod procs;
