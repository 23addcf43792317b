//! Parsing a shell line with tree-sitter-bash. One parser per thread, made on first use and
//! reused (creating one and loading the grammar costs more than parsing a typical line).

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `line` with the bash grammar. `None` only when tree-sitter gives up (it does not for
/// any input we have seen: syntax errors come back as `ERROR`/missing nodes in the tree).
pub fn parse(line: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        // No timeout or cancellation flag is ever set, so a parse always runs to the end and
        // leaves no state behind for the next one.
        parser.parse(line, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dump_trees() {
        for line in std::env::var("SHELL_DUMP")
            .unwrap_or_default()
            .split("\n---\n")
        {
            if line.is_empty() {
                continue;
            }
            let tree = parse(line).unwrap();
            println!("{line:?}\n  {}", tree.root_node().to_sexp());
        }
    }

    #[test]
    fn parses_a_line_and_reuses_the_parser() {
        for _ in 0..3 {
            let tree = parse("cd x && npm test 2>&1 | tail -50").unwrap();
            assert!(!tree.root_node().has_error());
        }
    }
}
