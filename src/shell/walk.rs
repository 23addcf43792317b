//! The walk: turns tree-sitter-bash's tree of a line into simple commands (each handed to
//! `command.rs`), reports every construct outside "plain commands of literal words joined by `&&`
//! `||` `;` `|`, redirected to literal paths", and rebuilds the line from what it checked: the
//! [`Piece`]s of the line the shell will run, every word quoted (`words.rs`), every program word
//! left for the caller to replace by the program it checked, every nested `-c` line rebuilt the
//! same way. It descends into refused constructs too, so a deny list still sees the commands
//! inside them.
//!
//! Invariant: any byte that the grammar and the shells could read differently (a control
//! character other than TAB and LF, a backslash-newline) is refused at every depth, never
//! interpreted; a line with no refusal has a rebuild.

use tree_sitter::Node;

use super::command::{Command, Slot, DECLARATION_OPTIONS_REFUSED, SHELL_SENSITIVE};
use super::words::{quote, value, Word};
use super::{parse, Analysis, Assignment, Piece, Refusal, RefusalReason, MAX_DEPTH};

/// Deepest nesting of syntax nodes walked (the walk is recursive; tree-sitter's tree is not bounded).
const MAX_TREE_DEPTH: usize = 256;

/// Operators allowed between commands, and how the rebuild writes them.
const JOINERS: &[(&str, &str)] = &[
    ("&&", " && "),
    ("||", " || "),
    (";", "; "),
    ("|", " | "),
    ("\n", "\n"),
];

/// Analyses `line` into `out` and returns its rebuild (`None` when some part of it is refused).
/// `position` is the UTF-16 index of the line inside the outermost one (nested lines from
/// `sh -c` report the position of their argument).
pub fn analyse(
    line: &str,
    position: usize,
    depth: usize,
    out: &mut Analysis,
) -> Option<Vec<Piece>> {
    if depth > MAX_DEPTH {
        refuse(
            out,
            RefusalReason::ShellConstruct,
            "shell lines nested too deeply",
            position,
        );
        return None;
    }
    let differs = read_differently(line, position, depth, out);
    let Some(tree) = parse::parse(line) else {
        out.malformed = true;
        return None;
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
        pieces: Vec::new(),
        rebuilt: !differs,
        heredocs: Vec::new(),
        need_sep: false,
    };
    walk.visit(root);
    walk.flush_heredocs(true);
    if line.contains("\\\n") || line.contains('\r') {
        walk.guess(&line.replace("\\\n", "").replace('\r', " "), "");
    }
    if depth == 0 && (line.contains("[[") || line.contains("((")) {
        let dash = line
            .replace("[[", "xx")
            .replace("]]", "xx")
            .replace("((", "( ")
            .replace("))", ") ");
        walk.guess(&dash, "xx");
    }
    let Walk {
        pieces, rebuilt, ..
    } = walk;
    rebuilt.then_some(pieces)
}

/// Refuses the bytes the grammar and the shells can read differently: control characters other
/// than TAB and LF (tree-sitter reads backslash-CR-LF as a line continuation; dash and bash read
/// an escaped CR, then a new line) and a backslash-newline anywhere (the shells join the lines
/// before reading words, the grammar does not everywhere). True when one was found.
fn read_differently(line: &str, position: usize, depth: usize, out: &mut Analysis) -> bool {
    let mut index = 0;
    let mut prev = '\0';
    for c in line.chars() {
        let control = (c < ' ' && c != '\t' && c != '\n') || c == '\u{7f}';
        let continuation = prev == '\\' && c == '\n';
        if control || continuation {
            let construct = if control {
                format!("the control character U+{:04X}, which the shells and the policy's grammar can read differently", c as u32)
            } else {
                "a line continuation (backslash-newline), which the shells and the policy's grammar can read differently".to_string()
            };
            let at = if depth > 0 {
                position
            } else {
                position + index - usize::from(continuation)
            };
            refuse(out, RefusalReason::ShellConstruct, &construct, at);
            return true;
        }
        // Even after an escaped backslash (`\\<newline>`): the grammar reads it differently too.
        prev = c;
        index += c.len_utf16();
    }
    false
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
    /// The rebuild so far.
    pieces: Vec<Piece>,
    /// False once a part was met that the rebuild does not write (a refused construct).
    rebuilt: bool,
    /// Here-document bodies (with their end line) waiting for the next line break.
    heredocs: Vec<String>,
    /// A statement was written and no operator since.
    need_sep: bool,
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
        self.rebuilt = false;
        let position = self.position(node);
        refuse(self.out, RefusalReason::ShellConstruct, construct, position);
    }

    fn text(&self, node: Node) -> &str {
        &self.src[node.byte_range()]
    }

    /// Appends text to the rebuild.
    fn emit(&mut self, s: &str) {
        if let Some(Piece::Text(t)) = self.pieces.last_mut() {
            t.push_str(s);
        } else {
            self.pieces.push(Piece::Text(s.to_string()));
        }
    }

    /// Appends a word's rebuild (or gives up the rebuild when it has none).
    fn emit_word(&mut self, word: &Word) {
        match &word.shell {
            Some(s) => {
                let s = s.clone();
                self.emit(&s);
            }
            None => self.rebuilt = false,
        }
    }

    /// Writes the pending here-document bodies after a line break (`end`: the line's end).
    fn flush_heredocs(&mut self, end: bool) {
        if self.heredocs.is_empty() {
            return;
        }
        if end {
            self.emit("\n");
        }
        for body in std::mem::take(&mut self.heredocs) {
            self.emit(&body);
        }
    }

    fn visit(&mut self, node: Node) {
        if self.level >= MAX_TREE_DEPTH {
            if !self.out.malformed {
                self.refuse(node, "constructs nested too deeply");
            }
            self.rebuilt = false;
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
            self.rebuilt = false;
        }
        match node.kind() {
            "program" | "list" | "pipeline" => self.sequence(node),
            "redirected_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.named_children(&mut cursor).collect();
                for child in children {
                    if matches!(
                        child.kind(),
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
                    ) {
                        self.emit(" ");
                        self.redirect(child);
                    } else {
                        self.visit(child);
                    }
                }
            }
            "negated_command" => {
                self.emit("! ");
                self.visit_named_children(node);
            }
            "command" | "variable_assignment" | "variable_assignments" => self.command(node),
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
                self.rebuilt = false;
                self.visit_named_children(node);
            }
            kind => {
                let construct = construct_name(kind);
                self.refuse(node, &construct);
                self.visit_named_children(node);
            }
        }
    }

    /// Statements joined by operators, in order. `a && b && c` nests lists to the left as deep
    /// as the line is long: flattened here without recursion.
    fn sequence(&mut self, node: Node) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if !n.is_named() {
                match JOINERS.iter().find(|(op, _)| *op == n.kind()) {
                    Some((op, written)) => {
                        self.emit(written);
                        self.need_sep = false;
                        if *op == "\n" {
                            self.flush_heredocs(false);
                        }
                    }
                    None => {
                        let construct = match n.kind() {
                            "&" => "a background job `&`".to_string(),
                            "|&" => "the pipe `|&` (dash reads it differently)".to_string(),
                            other => format!("the operator `{other}`"),
                        };
                        self.refuse(n, &construct);
                    }
                }
                continue;
            }
            if matches!(n.kind(), "program" | "list" | "pipeline") {
                let mut cursor = n.walk();
                let children: Vec<Node> = n
                    .children(&mut cursor)
                    .filter(|c| !c.is_missing() || c.is_named())
                    .collect();
                if n.children(&mut n.walk()).any(|c| c.is_missing()) {
                    self.out.malformed = true;
                    self.rebuilt = false;
                }
                stack.extend(children.into_iter().rev());
                continue;
            }
            if n.kind() == "comment" {
                continue;
            }
            if self.need_sep {
                self.emit("\n");
                self.flush_heredocs(false);
            }
            self.visit(n);
            self.need_sep = true;
        }
    }

    fn visit_named_children(&mut self, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            self.visit(child);
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
        let mut prefix = Vec::new();
        let mut redirects = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            node.named_children(&mut cursor).collect()
        };
        for child in children {
            match child.kind() {
                "variable_assignment" => prefix.push(self.assignment(child)),
                "variable_assignments" => {
                    let mut c = child.walk();
                    let inner: Vec<Node> = child.named_children(&mut c).collect();
                    for a in inner {
                        prefix.push(self.assignment(a));
                    }
                }
                "command_name" => {
                    if let Some(name) = child.named_child(0) {
                        if name.kind() == "arithmetic_expansion" {
                            // `(( ... ))` read as a command: arithmetic, not a program.
                            self.check_word(name);
                            self.rebuilt = false;
                            continue;
                        }
                        words.push(self.word(name));
                    }
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    // Checked in order (refusals keep their order), written after the words.
                    let before = std::mem::take(&mut self.pieces);
                    self.emit(" ");
                    self.redirect(child);
                    redirects.push(std::mem::replace(&mut self.pieces, before));
                }
                "comment" => {}
                _ => words.push(self.word(child)),
            }
        }
        let prefix: Vec<String> = prefix.into_iter().flatten().collect();
        for (k, p) in prefix.iter().enumerate() {
            if k > 0 {
                self.emit(" ");
            }
            self.emit(p);
        }
        if !words.is_empty() {
            if !prefix.is_empty() {
                self.emit(" ");
            }
            self.run(node, &words);
        }
        for r in redirects {
            for piece in r {
                match piece {
                    Piece::Text(t) => self.emit(&t),
                    other => self.pieces.push(other),
                }
            }
        }
    }

    /// Records the programs of `words` and writes the command's rebuild: each word quoted, a
    /// program as the program checked, a nested line rebuilt.
    fn run(&mut self, node: Node, words: &[Word]) {
        if words.is_empty() {
            return;
        }
        let position = self.position(node);
        let mut cmd = Command::new(self.out, position, self.depth, words.len());
        cmd.programs(words, 0, words.len());
        let Command { slots, lines, .. } = cmd;
        let mut nested: Vec<Option<Vec<Piece>>> = Vec::with_capacity(lines.len());
        for line in &lines {
            let pieces = analyse(&line.text, position, self.depth + 1, self.out);
            nested.push(pieces.filter(|_| line.word.is_some()));
        }
        for (k, (word, slot)) in words.iter().zip(slots).enumerate() {
            if k > 0 {
                self.emit(" ");
            }
            match slot {
                Slot::Word => self.emit_word(word),
                Slot::Program(p) => self.pieces.push(Piece::Program(p)),
                Slot::Line(l) => match nested[l].take() {
                    Some(pieces) => {
                        self.pieces.push(Piece::Open);
                        self.pieces.extend(pieces);
                        self.pieces.push(Piece::Close);
                    }
                    None => self.rebuilt = false,
                },
            }
        }
        if nested.iter().any(Option::is_some) || lines.iter().any(|l| l.word.is_none()) {
            self.rebuilt = false; // a line the rebuild could not put back where it was
        }
    }

    /// An assignment; returns its rebuild (`NAME=value`).
    fn assignment(&mut self, node: Node) -> Option<String> {
        let mut name = None;
        let mut written = String::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if !child.is_named() {
                if matches!(child.kind(), "=" | "+=") {
                    written.push_str(child.kind());
                }
                continue;
            }
            match child.kind() {
                "variable_name" if name.is_none() => {
                    let n = self.text(child).to_string();
                    written.push_str(&n);
                    name = Some(n);
                }
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
                _ => {
                    let value = self.word(child);
                    match value.shell {
                        Some(s) => written.push_str(&s),
                        None => self.rebuilt = false,
                    }
                }
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
        Some(written)
    }

    /// `declare`, `typeset`, `export`, `readonly`, `local`.
    fn declaration(&mut self, node: Node) {
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_default();
        let mut args = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "variable_assignment" => args.push(self.assignment(child)),
                "variable_name" => {
                    let name = self.text(child).to_string();
                    if SHELL_SENSITIVE.contains(&name.as_str()) {
                        let construct = format!("`{keyword} {name}`, which changes how the shell reads or runs what follows");
                        self.refuse(child, &construct);
                    }
                    args.push(Some(name.clone()));
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
                        .any(|c| DECLARATION_OPTIONS_REFUSED.contains(c))
                    {
                        let construct = format!(
                            "`{keyword} {option}` (attributes that make bash evaluate values, name references or functions)"
                        );
                        self.refuse(child, &construct);
                    }
                    args.push(Some(quote(&option)));
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
        for a in args {
            self.emit(" ");
            match a {
                Some(a) => self.emit(&a),
                None => self.rebuilt = false,
            }
        }
    }

    /// `unset NAME...`: its words are judged by `command.rs` as every `unset` reached as words is
    /// (behind `command`, `builtin`, ...): one judge, wherever the builtin stands.
    fn unset(&mut self, node: Node) {
        let keyword = node
            .child(0)
            .map(|k| self.text(k).to_string())
            .unwrap_or_else(|| "unset".into());
        let mut words = vec![Word::literal(keyword)];
        let mut cursor = node.walk();
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.kind() == "variable_name" {
                words.push(Word::literal(self.text(child).to_string()));
            } else {
                words.push(self.word(child));
            }
        }
        self.run(node, &words);
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
            self.visit_test(node, &mut Vec::new());
            return;
        }
        if text.starts_with("((") {
            self.refuse(node, "arithmetic `(( ... ))`");
            self.visit_test(node, &mut Vec::new());
            return;
        }
        let mut args = Vec::new();
        self.visit_test(node, &mut args);
        self.run(node, &[Word::literal("[".into())]);
        for a in args.iter().chain([&Word::literal("]".into())]) {
            self.emit(" ");
            self.emit_word(a);
        }
    }

    /// The words of a test, in order (operators as words: they are the `[` builtin's arguments).
    fn visit_test(&mut self, node: Node, args: &mut Vec<Word>) {
        if self.level >= MAX_TREE_DEPTH {
            return self.visit(node);
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for child in children {
            if !child.is_named() {
                let t = child.kind();
                if !matches!(t, "[" | "]" | "[[" | "]]") {
                    args.push(Word::literal(t.to_string()));
                }
                continue;
            }
            match child.kind() {
                "unary_expression"
                | "binary_expression"
                | "parenthesized_expression"
                | "negated_expression" => self.visit_test(child, args),
                "test_operator" => {
                    let op = self.text(child).to_string();
                    if op == "-v" || op == "-R" {
                        let construct = format!(
                            "the test `{op}` (bash evaluates the subscript of the name it tests)"
                        );
                        self.refuse(child, &construct);
                    }
                    args.push(Word::literal(op));
                }
                "word" | "string" | "raw_string" | "number" | "concatenation"
                | "simple_expansion" | "expansion" | "ansi_c_string" => {
                    self.check_word(child);
                    args.push(value(child, self.src));
                }
                "regex" | "extglob_pattern" => self.rebuilt = false,
                _ => self.visit(child),
            }
        }
    }

    /// A redirection, written to the rebuild.
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
                        self.emit(op);
                        continue;
                    }
                    if child.kind() == "file_descriptor" {
                        let fd = self.text(child).to_string();
                        if fd.chars().all(|c| c.is_ascii_digit()) {
                            self.emit(&fd);
                        } else {
                            self.refuse(child, "a redirection to a named file descriptor `{name}`");
                        }
                        continue;
                    }
                    let word = self.word(child);
                    if word.dynamic {
                        let construct = format!(
                            "a redirection to `{}`, a path known only at run time",
                            word.text
                        );
                        self.refuse(child, &construct);
                    } else if is_network_path(&word.text) {
                        let construct = format!(
                            "a redirection to `{}` (bash and ksh open a network connection)",
                            word.text
                        );
                        self.refuse(child, &construct);
                    }
                    self.emit_word(&word);
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
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let mut delimiter = None;
        let mut quoted = false;
        let mut expands = false;
        let mut body = String::new();
        for child in children {
            if !child.is_named() {
                let op = child.kind();
                match op {
                    "<<" | "<<-" => self.emit(op),
                    "&&" | "||" | "|" => {
                        let written = JOINERS
                            .iter()
                            .find(|(o, _)| *o == op)
                            .map_or(op, |(_, w)| w);
                        self.emit(written);
                    }
                    _ => {}
                }
                continue;
            }
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
                    if let Some(d) = &delimiter {
                        let q = quote(d);
                        self.emit(&q);
                    }
                }
                "heredoc_body" => {
                    let text = self.text(child);
                    if text.contains(['$', '`', '\\']) {
                        expands = true;
                    }
                    body.push_str(text);
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
                // The rest of a pipeline or list after `<<EOF` (its operators carry the spaces).
                _ => self.visit(child),
            }
        }
        if expands && !quoted && delimiter.is_some() {
            self.refuse(
                node,
                "a here-document whose body the shell expands (quote its delimiter: <<'EOF')",
            );
        }
        if let Some(d) = delimiter {
            // The body as the shell got it (a quoted delimiter: nothing in it is read), then the end.
            self.heredocs.push(format!("{body}{d}\n"));
        }
    }

    /// A reading of the line the shells may make and the grammar does not (the lines joined at a
    /// backslash-newline, CRs as blanks; dash's reading of `[[`/`((`): its programs are reported
    /// as guesses, for a deny list (an allow list has already refused the line).
    fn guess(&mut self, line: &str, skip: &str) {
        let mut other = Analysis::default();
        analyse(line, 0, self.depth + 1, &mut other);
        for mut program in other.programs {
            if program.word == skip {
                continue;
            }
            program.guessed = true;
            self.out.programs.push(program);
        }
    }
}

/// The variable `${NAME:=word}` / `${NAME=word}` assigns.
/// True for the paths bash (and ksh) open as a socket in a redirection (`/dev/tcp/HOST/PORT`,
/// `/dev/udp/HOST/PORT`), also when written with doubled slashes or `.` components.
fn is_network_path(path: &str) -> bool {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    path.starts_with('/') && matches!(parts.as_slice(), ["dev", "tcp" | "udp", ..])
}

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
    fn lines_that_hide_a_command_from_dash_or_bash_are_refused() {
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
            "printf x > /dev/tcp/127.0.0.1/80",
            "ls 3<>/dev/udp/127.0.0.1/53",
            "cat < //dev/./tcp/127.0.0.1/80",
            "ls 2>>/dev/tcp/h/1",
            "bash -c 'echo > /dev/tcp/h/1'",
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
