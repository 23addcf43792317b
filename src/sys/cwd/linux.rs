//! Linux: `O_PATH | O_DIRECTORY` descriptors (no read permission needed, as `chdir`), and the
//! `/proc/<pid>/cwd` and `/proc/self/fd/<n>` links.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

pub(super) fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    nix::fcntl::open(
        path,
        OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

pub(super) fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

pub(super) fn process_cwd(pid: i32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
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
            fd_path(std::os::fd::AsFd::as_fd(&fd)).unwrap(),
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
}
