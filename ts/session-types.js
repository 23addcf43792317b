"use strict";
/**
 * The public types of `ShellSessions`: the pty backend it drives (`PtyTerminalLike`, the native
 * `TerminalHandle` of a `{ pty }` terminal, or a substitute), its options, and `execute`'s request
 * and result.
 */
Object.defineProperty(exports, "__esModule", { value: true });
