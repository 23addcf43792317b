//! The core entry point: a request, validated by the binding's conversion, becomes a running
//! terminal. The path of one request: [`crate::spawn::plan`] (checks and resolves program,
//! argv, environment, cwd) -> [`crate::containment::hold`] (what will hold it: cgroups, or a
//! job, and on Unix the rlimits) -> [`crate::spawn::spawn`] (descriptors, the sandbox if
//! asked for, then the platform launch, [`crate::sys::spawn::spawn`], whose steps put the
//! child in what the holder's `join` names) -> [`Containment::new`] (the guardian lists it;
//! it owns what the sandbox leaves) -> [`Terminal::new`] (the output pump and the input
//! queue).

use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

use crate::containment::{self, Containment};
use crate::error::TermError;
use crate::registry::next_id;
use crate::spawn::{self, SpawnRequest};
use crate::terminal::{Terminal, TerminalConfig};

/// Everything `createTerminal` was asked for, in core types.
#[derive(Debug, Clone, Default)]
pub struct TerminalRequest {
    /// What to run and how (command, args, env, cwd, shell, limits, pipes or pty).
    pub spawn: SpawnRequest,
    /// How the terminal keeps and delivers the output, and ends the command (its `id` is
    /// assigned by [`start`]).
    pub terminal: TerminalConfig,
}

/// Starts the request's command: plans it against the caller's environment (`inherited`)
/// and working directory (`default_cwd`), contains and spawns it, and starts its terminal.
/// Must run inside a tokio runtime. Nothing is left behind on failure.
pub fn start(
    req: &TerminalRequest,
    inherited: Vec<(OsString, OsString)>,
    default_cwd: &Path,
) -> Result<Arc<Terminal>, TermError> {
    let plan = spawn::plan(&req.spawn, inherited, default_cwd)?;
    let holder = containment::hold(&plan.limits)?;
    let (started, leader, sandbox) = spawn::spawn(&plan, &holder)?;
    let containment = Containment::new(holder.contain(leader, started.pty.is_some()), sandbox);
    // Where the directory it changed into is now (symlinks resolved), whatever the checked
    // path names by now.
    let cwd = crate::sys::cwd::dir_path(&plan.cwd_dir).unwrap_or_else(|_| plan.cwd.clone());
    let config = TerminalConfig {
        id: next_id(),
        ..req.terminal.clone()
    };
    Terminal::new(started, cwd, config, containment)
}

// renameat2(RENAME_EXCHANGE) is Linux's; nix offers it with glibc only.
#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};

    /// The ninth attack: a worker terminated while creates were on their way left the terminals
    /// whose start finished after its registry was emptied alive for good. A terminal recorded
    /// after `abandon_all` is killed as it is recorded.
    #[tokio::test]
    async fn a_terminal_recorded_after_the_environment_went_away_is_killed() {
        use crate::exit::ExitStatus;
        use crate::registry::Registry;
        let sleeper = || {
            let req = TerminalRequest {
                spawn: SpawnRequest {
                    command: "sleep 30".into(),
                    ..Default::default()
                },
                terminal: Default::default(),
            };
            start(&req, Vec::new(), std::path::Path::new("/")).unwrap()
        };
        let reg = Registry::new();
        let before = sleeper();
        assert!(reg.insert(&before));
        assert_eq!(reg.abandon_all(), 1);
        let late = sleeper();
        assert!(!reg.insert(&late), "the environment is gone");
        for t in [&before, &late] {
            let status =
                tokio::time::timeout(std::time::Duration::from_secs(10), t.wait_for_exit())
                    .await
                    .expect("killed at once");
            assert_eq!(status, ExitStatus::signaled(libc::SIGKILL));
        }
    }

    /// The allowedRoots race: the checked directory is exchanged (atomically, over and over)
    /// with a symlink to a directory outside the root while terminals are created in it.
    /// Every command either is refused or starts inside the root.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_cwd_swapped_for_a_symlink_never_starts_a_command_outside_the_roots() {
        swap_race(None).await;
    }

    /// The same race with a sandbox: the directory is looked up again by its path inside the
    /// new mount tree, where the swap can land too; only the very directory that was checked
    /// may be used.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_cwd_swapped_for_a_symlink_never_starts_a_sandboxed_command_outside_the_roots() {
        let s = crate::sandbox::support();
        // A skip is a result: it says why, and fails in strict mode.
        if !crate::test_util::require(
            "landlock",
            s.landlock_abi >= 3,
            "no Landlock filesystem rules (ABI < 3)",
        ) || !crate::test_util::require(
            "userns",
            s.process_isolation.is_some(),
            "no namespaces can be made here",
        ) {
            return;
        }
        swap_race(Some(crate::sandbox::SandboxSpec::default())).await;
    }

    async fn swap_race(sandbox: Option<crate::sandbox::SandboxSpec>) {
        let tag = if sandbox.is_some() { "sbx" } else { "plain" };
        let base = std::env::temp_dir().join(format!("acp-cwd-race-{tag}-{}", std::process::id()));
        let root = base.join("root");
        let checked = root.join("work");
        let link = root.join("link");
        let outside = base.join("outside");
        std::fs::create_dir_all(&checked).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        // (a sandbox hides the host's /tmp: the root is a writable root, so that it is there)
        let sandbox = sandbox.map(|mut s| {
            s.writable_roots = vec![root.to_string_lossy().into_owned()];
            s
        });
        let root_real = std::fs::canonicalize(&root).unwrap();
        let inside = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&checked).unwrap().ino()
        };

        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swaps = std::sync::Arc::new(AtomicUsize::new(0));
        let swapper = {
            let (stop, swaps, checked, link) =
                (stop.clone(), swaps.clone(), checked.clone(), link.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    renameat2(
                        AT_FDCWD,
                        &checked,
                        AT_FDCWD,
                        &link,
                        RenameFlags::RENAME_EXCHANGE,
                    )
                    .unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let (mut started, mut refused, mut escapes) = (0, 0, 0);
        // At least 1,000 creates, and enough of them started (a refusal is much quicker than
        // a start, so refusals dominate the count).
        while started + refused < 1000 || (started < 100 && refused < 100_000) {
            let req = TerminalRequest {
                spawn: SpawnRequest {
                    // The directory by its identity too: its name changes with every swap.
                    command: "pwd -P; stat -c %i .".into(),
                    cwd: Some(checked.to_string_lossy().into_owned()),
                    allowed_roots: Some(vec![root.to_string_lossy().into_owned()]),
                    sandbox: sandbox.clone(),
                    ..Default::default()
                },
                terminal: TerminalConfig {
                    kill_grace: Duration::from_secs(2),
                    ..Default::default()
                },
            };
            match start(&req, Vec::new(), Path::new("/")) {
                Ok(t) => {
                    t.wait_for_exit().await;
                    let out = t.raw_output().0.decode().output;
                    let mut lines = out.lines();
                    let ran_in = Path::new(lines.next().unwrap_or(""));
                    let ino = lines.next().and_then(|l| l.parse::<u64>().ok());
                    if !ran_in.starts_with(&root_real)
                        || !t.cwd().starts_with(&root_real)
                        || ino != Some(inside)
                    {
                        escapes += 1;
                    }
                    started += 1;
                    t.mark_released();
                    t.finish_release().await;
                }
                Err(e) => {
                    assert!(
                        e.code == crate::error::ERR_CWD_OUTSIDE_ROOTS
                            || e.code == crate::error::ERR_INVALID_CWD,
                        "{e}"
                    );
                    refused += 1;
                }
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        eprintln!(
            "{tag}: {started} started, {refused} refused, {} swaps",
            swaps.load(Ordering::Relaxed)
        );
        assert_eq!(escapes, 0, "{escapes} commands started outside the root");
        assert!(started > 0 && refused > 0, "the race happened both ways");
        std::fs::remove_dir_all(&base).unwrap();
    }
}
