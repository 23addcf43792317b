//! The sandbox's filesystem: the mount namespace's tree, made in the intermediate process C
//! right after it entered its new namespaces (see [`super::namespaces`]), with system calls
//! only, as bubblewrap's `setup_newroot` does (`--ro-bind / /`, `--bind ROOT ROOT`,
//! `--dev /dev`, `--tmpfs /tmp`):
//!
//! 1. every mount made private (nothing propagates from or to the host afterwards);
//! 2. detached copies (`open_tree(OPEN_TREE_CLONE)`) taken of each writable root (alone,
//!    without its submounts: see [`super::roots`]), found at its path without following a
//!    symlink and used only if it is the pinned directory, and of the device nodes the
//!    command gets, while they still have the host's flags;
//! 3. the whole tree made read-only, `nosuid` and `nodev` (`mount_setattr(AT_RECURSIVE)`):
//!    from here on every write, `chmod`, `chown`, `utimes` or xattr change outside the roots
//!    fails with `EROFS` in the kernel, whatever the file's owner;
//! 4. a small read-only tmpfs on `/dev` holding only the copies of `/dev/null`, `zero`,
//!    `full`, `random`, `urandom` (and, on a pty, `/dev/tty` and the terminal's own
//!    `/dev/pts/N`), bound read-only (the devices work; their host inodes cannot be changed),
//!    and the `fd`, `stdin`, `stdout`, `stderr` links;
//! 5. a private tmpfs of `tmpBytes` on `/tmp` (the command's TMPDIR): it exists in the
//!    namespace only, so the kernel removes it with the namespace, whatever happens to Node;
//! 6. the writable roots' copies, `nosuid` and `nodev`, moved back onto their paths (found
//!    without following a symlink; directories created in the tmpfs for roots under /tmp).
//!
//! `/proc` is mounted afterwards by the namespace's init (it must be in the PID namespace).

use std::cell::Cell;
use std::ffi::CString;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};

/// Device nodes every sandboxed command gets (bound from the host's).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Links of /dev that programs expect (bash's process substitution uses /dev/fd).
const LINKS: &[(&std::ffi::CStr, &std::ffi::CStr)] = &[
    (c"/proc/self/fd", c"/dev/fd"),
    (c"/proc/self/fd/0", c"/dev/stdin"),
    (c"/proc/self/fd/1", c"/dev/stdout"),
    (c"/proc/self/fd/2", c"/dev/stderr"),
];

/// Everything the mount step needs, prepared in the parent.
#[derive(Debug)]
pub struct MountPlan {
    /// The writable roots (resolved, none inside another).
    roots: Vec<CString>,
    /// Their pinned (device, inode).
    ids: Vec<(u64, u64)>,
    /// Every directory on the way to a root (created where missing: under /tmp).
    dirs: Vec<CString>,
    /// Device nodes to bind, by their path (the same inside).
    devices: Vec<CString>,
    /// Whether `/dev/pts` is needed (a pty terminal).
    pts: bool,
    /// The tmpfs options of /tmp (`size=…,mode=1777`).
    tmp_options: CString,
    /// The detached copies, roots then devices (written by C).
    fds: Vec<Cell<RawFd>>,
}

fn cpath(p: &Path) -> Result<CString, String> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{} contains NUL", p.display()))
}

impl MountPlan {
    /// A plan for the pinned `roots`, a /tmp of `tmp_bytes`, and `tty`, the path of the
    /// terminal's pty slave (pty terminals only).
    pub fn new(
        roots: &super::roots::Roots,
        tmp_bytes: u64,
        tty: Option<&Path>,
    ) -> Result<MountPlan, String> {
        let roots: Vec<(PathBuf, (u64, u64))> =
            roots.roots.iter().map(|r| (r.path.clone(), r.id)).collect();
        MountPlan::of(&roots, tmp_bytes, tty)
    }

    /// The same from the roots' resolved paths and pinned (device, inode) alone (what a sandbox
    /// made ahead keeps of them).
    pub fn of(
        roots: &[(PathBuf, (u64, u64))],
        tmp_bytes: u64,
        tty: Option<&Path>,
    ) -> Result<MountPlan, String> {
        let sorted: Vec<&PathBuf> = roots.iter().map(|(p, _)| p).collect();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for r in &sorted {
            for a in r.ancestors().collect::<Vec<_>>().into_iter().rev().skip(1) {
                if !dirs.iter().any(|d| d == a) {
                    dirs.push(a.to_path_buf());
                }
            }
        }
        let mut devices: Vec<CString> = DEVICES
            .iter()
            .map(|d| CString::new(*d).expect("literal"))
            .collect();
        if let Some(tty) = tty {
            devices.push(CString::new("/dev/tty").expect("literal"));
            if !tty.starts_with("/dev/pts") || tty.components().count() != 4 {
                return Err(format!(
                    "the pty slave {} is not under /dev/pts",
                    tty.display()
                ));
            }
            devices.push(cpath(tty)?);
        }
        let n = sorted.len() + devices.len();
        Ok(MountPlan {
            roots: sorted
                .into_iter()
                .map(|p| cpath(p))
                .collect::<Result<_, _>>()?,
            ids: roots.iter().map(|(_, id)| *id).collect(),
            dirs: dirs.iter().map(|p| cpath(p)).collect::<Result<_, _>>()?,
            devices,
            pts: tty.is_some(),
            tmp_options: CString::new(format!("size={tmp_bytes},mode=1777")).expect("digits"),
            fds: (0..n).map(|_| Cell::new(-1)).collect(),
        })
    }
}

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// `struct mount_attr`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

fn errno() -> i32 {
    crate::sys::spawn::errno()
}

/// `mount_setattr(path, flags, attr_set)`.
unsafe fn set_attr(path: &std::ffi::CStr, flags: libc::c_uint, set: u64) -> Result<(), i32> {
    mount_setattr(libc::AT_FDCWD, path, flags, set, 0)
}

/// `mount_setattr` on the detached copy `fd` itself.
unsafe fn set_attr_fd(fd: RawFd, set: u64) -> Result<(), i32> {
    mount_setattr(fd, c"", libc::AT_EMPTY_PATH as libc::c_uint, set, 0)
}

/// The system call: sets the attributes `set` and clears `clear` on the mount at
/// `dirfd`/`path`.
unsafe fn mount_setattr(
    dirfd: RawFd,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    set: u64,
    clear: u64,
) -> Result<(), i32> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clear,
        propagation: 0,
        userns_fd: 0,
    };
    let r = libc::syscall(
        libc::SYS_mount_setattr,
        dirfd,
        path.as_ptr(),
        flags,
        &attr as *const MountAttr,
        std::mem::size_of::<MountAttr>(),
    );
    if r != 0 {
        return Err(errno());
    }
    Ok(())
}

/// A detached copy of the mount at `path` alone.
unsafe fn clone_tree(path: &std::ffi::CStr) -> Result<RawFd, i32> {
    let flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint;
    let fd = libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) as RawFd;
    if fd < 0 {
        return Err(errno());
    }
    Ok(fd)
}

/// A detached copy of the directory `path` alone, if it is the one identified by `id`
/// (found without following a symlink): `ESTALE` if another directory is there now.
unsafe fn clone_pinned(path: &std::ffi::CStr, id: (u64, u64)) -> Result<RawFd, i32> {
    let dir = super::namespaces::open_beneath_none(libc::AT_FDCWD, path);
    if dir < 0 {
        return Err(errno());
    }
    let mut st: libc::stat = std::mem::zeroed();
    let r = if libc::fstat(dir, &mut st) != 0 {
        Err(errno())
    } else if super::namespaces::id_of(&st) != id {
        Err(libc::ESTALE)
    } else {
        let flags =
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
        let fd = libc::syscall(libc::SYS_open_tree, dir, c"".as_ptr(), flags) as RawFd;
        if fd >= 0 {
            Ok(fd)
        } else if errno() != libc::EINVAL {
            Err(errno())
        } else {
            // In a user namespace, the host's mounts below the root are locked to it (the
            // kernel refuses to uncover what they hide): they come along, read-only, `nosuid`
            // and `nodev`; only the root itself is writable.
            let fd = libc::syscall(libc::SYS_open_tree, dir, c"".as_ptr(), flags | AT_RECURSIVE)
                as RawFd;
            if fd < 0 {
                Err(errno())
            } else if let Err(e) = mount_setattr(
                fd,
                c"",
                libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                0,
            )
            .and_then(|()| {
                mount_setattr(
                    fd,
                    c"",
                    libc::AT_EMPTY_PATH as libc::c_uint,
                    0,
                    MOUNT_ATTR_RDONLY,
                )
            }) {
                libc::close(fd);
                Err(e)
            } else {
                Ok(fd)
            }
        }
    };
    libc::close(dir);
    r
}

/// Attaches the detached copy `fd` onto the directory at `path`, found without following a
/// symlink.
unsafe fn attach_dir(fd: RawFd, path: &std::ffi::CStr) -> Result<(), i32> {
    let target = super::namespaces::open_beneath_none(libc::AT_FDCWD, path);
    if target < 0 {
        return Err(errno());
    }
    let r = libc::syscall(
        libc::SYS_move_mount,
        fd,
        c"".as_ptr(),
        target,
        c"".as_ptr(),
        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
    );
    let e = errno();
    libc::close(target);
    if r != 0 {
        return Err(e);
    }
    Ok(())
}

/// Attaches the detached copy `fd` at `path`.
unsafe fn attach(fd: RawFd, path: &std::ffi::CStr) -> Result<(), i32> {
    let r = libc::syscall(
        libc::SYS_move_mount,
        fd,
        c"".as_ptr(),
        libc::AT_FDCWD,
        path.as_ptr(),
        MOVE_MOUNT_F_EMPTY_PATH,
    );
    if r != 0 {
        return Err(errno());
    }
    Ok(())
}

unsafe fn mount_tmpfs(
    path: &std::ffi::CStr,
    flags: libc::c_ulong,
    options: &std::ffi::CStr,
) -> Result<(), i32> {
    if libc::mount(
        c"tmpfs".as_ptr(),
        path.as_ptr(),
        c"tmpfs".as_ptr(),
        flags,
        options.as_ptr() as *const libc::c_void,
    ) != 0
    {
        return Err(errno());
    }
    Ok(())
}

/// Steps 1-6 of the module's comment, in C (which holds every capability in the new mount
/// namespace). The copies' descriptors are closed whatever happens (C's own table).
///
/// # Safety
/// Call only in C, right after it entered its new mount namespace.
pub unsafe fn apply(plan: &MountPlan) -> Result<(), i32> {
    let r = build(plan);
    for fd in &plan.fds {
        if fd.get() >= 0 {
            libc::close(fd.get());
        }
    }
    r
}

unsafe fn build(plan: &MountPlan) -> Result<(), i32> {
    if libc::mount(
        std::ptr::null(),
        c"/".as_ptr(),
        std::ptr::null(),
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ) != 0
    {
        return Err(errno());
    }
    let n = plan.roots.len();
    for (i, root) in plan.roots.iter().enumerate() {
        let fd = clone_pinned(root, plan.ids[i])?;
        plan.fds[i].set(fd);
        set_attr_fd(fd, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
    }
    for (k, dev) in plan.devices.iter().enumerate() {
        let fd = clone_tree(dev)?;
        plan.fds[n + k].set(fd);
        // The host's device inodes themselves: reading and writing the devices still works
        // (a read-only mount does not stop device I/O); chmod, chown, utimes of them do not.
        set_attr_fd(
            fd,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
        )?;
    }
    set_attr(
        c"/",
        AT_RECURSIVE,
        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
    )?;
    mount_tmpfs(
        c"/dev",
        libc::MS_NOSUID | libc::MS_NOEXEC,
        c"size=64k,mode=755",
    )?;
    if plan.pts && libc::mkdir(c"/dev/pts".as_ptr(), 0o755) != 0 {
        return Err(errno());
    }
    for (k, dev) in plan.devices.iter().enumerate() {
        let fd = libc::open(
            dev.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o666,
        );
        if fd < 0 {
            return Err(errno());
        }
        libc::close(fd);
        attach(plan.fds[n + k].get(), dev)?;
    }
    for (target, link) in LINKS {
        if libc::symlink(target.as_ptr(), link.as_ptr()) != 0 {
            return Err(errno());
        }
    }
    set_attr(c"/dev", 0, MOUNT_ATTR_RDONLY)?;
    mount_tmpfs(c"/tmp", libc::MS_NOSUID | libc::MS_NODEV, &plan.tmp_options)?;
    for dir in &plan.dirs {
        if libc::mkdir(dir.as_ptr(), 0o755) != 0 && errno() != libc::EEXIST {
            return Err(errno());
        }
    }
    for (i, root) in plan.roots.iter().enumerate() {
        attach_dir(plan.fds[i].get(), root)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_directory_on_the_way_to_each_root_and_the_devices() {
        let root = |p: &str| super::super::roots::Root {
            path: PathBuf::from(p),
            fd: std::fs::File::open("/").unwrap().into(),
            id: (1, 2),
        };
        let roots = super::super::roots::Roots {
            roots: vec![root("/tmp/a"), root("/var/x/y")],
        };
        let plan = MountPlan::new(&roots, 4096, Some(Path::new("/dev/pts/7"))).unwrap();
        let strs = |v: &[CString]| {
            v.iter()
                .map(|c| c.to_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(strs(&plan.roots), ["/tmp/a", "/var/x/y"]);
        assert_eq!(plan.ids, [(1, 2), (1, 2)]);
        assert_eq!(
            strs(&plan.dirs),
            ["/tmp", "/tmp/a", "/var", "/var/x", "/var/x/y"]
        );
        assert_eq!(
            strs(&plan.devices),
            [
                "/dev/null",
                "/dev/zero",
                "/dev/full",
                "/dev/random",
                "/dev/urandom",
                "/dev/tty",
                "/dev/pts/7"
            ]
        );
        assert_eq!(plan.tmp_options.to_str().unwrap(), "size=4096,mode=1777");
        assert_eq!(plan.fds.len(), 2 + 7);
        let none = super::super::roots::Roots::default();
        assert!(MountPlan::new(&none, 1, Some(Path::new("/tmp/fake-pty"))).is_err());
    }
}
