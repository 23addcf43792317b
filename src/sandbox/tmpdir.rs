//! The private temporary directory of a sandboxed terminal: created with `mkdtemp` (mode
//! 0700, a fresh unguessable name) under the Node process's temporary directory, writable by
//! the command as its TMPDIR, removed when the terminal is released.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// A directory removed (with its content) when dropped, unless [`TempDir::keep`] hands it on.
#[derive(Debug)]
pub struct TempDir {
    path: Option<PathBuf>,
}

impl TempDir {
    /// Creates `acp-terminal-sandbox-XXXXXX` under `std::env::temp_dir()`.
    pub fn new() -> io::Result<TempDir> {
        let template = std::env::temp_dir().join("acp-terminal-sandbox-XXXXXX");
        let template = CString::new(template.as_os_str().as_bytes())
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        let mut bytes = template.into_bytes_with_nul();
        // SAFETY: `bytes` is a NUL-terminated, writable template ending in XXXXXX.
        let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr() as *mut libc::c_char) };
        if p.is_null() {
            return Err(io::Error::last_os_error());
        }
        bytes.pop();
        Ok(TempDir {
            path: Some(PathBuf::from(OsString::from_vec(bytes))),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.path.as_deref().expect("TempDir used after keep()")
    }

    /// Stops owning the directory and returns its path (the caller removes it).
    pub fn keep(mut self) -> PathBuf {
        self.path.take().expect("TempDir kept twice")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_and_removed_on_drop() {
        let d = TempDir::new().unwrap();
        let p = d.path().to_path_buf();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::write(p.join("f"), b"x").unwrap();
        drop(d);
        assert!(!p.exists());
        let kept = TempDir::new().unwrap().keep();
        assert!(kept.exists());
        std::fs::remove_dir(kept).unwrap();
    }
}
