//! Windows: `GetProcAddress` on the executable's own module (a Node addon's host is node.exe,
//! which exports Node-API; an embedding executable exports it the same way).

use std::ffi::{c_void, CStr};
use std::ptr::NonNull;

use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

/// The address of the function `name` that the process's executable exports, if it does.
pub fn lookup(name: &CStr) -> Option<NonNull<c_void>> {
    // SAFETY: a null name asks for the executable's module, which stays loaded for the life
    // of the process (the handle is not counted and needs no release).
    let module = unsafe { GetModuleHandleW(std::ptr::null()) };
    if module.is_null() {
        return None;
    }
    // SAFETY: a valid module handle and a NUL-terminated name; the call only looks it up.
    let found = unsafe { GetProcAddress(module, name.as_ptr().cast()) }?;
    NonNull::new(found as *mut c_void)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_is_not_found() {
        assert!(lookup(c"acp_terminal_no_such_function").is_none());
    }
}
