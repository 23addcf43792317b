//! The value of one word node: quoting removed, and `dynamic` set when part of it is only known
//! at run time (an expansion, a substitution, an unquoted glob or brace expansion, a leading `~`);
//! and the word as the rebuild writes it ([`Word::shell`]): every literal part single-quoted,
//! the parts the shell must still expand (`${NAME}`, an unquoted glob, brace or tilde character)
//! written as themselves, so that sh and bash read exactly the word that was checked.

use tree_sitter::Node;

/// A word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text with quoting removed; run-time parts kept as written.
    pub text: String,
    /// True when the value is only known at run time.
    pub dynamic: bool,
    /// The word as the rebuild writes it; `None` when it holds a part the rebuild does not
    /// write (a substitution, an ANSI-C string: constructs refused anyway).
    pub shell: Option<String>,
}

impl Word {
    /// A word whose value is `text` (an argv element).
    pub fn literal(text: String) -> Word {
        let shell = Some(quote(&text));
        Word {
            text,
            dynamic: false,
            shell,
        }
    }
}

/// `text` single-quoted for sh and bash (`'` written as `'\''`).
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Characters written unquoted when they were unquoted: they mean the same to every shell
/// (letters, digits, `_ . / : , = + @ % -`) or must keep their meaning (glob, brace, tilde).
fn plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_./:,=+@%-*?[]!{}~^".contains(c)
}

/// Builds [`Word::shell`]: literal runs quoted, expansions and unquoted pattern characters raw.
#[derive(Default)]
struct Shell {
    out: String,
    quoted: String,
    broken: bool,
}

impl Shell {
    fn literal(&mut self, c: char) {
        self.quoted.push(c);
    }
    fn raw(&mut self, s: &str) {
        self.flush();
        self.out.push_str(s);
    }
    fn flush(&mut self) {
        if !self.quoted.is_empty() {
            let q = quote(&self.quoted);
            self.out.push_str(&q);
            self.quoted.clear();
        }
    }
    fn finish(mut self) -> Option<String> {
        self.flush();
        if self.out.is_empty() {
            self.out.push_str("''");
        }
        (!self.broken).then_some(self.out)
    }
}

/// An expansion `$NAME`, `${NAME}`, `$1`, `$@` as `${...}` (so a following letter cannot join it).
fn braced(raw: &str) -> Option<String> {
    let name = raw
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| raw.strip_prefix('$'))?;
    let ok = !name.is_empty()
        && (name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || matches!(name, "@" | "*" | "#" | "?" | "-" | "$" | "!"));
    ok.then(|| format!("${{{name}}}"))
}

/// The value of `node` (a word, string, raw string, concatenation, number or expansion).
pub fn value(node: Node, src: &str) -> Word {
    let raw = &src[node.byte_range()];
    let mut word = Word {
        text: String::new(),
        dynamic: false,
        shell: None,
    };
    let mut shell = Shell::default();
    push(node, src, &mut word, &mut shell);
    if has_brace_expansion(raw) {
        word.dynamic = true;
    }
    word.shell = shell.finish();
    word
}

fn push(node: Node, src: &str, word: &mut Word, shell: &mut Shell) {
    let raw = &src[node.byte_range()];
    match node.kind() {
        "word" | "number" => unescape_unquoted(raw, word, shell),
        "raw_string" => {
            let body = raw.get(1..raw.len().saturating_sub(1)).unwrap_or("");
            word.text.push_str(body);
            body.chars().for_each(|c| shell.literal(c));
        }
        "string" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() == "string_content" {
                    let from = word.text.len();
                    unescape_double_quoted(&src[child.byte_range()], &mut word.text);
                    word.text[from..].chars().for_each(|c| shell.literal(c));
                } else {
                    let text = &src[child.byte_range()];
                    word.text.push_str(text);
                    word.dynamic = true;
                    match braced(text)
                        .filter(|_| matches!(child.kind(), "simple_expansion" | "expansion"))
                    {
                        Some(b) => shell.raw(&format!("\"{b}\"")),
                        None => shell.broken = true,
                    }
                }
            }
        }
        "translated_string" | "ansi_c_string" => {
            // bash's `$"..."` and `$'...'` (dash reads `$` and a string): refused, never rebuilt.
            shell.broken = true;
            if node.kind() == "ansi_c_string" {
                decode_ansi_c(
                    raw.get(2..raw.len().saturating_sub(1)).unwrap_or(""),
                    &mut word.text,
                );
            } else {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    push(child, src, word, shell);
                }
            }
        }
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                push(child, src, word, shell);
            }
        }
        "simple_expansion" | "expansion" => {
            word.text.push_str(raw);
            word.dynamic = true;
            match braced(raw) {
                Some(b) => shell.raw(&b),
                None => shell.broken = true,
            }
        }
        _ => {
            word.text.push_str(raw);
            word.dynamic = true;
            shell.broken = true;
        }
    }
}

/// An unquoted word: `\x` is `x`, `\<newline>` is nothing; `*`, `?`, `[` and a leading `~` make
/// it a pattern or a path known at run time.
fn unescape_unquoted(raw: &str, word: &mut Word, shell: &mut Shell) {
    let mut chars = raw.chars().peekable();
    if raw.starts_with('~') && word.text.is_empty() {
        word.dynamic = true;
    }
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => {
                    word.text.push(next);
                    shell.literal(next);
                }
            },
            '*' | '?' | '[' => {
                word.dynamic = true;
                word.text.push(c);
                shell.raw(c.encode_utf8(&mut [0; 4]));
            }
            _ if plain(c) => {
                word.text.push(c);
                shell.raw(c.encode_utf8(&mut [0; 4]));
            }
            _ => {
                word.text.push(c);
                shell.literal(c);
            }
        }
    }
}

/// Inside double quotes only `\$`, `` \` ``, `\"`, `\\` and `\<newline>` are escapes.
fn unescape_double_quoted(raw: &str, out: &mut String) {
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or('\\')),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
}

/// bash's reading of `$'...'` (dash reads `$` and a single-quoted string).
fn decode_ansi_c(body: &str, out: &mut String) {
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else { break };
        let simple = match e {
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'e' | 'E' => Some('\x1b'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            '\\' | '\'' | '"' | '?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let (radix, max, first) = match e {
            'x' => (16, 2, None),
            'u' => (16, 4, None),
            'U' => (16, 8, None),
            '0'..='7' => (8, 2, Some(e)),
            _ => {
                out.push('\\');
                out.push(e);
                continue;
            }
        };
        let mut digits: String = first.into_iter().collect();
        while digits.len() < max + usize::from(first.is_some()) {
            match chars.peek() {
                Some(d) if d.is_digit(radix) => {
                    digits.push(*d);
                    chars.next();
                }
                _ => break,
            }
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(ch) if !digits.is_empty() => out.push(ch),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
}

/// True when the unquoted parts of `raw` hold a brace expansion (`{a,b}`, `{1..3}`), which bash
/// expands and dash does not.
fn has_brace_expansion(raw: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut open = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('"'), '\\') | (None, '\\') => escaped = true,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{') => open = true,
            (None, ',' | '.') if open => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_argument(line: &str) -> Word {
        let tree = super::super::parse::parse(line).unwrap();
        let command = tree.root_node().named_child(0).unwrap();
        let arg = command.child_by_field_name("argument").unwrap();
        value(arg, line)
    }

    #[test]
    fn quotes_are_removed_and_run_time_parts_flagged() {
        let lit = |t: &str| (t.to_string(), false);
        let get = |line: &str| {
            let w = first_argument(line);
            (w.text, w.dynamic)
        };
        assert_eq!(get(r#"x "r"m"#), lit("rm"));
        assert_eq!(get(r#"x 'a b'"#), lit("a b"));
        assert_eq!(get(r#"x a\ b"#), lit("a b"));
        assert_eq!(get(r#"x "q\"\$""#), lit("q\"$"));
        assert_eq!(get(r"x $'\x72\u006d\n'"), lit("rm\n"));
        assert_eq!(get("x 12"), lit("12"));
        for dynamic in [
            "x $a",
            "x \"$a\"",
            "x *.o",
            "x ~/b",
            "x {a,b}",
            "x a{1..3}",
            "x ${a}",
        ] {
            assert!(first_argument(dynamic).dynamic, "{dynamic}");
        }
        assert!(!first_argument("x '{a,b}'").dynamic);
        assert!(!first_argument("x '*'").dynamic);
    }

    #[test]
    fn a_word_is_rebuilt_quoted_with_its_run_time_parts_kept() {
        let shell = |line: &str| first_argument(line).shell;
        assert_eq!(shell(r#"x "r"m"#).as_deref(), Some("'r'm"));
        assert_eq!(shell("x 'a b'").as_deref(), Some("'a b'"));
        assert_eq!(shell(r"x a\;b").as_deref(), Some("a';'b"));
        assert_eq!(
            shell(r#"x "it's $HOME""#).as_deref(),
            Some(r#"'it'\''s '"${HOME}""#)
        );
        assert_eq!(shell("x $1*.o").as_deref(), Some("${1}*.o"));
        assert_eq!(shell("x ~/[a-z]{1,2}").as_deref(), Some("~/[a-z]{1,2}"));
        assert_eq!(shell("x '#'").as_deref(), Some("'#'"));
        assert_eq!(shell("x ''").as_deref(), Some("''"));
        assert_eq!(shell("x $(id)"), None);
        assert_eq!(shell("x ${a:-b}"), None);
    }
}
