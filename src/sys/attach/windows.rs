//! Windows: no reattach (the server is built for Linux far ends); binding reports it.

use std::path::Path;

use super::{BoxRead, BoxWrite};

/// Never bound on Windows.
pub struct Listener(());

/// 32 random bytes as hex (unused on Windows: there is no listener to guard).
pub fn random_token() -> std::io::Result<String> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

impl Listener {
    /// Unsupported on Windows.
    pub fn bind() -> std::io::Result<Self> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }

    /// Never reached.
    pub fn remove(&self) {}

    /// Never reached.
    pub fn path(&self) -> &Path {
        Path::new("")
    }

    /// Never reached.
    pub async fn accept(&self) -> std::io::Result<(BoxRead, BoxWrite)> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// Unsupported on Windows.
pub fn attach(_path: &Path, _gone: &str) -> i32 {
    eprintln!("acp-terminal-server: --attach is not supported on Windows");
    2
}

/// Nothing to do: handles are not inherited unless asked for.
pub fn close_inherited_on_exec() {}
