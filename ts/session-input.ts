/**
 * How `ShellSessions.execute` reads a request's `command`: key names (the core's key table decides),
 * text typed to a running program (one trailing line end is its Enter), which keys an idle shell
 * answers with a prompt, and a here-document left open (found by `bash -n`, run by the core, before
 * anything runs).
 */

import { loadNative } from './native';
import { openHereDocument } from './session-protocol';
import type { PtyCreateTerminalFn } from './session-types';
import type { OutputSnapshot } from './types';

/** What the here-document check uses of a pipe terminal. */
interface CheckTerminal {
  write(data: string): Promise<unknown>;
  closeStdin(): Promise<unknown>;
  waitForExit(): Promise<unknown>;
  currentOutput(): Promise<OutputSnapshot>;
  release(): Promise<unknown>;
}

/**
 * True when `word` is a tmux key name (`C-c`, `M-x`, `S-Tab`, `Up`, `F5`, `Enter`, ...): such
 * commands are sent as keys. A plain character (`q`) is text, not a key. The native core's key
 * table decides (the one `sendKeys()` encodes with).
 */
export function isKeyName(word: string): boolean {
  return loadNative().isKeyName(word);
}

/** Splits `command` into key names when every whitespace-separated word is one, else returns null. */
export function parseKeys(command: string): string[] | null {
  const words = command.trim().split(/\s+/);
  if (words.length === 0 || words[0] === '') return null;
  return words.every(isKeyName) ? words : null;
}

/**
 * The keys a request sends, or null when it is text: a command made only of key names (`C-c`,
 * `Up Enter`); with `isInput`, a lone key name (`C-c`, as agents send Ctrl+C), never a sequence.
 */
export function requestKeys(command: string, isInput: boolean): string[] | null {
  if (!isInput) return parseKeys(command);
  const word = command.trim();
  return word !== '' && !/\s/.test(word) && isKeyName(word) ? [word] : null;
}

/**
 * Keys an idle shell (no line editor, empty line) answers with a new prompt or by ending: a line end
 * (`Enter`, `C-m`, `C-j`), `C-c` (SIGINT), `C-d` (end of input). Any other key is only buffered
 * or ignored (`C-a`, `C-l`, `C-z`: the shell ignores SIGTSTP), so nothing is awaited after it.
 */
const PROMPTING_KEYS = new Set(['Enter', 'C-m', 'C-j', 'C-c', 'C-d']);

/** True when an idle shell answers `keys` with a prompt (or ends). */
export function keysPrompt(keys: readonly string[]): boolean {
  return keys.some((k) => PROMPTING_KEYS.has(k));
}

/** The first key that means nothing to an idle shell without a line editor (history, cursor keys). */
export function keyRefusedAtPrompt(keys: readonly string[]): string | undefined {
  return keys.find((k) => k !== 'Enter' && !/^C-[\x21-\x7e]$/.test(k));
}

/**
 * What is typed for `isInput` text: the text, then Enter (`\r`) unless `noEnter`. One trailing line
 * end (`\n`, `\r\n` or `\r`) of the text is that Enter, not a second one.
 */
export function inputText(text: string, noEnter: boolean): string {
  if (noEnter) return text;
  const body = text.endsWith('\r\n') ? text.slice(0, -2) : /[\r\n]$/.test(text) ? text.slice(0, -1) : text;
  return `${body}\r`;
}

/** A here-document that reaches the end of the command without its delimiter. */
export interface OpenHereDocument {
  /** Line of the command where it starts. */
  line: number;
  /** The delimiter bash looked for. */
  delimiter: string;
}

/**
 * Runs `shell -n` (parse only, C locale, no startup files, no other environment) on `text`, the text
 * the session sources, given on its stdin (no file), when the command may hold a here-document
 * (`<<`), through the native core (argv, no shell in between; killed after 10 s), and tells whether
 * one is left open: bash would run it with the rest of the command as its body and exit status 0.
 * Null when there is none, or when the check could not run (the command then runs as sent, as before).
 * With `far` (a remote backend's `createTerminal`) the check runs at the far end, with its bash.
 * `signal` ends the check early: its terminal is released (its bash killed), and the answer is null.
 */
export async function findOpenHereDocument(
  shell: string,
  command: string,
  text: string,
  far?: PtyCreateTerminalFn,
  signal?: AbortSignal,
): Promise<OpenHereDocument | null> {
  if (!command.includes('<<') || signal?.aborted) return null;
  let diagnostics: string;
  try {
    const params = { command: shell, args: ['--noprofile', '--norc', '-n'], outputByteLimit: 64 * 1024 };
    const options = { shell: false, timeoutMs: 10_000, stdin: 'pipe' } as const;
    // At a far end (`far`: its createTerminal), its bash in its PATH, with the server's environment.
    const check = far
      ? await (far as unknown as (p: object, o: object) => Promise<CheckTerminal>)(
          { ...params, env: [{ name: 'LC_ALL', value: 'C' }] },
          options,
        )
      : await loadNative().createTerminal(
          {
            ...params,
            env: [
              { name: 'LC_ALL', value: 'C' },
              { name: 'PATH', value: process.env.PATH ?? '/usr/bin:/bin' },
            ],
          },
          { ...options, inheritEnv: false },
        );
    const stop = (): void => void check.release().catch(() => undefined);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      if (signal?.aborted) return null;
      await check.write(`${text}\n`);
      await check.closeStdin();
      await check.waitForExit();
      diagnostics = (await check.currentOutput()).output;
    } finally {
      signal?.removeEventListener('abort', stop);
      await check.release().catch(() => undefined);
    }
  } catch {
    return null;
  }
  return openHereDocument(diagnostics);
}
