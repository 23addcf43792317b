/// Line-oriented rendering of raw terminal output into the text a person would read, used by
/// `ShellSessions` for the output of one command. It applies what matters for command-line output
/// (carriage-return overwrites of progress bars, backspaces, erase-in-line, horizontal and vertical
/// cursor moves within the lines rendered so far, tabs) and drops every other control: CSI, OSC,
/// DCS/SOS/PM/APC strings, two-byte escapes, C0/C1 controls. What a full-screen program draws on the
/// alternate screen is skipped, as a person no longer sees it once the program restored the main
/// screen. It is not a screen emulator: the screen of a full-screen program that is still running
/// comes from the native emulator (`{ pty, output: 'text' }`).

/** Options of {@link renderTerminalText}. */
export interface RenderTextOptions {
  /** Tab stop interval in columns (default 8). */
  tabWidth?: number;
  /** The terminal is on the alternate screen when `input` starts (default false). */
  alternateScreen?: boolean;
}

/**
 * Renders raw terminal output (already decoded from UTF-8) as plain text: escape sequences removed,
 * `\r`, backspace, erase-in-line and cursor moves applied, trailing spaces of each line trimmed.
 * Line feeds keep the column, as on a terminal (a pty's `\r\n` becomes one line break).
 */
export function renderTerminalText(input: string, options: RenderTextOptions = {}): string {
  const tab = options.tabWidth ?? 8;
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  let alternate = options.alternateScreen === true; // drawing on the alternate screen: not part of the main screen's text
  let saved = { row: 0, col: 0 };
  const line = (): string[] => {
    while (lines.length <= row) lines.push([]);
    return lines[row]!;
  };
  const put = (ch: string): void => {
    if (alternate) return;
    const l = line();
    while (l.length < col) l.push(' ');
    l[col] = ch;
    col++;
  };
  const n = input.length;
  let i = 0;
  while (i < n) {
    const c = input.charCodeAt(i);
    if (c === 0x1b || c === 0x9b || c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
      // Escape sequences (7-bit ESC forms and their 8-bit C1 equivalents).
      let kind: string;
      let j: number;
      if (c === 0x1b) {
        if (i + 1 >= n) break; // a lone ESC at the end: incomplete, drop it
        kind = input[i + 1]!;
        j = i + 2;
      } else {
        kind = c === 0x9b ? '[' : c === 0x9d ? ']' : c === 0x90 ? 'P' : c === 0x98 ? 'X' : c === 0x9e ? '^' : '_';
        j = i + 1;
      }
      if (kind === '[') {
        // CSI: parameter bytes 0x30-0x3f, intermediate bytes 0x20-0x2f, final byte 0x40-0x7e.
        const start = j;
        while (j < n && input.charCodeAt(j) >= 0x30 && input.charCodeAt(j) <= 0x3f) j++;
        const params = input.slice(start, j);
        while (j < n && input.charCodeAt(j) >= 0x20 && input.charCodeAt(j) <= 0x2f) j++;
        if (j >= n) break; // incomplete sequence at the end
        const final = input[j]!;
        i = j + 1;
        if (params.startsWith('?')) {
          // Private modes: 1049/1047/47 switch to the alternate screen (h) and back (l).
          if ((final === 'h' || final === 'l') && /(^|;)(1049|1047|47)(;|$)/.test(params.slice(1))) {
            const enter = final === 'h';
            if (enter && !alternate) saved = { row, col };
            if (!enter && alternate) ({ row, col } = saved);
            alternate = enter;
          }
          continue;
        }
        if (params.startsWith('>') || params.startsWith('<') || params.startsWith('=')) continue;
        if (alternate) continue;
        const nums = params.split(';').map((p) => (p === '' ? NaN : Number(p)));
        const count = Number.isFinite(nums[0]) && nums[0]! > 0 ? nums[0]! : 1;
        switch (final) {
          case 'K': {
            const mode = Number.isFinite(nums[0]) ? nums[0] : 0;
            const l = line();
            if (mode === 0) l.length = Math.min(l.length, col);
            else if (mode === 1) for (let k = 0; k <= col && k < l.length; k++) l[k] = ' ';
            else if (mode === 2) l.length = 0;
            break;
          }
          case 'G':
          case '`':
            col = count - 1;
            break;
          case 'C':
          case 'a':
            col += count;
            break;
          case 'D':
            col = Math.max(0, col - count);
            break;
          case 'A':
            row = Math.max(0, row - count);
            break;
          case 'B':
          case 'e':
            row += count;
            break;
          case 'E':
            row += count;
            col = 0;
            break;
          case 'F':
            row = Math.max(0, row - count);
            col = 0;
            break;
          case 'J': {
            // Erase below (0) trims what follows the cursor; whole-screen erases are ignored (the
            // lines are history for the reader, not a screen).
            const mode = Number.isFinite(nums[0]) ? nums[0] : 0;
            if (mode === 0) {
              line().length = Math.min(line().length, col);
              lines.length = Math.min(lines.length, row + 1);
            }
            break;
          }
          default:
            break; // colours (m), modes, scrolling regions, absolute addressing: no effect on text
        }
        continue;
      }
      if (kind === ']' || kind === 'P' || kind === 'X' || kind === '^' || kind === '_') {
        // String sequences: end at BEL (OSC) or ST (ESC \ or 0x9c); an unterminated one runs to the end.
        while (j < n) {
          const d = input.charCodeAt(j);
          if (d === 0x07 && kind === ']') {
            j++;
            break;
          }
          if (d === 0x9c) {
            j++;
            break;
          }
          if (d === 0x1b && input[j + 1] === '\\') {
            j += 2;
            break;
          }
          j++;
        }
        i = j;
        continue;
      }
      // Two-byte (or intermediate + final) escapes: ESC 7, ESC =, ESC ( B, ESC M ...
      while (j - 1 < n && input.charCodeAt(j - 1) >= 0x20 && input.charCodeAt(j - 1) <= 0x2f) j++;
      if (alternate) {
        // nothing the alternate screen does moves the main screen's cursor
      } else if (kind === 'M') row = Math.max(0, row - 1); // reverse index
      else if (kind === 'D') row++; // index
      else if (kind === 'E') {
        row++;
        col = 0;
      }
      i = j;
      continue;
    }
    i++;
    if (alternate) continue;
    if (c === 0x0a || c === 0x0b || c === 0x0c) {
      row++;
      line();
    } else if (c === 0x0d) {
      col = 0;
    } else if (c === 0x08) {
      col = Math.max(0, col - 1);
    } else if (c === 0x09) {
      col = (Math.floor(col / tab) + 1) * tab;
    } else if (c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0)) {
      // other controls (BEL, NUL, SO/SI, C1): invisible
    } else if (c >= 0xd800 && c <= 0xdbff && i < n) {
      put(input[i - 1]! + input[i]!); // surrogate pair: one character
      i++;
    } else {
      put(input[i - 1]!);
    }
  }
  return lines.map((l) => l.join('').replace(/[ \t]+$/, '')).join('\n');
}

/**
 * Whether raw output leaves the terminal on the alternate screen (a full-screen program such as
 * `less`, `vim` or `top` still showing), given whether it was there before `input`.
 */
export function endsOnAlternateScreen(input: string, before = false): boolean {
  let alternate = before;
  const re = /(?:\x1b\[|\x9b)\?([\d;]*)([hl])/g;
  for (let m = re.exec(input); m; m = re.exec(input)) {
    if (m[1]!.split(';').some((p) => p === '1049' || p === '1047' || p === '47')) alternate = m[2] === 'h';
  }
  return alternate;
}
