//! Display safety for JS: `sanitizeForDisplay()`, the streaming `DisplayFilter` class, and the
//! `display` option of `onOutput` (the filter itself is [`crate::output::display`]).

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use super::args::*;
use super::errors::js_error;
use crate::error::TermError;
use crate::output::display::{DisplayFilter as Filter, DisplayOptions};

/// Options of `sanitizeForDisplay()` and `new DisplayFilter()`.
#[napi(object, object_to_js = false)]
#[allow(dead_code)] // the options' type in index.d.ts; read field by field (`display_options`)
pub struct DisplayFilterOptions {
    /// Keep window and icon title changes (OSC 0, 1, 2) with printable text (default false).
    #[napi(ts_type = "boolean | null")]
    pub allow_title: Option<bool>,
}

/// Reads `options` (`undefined`, `null` or `{ allowTitle }`).
pub(super) fn display_options(options: Option<&Unknown>, field: &str) -> Parsed<DisplayOptions> {
    let Some(o) = options.filter(|o| !is_nullish(o).unwrap_or(true)) else {
        return Ok(DisplayOptions::default());
    };
    let o = as_object(o, field)?;
    let allow_title = opt_bool(&o, "allowTitle", &format!("{field}.allowTitle"))?;
    Ok(DisplayOptions {
        allow_title: allow_title.unwrap_or(false),
    })
}

/// Reads `onOutput`'s `display` option: `'raw'` (default) or `'safe'`.
pub(super) fn display_mode(display: Option<&str>) -> Parsed<bool> {
    match display {
        None | Some("raw") => Ok(false),
        Some("safe") => Ok(true),
        Some(other) => Err(TermError::invalid_arg(format!(
            "options.display must be 'raw' or 'safe', got {other:?}"
        ))),
    }
}

/// Output made safe to write to a real terminal (a string, as UTF-8, or bytes; the whole
/// output at once: use `DisplayFilter` for a stream). Keeps text, colours (SGR) and cursor
/// movement; drops what acts on the user's terminal: OSC strings (clipboard OSC 52, colour
/// queries, hyperlinks; titles unless `allowTitle`), DCS/SOS/PM/APC strings, queries that make
/// the terminal answer (DA, DSR/CPR, DECRQSS, XTVERSION, window reports), mode changes, charset
/// switches, resets, C1 controls. Invalid UTF-8 becomes U+FFFD. Throws `ERR_INVALID_ARG`.
#[napi(ts_args_type = "data: string | Uint8Array, options?: DisplayFilterOptions | null")]
pub fn sanitize_for_display(env: &Env, data: Unknown, options: Option<Unknown>) -> Result<String> {
    let parsed = input_bytes(&data).and_then(|bytes| {
        let opts = display_options(options.as_ref(), "options")?;
        Ok(Filter::filter_all(opts, &bytes))
    });
    let out = parsed.map_err(|e| js_error(env, e))?;
    // The filter's output is valid UTF-8 by construction.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}

/// A streaming `sanitizeForDisplay()`: `write(chunk)` returns what is safe to show of each
/// chunk in turn; a sequence cut by a chunk boundary is completed by the next chunk (so a
/// stream split anywhere gives the same output as the whole).
#[napi]
pub struct DisplayFilter {
    filter: Filter,
}

#[napi]
impl DisplayFilter {
    /// A filter at the start of a stream. Throws `ERR_INVALID_ARG` naming the field.
    #[napi(constructor, ts_args_type = "options?: DisplayFilterOptions | null")]
    pub fn new(env: Env, options: Option<Unknown>) -> Result<Self> {
        let opts = display_options(options.as_ref(), "options").map_err(|e| js_error(&env, e))?;
        Ok(Self {
            filter: Filter::new(opts),
        })
    }

    /// The safe part of the next chunk (a string, as UTF-8, or bytes), as bytes.
    #[napi(ts_args_type = "chunk: string | Uint8Array")]
    pub fn write(&mut self, env: &Env, chunk: Unknown) -> Result<Buffer> {
        let bytes = input_bytes(&chunk).map_err(|e| js_error(env, e))?;
        let mut out = Vec::with_capacity(bytes.len());
        self.filter.filter(&bytes, &mut out);
        Ok(out.into())
    }
}
