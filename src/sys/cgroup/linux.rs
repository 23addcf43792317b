//! Per-terminal cgroups (cgroup v2), where the system lets us create them: every process a
//! command starts stays in its terminal's cgroup even after `setsid` or a double fork, so kill
//! and release reach all of them (`cgroup.kill`). Where cgroups are not writable, terminals
//! fall back to their process group alone.
//!
//! Layout: `<our own cgroup>/acp-terminal-<pid>/<terminal id>`; the per-process directory is
//! created on first use and removed by the guardian when the process ends.

use std::ffi::CString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// One terminal's cgroup directory.
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
}

/// Where this process may create terminal cgroups, if anywhere.
pub fn base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        if std::env::var_os("ACP_TERMINAL_NO_CGROUP").is_some() {
            return None;
        }
        let dir = per_process_dir(&cgroup2_mount()?, &own_cgroup()?)?;
        // Moving a process in needs write access to cgroup.procs of both ends; check ours.
        let probe = dir.join("probe");
        let ok = std::fs::create_dir(&probe).is_ok() && probe.join("cgroup.procs").exists();
        let _ = std::fs::remove_dir(&probe);
        ok.then_some(dir)
    })
    .as_deref()
}

/// Where per-terminal process-count cgroups can be created: the v2 base when its `pids`
/// controller can be enabled, else a cgroup v1 `pids` hierarchy.
pub fn pids_base() -> Option<&'static Path> {
    static BASE: OnceLock<Option<PathBuf>> = OnceLock::new();
    BASE.get_or_init(|| {
        if std::env::var_os("ACP_TERMINAL_NO_CGROUP").is_some() {
            return None;
        }
        if let Some(v2) = base() {
            let enabled = std::fs::OpenOptions::new()
                .write(true)
                .open(v2.join("cgroup.subtree_control"))
                .and_then(|mut f| f.write_all(b"+pids"))
                .is_ok();
            if enabled {
                return Some(v2.to_path_buf());
            }
        }
        per_process_dir(&v1_mount("pids")?, &own_v1_cgroup("pids")?)
    })
    .as_deref()
}

fn v1_mount(controller: &str) -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split_whitespace();
        if r.next()? != "cgroup" {
            return None;
        }
        let opts = r.nth(1)?;
        if !opts.split(',').any(|o| o == controller) {
            return None;
        }
        left.split_whitespace().nth(4).map(PathBuf::from)
    })
}

fn own_v1_cgroup(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, ctrls, path) = (f.next()?, f.next()?, f.next()?);
        ctrls
            .split(',')
            .any(|c| c == controller)
            .then(|| path.to_string())
    })
}

/// A per-terminal cgroup whose `pids.max` caps how many processes the command may have at
/// once (unlike `RLIMIT_NPROC`, per terminal, and enforced for root too).
#[derive(Debug)]
pub struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Creates one capped at `max` processes, where a pids controller is available. Where the
    /// v2 cgroup of the terminal has the controller, `v2` is used instead of a new directory.
    pub fn create(max: u64, v2: Option<&Cgroup>) -> Option<PidsCgroup> {
        let base = pids_base()?;
        let own_dir = match v2 {
            Some(cg) if cg.dir().starts_with(base) => None,
            _ => {
                static NEXT: AtomicU64 = AtomicU64::new(1);
                let dir = base.join(format!("p{}", NEXT.fetch_add(1, Ordering::Relaxed)));
                std::fs::create_dir(&dir).ok()?;
                Some(dir)
            }
        };
        let dir = own_dir
            .clone()
            .or_else(|| v2.map(|c| c.dir().to_path_buf()))?;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join("pids.max"))
            .and_then(|mut f| f.write_all(max.to_string().as_bytes()))
            .is_ok();
        if !written {
            if let Some(d) = own_dir {
                let _ = std::fs::remove_dir(d);
            }
            return None;
        }
        Some(PidsCgroup { dir })
    }

    /// `cgroup.procs`, for the child to join before exec.
    pub fn procs_path(&self) -> Option<CString> {
        procs_file(&self.dir)
    }

    /// Pids of the processes in it.
    pub fn pids(&self) -> Vec<i32> {
        read_pids(&self.dir)
    }
}

/// The `cgroup.procs` file of a cgroup directory, as a C string for the launcher.
fn procs_file(dir: &Path) -> Option<CString> {
    crate::sys::spawn::cpath(&dir.join("cgroup.procs")).ok()
}

/// Pids listed in a cgroup directory's `cgroup.procs` (exited processes are not listed).
fn read_pids(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

impl Drop for PidsCgroup {
    /// Bookkeeping only (the terminal's containment killed what was in it): a v2 terminal
    /// cgroup goes back to the pool uncapped; a v1 directory is removed once empty.
    fn drop(&mut self) {
        if self.dir.join("cgroup.kill").exists() {
            let _ = std::fs::write(self.dir.join("pids.max"), b"max");
            return;
        }
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

/// Creates (or finds) `<mount>/<own cgroup>/acp-terminal-<pid>`; None where not writable.
fn per_process_dir(mount: &Path, own: &str) -> Option<PathBuf> {
    let dir = mount
        .join(own.trim_start_matches('/'))
        .join(format!("acp-terminal-{}", std::process::id()));
    match std::fs::create_dir(&dir) {
        Ok(()) => Some(dir),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Some(dir),
        Err(_) => None,
    }
}

fn cgroup2_mount() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|l| {
        // "... mount-point ... - fstype source options"
        let (left, right) = l.split_once(" - ")?;
        if right.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        left.split_whitespace().nth(4).map(PathBuf::from)
    })
}

fn own_cgroup() -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .map(|p| p.to_string())
}

/// Empty cgroups kept for reuse: creating and removing a cgroup costs about a millisecond
/// each (the kernel synchronizes on RCU), more than the rest of a spawn.
static POOL: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// How many empty cgroups are kept.
const POOL_MAX: usize = 256;

impl Cgroup {
    /// A cgroup for a new terminal (reused from the pool or created), if cgroups are
    /// available.
    pub fn create() -> Option<Cgroup> {
        let base = base()?;
        if let Some(dir) = POOL.lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Some(Cgroup { dir });
        }
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let dir = base.join(format!("t{}", NEXT.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir).ok()?;
        Some(Cgroup { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `cgroup.procs`, for the child to join before exec.
    pub fn procs_path(&self) -> Option<CString> {
        procs_file(&self.dir)
    }

    /// Pids of the processes in the cgroup (exited ones are not listed).
    pub fn pids(&self) -> Vec<i32> {
        read_pids(&self.dir)
    }

    /// True while some process is in the cgroup.
    pub fn populated(&self) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.events"))
            .map(|s| s.lines().any(|l| l == "populated 1"))
            .unwrap_or(false)
    }

    /// SIGKILLs every process in the cgroup.
    pub fn kill_all(&self) -> bool {
        std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.kill"))
            .and_then(|mut f| f.write_all(b"1"))
            .is_ok()
    }
}

impl Drop for Cgroup {
    /// Bookkeeping only (the terminal's containment killed what was in it): an empty cgroup
    /// goes back to the pool (or is removed when the pool is full); one still populated
    /// cannot be removed and is left to the guardian's cleanup.
    fn drop(&mut self) {
        if self.populated() {
            return;
        }
        let mut pool = POOL.lock().unwrap_or_else(|p| p.into_inner());
        if pool.len() < POOL_MAX {
            pool.push(std::mem::take(&mut self.dir));
            return;
        }
        drop(pool);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_holds_escaped_processes_when_available() {
        let cg = Cgroup::create();
        let reason = "no cgroup v2 this process may create";
        if !crate::test_util::require("cgroups", cg.is_some(), reason) {
            return;
        }
        let cg = cg.unwrap();
        let dir = cg.dir().to_path_buf();
        let mut s = std::process::Command::new("/bin/sh");
        let script = format!(
            "echo 0 > {}/cgroup.procs; setsid sleep 30 & exec sleep 30",
            dir.display()
        );
        s.args(["-c", &script]);
        let mut child = s.spawn().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while cg.pids().len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(cg.pids().len(), 2);
        assert!(cg.populated());
        assert!(cg.kill_all());
        child.wait().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while cg.populated() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!cg.populated());
        drop(cg);
        // An empty cgroup goes back to the pool, and is handed out again.
        let again = Cgroup::create().unwrap();
        assert_eq!(again.dir(), dir);
        // This test process has no guardian: remove what it created.
        let _ = std::fs::remove_dir(&dir);
        std::mem::forget(again);
        let _ = std::fs::remove_dir(base().unwrap());
    }
}
