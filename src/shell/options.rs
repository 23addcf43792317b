//! Reading a program's options with its real grammar, as `getopt_long` (and git's parse-options,
//! npm's nopt) read them: short options clustered (`-xI prog`, `-xIprog`), values attached or in
//! the next word, `--name=value` and `--name value`, unambiguous abbreviations of long names
//! (`--to-com=` is `--to-command=`), `--` ending the options. The grammars are data (see
//! `wrappers.rs`, `runners.rs`); this module only reads words with them.
//!
//! Invariant: an option the grammar does not list, or an abbreviation that matches more than one
//! name, is an error naming it; the caller refuses it rather than guessing what follows.

/// A program's option grammar.
#[derive(Default, Clone, Copy)]
pub struct Spec {
    /// Short options, getopt-style: a letter, then `:` when it takes a value (the rest of the
    /// cluster or the next word) or `::` when it takes an attached value only.
    pub short: &'static str,
    /// Long option names: `name`, `name=` (a value, attached or the next word) or `name==` (an
    /// attached value only).
    pub long: &'static [&'static str],
    /// Long names may be abbreviated to any unambiguous prefix.
    pub abbreviate: bool,
    /// Options may follow operands (GNU's permutation); otherwise the first operand ends them.
    pub permute: bool,
    /// `-NUM` is an option (`nice -10`).
    pub numeric: bool,
}

/// How an option takes a value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arg {
    /// No value.
    No,
    /// A value, attached or in the next word.
    Required,
    /// An attached value only.
    Attached,
}

/// An option found: its canonical name (`"x"` or the full long name) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// The letter or the full long name.
    pub name: String,
    /// Its value, when it takes one.
    pub value: Option<String>,
    /// The word as written (for messages): `-xI`, `--to-com=x`.
    pub written: String,
    /// Index of the word it was read from.
    pub word: usize,
}

/// The result of reading the options of `words`.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Options, in order.
    pub opts: Vec<Opt>,
    /// Indexes of the operands (without permutation: the first operand and every word after it).
    pub operands: Vec<usize>,
}

fn short_arg(spec: &Spec, c: char) -> Option<Arg> {
    let s = spec.short;
    let at = s.char_indices().find(|&(_, x)| x == c && x != ':')?.0;
    let rest = &s[at + c.len_utf8()..];
    Some(if rest.starts_with("::") {
        Arg::Attached
    } else if rest.starts_with(':') {
        Arg::Required
    } else {
        Arg::No
    })
}

fn long_entry(entry: &str) -> (&str, Arg) {
    if let Some(n) = entry.strip_suffix("==") {
        (n, Arg::Attached)
    } else if let Some(n) = entry.strip_suffix('=') {
        (n, Arg::Required)
    } else {
        (entry, Arg::No)
    }
}

/// The long option `given` names: exact, else the one name it abbreviates.
fn long_match(spec: &Spec, given: &str) -> Result<(&'static str, Arg), String> {
    let mut found: Option<(&'static str, Arg)> = None;
    for entry in spec.long {
        let (name, arg) = long_entry(entry);
        if name == given {
            return Ok((name, arg));
        }
        if spec.abbreviate && !given.is_empty() && name.starts_with(given) {
            if found.is_some_and(|(n, _)| n != name) {
                return Err(format!(
                    "`--{given}` (an abbreviation of more than one option)"
                ));
            }
            found = Some((name, arg));
        }
    }
    found.ok_or_else(|| format!("`--{given}`"))
}

/// Reads `words` with `spec`. `Err` names the first option not understood.
pub fn parse(spec: &Spec, words: &[&str]) -> Result<Parsed, String> {
    let mut out = Parsed::default();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if w == "--" {
            out.operands.extend(i + 1..words.len());
            return Ok(out);
        }
        if let Some(long) = w.strip_prefix("--") {
            let (given, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let (name, arg) = long_match(spec, given)?;
            let value = match (arg, attached) {
                (Arg::No, Some(_)) => return Err(format!("`{w}` (takes no value)")),
                (Arg::No, None) => None,
                (_, Some(v)) => Some(v.to_string()),
                (Arg::Attached, None) => None,
                (Arg::Required, None) => {
                    i += 1;
                    Some(words.get(i).map(|s| s.to_string()).unwrap_or_default())
                }
            };
            out.opts.push(Opt {
                name: name.to_string(),
                value,
                written: w.to_string(),
                word: i.min(words.len().saturating_sub(1)),
            });
            i += 1;
            continue;
        }
        if w.len() > 1 && w.starts_with('-') {
            let body = &w[1..];
            if spec.numeric && body.chars().all(|c| c.is_ascii_digit()) {
                out.opts.push(Opt {
                    name: body.to_string(),
                    value: None,
                    written: w.to_string(),
                    word: i,
                });
                i += 1;
                continue;
            }
            let start = i;
            for (at, c) in body.char_indices() {
                let rest = &body[at + c.len_utf8()..];
                let Some(arg) = short_arg(spec, c) else {
                    let cluster = if body.len() > c.len_utf8() {
                        format!(" in `{w}`")
                    } else {
                        String::new()
                    };
                    return Err(format!("`-{c}`{cluster}"));
                };
                let value = match arg {
                    Arg::No => None,
                    Arg::Attached => Some(rest.to_string()).filter(|r| !r.is_empty()),
                    Arg::Required if !rest.is_empty() => Some(rest.to_string()),
                    Arg::Required => {
                        i += 1;
                        Some(words.get(i).map(|s| s.to_string()).unwrap_or_default())
                    }
                };
                out.opts.push(Opt {
                    name: c.to_string(),
                    value,
                    written: w.to_string(),
                    word: start,
                });
                if arg != Arg::No {
                    break;
                }
            }
            i += 1;
            continue;
        }
        if !spec.permute {
            out.operands.extend(i..words.len());
            return Ok(out);
        }
        out.operands.push(i);
        i += 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAR: Spec = Spec {
        short: "xcvf:I:C:",
        long: &[
            "to-command=",
            "totals==",
            "verbose",
            "use-compress-program=",
        ],
        abbreviate: true,
        permute: true,
        numeric: false,
    };

    fn names(words: &[&str]) -> Vec<(String, Option<String>)> {
        parse(&TAR, words)
            .unwrap()
            .opts
            .into_iter()
            .map(|o| (o.name, o.value))
            .collect()
    }

    #[test]
    fn clusters_attached_and_separate_values_and_abbreviations() {
        let v = |s: &str| Some(s.to_string());
        assert_eq!(
            names(&["-xI", "prog", "a.tar"]),
            [("x".into(), None), ("I".into(), v("prog"))]
        );
        assert_eq!(
            names(&["-xIprog"]),
            [("x".into(), None), ("I".into(), v("prog"))]
        );
        assert_eq!(names(&["-xfI"]), [("x".into(), None), ("f".into(), v("I"))]);
        assert_eq!(names(&["--to-com=sh"]), [("to-command".into(), v("sh"))]);
        assert_eq!(names(&["--to-com", "sh"]), [("to-command".into(), v("sh"))]);
        assert_eq!(names(&["--totals"]), [("totals".into(), None)]);
        assert_eq!(names(&["a", "--verb"]), [("verbose".into(), None)]);
        assert_eq!(parse(&TAR, &["a", "--", "-x"]).unwrap().operands, [0, 2]);
    }

    #[test]
    fn unknown_and_ambiguous_options_are_errors_naming_them() {
        assert_eq!(parse(&TAR, &["-xq"]).unwrap_err(), "`-q` in `-xq`");
        assert_eq!(parse(&TAR, &["--nope"]).unwrap_err(), "`--nope`");
        assert!(parse(&TAR, &["--t=x"])
            .unwrap_err()
            .contains("more than one"));
        assert!(parse(&TAR, &["--verbose=1"]).is_err());
    }
}
