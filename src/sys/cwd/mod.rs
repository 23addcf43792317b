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
use std::io;
#[cfg(unix)]
use std::os::fd::{AsFd, OwnedFd};
#[cfg(windows)]
use std::os::windows::io::OwnedHandle;
use std::path::{Path, PathBuf};

/// An open directory: Unix, a descriptor (`O_DIRECTORY`, close-on-exec); Windows, a handle
/// that keeps it from being renamed or deleted while open.
#[cfg(unix)]
pub type Dir = OwnedFd;
/// An open directory: Unix, a descriptor (`O_DIRECTORY`, close-on-exec); Windows, a handle
/// that keeps it from being renamed or deleted while open.
#[cfg(windows)]
pub type Dir = OwnedHandle;

/// Opens directory `path` for changing into it later (close-on-exec; fails with ENOTDIR for
/// anything but a directory). Symlinks in the path are followed now, once.
pub fn open_dir(path: &Path) -> io::Result<Dir> {
    #[cfg(unix)]
    {
        imp::open_dir(path)
    }
    #[cfg(windows)]
    {
        windows::open_dir(path)
    }
}

/// The absolute path an open directory refers to now (Windows: a plain drive or UNC path).
pub fn dir_path(dir: &Dir) -> io::Result<PathBuf> {
    #[cfg(unix)]
    {
        fd_path(dir)
    }
    #[cfg(windows)]
    {
        windows::dir_path(dir)
    }
}

/// The absolute path an open descriptor refers to now.
#[cfg(unix)]
pub fn fd_path(fd: &impl AsFd) -> io::Result<PathBuf> {
    imp::fd_path(fd.as_fd())
}

/// The working directory of process `pid`, if it can be read (Windows: `None`, another
/// process's working directory is not readable there without reading its memory).
pub fn process_cwd(pid: i32) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        imp::process_cwd(pid)
    }
    #[cfg(windows)]
    {
        let _ = pid;
        None
    }
}

#[cfg(all(test, unix))]
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
