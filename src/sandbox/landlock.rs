//! The Landlock ruleset of a sandboxed terminal, built in the parent with the `landlock`
//! crate and handed to the child as a file descriptor (the child only calls
//! `landlock_restrict_self` on it).
//!
//! It is the second wall behind the read-only mount tree ([`super::mounts`]). Rules: everything
//! is readable and executable; writing (and creating, removing, renaming, truncating) is
//! allowed only beneath the writable roots and the private /tmp (its rule is added by the
//! launch, once the tmpfs exists: see [`super::namespaces`]), and on
//! /dev/null, /dev/zero, /dev/full, /dev/tty and the terminal's own pty. Device nodes cannot
//! be created anywhere. With `network: false` and ABI >= 4, TCP bind and connect are refused;
//! with ABI >= 6 signals and abstract unix sockets are scoped to the terminal (a Landlock
//! domain also refuses ptrace of processes outside it, at every ABI).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

/// Files outside the roots the command may still write (when they exist).
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"];

/// `/` and the [`WRITABLE_DEVICES`] that exist, opened (`O_PATH`) once per process: the same
/// inodes every ruleset names (what a launch binds at those paths are the host's same device
/// nodes), without five opens and closes per launch.
fn fixed_paths() -> Result<&'static (PathFd, Vec<PathFd>), String> {
    static FIXED: OnceLock<Result<(PathFd, Vec<PathFd>), String>> = OnceLock::new();
    FIXED
        .get_or_init(|| {
            let slash = PathFd::new("/").map_err(|e| e.to_string())?;
            let devices = WRITABLE_DEVICES
                .iter()
                .filter_map(|d| PathFd::new(d).ok())
                .collect();
            Ok((slash, devices))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Builds the ruleset for `abi` (>= 3, checked by the caller); also returns the access a
/// directory beneath which everything may be written gets (for the private /tmp).
pub fn ruleset(
    abi: u32,
    roots: &super::roots::Roots,
    tty: Option<BorrowedFd<'_>>,
    network: bool,
    proxy_port: Option<u16>,
) -> Result<(OwnedFd, u64), String> {
    let abi = ABI::from(abi as i32);
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let dirs = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let file = AccessFs::from_file(abi) & !AccessFs::Execute;
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| err(&e))?;
    if !network && abi >= ABI::V4 {
        rs = rs
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| err(&e))?;
    }
    if abi >= ABI::V6 {
        rs = rs
            .scope(Scope::Signal | Scope::AbstractUnixSocket)
            .map_err(|e| err(&e))?;
    }
    let mut created = rs.create().map_err(|e| err(&e))?;
    if let (false, true, Some(port)) = (network, abi >= ABI::V4, proxy_port) {
        // Behind the proxy: TCP connects to its port only (in the namespace: the proxy).
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(|e| err(&e))?;
    }
    let (slash, devices) = fixed_paths()?;
    created = created
        .add_rule(PathBeneath::new(slash.as_fd(), read))
        .map_err(|e| err(&e))?;
    for root in &roots.roots {
        // The pinned directory itself, not its path looked up again.
        created = created
            .add_rule(PathBeneath::new(root.fd.as_fd(), dirs))
            .map_err(|e| err(&e))?;
    }
    for dev in devices {
        created = created
            .add_rule(PathBeneath::new(dev.as_fd(), file))
            .map_err(|e| err(&e))?;
    }
    if let Some(tty) = tty {
        created = created
            .add_rule(PathBeneath::new(tty, file))
            .map_err(|e| err(&e))?;
    }
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| "the kernel did not create a Landlock ruleset".to_string())?;
    Ok((fd, dirs.bits()))
}
