//! tmux key names to the bytes an xterm sends for them.
//!
//! A key is optional modifier prefixes (`C-`, `M-`, `S-`, any order, case-insensitive; `^x` is
//! `C-x`) followed by a named key (`Enter`, `Up`, `F5`, … case-insensitive, as tmux) or a single
//! character. Anything else is an error that names the key: text goes through `write()`.
//!
//! Encoding, as xterm with its default settings (and tmux by default, ignoring DECCKM):
//! - cursor keys and Home/End are CSI forms (`ESC [ A`, `ESC [ H`); with modifiers they take
//!   xterm's modifier parameter, `ESC [ 1 ; m A` where m = 1 + shift + 2·meta + 4·ctrl;
//! - F1–F4 are SS3 (`ESC O P`), modified `ESC [ 1 ; m P`; the other function keys and
//!   Insert/Delete/PageUp/PageDown are `ESC [ n ~`, modified `ESC [ n ; m ~`;
//! - `C-` on a character gives its control byte (C-a = 0x01, C-Space and C-@ = 0x00, C-[ = ESC,
//!   C-\ = 0x1c, C-] = 0x1d, C-^ = 0x1e, C-_ = 0x1f, C-? = 0x7f, and xterm's digit forms);
//!   `S-` upper-cases a letter; `M-` prefixes ESC;
//! - S-Tab is BTab (`ESC [ Z`), C-Space is NUL, C-BSpace is BS (0x08).
//!
//! [`is_key_name`] answers a stricter question with the same table: is this word, as written,
//! a tmux key name rather than text? Only the canonical spelling counts there: the modifier
//! prefixes `C-`, `M-`, `S-` in upper case, a named key exactly as the table spells it
//! (`Enter`, `PgUp`, `DC`; not `enter`, not `dc`, which is also a program), no `^x` form, and
//! a single character only with a modifier (`q` alone is text). Every name it accepts is one
//! [`encode`] accepts; the reverse does not hold (`encode` is lenient, as tmux's `send-keys`).

use crate::error::TermError;

/// Modifiers of a key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mods {
    ctrl: bool,
    meta: bool,
    shift: bool,
}

impl Mods {
    fn any(self) -> bool {
        self.ctrl || self.meta || self.shift
    }

    /// xterm's modifier parameter.
    fn param(self) -> u8 {
        1 + self.shift as u8 + 2 * self.meta as u8 + 4 * self.ctrl as u8
    }
}

/// How a named key is encoded.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// `ESC [ x`, modified `ESC [ 1 ; m x`.
    Csi(u8),
    /// `ESC O x`, modified `ESC [ 1 ; m x`.
    Ss3(u8),
    /// `ESC [ n ~`, modified `ESC [ n ; m ~`.
    Tilde(u8),
    /// A fixed byte sequence; `M-` prefixes ESC.
    Plain(&'static [u8]),
}

/// Named keys: every accepted spelling (case-insensitive), then the encoding.
const NAMED: &[(&[&str], Kind)] = &[
    (&["Up"], Kind::Csi(b'A')),
    (&["Down"], Kind::Csi(b'B')),
    (&["Right"], Kind::Csi(b'C')),
    (&["Left"], Kind::Csi(b'D')),
    (&["Home"], Kind::Csi(b'H')),
    (&["End"], Kind::Csi(b'F')),
    (&["F1"], Kind::Ss3(b'P')),
    (&["F2"], Kind::Ss3(b'Q')),
    (&["F3"], Kind::Ss3(b'R')),
    (&["F4"], Kind::Ss3(b'S')),
    (&["F5"], Kind::Tilde(15)),
    (&["F6"], Kind::Tilde(17)),
    (&["F7"], Kind::Tilde(18)),
    (&["F8"], Kind::Tilde(19)),
    (&["F9"], Kind::Tilde(20)),
    (&["F10"], Kind::Tilde(21)),
    (&["F11"], Kind::Tilde(23)),
    (&["F12"], Kind::Tilde(24)),
    (&["IC", "Insert"], Kind::Tilde(2)),
    (&["DC", "Delete"], Kind::Tilde(3)),
    (&["PageUp", "PgUp", "PPage"], Kind::Tilde(5)),
    (&["PageDown", "PgDn", "NPage"], Kind::Tilde(6)),
    (&["Enter"], Kind::Plain(b"\r")),
    (&["Escape"], Kind::Plain(b"\x1b")),
    (&["Space"], Kind::Plain(b" ")),
    (&["Tab"], Kind::Plain(b"\t")),
    (&["BTab"], Kind::Plain(b"\x1b[Z")),
    (&["BSpace"], Kind::Plain(b"\x7f")),
];

/// The control byte for `C-<c>`, as xterm sends it.
fn control_byte(c: char) -> Option<u8> {
    Some(match c {
        'a'..='z' | 'A'..='Z' => (c as u8) & 0x1f,
        '@' | ' ' | '2' => 0x00,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' | '~' => 0x1e,
        '_' | '7' | '/' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return None,
    })
}

/// Splits the modifier prefixes off a key name.
fn split_mods(name: &str) -> (Mods, &str) {
    let mut mods = Mods::default();
    let mut rest = name;
    loop {
        let b = rest.as_bytes();
        if b.len() > 2 && b[1] == b'-' {
            match b[0] {
                b'C' | b'c' => mods.ctrl = true,
                b'M' | b'm' => mods.meta = true,
                b'S' | b's' => mods.shift = true,
                _ => break,
            }
            rest = &rest[2..];
        } else if b.len() > 1 && b[0] == b'^' && rest[1..].chars().count() == 1 {
            mods.ctrl = true;
            rest = &rest[1..];
        } else {
            break;
        }
    }
    (mods, rest)
}

fn csi_modified(out: &mut Vec<u8>, first: &str, mods: Mods, last: u8) {
    out.extend_from_slice(format!("\x1b[{first};{}", mods.param()).as_bytes());
    out.push(last);
}

/// Encodes one tmux key name; the error says why the name is not a key.
pub fn encode(name: &str) -> Result<Vec<u8>, String> {
    let (mods, base) = split_mods(name);
    let mut out = Vec::new();
    if let Some((_, kind)) = NAMED
        .iter()
        .find(|(names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(base)))
    {
        match *kind {
            Kind::Csi(c) if mods.any() => csi_modified(&mut out, "1", mods, c),
            Kind::Csi(c) => out.extend_from_slice(&[0x1b, b'[', c]),
            Kind::Ss3(c) if mods.any() => csi_modified(&mut out, "1", mods, c),
            Kind::Ss3(c) => out.extend_from_slice(&[0x1b, b'O', c]),
            Kind::Tilde(n) if mods.any() => csi_modified(&mut out, &n.to_string(), mods, b'~'),
            Kind::Tilde(n) => out.extend_from_slice(format!("\x1b[{n}~").as_bytes()),
            Kind::Plain(bytes) => {
                let bytes: &[u8] = match bytes {
                    b"\t" if mods.shift => b"\x1b[Z",
                    b" " if mods.ctrl => b"\x00",
                    b"\x7f" if mods.ctrl => b"\x08",
                    b => b,
                };
                if mods.meta {
                    out.push(0x1b);
                }
                out.extend_from_slice(bytes);
            }
        }
        return Ok(out);
    }
    let mut chars = base.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(if base.is_empty() {
            "an empty key name".to_string()
        } else {
            format!("unknown key name `{name}` (keys are tmux names such as Enter, C-c, M-x, Up, F5; send text with write())")
        });
    };
    if mods.meta {
        out.push(0x1b);
    }
    if mods.ctrl {
        let Some(b) = control_byte(c) else {
            return Err(format!("key `{name}`: `{c}` has no control character"));
        };
        out.push(b);
    } else {
        let c = if mods.shift {
            c.to_ascii_uppercase()
        } else {
            c
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    }
    Ok(out)
}

/// True when `name`, as written, is a key name in its canonical spelling (see the module
/// docs): case-sensitive, `C-`/`M-`/`S-` prefixes only, a lone character is not a key.
pub fn is_key_name(name: &str) -> bool {
    let mut rest = name;
    let mut modified = false;
    while let Some(r) = ["C-", "M-", "S-"]
        .iter()
        .find_map(|p| rest.strip_prefix(p).filter(|r| !r.is_empty()))
    {
        rest = r;
        modified = true;
    }
    let named = NAMED.iter().any(|(names, _)| names.contains(&rest));
    let modified_char = modified && rest.len() == 1 && rest.as_bytes()[0].is_ascii_graphic();
    (named || modified_char) && encode(name).is_ok()
}

/// Encodes a list of keys into one byte string; an invalid key fails the whole list (nothing
/// is sent) with `ERR_INVALID_ARG` naming `keys[i]`.
pub fn encode_all<S: AsRef<str>>(keys: &[S]) -> Result<Vec<u8>, TermError> {
    let mut out = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let k = k.as_ref();
        match encode(k) {
            Ok(b) => out.extend_from_slice(&b),
            Err(why) => return Err(TermError::invalid_arg(format!("keys[{i}]: {why}"))),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(name: &str) -> Vec<u8> {
        encode(name).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn control_letters_and_punctuation() {
        for (i, c) in ('a'..='z').enumerate() {
            assert_eq!(k(&format!("C-{c}")), vec![i as u8 + 1]);
            assert_eq!(
                k(&format!("C-{}", c.to_ascii_uppercase())),
                vec![i as u8 + 1]
            );
            assert_eq!(k(&format!("^{c}")), vec![i as u8 + 1]);
        }
        assert_eq!(k("C-Space"), b"\x00");
        assert_eq!(k("C-@"), b"\x00");
        assert_eq!(k("C-["), b"\x1b");
        assert_eq!(k("C-\\"), b"\x1c");
        assert_eq!(k("C-]"), b"\x1d");
        assert_eq!(k("C-^"), b"\x1e");
        assert_eq!(k("C-_"), b"\x1f");
        assert_eq!(k("C-?"), b"\x7f");
        assert_eq!(k("c-c"), b"\x03");
    }

    #[test]
    fn named_keys_match_xterm() {
        let table: &[(&str, &[u8])] = &[
            ("Up", b"\x1b[A"),
            ("Down", b"\x1b[B"),
            ("Right", b"\x1b[C"),
            ("Left", b"\x1b[D"),
            ("Home", b"\x1b[H"),
            ("End", b"\x1b[F"),
            ("PageUp", b"\x1b[5~"),
            ("PgUp", b"\x1b[5~"),
            ("PPage", b"\x1b[5~"),
            ("PageDown", b"\x1b[6~"),
            ("PgDn", b"\x1b[6~"),
            ("NPage", b"\x1b[6~"),
            ("IC", b"\x1b[2~"),
            ("DC", b"\x1b[3~"),
            ("F1", b"\x1bOP"),
            ("F2", b"\x1bOQ"),
            ("F3", b"\x1bOR"),
            ("F4", b"\x1bOS"),
            ("F5", b"\x1b[15~"),
            ("F6", b"\x1b[17~"),
            ("F7", b"\x1b[18~"),
            ("F8", b"\x1b[19~"),
            ("F9", b"\x1b[20~"),
            ("F10", b"\x1b[21~"),
            ("F11", b"\x1b[23~"),
            ("F12", b"\x1b[24~"),
            ("Enter", b"\r"),
            ("Escape", b"\x1b"),
            ("Space", b" "),
            ("Tab", b"\t"),
            ("BTab", b"\x1b[Z"),
            ("BSpace", b"\x7f"),
            ("enter", b"\r"),
            ("up", b"\x1b[A"),
        ];
        for (name, bytes) in table {
            assert_eq!(k(name), *bytes, "{name}");
        }
    }

    #[test]
    fn modifiers_use_xterm_parameters() {
        let table: &[(&str, &[u8])] = &[
            ("S-Up", b"\x1b[1;2A"),
            ("M-Up", b"\x1b[1;3A"),
            ("M-S-Up", b"\x1b[1;4A"),
            ("C-Up", b"\x1b[1;5A"),
            ("C-S-Left", b"\x1b[1;6D"),
            ("C-M-Right", b"\x1b[1;7C"),
            ("C-M-S-Down", b"\x1b[1;8B"),
            ("S-Home", b"\x1b[1;2H"),
            ("C-End", b"\x1b[1;5F"),
            ("S-F1", b"\x1b[1;2P"),
            ("C-F4", b"\x1b[1;5S"),
            ("S-F6", b"\x1b[17;2~"),
            ("M-F12", b"\x1b[24;3~"),
            ("C-DC", b"\x1b[3;5~"),
            ("S-PageUp", b"\x1b[5;2~"),
            ("S-Tab", b"\x1b[Z"),
            ("M-Tab", b"\x1b\t"),
            ("M-Enter", b"\x1b\r"),
            ("M-BSpace", b"\x1b\x7f"),
            ("C-BSpace", b"\x08"),
            ("M-x", b"\x1bx"),
            ("M-X", b"\x1bX"),
            ("C-M-x", b"\x1b\x18"),
            ("M-C-x", b"\x1b\x18"),
            ("S-a", b"A"),
            ("M-S-a", b"\x1bA"),
            ("M--", b"\x1b-"),
            ("a", b"a"),
            ("-", b"-"),
            ("\u{e9}", "\u{e9}".as_bytes()),
        ];
        for (name, bytes) in table {
            assert_eq!(k(name), *bytes, "{name}");
        }
    }

    #[test]
    fn key_names_in_canonical_spelling_only() {
        for key in [
            "C-c", "M-x", "S-Tab", "Up", "F5", "F12", "Enter", "C-M-a", "BSpace", "DC", "IC",
            "PgUp", "PageDown", "BTab", "Escape", "C-Space", "M--", "C-[", "S-F6", "C-S-Left",
        ] {
            assert!(is_key_name(key), "{key}");
            assert!(encode(key).is_ok(), "{key}");
        }
        for text in [
            "q", "-", "enter", "up", "dc", "^c", "c-c", "C-", "F13", "C-1", "ls", "", "C-é",
            "Enter ", "C-c echo", "M-", "S-",
        ] {
            assert!(!is_key_name(text), "{text}");
        }
    }

    #[test]
    fn non_keys_are_errors_naming_the_key() {
        for bad in [
            "hello", "Foo", "C-", "", "C-1", "F13", "Up Down", "C-Enterr",
        ] {
            let e = encode(bad).unwrap_err();
            assert!(
                bad.is_empty() || e.contains(bad.trim_start_matches("C-")) || e.contains(bad),
                "{bad}: {e}"
            );
        }
        let e = encode_all(&["Enter", "nope"]).unwrap_err();
        assert_eq!(e.code, "ERR_INVALID_ARG");
        assert!(e.message.starts_with("keys[1]: "), "{}", e.message);
        assert!(e.message.contains("`nope`"), "{}", e.message);
        assert_eq!(encode_all(&["C-c", "Enter"]).unwrap(), b"\x03\r");
    }
}
