//! Table: the shell options a checked line may change, and the readers of every spelling that
//! changes one (`set -X`/`+X` clusters, `set -o NAME`/`+o NAME`, `shopt -s`/`-u` with or without
//! `-o`, a shell started with `-X`, `-o NAME`, `-O NAME`).
//!
//! The analysis judges a line as bash and dash run it with their default options. An option that
//! changes how later words are read or where a builtin goes makes that judgement wrong
//! (`shopt -s cdable_vars` sends `cd NAME` to `$NAME`; `keyword` makes a `NAME=value` operand the
//! program's environment; `histexpand` rewrites later lines; `expand_aliases`, `extdebug`, `posix`,
//! `allexport`, ...). So the list is of options known NOT to change it, and everything else is
//! refused.
//!
//! Invariant: a change of an option not in [`SAFE_LETTERS`] / [`SAFE_NAMES`], in any spelling
//! (including an option word known only at run time), yields a reason; listing or querying
//! options (`set -o`, `set +o`, `shopt`, `shopt -p`, `shopt -q NAME`) changes nothing and passes.

/// `set` letters an allowed line may turn on or off: `-e` (errexit), `-u` (nounset), `-x` (xtrace),
/// `-v` (verbose) only stop the shell or print; `-f` (noglob) leaves a pattern as the literal word,
/// one of the values the analysis already assumed a pattern could expand to.
pub const SAFE_LETTERS: &[char] = &['e', 'u', 'x', 'v', 'f'];

/// `set -o` / `shopt -o` names an allowed line may turn on or off: the long names of
/// [`SAFE_LETTERS`], and `pipefail` (a pipeline's status). No `shopt` option (`-s`/`-u` without
/// `-o`) is among them: none is needed by a build or test line, and several move `cd`
/// (`cdable_vars`, `autocd`), expand words differently (`extglob`, `nullglob`, `failglob`,
/// `globstar`, `nocaseglob`, `dotglob`) or run other code (`expand_aliases`, `extdebug`).
pub const SAFE_NAMES: &[&str] = &[
    "errexit", "nounset", "xtrace", "verbose", "noglob", "pipefail",
];

fn unsafe_name(on: bool, name: &str) -> String {
    let sign = if on { '-' } else { '+' };
    format!("`{sign}o {name}`")
}

/// A change of shell options by the `set` builtin that is not on the list: why it is refused.
pub fn refused_set(args: &[super::words::Word]) -> Option<String> {
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if w.dynamic {
            return Some(format!(
                "`set` with an option known only at run time (`{t}`), which may change how later words are read"
            ));
        }
        // `--` and `-` end the options (`-` also turns off -x and -v); an operand starts the
        // positional parameters; `+` alone is an empty cluster (bash reads on: `set + -k`).
        if t == "--" || t == "-" || !(t.starts_with('-') || t.starts_with('+')) {
            return None;
        }
        let on = t.starts_with('-');
        for c in t[1..].chars() {
            if c == 'o' {
                // `set -o NAME`: NAME is the next word; none, or a word starting with `-`/`+`,
                // lists the options instead (bash's set_builtin).
                let next = args.get(i + 1);
                match next {
                    Some(n) if n.dynamic => {
                        return Some(format!(
                            "`set {t} {}` (an option name known only at run time)",
                            n.text
                        ))
                    }
                    Some(n) if !n.text.is_empty() && !n.text.starts_with(['-', '+']) => {
                        i += 1;
                        if !SAFE_NAMES.contains(&n.text.as_str()) {
                            return Some(refusal(&unsafe_name(on, &n.text)));
                        }
                    }
                    _ => {}
                }
            } else if !SAFE_LETTERS.contains(&c) {
                let sign = if on { '-' } else { '+' };
                return Some(refusal(&format!("`set {sign}{c}`")));
            }
        }
        i += 1;
    }
    None
}

/// A change of shell options by `shopt` that is not on the list: why it is refused. `shopt -s`/`-u`
/// changes bash's own options (none is listed) or, with `-o`, `set -o`'s.
pub fn refused_shopt(args: &[super::words::Word]) -> Option<String> {
    let mut change = false;
    let mut set_names = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if w.dynamic {
            return Some(format!(
                "`shopt` with a word known only at run time (`{t}`), which may name an option it changes"
            ));
        }
        if t == "--" {
            i += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        for c in t[1..].chars() {
            match c {
                's' | 'u' => change = true,
                'o' => set_names = true,
                'p' | 'q' => {}
                _ => return Some(refusal(&format!("`shopt -{c}`"))),
            }
        }
        i += 1;
    }
    if let Some(d) = args[i..].iter().find(|w| w.dynamic) {
        return Some(format!(
            "`shopt` with an option name known only at run time (`{}`)",
            d.text
        ));
    }
    if !change {
        return None;
    }
    let names = &args[i..];
    match names
        .iter()
        .find(|n| !set_names || !SAFE_NAMES.contains(&n.text.as_str()))
    {
        Some(n) => {
            let flag = if set_names { " -o" } else { "" };
            Some(refusal(&format!("`shopt{flag}` of `{}`", n.text)))
        }
        None => None,
    }
}

/// A shell's invocation option: a letter of a `-X`/`+X` cluster (`value` is the word after `-o`
/// or `-O`, when the letter is one of them) that is not on the list: why it is refused. The
/// letters that start the shell (`c`, `s`, `i`, `l`) and zsh's `-f` / fish's `-N` (no start-up
/// file) are the caller's.
pub fn refused_invocation(on: bool, letter: char, value: Option<&str>) -> Option<String> {
    let sign = if on { '-' } else { '+' };
    match letter {
        'o' => match value {
            Some(v) if SAFE_NAMES.contains(&v) => None,
            Some(v) => Some(refusal(&unsafe_name(on, v))),
            None => Some(refusal(&format!("`{sign}o` without an option name"))),
        },
        'O' => Some(refusal(&format!(
            "`{sign}O {}` (a `shopt` option)",
            value.unwrap_or("")
        ))),
        c if SAFE_LETTERS.contains(&c) => None,
        c => Some(refusal(&format!("`{sign}{c}`"))),
    }
}

fn refusal(what: &str) -> String {
    format!(
        "the shell option change {what}: an allowed line may change only `set -e`/`-u`/`-x`/`-v`/`-f` and `-o errexit`/`nounset`/`xtrace`/`verbose`/`noglob`/`pipefail` (other options change how later words are read or where `cd` goes)"
    )
}

#[cfg(test)]
mod tests {
    use super::super::{analyse_argv, analyse_line};

    fn refused(line: &str) -> bool {
        analyse_line(line)
            .refusals
            .iter()
            .any(|r| r.construct.contains("option"))
    }

    #[test]
    fn every_spelling_of_a_change_off_the_list_is_refused() {
        for line in [
            // r7: cdable_vars moves `cd NAME` to `$NAME`; keyword makes operands environment.
            "shopt -s cdable_vars; cd TZ && make -f stdin",
            "shopt -so keyword",
            "shopt -s -o keyword",
            "shopt -os keyword",
            "shopt -o -s keyword",
            "shopt -so histexpand",
            "shopt -s -- cdable_vars",
            "shopt -u cdable_vars",
            "shopt -s autocd",
            "shopt -s extglob",
            "shopt -s nullglob",
            "shopt -s expand_aliases",
            "shopt -s $X",
            "shopt -s cdable_vars$X",
            "shopt $X cdable_vars",
            "shopt -x cdable_vars",
            "shopt -so pipefail keyword",
            "set -k",
            "set -ek",
            "set -o keyword",
            "set -eo keyword",
            "set -euo keyword",
            "set +o posix",
            "set -o posix",
            "set -o histexpand",
            "set -H",
            "set +k",
            "set -a",
            "set -B",
            "set +B",
            "set -P",
            "set -T",
            "set -E",
            "set -h",
            "set -C",
            "set -o emacs",
            "set -o pipefail -o keyword",
            "set + -k",
            "set -oo pipefail keyword",
            "set $X",
            "set -o $X",
            "set -e$X",
            "command set -o keyword",
            "command -p shopt -s cdable_vars",
            "builtin shopt -s cdable_vars",
            "builtin set -k",
            "command builtin set -o keyword",
            "time shopt -s cdable_vars",
            "! shopt -s cdable_vars",
            "{ shopt -s cdable_vars; }",
            "(shopt -s cdable_vars)",
            "if shopt -s cdable_vars; then :; fi",
            "env shopt -s cdable_vars",
            "bash -O cdable_vars -c ls",
            "bash +O cdable_vars -c ls",
            "bash -O -c ls",
            "bash -o keyword -c ls",
            "bash +o posix -c ls",
            "bash -o -c ls",
            "bash -co keyword ls",
            "bash -k -c ls",
            "bash -H -c ls",
            "bash -a -c ls",
            "bash -p -c ls",
            "bash --posix -c ls",
            "sh -o posix -c ls",
            "fish -N -C 'rm x' -c ls",
            "sh -c 'shopt -s cdable_vars; cd TZ'",
            "sh -c \"bash -O cdable_vars -c 'cd TZ'\"",
            "env bash -O cdable_vars -c ls",
        ] {
            assert!(refused(line), "{line}: {:?}", analyse_line(line).refusals);
        }
        for argv in [
            &["bash", "-O", "cdable_vars", "-c", "cd TZ"][..],
            &["bash", "-o", "keyword", "-c", "ls"],
            &["bash", "-kc", "ls"],
            &["sh", "-c", "shopt -so keyword"],
        ] {
            let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
            assert!(
                analyse_argv(&argv)
                    .refusals
                    .iter()
                    .any(|r| r.construct.contains("option")),
                "{argv:?}"
            );
        }
    }

    #[test]
    fn the_listed_changes_and_queries_pass() {
        for line in [
            "set -e",
            "set -euo pipefail",
            "set -eux",
            "set +e",
            "set +eux",
            "set -o errexit -o nounset -o pipefail -o xtrace",
            "set +o pipefail",
            "set -ev",
            "set -f",
            "set -o noglob",
            "set -o",
            "set +o",
            "set",
            "set -- -k -o keyword",
            "set - -k",
            "set -e -- $X",
            "set -e a b -k",
            "shopt",
            "shopt -p",
            "shopt -q cdable_vars",
            "shopt -qo keyword",
            "shopt -po",
            "shopt cdable_vars",
            "shopt -s",
            "shopt -so pipefail",
            "shopt -uo errexit nounset",
            "command set -e",
            "bash -e -c ls",
            "bash -euxo pipefail -c ls",
            "bash +o pipefail -c ls",
            "sh -e -o pipefail -c 'make all'",
            "bash --norc --noprofile -c ls",
            "zsh -fc ls",
            "fish -N -c ls",
        ] {
            let a = analyse_line(line);
            assert!(a.refusals.is_empty(), "{line}: {:?}", a.refusals);
        }
    }
}
