/// Rendering of raw terminal output into the text a person would read, used by `ShellSessions` for
/// the output of one command. A thin wrapper over the native core's terminal emulator
/// (`renderTerminalOutput`, the `vt100` crate that also renders `{ pty, output: 'text' }` terminals):
/// escape sequences are consumed, `\r` and backspace overwrites, erases and cursor moves are
/// applied as a terminal of the given size applies them, rows the terminal wrapped are joined back.
/// What a full-screen program draws on the alternate screen is not part of the text, as a person no
/// longer sees it once the program restored the main screen; while it is still showing,
/// `alternateScreen` says so (its screen comes from the terminal's own emulator).

import { invalidArg } from './errors';
import { loadNative } from './native';

/** Options of {@link renderTerminalText}. */
export interface RenderTextOptions {
  /** Width of the terminal the output was written to, in columns (default 80): where lines wrap. */
  cols?: number;
  /** Height of its screen, in rows (default 24): how far up cursor moves can redraw. */
  rows?: number;
  /**
   * Tab stop interval in columns. The emulator's tab stops are every 8 columns, as on a terminal:
   * only 8 (the default) is accepted.
   * @deprecated tab stops are the terminal's.
   */
  tabWidth?: number;
  /** The terminal is on the alternate screen when `input` starts (default false). */
  alternateScreen?: boolean;
  /**
   * Keep at most this many bytes of text (UTF-8, so its `length` is at most this too): its newest
   * part, as output beyond a byte limit keeps its newest bytes; `truncated` says the front was
   * dropped (default: all of it).
   */
  maxBytes?: number;
}

/** What {@link renderTerminalOutput} returns. */
export interface RenderedTerminalText {
  /** The main screen's text (see {@link renderTerminalText}). */
  text: string;
  /** The output leaves the terminal on the alternate screen (a full-screen program still showing). */
  alternateScreen: boolean;
  /** The text's older part was dropped to keep it within `maxBytes`. */
  truncated: boolean;
}

/**
 * Renders raw terminal output (a string, as UTF-8, or bytes) and tells whether it leaves the terminal
 * on the alternate screen, in one pass of the emulator. Throws `ERR_INVALID_ARG` naming the field.
 */
export function renderTerminalOutput(input: string | Uint8Array, options: RenderTextOptions = {}): RenderedTerminalText {
  return loadNative().renderTerminalOutput(input, nativeOptions(options));
}

/**
 * {@link renderTerminalOutput} off the JS thread (a libuv worker renders it), for large outputs: the
 * event loop keeps turning meanwhile. The input is copied when the call is made. Rejects with
 * `ERR_INVALID_ARG` naming the field.
 */
export async function renderTerminalOutputAsync(
  input: string | Uint8Array,
  options: RenderTextOptions = {},
): Promise<RenderedTerminalText> {
  return loadNative().renderTerminalOutputAsync(input, nativeOptions(options));
}

function nativeOptions(options: RenderTextOptions): {
  cols?: number;
  rows?: number;
  alternateScreen?: boolean;
  maxBytes?: number;
} {
  if (typeof options !== 'object' || options === null) throw invalidArg('options', 'must be an object');
  if (options.tabWidth !== undefined && options.tabWidth !== 8) {
    throw invalidArg('options.tabWidth', 'must be 8 (the terminal emulator has a tab stop every 8 columns)');
  }
  const { cols, rows, alternateScreen, maxBytes } = options;
  return { cols, rows, alternateScreen, maxBytes };
}

/**
 * Renders raw terminal output as plain text: escape sequences consumed, `\r`, backspace, erases and
 * cursor moves applied, wrapped rows joined, trailing spaces of each line trimmed. Every line is kept
 * (no scrollback limit). The text ends with the cursor's line, so output ending with a line break
 * (a pty's `\r\n`) ends with `\n`.
 */
export function renderTerminalText(input: string | Uint8Array, options: RenderTextOptions = {}): string {
  return renderTerminalOutput(input, options).text;
}
