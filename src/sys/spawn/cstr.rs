//! C strings for a launch (every string a child gets is prepared in the parent).

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Converts an OS string to a C string (callers have already rejected NUL bytes).
pub fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Builds `NAME=value` entries.
pub fn envp(env: &[(OsString, OsString)]) -> io::Result<Vec<CString>> {
    env.iter()
        .map(|(k, v)| {
            let mut b = Vec::with_capacity(k.len() + v.len() + 1);
            b.extend_from_slice(k.as_bytes());
            b.push(b'=');
            b.extend_from_slice(v.as_bytes());
            CString::new(b).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
        })
        .collect()
}

/// Converts a path to a C string.
pub fn cpath(p: &Path) -> io::Result<CString> {
    cstring(p.as_os_str())
}
