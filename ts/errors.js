"use strict";
/**
 * Errors raised by the JS layer. Each carries a stable string `code` (like Node's system errors) and a
 * message that names the offending field.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.AcpTerminalError = void 0;
exports.invalidArg = invalidArg;
exports.errorCode = errorCode;
exports.errorMessage = errorMessage;
/** An error of the JS layer with a machine-readable `code`. */
class AcpTerminalError extends Error {
    /** Machine-readable error code. */
    code;
    /** Extra structured details (the field name, the terminal id, the limit that was hit). */
    details;
    /** Creates an error with `code`, `message` and optional structured `details`. */
    constructor(code, message, details = {}) {
        super(message);
        this.name = 'AcpTerminalError';
        this.code = code;
        this.details = details;
    }
}
exports.AcpTerminalError = AcpTerminalError;
/** Builds an `ERR_INVALID_ARG` error whose message starts with the field name. */
function invalidArg(field, problem) {
    return new AcpTerminalError('ERR_INVALID_ARG', `${field}: ${problem}`, { field });
}
/** Reads the string `code` of an error-like value (native errors come from another realm, so no instanceof). */
function errorCode(error) {
    if (typeof error === 'object' && error !== null && 'code' in error) {
        const code = error.code;
        if (typeof code === 'string')
            return code;
    }
    return undefined;
}
/** Reads the message of an error-like value. */
function errorMessage(error) {
    if (typeof error === 'object' && error !== null && 'message' in error) {
        const message = error.message;
        if (typeof message === 'string')
            return message;
    }
    return String(error);
}
