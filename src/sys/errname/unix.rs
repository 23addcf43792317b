//! Unix: the errno's own name, as `nix` spells it (`ENOENT`, `EACCES`).

pub(super) fn name(raw: i32) -> String {
    format!("{:?}", nix::errno::Errno::from_raw(raw))
}
