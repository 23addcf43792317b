//! Windows: Git for Windows' `bash.exe`, through this process's `PATH` (with `PATHEXT`), then
//! in `%ProgramFiles%`, `%ProgramFiles(x86)%` and `%LocalAppData%\Programs` (`Git\bin`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::NotFound;
use crate::sys::spawn::wincmd::{find_bash, DEFAULT_PATHEXT};

/// The `bash.exe` a session runs, or where none was found.
pub fn session_bash() -> Result<String, NotFound> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let text = |v: OsString| v.to_string_lossy().into_owned();
    let path = var("PATH").map(text).unwrap_or_default();
    let pathext = var("PATHEXT")
        .map(text)
        .unwrap_or_else(|| DEFAULT_PATHEXT.to_string());
    let system_root = var("SystemRoot")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("C:\\Windows"));
    let installs: Vec<PathBuf> = [
        var("ProgramFiles").map(PathBuf::from),
        var("ProgramFiles(x86)").map(PathBuf::from),
        var("LOCALAPPDATA").map(|d| Path::new(&d).join("Programs")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if let Some(bash) = find_bash(&path, &pathext, &system_root, &installs, |p| p.is_file()) {
        return Ok(bash.to_string_lossy().into_owned());
    }
    let dirs: Vec<String> = installs
        .iter()
        .map(|d| d.join("Git").join("bin").display().to_string())
        .collect();
    Err(NotFound {
        searched: format!(
            "PATH (without WSL's {}) and {}",
            system_root.join("System32").join("bash.exe").display(),
            dirs.join(", ")
        ),
    })
}
