//! Windows: the Win32 errors a terminal can meet, by the errno name Node (libuv) reports for
//! each; any other is `UNKNOWN`, as in Node (the message keeps the number).

use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_ALREADY_EXISTS, ERROR_BAD_EXE_FORMAT, ERROR_BAD_PATHNAME,
    ERROR_BAD_PIPE, ERROR_BROKEN_PIPE, ERROR_DIRECTORY, ERROR_DIR_NOT_EMPTY,
    ERROR_ELEVATION_REQUIRED, ERROR_FILENAME_EXCED_RANGE, ERROR_FILE_EXISTS, ERROR_FILE_NOT_FOUND,
    ERROR_INVALID_HANDLE, ERROR_INVALID_NAME, ERROR_INVALID_PARAMETER, ERROR_MOD_NOT_FOUND,
    ERROR_NOACCESS, ERROR_NOT_ENOUGH_MEMORY, ERROR_NOT_SUPPORTED, ERROR_NO_DATA,
    ERROR_OPERATION_ABORTED, ERROR_OUTOFMEMORY, ERROR_PATH_NOT_FOUND, ERROR_SHARING_VIOLATION,
    ERROR_TOO_MANY_OPEN_FILES,
};

pub fn name(raw: i32) -> String {
    let name = match raw as u32 {
        ERROR_FILE_NOT_FOUND | ERROR_PATH_NOT_FOUND | ERROR_INVALID_NAME | ERROR_BAD_PATHNAME
        | ERROR_MOD_NOT_FOUND => "ENOENT",
        ERROR_ACCESS_DENIED => "EPERM",
        ERROR_NOACCESS | ERROR_ELEVATION_REQUIRED => "EACCES",
        ERROR_DIRECTORY => "ENOTDIR",
        ERROR_FILE_EXISTS | ERROR_ALREADY_EXISTS => "EEXIST",
        ERROR_DIR_NOT_EMPTY => "ENOTEMPTY",
        ERROR_FILENAME_EXCED_RANGE => "ENAMETOOLONG",
        ERROR_NO_DATA | ERROR_BAD_PIPE => "EPIPE",
        ERROR_BROKEN_PIPE => "EOF",
        ERROR_NOT_ENOUGH_MEMORY | ERROR_OUTOFMEMORY => "ENOMEM",
        ERROR_INVALID_PARAMETER => "EINVAL",
        ERROR_INVALID_HANDLE => "EBADF",
        ERROR_TOO_MANY_OPEN_FILES => "EMFILE",
        ERROR_NOT_SUPPORTED => "ENOTSUP",
        ERROR_SHARING_VIOLATION => "EBUSY",
        ERROR_OPERATION_ABORTED => "ECANCELED",
        ERROR_BAD_EXE_FORMAT => "EFTYPE",
        _ => "UNKNOWN",
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win32_errors_read_as_node_reports_them() {
        // A real failure first: what opening a missing file answers under this Windows.
        let missing = std::env::temp_dir().join("acp-terminal-no-such-file");
        let e = std::fs::File::open(&missing).unwrap_err();
        assert_eq!(name(e.raw_os_error().unwrap()), "ENOENT");
        let e = std::fs::File::open(missing.join("below")).unwrap_err();
        assert_eq!(name(e.raw_os_error().unwrap()), "ENOENT");
        assert_eq!(name(ERROR_ACCESS_DENIED as i32), "EPERM");
        assert_eq!(name(ERROR_DIRECTORY as i32), "ENOTDIR");
        assert_eq!(name(ERROR_NO_DATA as i32), "EPIPE");
        assert_eq!(name(ERROR_BAD_EXE_FORMAT as i32), "EFTYPE");
        assert_eq!(name(0x7fff_0000), "UNKNOWN");
    }
}
