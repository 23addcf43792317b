//! Core errors to JS errors (with `code`), and promises settled on the JS thread.

use napi::bindgen_prelude::*;
use napi::{Env, JsValue};

use crate::error::TermError;

/// Creates a JS string; pure ASCII (the common case) takes the cheaper one-byte path.
pub(super) fn js_string<'env>(env: &'env Env, s: &str) -> Result<Unknown<'env>> {
    if s.is_ascii() {
        Ok(env.create_string_latin1(s.as_bytes())?.to_unknown())
    } else {
        Ok(env.create_string(s)?.to_unknown())
    }
}

/// Builds a JS `Error` with `code` set, as a napi error that rejects/throws that object.
pub(super) fn js_error(env: &Env, e: TermError) -> Error {
    match env.create_error(Error::from_reason(e.message.clone())) {
        Ok(mut obj) => {
            if obj.set_named_property("code", e.code.as_str()).is_err() {
                return Error::from_reason(e.to_string());
            }
            if !e.details.is_empty() {
                let details = Object::new(env).and_then(|mut details| {
                    for (key, value) in &e.details {
                        details.set_named_property(key, value.as_str())?;
                    }
                    obj.set_named_property("details", details)
                });
                if details.is_err() {
                    return Error::from_reason(e.to_string());
                }
            }
            Error::from(obj.to_unknown())
        }
        Err(err) => err,
    }
}

/// A promise that rejects with `e` (with `code`). The rejection is settled from the runtime,
/// never synchronously inside the call: a promise rejected before the caller could attach a
/// handler is reported by Node as an unhandled rejection in some call paths.
pub(super) fn rejected<V: ToNapiValue>(env: &Env, e: TermError) -> Result<PromiseRaw<'_, V>> {
    settle(env, async move { Err::<(), _>(e) }, |_env, ()| {
        Err(Error::from_reason("acp-terminal: unreachable resolution"))
    })
}

/// Runs `fut` on the runtime and settles the promise on the JS thread, turning a core error
/// into a JS error with `code`.
pub(super) fn settle<T, V, F, M>(env: &Env, fut: F, map: M) -> Result<PromiseRaw<'_, V>>
where
    T: Send + 'static,
    V: ToNapiValue,
    F: std::future::Future<Output = std::result::Result<T, TermError>> + Send + 'static,
    M: FnOnce(&Env, T) -> Result<V> + 'static,
{
    env.spawn_future_with_callback(async move { Ok(fut.await) }, move |env, r| match r {
        Ok(v) => map(env, v),
        Err(e) => Err(js_error(env, e)),
    })
}
