//! The private temporary directory of a sandboxed terminal: created with `mkdtemp` (mode
//! 0700, a fresh unguessable name) under the Node process's temporary directory, writable by
//! the command as its TMPDIR, removed after the terminal is released.
//!
//! Creating and removing a directory costs little on tmpfs but milliseconds on a busy disk,
//! so neither happens on the spawn or release path: a background thread (see `cleanup`)
//! removes released directories and keeps [`SPARES`] fresh ones ready; [`TempDir::take`] uses
//! a spare when there is one. Spares still unused when the process exits are removed by an
//! `atexit` handler.

use std::ffi::{CString, OsString};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

/// Directories kept ready.
pub const SPARES: usize = 2;

static SPARE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A directory removed (with its content) when dropped, unless [`TempDir::keep`] hands it on.
#[derive(Debug)]
pub struct TempDir {
    path: Option<PathBuf>,
}

fn create() -> io::Result<PathBuf> {
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
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

extern "C" fn remove_spares() {
    if let Ok(mut spares) = SPARE.lock() {
        for dir in spares.drain(..) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Creates spares until there are [`SPARES`] (run by the cleanup thread).
pub fn refill() {
    static AT_EXIT: Once = Once::new();
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain function that only locks a mutex and removes
        // directories.
        unsafe { libc::atexit(remove_spares) };
    });
    loop {
        if SPARE.lock().map_or(true, |s| s.len() >= SPARES) {
            return;
        }
        match create() {
            Ok(dir) => match SPARE.lock() {
                Ok(mut s) => s.push(dir),
                Err(_) => return,
            },
            Err(_) => return,
        }
    }
}

impl TempDir {
    /// Creates `acp-terminal-sandbox-XXXXXX` under `std::env::temp_dir()` now.
    pub fn new() -> io::Result<TempDir> {
        Ok(TempDir {
            path: Some(create()?),
        })
    }

    /// A spare directory if one is ready (and a refill is asked for), else a new one.
    pub fn take() -> io::Result<TempDir> {
        let spare = SPARE.lock().ok().and_then(|mut s| s.pop());
        super::cleanup::refill_tmpdirs();
        match spare {
            // A spare must still be ours and private (nothing may have replaced it).
            Some(p) if is_private_dir(&p) => Ok(TempDir { path: Some(p) }),
            _ => TempDir::new(),
        }
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

/// A real directory (not a symlink), owned by us, mode 0700, empty.
fn is_private_dir(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::symlink_metadata(p) else {
        return false;
    };
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    m.is_dir()
        && m.uid() == uid
        && m.mode() & 0o7777 == 0o700
        && std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_none())
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            super::cleanup::remove_later(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn private_and_removed_after_drop() {
        let d = TempDir::new().unwrap();
        let p = d.path().to_path_buf();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::write(p.join("f"), b"x").unwrap();
        drop(d);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while p.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!p.exists());
        let kept = TempDir::new().unwrap().keep();
        assert!(kept.exists());
        std::fs::remove_dir(kept).unwrap();
    }

    #[test]
    fn a_tampered_spare_is_not_used() {
        let good = create().unwrap();
        assert!(is_private_dir(&good));
        std::fs::write(good.join("planted"), b"x").unwrap();
        assert!(!is_private_dir(&good));
        std::fs::remove_file(good.join("planted")).unwrap();
        std::fs::set_permissions(&good, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!is_private_dir(&good));
        std::fs::remove_dir(&good).unwrap();
        let link = std::env::temp_dir().join(format!("acp-sbx-link-{}", std::process::id()));
        std::os::unix::fs::symlink("/tmp", &link).unwrap();
        assert!(!is_private_dir(&link));
        std::fs::remove_file(link).unwrap();
    }
}
