//! JS strings of output. A large ASCII output (the usual case: logs, build output) is handed to
//! V8 as an *external* latin1 string that points at the Rust buffer instead of being copied
//! into the JS heap (`node_api_create_external_string_latin1`, Node 20.4+; looked up at run
//! time through [`crate::sys::symbol`], so a Node without it falls back to copying).
//!
//! Lifetime: the buffer is moved into the string and freed by its finalizer (when V8 collects
//! the string, or at once if V8 chose to copy after all); nothing else holds or mutates it, so
//! it stays immutable for as long as JS can see the string.

use std::ffi::{c_char, c_void};
use std::sync::OnceLock;

use napi::bindgen_prelude::*;
use napi::{sys, Env};

use super::errors::js_string;

/// Below this, copying is as cheap as anything (and V8 copies short strings anyway).
const EXTERNAL_MIN: usize = 16 * 1024;

type CreateExternalLatin1 = unsafe extern "C" fn(
    sys::napi_env,
    *const c_char,
    isize,
    sys::napi_finalize,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// `node_api_create_external_string_latin1` of the running Node, if it has one.
fn external_latin1() -> Option<CreateExternalLatin1> {
    static FOUND: OnceLock<Option<CreateExternalLatin1>> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let p = crate::sys::symbol::lookup(c"node_api_create_external_string_latin1")?;
        // SAFETY: the symbol is Node-API's function, whose C signature (node_api.h) is
        // exactly `CreateExternalLatin1`.
        Some(unsafe { std::mem::transmute::<std::ptr::NonNull<c_void>, CreateExternalLatin1>(p) })
    })
}

/// Frees the buffer of an external string: `data` and `hint` (the length) are what
/// [`output_string`] passed, from `Box::<[u8]>::into_raw`.
unsafe extern "C" fn free_buffer(env: sys::napi_env, data: *mut c_void, hint: *mut c_void) {
    let len = hint as usize;
    adjust_external_memory(env, -(len as i64));
    // SAFETY: `data`/`len` come from `Box::<[u8]>::into_raw` in `output_string`, and V8 calls
    // the finalizer exactly once.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data.cast::<u8>(), len)) });
}

/// Tells V8 how much memory outside its heap its strings keep alive (`change` bytes more).
fn adjust_external_memory(env: sys::napi_env, change: i64) {
    let mut total = 0;
    // SAFETY: a Node-API call with a valid environment; it touches no JS value, so it is also
    // allowed from a finalizer.
    unsafe { sys::napi_adjust_external_memory(env, change, &mut total) };
}

/// The JS string of `s`: external (no copy) when it is large ASCII (`ascii`: the caller checked
/// it, [`crate::output::RawSnapshot::decode_ascii`]) and Node can, else copied.
pub(super) fn output_string(env: &Env, s: String, ascii: bool) -> Result<Unknown<'_>> {
    let Some(create) = external_latin1().filter(|_| s.len() >= EXTERNAL_MIN && ascii) else {
        return js_string(env, &s);
    };
    let len = s.len();
    // V8 does not know the buffer's size: tell it, so that garbage collection keeps up with a
    // client that polls a flood (each poll of changed output makes a new string). The
    // finalizer gives it back (it runs at once if V8 copies after all).
    adjust_external_memory(env.raw(), len as i64);
    let data = Box::into_raw(s.into_bytes().into_boxed_slice()).cast::<u8>();
    let mut value = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `data` points at `len` bytes of ASCII (valid latin1) that stay untouched until
    // `free_buffer` runs; on success V8 owns them through the finalizer, even if it copied.
    let status = unsafe {
        create(
            env.raw(),
            data.cast::<c_char>(),
            len as isize,
            Some(free_buffer),
            len as *mut c_void,
            &mut value,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok {
        // Not created: the finalizer will never run; take the buffer back and copy it.
        adjust_external_memory(env.raw(), -(len as i64));
        // SAFETY: as in `free_buffer`; ownership was not transferred.
        let bytes = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len)) };
        let s = String::from_utf8_lossy(&bytes);
        return js_string(env, &s);
    }
    // SAFETY: `value` is a string napi just created in this environment.
    unsafe { Unknown::from_napi_value(env.raw(), value) }
}
