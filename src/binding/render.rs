//! `renderTerminalOutput()` and its async variant: raw terminal output to the text a person
//! would read, through the emulator of text mode ([`crate::render`]).

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use super::args::*;
use super::errors::js_error;
use crate::error::TermError;
use crate::sys::pty::PtySize;

/// Options of `renderTerminalOutput()`.
#[napi(object, object_to_js = false)]
pub struct RenderTerminalOutputOptions {
    /// Width of the terminal the output was written to, in columns, 1 to 65535 (default 80):
    /// where the terminal wraps lines (wrapped rows come back as one line) and how far a `\r`
    /// goes back.
    #[napi(ts_type = "number | null")]
    pub cols: Option<u32>,
    /// Height of its screen, in rows, 1 to 65535 (default 24): how far up cursor movements can
    /// redraw and what a screen erase clears.
    #[napi(ts_type = "number | null")]
    pub rows: Option<u32>,
    /// The terminal is on the alternate screen when `data` starts (default false).
    #[napi(ts_type = "boolean | null")]
    pub alternate_screen: Option<bool>,
    /// Keep at most this many bytes of text (UTF-8; so at most as many UTF-16 units): its
    /// newest part, `truncated` says the front was dropped (default: all of it).
    #[napi(ts_type = "number | null")]
    pub max_bytes: Option<f64>,
}

impl RenderTerminalOutputOptions {
    fn read(o: &Object) -> Parsed<Self> {
        Ok(Self {
            cols: opt_dimension(o, "cols", "options.cols")?.map(u32::from),
            rows: opt_dimension(o, "rows", "options.rows")?.map(u32::from),
            alternate_screen: opt_bool(o, "alternateScreen", "options.alternateScreen")?,
            max_bytes: opt_count(o, "maxBytes", "options.maxBytes")?,
        })
    }
}

/// What `renderTerminalOutput()` returns.
#[napi(object)]
pub struct RenderedTerminalOutput {
    /// The main screen's text: every line the output wrote, including the lines that scrolled
    /// off the screen, without escape sequences, trailing blanks removed.
    pub text: String,
    /// The output leaves the terminal on the alternate screen: a full-screen program (`less`,
    /// `vim`, `top`) is still showing. What it drew is not in `text`.
    pub alternate_screen: bool,
    /// The text's older part was dropped to keep it within `maxBytes`.
    pub truncated: bool,
}

/// Reads the arguments of `renderTerminalOutput()`: the bytes, the screen size, the start screen.
fn render_args(data: &Unknown, options: Option<Unknown>) -> Parsed<RenderArgs> {
    let bytes = input_bytes(data)?;
    let mut size = PtySize { cols: 80, rows: 24 };
    let Some(o) = options.filter(|o| !is_nullish(o).unwrap_or(true)) else {
        return Ok((bytes, size, false, None));
    };
    let o = RenderTerminalOutputOptions::read(&as_object(&o, "options")?)?;
    if let Some(cols) = o.cols {
        size.cols = cols as u16;
    }
    if let Some(rows) = o.rows {
        size.rows = rows as u16;
    }
    let max_bytes = o.max_bytes.map(|n| n as usize);
    Ok((bytes, size, o.alternate_screen.unwrap_or(false), max_bytes))
}

/// What `renderTerminalOutput()` renders: the bytes, the screen size, the start screen, the
/// text's bound.
type RenderArgs = (Vec<u8>, PtySize, bool, Option<usize>);

/// Renders raw terminal output (a string, as UTF-8, or bytes) through the terminal emulator
/// of text mode, as the text a person would read: escape sequences consumed, `\r` and
/// backspace overwrites, erases and cursor movements applied, rows the terminal wrapped joined
/// back into one line, trailing blanks of each line removed. Every line is kept (no scrollback
/// limit; the emulator keeps only the screen, lines scrolled off it are kept as text). The text
/// ends with the cursor's line or the last non-blank line, whichever is lower, so output ending
/// with a line break ends with `\n`. What a full-screen program draws on the alternate screen is
/// never in the text (a person no longer sees it once the program restores the main screen).
/// Synchronous: on the JS thread it costs about 0.15 s per MiB of ordinary output (more when
/// every byte scrolls); `renderTerminalOutputAsync()` does the same work off the JS thread.
/// Throws with `code` `ERR_INVALID_ARG` naming the field.
#[napi(ts_args_type = "data: string | Uint8Array, options?: RenderTerminalOutputOptions | null")]
pub fn render_terminal_output(
    env: &Env,
    data: Unknown,
    options: Option<Unknown>,
) -> Result<RenderedTerminalOutput> {
    let (bytes, size, alternate, max) =
        render_args(&data, options).map_err(|e| js_error(env, e))?;
    Ok(crate::render::render_output(&bytes, size, alternate, max).into())
}

impl From<crate::render::RenderedOutput> for RenderedTerminalOutput {
    fn from(r: crate::render::RenderedOutput) -> Self {
        RenderedTerminalOutput {
            text: r.text,
            alternate_screen: r.alternate_screen,
            truncated: r.truncated,
        }
    }
}

/// One `renderTerminalOutputAsync()` call: the arguments read on the JS thread (or why they
/// were refused), rendered on a libuv worker thread.
pub struct RenderTask {
    args: std::result::Result<RenderArgs, TermError>,
}

impl Task for RenderTask {
    type Output = crate::render::RenderedOutput;
    type JsValue = RenderedTerminalOutput;

    fn compute(&mut self) -> Result<Self::Output> {
        match &self.args {
            Ok((bytes, size, alternate, max)) => {
                Ok(crate::render::render_output(bytes, *size, *alternate, *max))
            }
            Err(e) => Err(Error::from_reason(e.message.clone())),
        }
    }

    fn resolve(&mut self, _env: Env, r: Self::Output) -> Result<Self::JsValue> {
        Ok(r.into())
    }

    fn reject(&mut self, env: Env, err: Error) -> Result<Self::JsValue> {
        match &self.args {
            // Refused arguments: the same error, with `code`, as the synchronous variant throws.
            Err(e) => Err(js_error(&env, e.clone())),
            Ok(_) => Err(err),
        }
    }
}

/// `renderTerminalOutput()` off the JS thread: the same result, computed on a libuv worker
/// thread so that rendering a large output never blocks the event loop. The input is copied
/// when the call is made. Rejects with `code` `ERR_INVALID_ARG` naming the field.
#[napi(
    ts_args_type = "data: string | Uint8Array, options?: RenderTerminalOutputOptions | null",
    ts_return_type = "Promise<RenderedTerminalOutput>"
)]
pub fn render_terminal_output_async(
    data: Unknown,
    options: Option<Unknown>,
) -> AsyncTask<RenderTask> {
    AsyncTask::new(RenderTask {
        args: render_args(&data, options),
    })
}
