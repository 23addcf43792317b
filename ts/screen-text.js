"use strict";
/// Rendering of raw terminal output into the text a person would read, used by `ShellSessions` for
/// the output of one command. A thin wrapper over the native core's terminal emulator
/// (`renderTerminalOutput`, the `vt100` crate that also renders `{ pty, output: 'text' }` terminals):
/// escape sequences are consumed, `\r` and backspace overwrites, erases and cursor moves are
/// applied as a terminal of the given size applies them, rows the terminal wrapped are joined back.
/// What a full-screen program draws on the alternate screen is not part of the text, as a person no
/// longer sees it once the program restored the main screen; while it is still showing,
/// `alternateScreen` says so (its screen comes from the terminal's own emulator).
Object.defineProperty(exports, "__esModule", { value: true });
exports.renderTerminalOutput = renderTerminalOutput;
exports.renderTerminalOutputAsync = renderTerminalOutputAsync;
exports.renderTerminalText = renderTerminalText;
const errors_1 = require("./errors");
const native_1 = require("./native");
/**
 * Renders raw terminal output (a string, as UTF-8, or bytes) and tells whether it leaves the terminal
 * on the alternate screen, in one pass of the emulator. Throws `ERR_INVALID_ARG` naming the field.
 */
function renderTerminalOutput(input, options = {}) {
    return (0, native_1.loadNative)().renderTerminalOutput(input, nativeOptions(options));
}
/**
 * {@link renderTerminalOutput} off the JS thread (a libuv worker renders it), for large outputs: the
 * event loop keeps turning meanwhile. The input is copied when the call is made. Rejects with
 * `ERR_INVALID_ARG` naming the field.
 */
async function renderTerminalOutputAsync(input, options = {}) {
    return (0, native_1.loadNative)().renderTerminalOutputAsync(input, nativeOptions(options));
}
function nativeOptions(options) {
    if (typeof options !== 'object' || options === null)
        throw (0, errors_1.invalidArg)('options', 'must be an object');
    if (options.tabWidth !== undefined && options.tabWidth !== 8) {
        throw (0, errors_1.invalidArg)('options.tabWidth', 'must be 8 (the terminal emulator has a tab stop every 8 columns)');
    }
    const { cols, rows, alternateScreen } = options;
    return { cols, rows, alternateScreen };
}
/**
 * Renders raw terminal output as plain text: escape sequences consumed, `\r`, backspace, erases and
 * cursor moves applied, wrapped rows joined, trailing spaces of each line trimmed. Every line is kept
 * (no scrollback limit). The text ends with the cursor's line, so output ending with a line break
 * (a pty's `\r\n`) ends with `\n`.
 */
function renderTerminalText(input, options = {}) {
    return renderTerminalOutput(input, options).text;
}
