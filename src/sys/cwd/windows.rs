//! Windows: a working directory is checked through a handle opened WITHOUT delete sharing:
//! while the handle is open, nobody can rename, move or delete that directory, so the path
//! `CreateProcessW` is given (there is no "change into a handle" on Windows) is the directory
//! that was checked. The caller keeps the handle until the launch returned.

use std::io;
use std::os::windows::ffi::{OsStrExt, OsStringExt};
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{ERROR_DIRECTORY, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, GetFileInformationByHandle, GetFinalPathNameByHandleW, BY_HANDLE_FILE_INFORMATION,
    FILE_ATTRIBUTE_DIRECTORY, FILE_FLAG_BACKUP_SEMANTICS, FILE_NAME_NORMALIZED,
    FILE_READ_ATTRIBUTES, FILE_SHARE_READ, FILE_SHARE_WRITE, FILE_TRAVERSE, OPEN_EXISTING,
};

/// Opens directory `path`, pinning it (no `FILE_SHARE_DELETE`) until the handle is dropped.
/// Anything but a directory fails with `ERROR_DIRECTORY`.
pub fn open_dir(path: &Path) -> io::Result<OwnedHandle> {
    let name: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: a NUL-terminated name; null security attributes and template. Backup
    // semantics are what opening a directory takes.
    let raw = unsafe {
        CreateFileW(
            name.as_ptr(),
            FILE_TRAVERSE | FILE_READ_ATTRIBUTES,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            FILE_FLAG_BACKUP_SEMANTICS,
            std::ptr::null_mut(),
        )
    };
    if raw == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a valid handle, now owned.
    let handle = unsafe { OwnedHandle::from_raw_handle(raw) };
    // SAFETY: plain data, filled in by the call.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a valid handle and an out-structure.
    if unsafe { GetFileInformationByHandle(handle.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(io::Error::from_raw_os_error(ERROR_DIRECTORY as i32));
    }
    Ok(handle)
}

/// Where an open directory is now, as a plain drive or UNC path (symlinks and junctions
/// resolved; the `\\?\` prefix Windows answers with removed).
pub fn dir_path(dir: &OwnedHandle) -> io::Result<PathBuf> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: `buf` holds `buf.len()` code units; the call writes at most that many.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                dir.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            buf.truncate(n);
            let plain = crate::sys::spawn::wincmd::strip_verbatim(&buf);
            return Ok(PathBuf::from(std::ffi::OsString::from_wide(&plain)));
        }
        // Too small: `n` is the size needed, terminating NUL included.
        buf.resize(n, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_directory_is_pinned_and_names_where_it_is() {
        let tmp = std::env::temp_dir().join(format!("acp-cwd-{}", std::process::id()));
        let moved = tmp.with_extension("moved");
        // Ids repeat across runs (a fresh Wine server starts them over): no leftovers.
        let _ = std::fs::remove_dir_all(&tmp);
        let _ = std::fs::remove_dir_all(&moved);
        std::fs::create_dir_all(&tmp).unwrap();
        let dir = open_dir(&tmp).unwrap();
        // std's canonicalize answers the verbatim form of the same final path.
        let canonical: Vec<u16> = std::fs::canonicalize(&tmp)
            .unwrap()
            .as_os_str()
            .encode_wide()
            .collect();
        let plain = crate::sys::spawn::wincmd::strip_verbatim(&canonical);
        assert_eq!(
            dir_path(&dir).unwrap(),
            PathBuf::from(std::ffi::OsString::from_wide(&plain))
        );
        // Pinned: it cannot be renamed away while the handle is open.
        assert!(std::fs::rename(&tmp, &moved).is_err());
        drop(dir);
        std::fs::rename(&tmp, &moved).unwrap();
        std::fs::remove_dir(&moved).unwrap();
        let file = std::env::temp_dir().join(format!("acp-cwd-file-{}", std::process::id()));
        std::fs::write(&file, b"x").unwrap();
        let e = open_dir(&file).unwrap_err();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(e.raw_os_error(), Some(ERROR_DIRECTORY as i32));
    }
}
