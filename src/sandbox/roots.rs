//! Writable roots pinned once: each root is resolved and opened (an `O_PATH` directory
//! descriptor, with its device and inode) when the sandbox is configured, and every launch
//! binds that very directory, never the path looked up again:
//!
//! - in the launch's intermediate process, the root is found at its resolved path in the new
//!   tree without following any symlink (`openat2` `RESOLVE_NO_SYMLINKS`) and used only if it
//!   is the directory that was pinned (same device and inode); anything else refuses the
//!   launch ([`super::mounts`]);
//! - a root is bound alone (`open_tree` without `AT_RECURSIVE`): the mounts below it on the
//!   host (a procfs or sysfs of a chroot, a build root's bind mounts) are not carried in, the
//!   sandbox sees the directories underneath them; in a user namespace (callers without
//!   CAP_SYS_ADMIN) the kernel keeps such mounts locked to the root, so they come along
//!   read-only, `nosuid` and `nodev`;
//! - a root nested in another on the same filesystem is merged into it (it adds nothing the
//!   outer one does not give, and an agent able to write in the outer one could otherwise
//!   relink it); one on another filesystem (a separate mount inside a root) is refused;
//! - a root that is, or contains, a kernel-interface filesystem (proc, sysfs, devtmpfs,
//!   cgroup, ...) is refused with `ERR_INVALID_ARG` naming the field: writing there would
//!   reach the host's processes and settings.
//!
//! [`SandboxSpec::pinned`](super::SandboxSpec) carries pinned roots from a configuration made
//! once (`SandboxConfig` in the binding) to every create; without it each create pins its own.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use crate::error::TermError;

/// One pinned writable root.
#[derive(Debug)]
pub struct Root {
    /// Its resolved path (where it is bound in the sandbox's tree).
    pub path: PathBuf,
    /// The directory itself (`O_PATH`).
    pub fd: OwnedFd,
    /// Its device and inode.
    pub id: (u64, u64),
}

/// The pinned writable roots of a sandbox, nested ones merged, parents first.
#[derive(Debug, Default)]
pub struct Roots {
    /// The roots.
    pub roots: Vec<Root>,
}

/// Filesystems that are kernel interfaces: a root may not be or contain one.
const SPECIAL: &[&str] = &[
    "proc",
    "sysfs",
    "devtmpfs",
    "devpts",
    "cgroup",
    "cgroup2",
    "securityfs",
    "debugfs",
    "tracefs",
    "bpf",
    "binfmt_misc",
    "configfs",
    "efivarfs",
    "pstore",
    "fusectl",
    "mqueue",
    "hugetlbfs",
    "nsfs",
];

/// The mount table: each line of `/proc/self/mountinfo` as its mount point (unescaped) and
/// filesystem type.
type Table = Vec<(PathBuf, String)>;

/// The mount table, read again only when it changed: the kernel marks an open
/// `/proc/self/mountinfo` with `POLLPRI` once any mount, unmount, move or remount happens in the
/// namespace after the descriptor was opened or last polled (what libmount's monitor and
/// systemd watch), so a create pays one `poll` instead of the kernel writing out every mount
/// (the table this answers is the one a fresh read would give). Empty when it cannot be read,
/// as before.
fn mounts() -> std::sync::Arc<Table> {
    mounts_and_generation().0
}

/// The host's mount generation: a number that changes whenever the mount table does (any mount,
/// unmount, move or remount in Node's mount namespace seen since the last call, by the same
/// `POLLPRI` mark as the kept table). Sandboxes made ahead ([`super::premade`]) are used only while
/// it is the one they were made under: their tree is then the tree a launch would copy now.
pub fn mount_generation() -> u64 {
    mounts_and_generation().1
}

fn mounts_and_generation() -> (std::sync::Arc<Table>, u64) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};
    static CACHE: Mutex<Option<(std::fs::File, Arc<Table>)>> = Mutex::new(None);
    static GENERATION: AtomicU64 = AtomicU64::new(0);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((file, table)) = cache.as_ref() {
        if !changed(file) {
            return (Arc::clone(table), GENERATION.load(Ordering::Relaxed));
        }
    }
    *cache = None;
    // Every read (a change, a failure, the first one) is a new generation; under the lock.
    let generation = GENERATION.fetch_add(1, Ordering::Relaxed) + 1;
    // Opened first, read next: a change between the two is in what is read and is reported to
    // the next poll too (one read more, never one less).
    let Ok(mut file) = std::fs::File::open("/proc/self/mountinfo") else {
        return (Arc::new(Vec::new()), generation);
    };
    let mut text = String::new();
    if std::io::Read::read_to_string(&mut file, &mut text).is_err() {
        return (Arc::new(Vec::new()), generation);
    }
    let table = Arc::new(parse_mountinfo(&text));
    *cache = Some((file, Arc::clone(&table)));
    (table, generation)
}

/// Whether the mount table of the open `mountinfo` changed since it was opened or last asked
/// (then the kernel resets the mark); any failure counts as a change.
fn changed(file: &std::fs::File) -> bool {
    let mut pfd = libc::pollfd {
        fd: file.as_raw_fd(),
        events: libc::POLLPRI,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no timeout.
    let r = unsafe { libc::poll(&mut pfd, 1, 0) };
    r < 0 || pfd.revents & (libc::POLLPRI | libc::POLLERR | libc::POLLNVAL) != 0
}

fn parse_mountinfo(text: &str) -> Table {
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let point = left.split(' ').nth(4)?;
            let fstype = right.split(' ').next()?;
            Some((PathBuf::from(unescape(point)), fstype.to_string()))
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The filesystem type of the mount `path` lies on (the longest mount point above it).
fn fstype_of<'m>(path: &Path, table: &'m [(PathBuf, String)]) -> Option<&'m str> {
    table
        .iter()
        .filter(|(p, _)| path.starts_with(p))
        .max_by_key(|(p, _)| p.components().count())
        .map(|(_, t)| t.as_str())
}

/// Resolves, checks and opens the writable roots (`resolved` as [`super::validate_roots`]
/// answers them, in the caller's order; `field` names the option in errors).
pub fn pin(resolved: &[PathBuf], field: &str) -> Result<Roots, TermError> {
    let table = mounts();
    let table: &[(PathBuf, String)] = &table;
    let mut opened: Vec<(usize, Root)> = Vec::with_capacity(resolved.len());
    for (i, real) in resolved.iter().enumerate() {
        let name = format!("{field}.writableRoots[{i}]");
        if let Some(t) = fstype_of(real, table).filter(|t| SPECIAL.contains(t)) {
            return Err(TermError::invalid_arg(format!(
                "{name} `{}` is on a {t} filesystem: a kernel interface may not be writable \
                 in the sandbox",
                real.display()
            )));
        }
        if let Some((p, t)) = table
            .iter()
            .find(|(p, t)| p != real && p.starts_with(real) && SPECIAL.contains(&t.as_str()))
        {
            return Err(TermError::invalid_arg(format!(
                "{name} `{}` contains a {t} mount at `{}`: a kernel interface may not be \
                 writable in the sandbox (unmount it, or make a directory beside it the root)",
                real.display(),
                p.display()
            )));
        }
        // No symlink on the way: the resolved path is the directory, or it changed since.
        let fd = super::namespaces::open_no_symlinks(real)
            .map_err(|e| TermError::invalid_arg(format!("{name} `{}`: {e}", real.display())))?;
        let id = super::namespaces::fd_id(fd.as_raw_fd())
            .map_err(|e| TermError::invalid_arg(format!("{name} `{}`: {e}", real.display())))?;
        opened.push((
            i,
            Root {
                path: real.clone(),
                fd,
                id,
            },
        ));
    }
    // Parents first; then a root inside another is merged (same filesystem) or refused.
    opened.sort_by_key(|(_, r)| r.path.components().count());
    let mut roots: Vec<(usize, Root)> = Vec::with_capacity(opened.len());
    for (i, r) in opened {
        match roots.iter().find(|(_, o)| r.path.starts_with(&o.path)) {
            None => roots.push((i, r)),
            // Merged: writable through the outer root already.
            Some((_, o)) if o.id.0 == r.id.0 => {}
            Some((j, o)) => {
                return Err(TermError::invalid_arg(format!(
                    "{field}.writableRoots[{i}] `{}` is a separate mount inside \
                     {field}.writableRoots[{j}] `{}`: roots are bound without their \
                     submounts; list only one of them",
                    r.path.display(),
                    o.path.display()
                )));
            }
        }
    }
    Ok(Roots {
        roots: roots.into_iter().map(|(_, r)| r).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_and_longest_mount_point() {
        assert_eq!(unescape(r"/a\040b\134c"), "/a b\\c");
        let table = vec![
            (PathBuf::from("/"), "ext4".to_string()),
            (PathBuf::from("/w/proc"), "proc".to_string()),
        ];
        assert_eq!(fstype_of(Path::new("/w/proc/1"), &table), Some("proc"));
        assert_eq!(fstype_of(Path::new("/w/procx"), &table), Some("ext4"));
    }

    /// The table is kept between creates, yet a mount made (or removed) since is seen at once:
    /// a kernel filesystem mounted inside a root after a first pin is refused by the next.
    #[test]
    fn the_kept_table_sees_every_mount_change() {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if !crate::test_util::require("root", root, "mounting needs root") {
            return;
        }
        // Not under /tmp, which other tests use as a root.
        let dir = PathBuf::from(format!("/var/tmp/acp-roots-kept-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        let has = |p: &Path| mounts().iter().any(|(m, _)| m == p);
        assert!(!has(&dir.join("proc")));
        pin(std::slice::from_ref(&dir), "o").unwrap();
        /// Unmounts the procfs however the test ends.
        struct Mounted(std::ffi::CString);
        impl Drop for Mounted {
            fn drop(&mut self) {
                // SAFETY: unmounting what the test mounted.
                unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
            }
        }
        let c = std::ffi::CString::new(dir.join("proc").to_str().unwrap()).unwrap();
        // SAFETY: mounting a procfs on our own fresh directory, unmounted by the guard.
        let r = unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c.as_ptr(),
                c"proc".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        let mounted = Mounted(c);
        let refused = pin(std::slice::from_ref(&dir), "o").map(|_| ());
        drop(mounted);
        let refused = refused.unwrap_err();
        assert!(
            refused.to_string().contains("contains a proc mount"),
            "{refused}"
        );
        assert!(!has(&dir.join("proc")), "the unmount is seen too");
        pin(std::slice::from_ref(&dir), "o").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nested_roots_merge_on_one_filesystem() {
        let dir = tempdir();
        let inner = dir.join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        let pinned = pin(&[inner.clone(), dir.clone(), dir.clone()], "o").unwrap();
        let paths: Vec<&Path> = pinned.roots.iter().map(|r| r.path.as_path()).collect();
        assert_eq!(paths, [dir.as_path()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_root_on_or_containing_proc_is_refused() {
        let e = pin(&[PathBuf::from("/proc/self")], "o").unwrap_err();
        assert!(
            e.to_string()
                .contains("o.writableRoots[0] `/proc/self` is on a proc"),
            "{e}"
        );
        // `/` contains /proc (and /sys).
        let e = pin(&[PathBuf::from("/")], "o").unwrap_err();
        assert!(e.to_string().contains("contains a"), "{e}");
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "acp-roots-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::canonicalize(d).unwrap()
    }
}
