//! Unix's launch rules (the `rules` of [`super`]): a shell line is `/bin/sh -c <line>`,
//! environment names are exact, and a program is found as `execvp` finds it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::command::Lookup;

/// The shell a line runs in when the request names none.
pub fn default_shell() -> String {
    "/bin/sh".into()
}

/// The argv that runs `line` with `shell`: `<shell> -c <line>`.
pub fn shell_argv(shell: &str, line: &str) -> Vec<OsString> {
    vec![shell.into(), "-c".into(), line.into()]
}

/// The key environment names are compared by: the name itself.
pub fn env_key(name: &OsStr) -> OsString {
    name.to_owned()
}

/// The search path when the environment has no `PATH` (glibc's execvp).
pub fn default_path() -> OsString {
    "/bin:/usr/bin".into()
}

/// Whether `name` is a path (has a `/`) rather than a name to search `PATH` for.
pub fn is_path(name: &str) -> bool {
    name.contains('/')
}

fn is_executable_file(p: &Path) -> Option<bool> {
    let m = std::fs::metadata(p).ok()?;
    Some(m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds `name` like execvp: a path is taken relative to `cwd`, otherwise each `PATH` entry
/// is tried in order (an empty one is `cwd`). `_pathext` is Windows'.
pub fn find_program(name: &str, path_var: &OsStr, _pathext: Option<&OsStr>, cwd: &Path) -> Lookup {
    if is_path(name) {
        // `cwd/./x` → `cwd/x` (components() drops `.`; `..` is left to the kernel).
        let p: PathBuf = cwd.join(name).components().collect();
        return match is_executable_file(&p) {
            Some(true) => Lookup::Found(p),
            Some(false) => Lookup::NotExecutable,
            None => Lookup::NotFound,
        };
    }
    let mut denied = false;
    // The entries as written (`split_paths`' split on `:`), compared as bytes: comparing `Path`s
    // walks their components, which cost more than the lookups here.
    let mut tried: Vec<&[u8]> = Vec::new();
    // One buffer for every candidate (`cwd` joined with the entry, an empty entry being `cwd`
    // itself, then the name): this runs for each program word a command policy checks.
    let mut candidate = PathBuf::new();
    for dir in path_var.as_bytes().split(|&b| b == b':') {
        // An entry listed again answers as it did (execvp would look there again in vain).
        if tried.contains(&dir) {
            continue;
        }
        tried.push(dir);
        candidate.clear();
        candidate.push(cwd);
        candidate.push(OsStr::from_bytes(dir));
        candidate.push(name);
        match is_executable_file(&candidate) {
            Some(true) => return Lookup::Found(candidate),
            Some(false) if candidate.is_file() => denied = true,
            _ => {}
        }
    }
    if denied {
        Lookup::NotExecutable
    } else {
        Lookup::NotFound
    }
}

/// Whether the arguments can reach `program` exactly as given: always on Unix (argv is
/// passed as it is).
pub fn check_args(_program: &Path, _args: &[OsString]) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(file: &Path, mode: u32) {
        std::fs::write(file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    /// execvp's order: the first entry holding an executable file wins; an empty entry is the
    /// cwd, a relative one is taken from the cwd, a repeated one answers as the first time; a
    /// non-executable file is remembered only if nothing runs.
    #[test]
    fn programs_are_found_in_path_order_with_empty_relative_and_repeated_entries() {
        let root = std::env::temp_dir().join(format!("acp-find-{}", std::process::id()));
        let (a, b) = (root.join("a"), root.join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        write(&a.join("tool"), 0o644);
        write(&b.join("tool"), 0o755);
        write(&root.join("here"), 0o755);
        let find = |path: &str, name: &str| find_program(name, OsStr::new(path), None, &root);
        let found = |l: Lookup| match l {
            Lookup::Found(p) => Some(p),
            _ => None,
        };
        let b_tool = Some(b.join("tool"));
        assert_eq!(
            found(find(
                &format!("{0}:{0}/:{1}", a.display(), b.display()),
                "tool"
            )),
            b_tool
        );
        assert_eq!(found(find("a:b", "tool")), b_tool);
        assert_eq!(
            found(find("/nonexistent::b", "here")),
            Some(root.join("here"))
        );
        assert_eq!(found(find("/nonexistent:b", "here")), None);
        assert!(matches!(
            find("a:a:/nonexistent", "tool"),
            Lookup::NotExecutable
        ));
        assert!(matches!(find("/nonexistent", "tool"), Lookup::NotFound));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
