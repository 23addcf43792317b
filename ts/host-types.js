"use strict";
/**
 * The public types of `TerminalHost`: the ACP v1 `terminal/*` params and results it serves, what its
 * `onCreate` and `approve` callbacks receive, and its options.
 */
Object.defineProperty(exports, "__esModule", { value: true });
