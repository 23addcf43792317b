//! Linux: the running executable (`/proc/self/exe`) and its directories, by device and inode.

use std::path::PathBuf;

use crate::error::TermError;
use crate::sandbox::SandboxSpec;

/// The server's file and the directories above it (device, inode, path), nearest first.
#[derive(Debug)]
pub struct OwnFile {
    ids: Vec<((u64, u64), PathBuf)>,
}

impl OwnFile {
    /// Resolves the running executable and its directories now (once per server).
    pub fn resolve() -> Self {
        Self::of(std::path::Path::new("/proc/self/exe"))
    }

    /// `exe` (followed) and the directories above its real path.
    pub fn of(exe: &std::path::Path) -> Self {
        use std::os::unix::fs::MetadataExt;
        let mut ids = Vec::new();
        let real = std::fs::canonicalize(exe).ok();
        if let Ok(m) = std::fs::metadata(exe) {
            ids.push((
                (m.dev(), m.ino()),
                real.clone().unwrap_or_else(|| exe.to_path_buf()),
            ));
        }
        // A deleted executable has no directory left to protect (its path names no file).
        if let Some(real) = real {
            for dir in real.ancestors().skip(1) {
                if let Ok(m) = std::fs::metadata(dir) {
                    ids.push(((m.dev(), m.ino()), dir.to_path_buf()));
                }
            }
        }
        Self { ids }
    }

    /// Pins `spec`'s writable roots (when it has not been) and refuses one that is the server's
    /// file or a directory above it; the launch then uses the pinned directories.
    pub fn guard(&self, spec: &mut SandboxSpec, field: &str) -> Result<(), TermError> {
        if spec.pinned.is_none() {
            spec.pinned = Some(crate::sandbox::pin(spec, field)?);
        }
        let Some(pinned) = &spec.pinned else {
            return Ok(());
        };
        for root in &pinned.0.roots {
            if let Some((_, own)) = self.ids.iter().find(|(id, _)| *id == root.id) {
                let exe = &self.ids[0].1;
                return Err(TermError::invalid_arg(format!(
                    "{field}.writableRoots: `{}` (`{}`) holds this server's own executable \
                     `{}`: a sandboxed command could replace it and the next connection would \
                     run its program (install the server elsewhere: the backend's serverPath)",
                    root.path.display(),
                    own.display(),
                    exe.display()
                )));
            }
        }
        Ok(())
    }
}
