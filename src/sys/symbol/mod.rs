//! Looking up a function of the host process by name at run time (a Node-API function that an
//! older Node lacks): Unix `dlsym(RTLD_DEFAULT, ..)`; Windows `GetProcAddress` on the
//! executable's module (node.exe, which exports the `napi_*` and `node_api_*` functions).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::lookup;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::lookup;

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn finds_a_function_of_the_process_and_not_an_unknown_name() {
        let found = lookup(c"malloc").expect("malloc is in every Unix process");
        // SAFETY: `found` is `malloc`, whose C signature is exactly this one; the block is
        // freed with `free` at once.
        unsafe {
            let malloc = std::mem::transmute::<
                std::ptr::NonNull<std::ffi::c_void>,
                unsafe extern "C" fn(usize) -> *mut std::ffi::c_void,
            >(found);
            let p = malloc(8);
            assert!(!p.is_null());
            libc::free(p);
        }
        assert!(lookup(c"acp_terminal_no_such_function").is_none());
    }
}
