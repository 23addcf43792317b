//! Working directories as descriptors: the directory a request names is opened once, when it
//! is checked, and the child changes into that descriptor (so a rename or symlink swap after
//! the check changes nothing); and where a descriptor or another process's cwd really is.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(target_os = "macos")]
mod macos;
#[cfg(target_os = "macos")]
use macos as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
#[allow(unused_imports)] // the core uses these once it runs on Windows
pub use windows::{dir_path, open_dir as windows_open_dir};

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Opens directory `path` for changing into it later (close-on-exec; fails with ENOTDIR for
/// anything but a directory). Symlinks in the path are followed now, once.
pub fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    imp::open_dir(path)
}

/// The absolute path an open descriptor refers to now.
pub fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    imp::fd_path(fd.as_fd())
}

/// The working directory of process `pid`, if it can be read.
pub fn process_cwd(pid: i32) -> Option<PathBuf> {
    imp::process_cwd(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_descriptor_keeps_naming_the_directory_it_opened() {
        let tmp = std::env::temp_dir().join(format!("acp-cwd-{}", std::process::id()));
        let moved = tmp.with_extension("moved");
        std::fs::create_dir_all(&tmp).unwrap();
        let fd = open_dir(&tmp).unwrap();
        std::fs::rename(&tmp, &moved).unwrap();
        assert_eq!(
            fd_path(&fd).unwrap(),
            std::fs::canonicalize(&moved).unwrap()
        );
        assert_eq!(
            open_dir(Path::new("/dev/null")).unwrap_err().raw_os_error(),
            Some(libc::ENOTDIR)
        );
        let me = std::process::id() as i32;
        assert_eq!(process_cwd(me), std::env::current_dir().ok());
        std::fs::remove_dir(&moved).unwrap();
    }

    #[test]
    fn a_directory_that_may_be_entered_but_not_listed_opens() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = std::env::temp_dir().join(format!("acp-cwd-x-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o300)).unwrap();
        let opened = open_dir(&tmp);
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::remove_dir(&tmp).unwrap();
        opened.unwrap();
    }

    #[test]
    fn reads_another_process_cwd() {
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "read x"])
            .current_dir("/usr")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let cwd = process_cwd(child.id() as i32);
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(cwd, Some(PathBuf::from("/usr")));
        assert_eq!(process_cwd(i32::MAX), None);
    }
}
