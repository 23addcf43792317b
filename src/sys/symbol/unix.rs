//! Unix: `dlsym` over every object loaded in the process.

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

/// The address of the function (or object) `name` of the running process, if it has one.
pub fn lookup(name: &CStr) -> Option<NonNull<c_void>> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only looks a symbol up.
    NonNull::new(unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) })
}
