"use strict";
/**
 * The audit stream of a `TerminalHost` (`onEvent`): one event per terminal lifecycle step and per refused
 * request. Events carry no environment values (they may hold secrets).
 */
Object.defineProperty(exports, "__esModule", { value: true });
