//! The name a system error is reported under (a `TermError`'s `code`): the errno name on Unix
//! (`ENOENT`); on Windows the errno name Node reports for the Win32 error
//! (`ERROR_FILE_NOT_FOUND` is `ENOENT` there too), so a client reads the same codes everywhere.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

/// The name of OS error `raw` (what `io::Error::raw_os_error` answers).
pub fn name(raw: i32) -> String {
    imp::name(raw)
}
