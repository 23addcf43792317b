//! The reattach point of a detached `acp-terminal-server`: a listener a later transport reaches
//! the live server through (`acp-terminal-server --attach PATH` splices its stdio to it), and
//! the random session token that authenticates it.
//!
//! Invariants: the listener lives in a directory it created itself, mode 0700 (only the
//! server's user can connect), removed with the listener; a token is 32 random bytes, hex.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::{attach, close_inherited_on_exec, random_token, Listener};

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::{attach, close_inherited_on_exec, random_token, Listener};

/// The read half of an attached connection.
pub type BoxRead = Box<dyn tokio::io::AsyncRead + Unpin + Send>;
/// The write half of an attached connection.
pub type BoxWrite = Box<dyn tokio::io::AsyncWrite + Unpin + Send>;
