"use strict";
/**
 * Structural types of the terminal backend this layer drives.
 *
 * They describe the native core (`createTerminal()` / `TerminalHandle` from `../index.js`) by shape, so
 * the ACP layer can also run on a substitute backend (a sandbox wrapper, a test fake).
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.readOutputBytes = readOutputBytes;
/** A terminal's `outputBytes`, or `undefined` where the backend does not count (or its getter throws). */
function readOutputBytes(terminal) {
    try {
        const n = terminal.outputBytes;
        return typeof n === 'number' ? n : undefined;
    }
    catch {
        return undefined;
    }
}
