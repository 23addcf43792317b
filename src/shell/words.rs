//! The value of one word node: quoting removed, and `dynamic` set when part of it is only known
//! at run time (an expansion, a substitution, an unquoted glob or brace expansion, a leading `~`).

use tree_sitter::Node;

/// A word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text with quoting removed; run-time parts kept as written.
    pub text: String,
    /// True when the value is only known at run time.
    pub dynamic: bool,
}

impl Word {
    /// A word whose value is `text` (an argv element).
    pub fn literal(text: String) -> Word {
        Word {
            text,
            dynamic: false,
        }
    }
}

/// The value of `node` (a word, string, raw string, concatenation, number or expansion).
pub fn value(node: Node, src: &str) -> Word {
    let raw = &src[node.byte_range()];
    let mut word = Word {
        text: String::new(),
        dynamic: false,
    };
    push(node, src, &mut word);
    if has_brace_expansion(raw) {
        word.dynamic = true;
    }
    word
}

fn push(node: Node, src: &str, word: &mut Word) {
    let raw = &src[node.byte_range()];
    match node.kind() {
        "word" | "number" => unescape_unquoted(raw, word),
        "raw_string" => word
            .text
            .push_str(raw.get(1..raw.len().saturating_sub(1)).unwrap_or("")),
        "string" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() == "string_content" {
                    unescape_double_quoted(&src[child.byte_range()], &mut word.text);
                } else {
                    word.text.push_str(&src[child.byte_range()]);
                    word.dynamic = true;
                }
            }
        }
        "translated_string" => {
            // bash's `$"..."` (translated with the locale; dash reads `$` and a string).
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                push(child, src, word);
            }
        }
        "ansi_c_string" => decode_ansi_c(
            raw.get(2..raw.len().saturating_sub(1)).unwrap_or(""),
            &mut word.text,
        ),
        "concatenation" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                push(child, src, word);
            }
        }
        _ => {
            word.text.push_str(raw);
            word.dynamic = true;
        }
    }
}

/// An unquoted word: `\x` is `x`, `\<newline>` is nothing; `*`, `?`, `[` and a leading `~` make
/// it a pattern or a path known at run time.
fn unescape_unquoted(raw: &str, word: &mut Word) {
    let mut chars = raw.chars().peekable();
    if raw.starts_with('~') && word.text.is_empty() {
        word.dynamic = true;
    }
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.text.push(next),
            },
            '*' | '?' | '[' => {
                word.dynamic = true;
                word.text.push(c);
            }
            _ => word.text.push(c),
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
        let lit = |t: &str| Word {
            text: t.into(),
            dynamic: false,
        };
        assert_eq!(first_argument(r#"x "r"m"#), lit("rm"));
        assert_eq!(first_argument(r#"x 'a b'"#), lit("a b"));
        assert_eq!(first_argument(r#"x a\ b"#), lit("a b"));
        assert_eq!(first_argument(r#"x "q\"\$""#), lit("q\"$"));
        assert_eq!(first_argument(r"x $'\x72\u006d\n'"), lit("rm\n"));
        assert_eq!(first_argument("x 12"), lit("12"));
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
}
