//! The tree walk: turns tree-sitter-bash's tree into simple commands (handed to
//! [`super::wrappers`]) and reports every construct outside "plain commands of literal words
//! joined by `&&` `||` `;` `|`, redirected to literal paths". It descends into refused
//! constructs too, so a deny list still sees the commands inside them.

use tree_sitter::Node;

use super::words::{value, Word};
use super::wrappers::{programs, Context};
use super::{parse, Analysis, Assignment, Refusal, RefusalReason, MAX_DEPTH};

/// Shell variables that change how the shell reads or runs what follows (prompt strings are
/// expanded with `set -x`, `BASH_ALIASES`/`BASH_CMDS` are the alias and hash tables).
const SHELL_SENSITIVE: &[&str] = &[
    "PS0",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT_COMMAND",
    "SHELLOPTS",
    "BASHOPTS",
    "BASH_ALIASES",
    "BASH_CMDS",
    "BASH_XTRACEFD",
    "GLOBIGNORE",
    "EXECIGNORE",
    "CDPATH",
    "ENV",
    "BASH_ENV",
    "PATH",
    "FUNCNEST",
    "BASH_COMPAT",
    "POSIXLY_CORRECT",
    "BASH_LOADABLES_PATH",
    "HISTFILE",
];

/// Deepest nesting of syntax nodes walked (the walk is recursive; tree-sitter's tree is not bounded).
const MAX_TREE_DEPTH: usize = 256;

/// Operators allowed between commands.
const JOINERS: &[&str] = &["&&", "||", ";", "|", "\n"];

/// Analyses `line` into `out`. `position` is the UTF-16 index of the line inside the outermost
/// one (nested lines from `sh -c` report the position of their argument).
pub fn analyse(line: &str, position: usize, depth: usize, out: &mut Analysis) {
    if depth > MAX_DEPTH {
        refuse(
            out,
            RefusalReason::ShellConstruct,
            "shell lines nested too deeply",
            position,
        );
        return;
    }
    let Some(tree) = parse::parse(line) else {
        out.malformed = true;
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.malformed = true;
    }
    let mut walk = Walk {
        src: line,
        base: position,
        nested: depth > 0,
        depth,
        level: 0,
        cursor: (0, 0),
        out,
    };
    walk.visit(root);
    if depth == 0 && line.contains("\\\n") {
        walk.joined_continuations();
    }
    if depth == 0 && (line.contains("[[") || line.contains("((")) {
        walk.dash_reading();
    }
}

fn refuse(out: &mut Analysis, reason: RefusalReason, construct: &str, position: usize) {
    out.refusals.push(Refusal {
        reason,
        construct: construct.to_string(),
        position,
        word: None,
    });
}

struct Walk<'a, 'o> {
    src: &'a str,
    base: usize,
    nested: bool,
    depth: usize,
    /// Current recursion depth of the walk.
    level: usize,
    /// The last (byte offset, UTF-16 index) computed by `position`.
    cursor: (usize, usize),
    out: &'o mut Analysis,
}

impl Walk<'_, '_> {
    /// UTF-16 index of `node`, counted on from the last position asked for (the walk goes
    /// mostly forward, so a long line is not counted again for every command).
    fn position(&mut self, node: Node) -> usize {
        if self.nested {
            return self.base;
        }
        let byte = node.start_byte();
        let (from_byte, from_index) = if byte >= self.cursor.0 {
            self.cursor
        } else {
            (0, 0)
        };
        let index = from_index + self.src[from_byte..byte].encode_utf16().count();
        self.cursor = (byte, index);
        index
    }

    fn refuse(&mut self, node: Node, construct: &str) {
        let position = self.position(node);
        refuse(self.out, RefusalReason::ShellConstruct, construct, position);
    }

    fn text(&self, node: Node) -> &str {
        &self.src[node.byte_range()]
    }

    fn visit(&mut self, node: Node) {
        if self.level >= MAX_TREE_DEPTH {
            if !self.out.malformed {
                self.refuse(node, "constructs nested too deeply");
            }
            self.out.malformed = true;
            return;
        }
        self.level += 1;
        self.visit_node(node);
        self.level -= 1;
    }

    fn visit_node(&mut self, node: Node) {
        if node.is_missing() {
            self.out.malformed = true;
        }
        match node.kind() {
            "program" | "list" | "pipeline" => {
                // `a && b && c` nests lists to the left as deep as the line is long: flattened
                // here without recursion.
                let mut stack = vec![node];
                while let Some(n) = stack.pop() {
                    if !matches!(n.kind(), "program" | "list" | "pipeline") {
                        self.visit(n);
                        continue;
                    }
                    self.check_joiners(n);
                    let mut cursor = n.walk();
                    let children: Vec<Node> = n.named_children(&mut cursor).collect();
                    stack.extend(children.into_iter().rev());
                }
            }
            "redirected_statement" | "negated_command" => self.visit_named_children(node),
            "command" => self.command(node),
            "variable_assignment" => self.command(node),
            "variable_assignments" => self.command(node),
            "declaration_command" => self.declaration(node),
            "unset_command" => self.unset(node),
            "test_command" => self.test(node),
            "comment" => {}
            "for_statement" => {
                if let Some(variable) = node.child_by_field_name("variable") {
                    let name = self.text(variable).to_string();
                    self.out.assignments.push(Assignment {
                        name,
                        dynamic: false,
                    });
                }
                self.refuse(node, "a `for`/`select` loop");
                self.visit_named_children(node);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(node),
            "ERROR" => {
                self.out.malformed = true;
                self.visit_named_children(node);
            }
            kind => {
                let construct = construct_name(kind);
                self.refuse(node, &construct);
                self.visit_named_children(node);
            }
        }
    }

    fn visit_named_children(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.visit(child);
        }
    }

    /// Only `&&`, `||`, `;`, `|` and newlines may join commands (`&` and `|&` may not).
    fn check_joiners(&mut self, node: Node) {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if child.is_named() || child.is_missing() {
                continue;
            }
            let op = child.kind();
            if !JOINERS.contains(&op) {
                let construct = match op {
                    "&" => "a background job `&`".to_string(),
                    "|&" => "the pipe `|&` (dash reads it differently)".to_string(),
                    other => format!("the operator `{other}`"),
                };
                self.refuse(child, &construct);
            }
        }
    }

    /// A word in a command: refuses the constructs inside it (visiting the commands they hold)
    /// and returns its value.
    fn word(&mut self, node: Node) -> Word {
        self.check_word(node);
        value(node, self.src)
    }

    fn check_word(&mut self, node: Node) {
        if self.level >= MAX_TREE_DEPTH {
            return self.visit(node);
        }
        self.level += 1;
        self.check_word_node(node);
        self.level -= 1;
    }

    fn check_word_node(&mut self, node: Node) {
        match node.kind() {
            "word" | "number" | "raw_string" | "string_content" | "variable_name" => {}
            "simple_expansion" => {}
            "ansi_c_string" => {
                self.refuse(node, "ANSI-C quoting `$'...'` (dash reads it differently)")
            }
            "expansion" => {
                if let Some(name) = assigning_expansion(self.text(node)) {
                    self.out.assignments.push(Assignment {
                        name,
                        dynamic: false,
                    });
                }
                if !is_plain_expansion(self.text(node)) {
                    let construct =
                        format!("parameter expansion with an operator `{}`", self.text(node));
                    self.refuse(node, &construct);
                }
                self.check_children(node);
            }
            "string" | "concatenation" => self.check_children(node),
            _ => self.visit(node),
        }
    }

    fn check_children(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.check_word(child);
        }
    }

    /// A simple command (or a statement of assignments only).
    fn command(&mut self, node: Node) {
        let mut words = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            node.named_children(&mut cursor).collect()
        };
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assignment(child),
                "variable_assignments" => {
                    let mut c = child.walk();
                    let inner: Vec<Node> = child.named_children(&mut c).collect();
                    for a in inner {
                        self.assignment(a);
                    }
                }
                "command_name" => {
                    if let Some(name) = child.named_child(0) {
                        if name.kind() == "arithmetic_expansion" {
                            // `(( ... ))` read as a command: arithmetic, not a program.
                            self.check_word(name);
                            continue;
                        }
                        words.push(self.word(name));
                    }
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child)
                }
                "comment" => {}
                _ => words.push(self.word(child)),
            }
        }
        self.run(node, &words);
    }

    fn run(&mut self, node: Node, words: &[Word]) {
        if words.is_empty() {
            return;
        }
        let position = self.position(node);
        let mut cx = Context {
            out: self.out,
            position,
            depth: self.depth,
        };
        programs(words, &mut cx);
    }

    fn assignment(&mut self, node: Node) {
        let mut name = None;
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_name" if name.is_none() => name = Some(self.text(child).to_string()),
                "subscript" => {
                    self.refuse(
                        child,
                        "an assignment to an array element (bash evaluates its subscript)",
                    );
                    let text = self.text(child);
                    name = Some(text.split('[').next().unwrap_or(text).to_string());
                    self.check_children(child);
                }
                "array" => {
                    self.refuse(child, "an array assignment `name=(...)`");
                    self.check_children(child);
                }
                _ => self.check_word(child),
            }
        }
        if let Some(name) = name {
            if SHELL_SENSITIVE.contains(&name.as_str()) {
                let construct = format!("an assignment to `{name}`, which changes how the shell reads or runs what follows");
                self.refuse(node, &construct);
            }
            self.out.assignments.push(Assignment {
                name,
                dynamic: false,
            });
        }
    }

    /// `declare`, `typeset`, `export`, `readonly`, `local`.
    fn declaration(&mut self, node: Node) {
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_default();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => self.assignment(child),
                "variable_name" => {
                    let name = self.text(child).to_string();
                    if SHELL_SENSITIVE.contains(&name.as_str()) {
                        let construct = format!("`{keyword} {name}`, which changes how the shell reads or runs what follows");
                        self.refuse(child, &construct);
                    }
                    self.out.assignments.push(Assignment {
                        name,
                        dynamic: false,
                    });
                }
                "word" if self.text(child).starts_with(['-', '+']) => {
                    let option = self.text(child).to_string();
                    if option
                        .chars()
                        .skip(1)
                        .any(|c| "niaAfFgx".contains(c) && !(c == 'x' || c == 'g'))
                    {
                        let construct = format!(
                            "`{keyword} {option}` (attributes that make bash evaluate values, name references or functions)"
                        );
                        self.refuse(child, &construct);
                    }
                }
                _ => {
                    let word = self.word(child);
                    let construct = format!(
                        "`{keyword}` with a name known only at run time (`{}`)",
                        word.text
                    );
                    self.refuse(child, &construct);
                    self.out.assignments.push(Assignment {
                        name: word.text,
                        dynamic: true,
                    });
                }
            }
        }
        self.run(node, &[Word::literal(keyword)]);
    }

    fn unset(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            let word = self.word(child);
            if word.dynamic || word.text.contains('[') {
                let construct = format!(
                    "`unset {}` (a subscript or a name known only at run time)",
                    word.text
                );
                self.refuse(child, &construct);
            }
        }
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_else(|| "unset".into());
        self.run(node, &[Word::literal(keyword)]);
    }

    /// `[ ... ]` is the `[` builtin; `[[ ... ]]` and `(( ... ))` are refused (bash evaluates
    /// arithmetic in them, and dash reads them as commands).
    fn test(&mut self, node: Node) {
        let text = self.text(node);
        if text.starts_with("[[") {
            self.refuse(
                node,
                "a `[[ ... ]]` test (bash evaluates arithmetic in it; dash runs it as commands)",
            );
            self.visit_test(node);
            return;
        }
        if text.starts_with("((") {
            self.refuse(node, "arithmetic `(( ... ))`");
            self.visit_test(node);
            return;
        }
        self.visit_test(node);
        self.run(node, &[Word::literal("[".into())]);
    }

    fn visit_test(&mut self, node: Node) {
        if self.level >= MAX_TREE_DEPTH {
            return self.visit(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "unary_expression"
                | "binary_expression"
                | "parenthesized_expression"
                | "negated_expression" => self.visit_test(child),
                "test_operator" => {
                    let op = self.text(child).to_string();
                    if op == "-v" || op == "-R" {
                        let construct = format!(
                            "the test `{op}` (bash evaluates the subscript of the name it tests)"
                        );
                        self.refuse(child, &construct);
                    }
                }
                "word" | "string" | "raw_string" | "number" | "concatenation"
                | "simple_expansion" | "expansion" | "ansi_c_string" => self.check_word(child),
                "regex" | "extglob_pattern" => {}
                _ => self.visit(child),
            }
        }
    }

    fn redirect(&mut self, node: Node) {
        match node.kind() {
            "file_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                for child in children {
                    if !child.is_named() {
                        let op = child.kind();
                        if op == "&>" || op == "&>>" {
                            let construct =
                                format!("the redirection `{op}` (dash reads it as `&` and `>`)");
                            self.refuse(child, &construct);
                        }
                        continue;
                    }
                    if child.kind() == "file_descriptor" {
                        continue;
                    }
                    let word = self.word(child);
                    if word.dynamic {
                        let construct = format!(
                            "a redirection to `{}`, a path known only at run time",
                            word.text
                        );
                        self.refuse(child, &construct);
                    }
                }
            }
            "heredoc_redirect" => self.heredoc(node),
            "herestring_redirect" => {
                self.refuse(node, "a here-string `<<<` (dash reads it differently)");
                self.check_children(node);
            }
            _ => self.visit(node),
        }
    }

    fn heredoc(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        let mut delimiter = None;
        let mut quoted = false;
        let mut expands = false;
        for child in children {
            match child.kind() {
                "heredoc_start" => {
                    let start = self.text(child);
                    let plain = |s: &str| {
                        !s.is_empty()
                            && s.chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    };
                    let inner = start.get(1..start.len().saturating_sub(1)).unwrap_or("");
                    if plain(start) {
                        delimiter = Some(start.to_string());
                    } else if start.len() >= 2
                        && (start.starts_with('\'') && start.ends_with('\'')
                            || start.starts_with('"') && start.ends_with('"'))
                        && plain(inner)
                    {
                        delimiter = Some(inner.to_string());
                        quoted = true;
                    } else {
                        let construct = format!(
                            "a here-document delimiter `{}` that is not a plain word",
                            start.escape_debug()
                        );
                        self.refuse(child, &construct);
                    }
                }
                "heredoc_body" => {
                    let body = self.text(child);
                    if body.contains(['$', '`', '\\']) {
                        expands = true;
                    }
                    if !quoted {
                        let mut c = child.walk();
                        let inner: Vec<Node> = child.named_children(&mut c).collect();
                        for part in inner {
                            if part.kind() != "heredoc_content" {
                                self.check_word(part);
                            }
                        }
                    }
                }
                "heredoc_end" => {
                    if delimiter.as_deref() != Some(self.text(child)) {
                        self.refuse(
                            child,
                            "a here-document whose end does not match its delimiter",
                        );
                    }
                }
                _ => self.visit(child),
            }
        }
        if expands && !quoted && delimiter.is_some() {
            self.refuse(
                node,
                "a here-document whose body the shell expands (quote its delimiter: <<'EOF')",
            );
        }
    }

    /// A backslash-newline is removed before the shell splits words (`r\<newline>m` is `rm`),
    /// which the grammar does not do everywhere: refused, and the joined line's programs are
    /// reported as guesses for a deny list.
    fn joined_continuations(&mut self) {
        let at = self.src.find("\\\n").unwrap_or(0);
        let position = self.src[..at].encode_utf16().count();
        let construct = "a line continuation (backslash-newline)";
        refuse(self.out, RefusalReason::ShellConstruct, construct, position);
        let mut other = Analysis::default();
        analyse(&self.src.replace("\\\n", ""), 0, self.depth + 1, &mut other);
        for mut program in other.programs {
            program.guessed = true;
            self.out.programs.push(program);
        }
    }

    /// What dash reads in a line holding `[[` or `((`: `[[` is a command word and `((` two
    /// subshells. Only the programs are taken (a deny list checks them; an allow list has already
    /// refused the construct).
    fn dash_reading(&mut self) {
        let dash = self
            .src
            .replace("[[", "xx")
            .replace("]]", "xx")
            .replace("((", "( ")
            .replace("))", ") ");
        let mut other = Analysis::default();
        analyse(&dash, 0, self.depth + 1, &mut other);
        for mut program in other.programs {
            if program.word == "xx" {
                continue;
            }
            program.guessed = true;
            self.out.programs.push(program);
        }
    }
}

/// The variable `${NAME:=word}` / `${NAME=word}` assigns.
fn assigning_expansion(text: &str) -> Option<String> {
    let inner = text.strip_prefix("${")?;
    let end = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
    let rest = &inner[end..];
    (end > 0 && (rest.starts_with(":=") || rest.starts_with('='))).then(|| inner[..end].to_string())
}

/// `${name}` without an operator.
fn is_plain_expansion(text: &str) -> bool {
    text.strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .is_some_and(|name| {
            !name.is_empty()
                && (name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    || name.chars().all(|c| c.is_ascii_digit()))
        })
}

fn construct_name(kind: &str) -> String {
    match kind {
        "subshell" => "a subshell `( ... )`".into(),
        "compound_statement" => "a group `{ ...; }`".into(),
        "if_statement" => "an `if` statement".into(),
        "while_statement" => "a `while`/`until` loop".into(),
        "for_statement" => "a `for`/`select` loop".into(),
        "c_style_for_statement" => "a `for (( ))` loop".into(),
        "case_statement" => "a `case` statement".into(),
        "function_definition" => "a function definition".into(),
        "arithmetic_expansion" => "arithmetic `$(( ))`".into(),
        "command_substitution" => "a command substitution `$( )`".into(),
        "process_substitution" => "a process substitution `<( )`".into(),
        "translated_string" => "a translated string `$\"...\"`".into(),
        "brace_expression" => "a brace expansion".into(),
        other => format!("the shell construct `{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{analyse_line, RefusalReason};

    /// The first refusal (or "malformed"), for assertions.
    fn refused(line: &str) -> Option<String> {
        let a = analyse_line(line);
        a.refusals
            .first()
            .map(|r| format!("{}@{}", r.construct, r.position))
            .or(a.malformed.then(|| "malformed".into()))
    }

    #[test]
    fn plain_commands_are_understood() {
        for line in [
            "cd x && npm test 2>&1 | tail -50",
            "ls -la; git status || echo 'no git'\nmake",
            "grep -rn \"a b\" src > out.txt 2>/dev/null < in",
            "FOO=1 BAR=x npm test",
            "export NODE_ENV=test; npm test",
            "[ -d node_modules ] || npm ci",
            "cat <<'EOF'\n$(rm x)\nEOF",
            "cat <<EOF\nplain text\nEOF",
            "! grep x f # comment",
            "echo $HOME \"$PWD\" ${USER}",
        ] {
            assert_eq!(refused(line), None, "{line}");
        }
    }

    #[test]
    fn the_issues_dash_and_bash_attacks_are_refused() {
        for line in [
            "((rm -f y))",
            "[[ x ; rm -f y ; ]]",
            "set -- a; for x do rm -f y; done",
            "cat <<EO\\\nF\n$(rm -f y)\nEO\\\nF",
            "x='a[$(rm -f y)]'; echo $((x))",
            "x='a[$(rm -f y)]'; [[ $x -eq 0 ]]",
            "x='a[$(rm -f y)]'; let x",
            "x='a[$(rm -f y)]'; declare -i z=x",
            "x='a[$(rm -f y)]'; printf -v \"$x\" 1",
            "x='a[$(rm -f y)]'; read \"$x\" < /dev/null",
            "x='a[$(rm -f y)]'; test -v \"$x\"",
            "x='a[$(rm -f y)]'; [ -v \"$x\" ]",
            "x='$(rm -f y)'; echo ${x@P}",
            "echo ${x:-y}",
            "echo $(id) `id` <(id)",
            "f() { ls; }",
            "(ls)",
            "{ ls; }",
            "if true; then ls; fi",
            "while true; do ls; done",
            "case x in x) ls;; esac",
            "eval ls",
            ". ./x",
            "source x",
            "exec ls",
            "trap 'rm x' EXIT",
            "a[$(id)]=1",
            "b=(1 2)",
            "PS4='$(rm x)'; set -x; ls",
            "echo $'\\x72m'",
            "ls |& cat",
            "ls &",
            "cat <<< x",
            "ls &> f",
            "ls > $F",
            "cat <<EOF\n$(rm x)\nEOF",
        ] {
            assert!(refused(line).is_some(), "{line}");
        }
    }

    #[test]
    fn a_refusal_names_the_construct_and_its_position() {
        let a = analyse_line("ls; echo é $((1+2))");
        let r = &a.refusals[0];
        assert_eq!(r.reason, RefusalReason::ShellConstruct);
        assert!(r.construct.contains("arithmetic"), "{}", r.construct);
        assert_eq!(r.position, "ls; echo é ".encode_utf16().count());
    }

    #[test]
    fn a_deny_list_still_sees_commands_inside_refused_constructs_and_dash_readings() {
        let words = |line: &str| -> Vec<String> {
            analyse_line(line)
                .programs
                .into_iter()
                .map(|p| p.word)
                .collect()
        };
        assert!(words("for x in a; do rm y; done").contains(&"rm".to_string()));
        assert!(words("echo $(rm y)").contains(&"rm".to_string()));
        assert!(words("((rm -f y))").contains(&"rm".to_string()));
        assert!(words("[[ x ; rm -f y ; ]]").contains(&"rm".to_string()));
        assert!(words("set -- a; for x do rm -f y; done").contains(&"rm".to_string()));
        assert!(words("echo $'\\x72m' | xargs $'\\x72m'").contains(&"rm".to_string()));
    }

    #[test]
    fn deep_and_large_lines_are_bounded() {
        let deep = format!("{}ls{}", "( ".repeat(100_000), " )".repeat(100_000));
        let a = analyse_line(&deep);
        assert!(a.malformed && !a.refusals.is_empty());
        let subst = format!("{}ls{}", "$(".repeat(5_000), ")".repeat(5_000));
        assert!(analyse_line(&subst).malformed);
        let finds = "find . -exec ".repeat(50_000);
        assert!(!analyse_line(&finds).refusals.is_empty());
        let many = vec!["echo x"; 20_000].join(" && ");
        assert_eq!(analyse_line(&many).programs.len(), 20_000);
    }
}
