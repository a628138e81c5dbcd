//! No import cycles: builds the module import graph of every crate's `src/` (`crate::`, `super::`,
//! `self::` and child-module paths, followed through `use` re-exports; `#[cfg(test)]` modules left
//! out) and of `python/` (relative and `augbench_*` imports, lazy ones included), failing on every
//! cycle. Modules are compared level by level, and in Rust a module's own items (`lib.rs`'s,
//! a `mod.rs`'s) are one more node among its children: a child importing its parent's own items
//! while the parent uses that child is a cycle, at every level. A `mod.rs` declares its children
//! and re-exports them; what the children share lives in a child of its own. In Python a package
//! containing the other is no cycle (`__init__.py` re-exports its modules).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module as path segments from its crate or package root (`[]` is the root).
type Module = Vec<String>;

/// Source files as (path relative to the root, text).
type Sources = Vec<(PathBuf, String)>;

/// The import edges between the modules of one crate or of the Python tree.
#[derive(Default)]
struct Graph {
    modules: BTreeSet<Module>,
    edges: BTreeSet<(Module, Module)>,
    /// Names a module brings in with `use` (Rust only): (module, name) → the path it stands for,
    /// so `crate::Thing` re-exported from `b` counts as an edge to `b`, not to the root.
    aliases: BTreeMap<(Module, String), Vec<String>>,
    /// Whether a module's own items take part in cycles with its children (Rust: yes, at every
    /// level; a Python package: no).
    root_items: bool,
}

/// The node standing for a module's own items among its children (sorts before any name).
const OWN: &str = "(own items)";

impl Graph {
    /// The module `path` names: its longest prefix that is a module here, followed through the
    /// `use` aliases of that module.
    fn resolve(&self, path: &[String]) -> Option<Module> {
        self.resolve_within(path, 0)
    }

    fn resolve_within(&self, path: &[String], depth: usize) -> Option<Module> {
        let m = (0..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|m| self.modules.contains(m))?;
        let Some(name) = path.get(m.len()) else {
            return Some(m);
        };
        match self.aliases.get(&(m.clone(), name.clone())) {
            Some(target) if depth < 8 => {
                let full = [target.clone(), path[m.len() + 1..].to_vec()].concat();
                self.resolve_within(&full, depth + 1).or(Some(m))
            }
            _ => Some(m),
        }
    }

    fn add(&mut self, from: &Module, path: &[String]) {
        if let Some(to) = self.resolve(path) {
            self.edges.insert((from.clone(), to));
        }
    }

    /// Every cycle, each as the sorted names of one strongly connected set of sibling modules.
    fn cycles(&self) -> Vec<Vec<String>> {
        let mut levels: BTreeMap<Module, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (a, b) in &self.edges {
            let l = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            // A module's own items are a node among its children (Rust: `lib.rs` and each
            // `mod.rs` are maps of their children); in Python a module containing the other is none.
            let node = |m: &Module| m.get(l).cloned().unwrap_or_else(|| OWN.to_string());
            let contains = l == a.len() || l == b.len();
            if contains && !(self.root_items && a != b) {
                continue;
            }
            let level = levels.entry(a[..l].to_vec()).or_default();
            level.entry(node(a)).or_default().insert(node(b));
        }
        let mut found = Vec::new();
        for (parent, next) in &levels {
            for set in strongly_connected(next) {
                found.push(set.iter().map(|m| node_name(parent, m)).collect());
            }
        }
        found
    }
}

/// `parent::m`, or for the parent's own items `parent` (`crate root` at the top).
fn node_name(parent: &Module, m: &str) -> String {
    match (m == OWN, parent.is_empty()) {
        (true, true) => "crate root".to_string(),
        (true, false) => parent.join("::"),
        (false, _) => [parent.clone(), vec![m.to_string()]].concat().join("::"),
    }
}

/// Sets of two or more nodes that reach each other.
fn strongly_connected(next: &BTreeMap<String, BTreeSet<String>>) -> BTreeSet<BTreeSet<String>> {
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(n) = todo.pop() {
            for m in next.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = next.keys().map(|n| (n, reach(n))).collect();
    let mut sets = BTreeSet::new();
    for (n, r) in &reached {
        if !r.contains(*n) {
            continue;
        }
        let set: BTreeSet<String> = r
            .iter()
            .filter(|m| reached.get(m).is_some_and(|back| back.contains(*n)))
            .cloned()
            .collect();
        sets.insert(set);
    }
    sets
}

// ---------------------------------------------------------------- Rust

/// The module a file under `src/` defines: `lib.rs` → root, `a/mod.rs` and `a.rs` → `a`.
fn rust_module(rel: &Path) -> Module {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The import graph of one crate's `src/` files (their test modules left out).
fn rust_graph(files: &Sources) -> Graph {
    let mut g = Graph {
        root_items: true,
        ..Graph::default()
    };
    let tests: Vec<Module> = files
        .iter()
        .flat_map(|(rel, text)| {
            let from = rust_module(rel);
            test_module_names(text).map(move |name| [from.clone(), vec![name]].concat())
        })
        .collect();
    let code: Vec<(Module, String)> = files
        .iter()
        .map(|(rel, text)| (rust_module(rel), strip_line_comments(text, "//")))
        .filter(|(m, _)| !tests.iter().any(|t| m.starts_with(t)))
        .map(|(m, text)| (m, without_test_modules(&text)))
        .collect();
    g.modules = code.iter().map(|(m, _)| m.clone()).collect();
    for (from, text) in &code {
        for statement in top_level_uses(text) {
            for path in rust_paths(&statement, from, &g.modules) {
                if let Some(name) = path.last() {
                    g.aliases.insert((from.clone(), name.clone()), path.clone());
                }
            }
        }
    }
    for (from, text) in &code {
        for path in rust_paths(text, from, &g.modules) {
            g.add(from, &path);
        }
    }
    g
}

/// The names of the `#[cfg(test)] mod name;` declarations in `text` (modules in their own file).
fn test_module_names(text: &str) -> impl Iterator<Item = String> + '_ {
    text.match_indices("#[cfg(test)]").filter_map(|(at, tag)| {
        let decl = text[at + tag.len()..].trim_start().strip_prefix("mod ")?;
        let name: String = decl
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        decl[name.len()..]
            .trim_start()
            .starts_with(';')
            .then_some(name)
    })
}

/// `text` without its inline `#[cfg(test)] mod name { … }` blocks: tests are no dependency.
fn without_test_modules(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let line_start = rest[..at].rfind('\n').map_or(0, |p| p + 1);
        let indent = &rest[line_start..at];
        let after = &rest[at + "#[cfg(test)]".len()..];
        let block = after.trim_start().strip_prefix("mod ").and_then(|m| {
            let open = m.find(['{', ';'])?;
            (m.as_bytes()[open] == b'{').then(|| closing_brace(&m[open + 1..], indent))?
        });
        rest = match block {
            Some(tail) => tail,
            None => {
                out.push_str("#[cfg(test)]");
                after
            }
        };
    }
    out.push_str(rest);
    out
}

/// The text after the `}` that closes a block whose `{` came just before `text`, on a line of
/// its own at the block's `indent` (rustfmt's layout: braces inside string literals, such as
/// a test's malformed JSON, do not count); by counting braces where no such line exists.
fn closing_brace<'a>(text: &'a str, indent: &str) -> Option<&'a str> {
    if indent.chars().all(char::is_whitespace) {
        let line = format!("\n{indent}}}");
        let mut from = 0;
        while let Some(p) = text[from..].find(&line) {
            let end = from + p + line.len();
            if text[end..].is_empty() || text[end..].starts_with(['\n', '\r']) {
                return Some(&text[end..]);
            }
            from = end;
        }
    }
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return Some(&text[i + 1..]),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The `use` declarations at the start of a line (`use`, `pub use`, `pub(crate) use`), each whole.
fn top_level_uses(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("use ") {
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let prefix = &text[line_start..at];
        if matches!(prefix, "" | "pub " | "pub(crate) " | "pub(super) ") {
            let end = text[at..].find(';').map_or(text.len(), |e| at + e);
            out.push(text[at..end].to_string());
        }
    }
    out
}

fn strip_line_comments(text: &str, marker: &str) -> String {
    text.lines()
        .map(|l| l.split_once(marker).map_or(l, |(code, _)| code))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Absolute module paths named by `crate::`, `super::`, `self::` and child-module paths in `text`.
fn rust_paths(text: &str, from: &Module, modules: &BTreeSet<Module>) -> Vec<Vec<String>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("::") {
        let start = text[..i]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let head = &text[start..i];
        let before = start.checked_sub(1).map(|p| bytes[p]);
        if matches!(before, Some(b':' | b'$')) || before.is_some_and(|b| b.is_ascii_alphanumeric())
        {
            continue;
        }
        let base: Module = match head {
            "crate" => Vec::new(),
            "self" => from.clone(),
            "super" => {
                let mut base = from.clone();
                let mut rest = &text[i..];
                base.pop();
                while let Some(r) = rest.strip_prefix("::super") {
                    base.pop();
                    rest = r;
                }
                let skipped = text.len() - rest.len();
                for tail in use_tree(&text[skipped + 2..]) {
                    out.push([base.clone(), tail].concat());
                }
                continue;
            }
            _ => {
                let child = [from.clone(), vec![head.to_string()]].concat();
                if !modules.contains(&child) {
                    continue;
                }
                child
            }
        };
        for tail in use_tree(&text[i + 2..]) {
            out.push([base.clone(), tail].concat());
        }
    }
    out
}

/// The paths of a use tree that starts at `text`: `a::b::C`, `a::{b, c::D}`, `*`.
fn use_tree(text: &str) -> Vec<Vec<String>> {
    let text = text.trim_start();
    if let Some(inner) = text.strip_prefix('{') {
        let mut depth = 0usize;
        let mut parts = Vec::new();
        let mut last = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    parts.push(&inner[last..i]);
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[last..i]);
                    last = i + 1;
                }
                _ => {}
            }
        }
        return parts.into_iter().flat_map(use_tree).collect();
    }
    let ident: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if ident.is_empty() || ident == "self" {
        return vec![Vec::new()];
    }
    let rest = &text[ident.len()..];
    match rest.strip_prefix("::") {
        Some(r) => use_tree(r)
            .into_iter()
            .map(|t| [vec![ident.clone()], t].concat())
            .collect(),
        None => vec![vec![ident]],
    }
}

// ---------------------------------------------------------------- Python

/// The module a file under `python/` defines: `pkg/a.py` → `pkg.a`, `pkg/__init__.py` → `pkg`.
fn python_module(rel: &Path) -> Module {
    let mut parts = rust_module(rel);
    if parts.last().is_some_and(|p| p == "__init__") {
        parts.pop();
    }
    parts
}

/// The import graph of the Python files (relative imports and absolute ones into these packages).
fn python_graph(files: &Sources) -> Graph {
    let mut g = Graph::default();
    for (rel, _) in files {
        g.modules.insert(python_module(rel));
    }
    let roots: BTreeSet<String> = g
        .modules
        .iter()
        .filter_map(|m| m.first().cloned())
        .collect();
    for (rel, text) in files {
        let from = python_module(rel);
        let is_init = rel.file_stem().is_some_and(|s| s == "__init__");
        let mut package = from.clone();
        if !is_init {
            package.pop();
        }
        for statement in python_imports(&strip_line_comments(text, "#")) {
            for path in python_targets(&statement, &package, &roots) {
                g.add(&from, &path);
            }
        }
    }
    g
}

/// Import statements, each on one line (parenthesised name lists joined).
fn python_imports(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let l = line.trim();
        if !(l.starts_with("from ") || l.starts_with("import ")) {
            continue;
        }
        let mut stmt = l.to_string();
        if stmt.contains('(') {
            while !stmt.contains(')') {
                let Some(more) = lines.next() else { break };
                stmt.push(' ');
                stmt.push_str(more.trim());
            }
        }
        out.push(stmt.replace(['(', ')'], " "));
    }
    out
}

/// The absolute module paths one import statement names.
fn python_targets(stmt: &str, package: &Module, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let dotted = |s: &str| -> Vec<String> { s.split('.').map(str::to_string).collect() };
    let ours = |p: &Vec<String>| p.first().is_some_and(|r| roots.contains(r));
    if let Some(names) = stmt.strip_prefix("import ") {
        return names
            .split(',')
            .filter_map(|n| n.split_whitespace().next())
            .map(dotted)
            .filter(ours)
            .collect();
    }
    let Some((source, names)) = stmt
        .strip_prefix("from ")
        .and_then(|r| r.split_once(" import "))
    else {
        return Vec::new();
    };
    let source = source.trim();
    let dots = source.chars().take_while(|c| *c == '.').count();
    let base: Vec<String> = if dots > 0 {
        let keep = package.len().saturating_sub(dots - 1);
        let rest = &source[dots..];
        let mut b = package[..keep].to_vec();
        if !rest.is_empty() {
            b.extend(dotted(rest));
        }
        b
    } else {
        dotted(source)
    };
    if !ours(&base) {
        return Vec::new();
    }
    names
        .split(',')
        .filter_map(|n| n.split_whitespace().next())
        .map(|n| [base.clone(), vec![n.to_string()]].concat())
        .collect()
}

// ---------------------------------------------------------------- the workspace

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file ending in `ext` below `dir`, relative to `dir`.
fn read_tree(dir: &Path, ext: &str) -> Sources {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|e| e == ext)
                && let (Ok(rel), Ok(text)) = (p.strip_prefix(dir), std::fs::read_to_string(&p))
            {
                out.push((rel.to_path_buf(), text));
            }
        }
    }
    out
}

#[test]
fn no_crate_has_an_import_cycle() {
    let crates = std::fs::read_dir(workspace().join("crates")).unwrap();
    let mut found = Vec::new();
    let mut seen = 0;
    for c in crates.flatten() {
        let files = read_tree(&c.path().join("src"), "rs");
        seen += usize::from(!files.is_empty());
        for cycle in rust_graph(&files).cycles() {
            found.push(format!(
                "{}: {}",
                c.file_name().to_string_lossy(),
                cycle.join(" <-> ")
            ));
        }
    }
    assert!(seen >= 6, "only {seen} crates were read");
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn no_python_module_has_an_import_cycle() {
    let files = read_tree(&workspace().join("python"), "py");
    assert!(
        files.len() >= 10,
        "only {} Python files were read",
        files.len()
    );
    let found = python_graph(&files).cycles();
    let lines: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(lines.is_empty(), "import cycles:\n{}", lines.join("\n"));
}

#[cfg(test)]
mod detector {
    use super::*;

    fn sources(files: &[(&str, &str)]) -> Sources {
        files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect()
    }

    #[test]
    fn a_rust_cycle_through_a_use_tree_and_super_is_found() {
        let files = sources(&[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::{b::Thing, x};"),
            ("b/mod.rs", "mod inner;"),
            ("b/inner.rs", "use super::super::c::f;"),
            (
                "c.rs",
                "fn f() { crate::a::g() } // crate::b is only named in a comment",
            ),
        ]);
        assert_eq!(
            rust_graph(&files).cycles(),
            vec![vec!["a".to_string(), "b".into(), "c".into()]]
        );
    }

    #[test]
    fn parents_using_their_children_and_external_paths_are_no_cycle() {
        let files = sources(&[
            ("lib.rs", "mod a; mod c; use a::X; use crate::a::Y;"),
            (
                "a/mod.rs",
                "mod b; use self::b::Z; pub struct X;\n#[cfg(test)]\nmod tests { use super::*; }",
            ),
            (
                "a/b.rs",
                "use other_crate::a; use crate::c::W; pub struct Z;",
            ),
            ("a/tests.rs", "use super::*; use crate::a::X;"),
            ("c/mod.rs", "pub struct W;\n#[cfg(test)]\nmod tests;"),
            ("c/tests.rs", "use crate::a::b::Z;"),
        ]);
        assert!(rust_graph(&files).cycles().is_empty());
    }

    #[test]
    fn a_cycle_behind_a_re_export_of_the_root_is_found() {
        let files = sources(&[
            ("lib.rs", "mod a; mod b;\npub use b::Thing;"),
            ("a.rs", "use crate::Thing;\npub fn helper() {}"),
            ("b.rs", "pub struct Thing;\nfn f() { crate::a::helper() }"),
        ]);
        assert_eq!(
            rust_graph(&files).cycles(),
            vec![vec!["a".to_string(), "b".into()]]
        );
    }

    #[test]
    fn a_module_using_lib_rs_items_while_lib_rs_uses_it_is_a_cycle() {
        let files = sources(&[
            ("lib.rs", "mod a;\npub struct Library;\nfn f() { a::run() }"),
            ("a.rs", "use crate::Library;\npub fn run() {}"),
            (
                "b/mod.rs",
                "mod c; pub(crate) fn failure() {} fn g() { c::h() }",
            ),
            ("b/c.rs", "use super::failure; pub fn h() {}"),
        ]);
        assert_eq!(
            rust_graph(&files).cycles(),
            vec![
                vec!["crate root".to_string(), "a".into()],
                vec!["b".to_string(), "b::c".into()],
            ],
            "below the root too, a child using its parent's own items is a cycle"
        );
    }

    #[test]
    fn a_child_using_its_parents_own_items_is_a_cycle_and_a_re_exported_sibling_is_not() {
        let files = sources(&[
            ("lib.rs", "mod a; mod b;"),
            // a: the children share `Shared`, an item of a/mod.rs itself: a cycle.
            (
                "a/mod.rs",
                "mod x; mod y;\npub struct Shared;\npub use x::run;",
            ),
            ("a/x.rs", "use super::Shared;\npub fn run() {}"),
            ("a/y.rs", "pub fn other() {}"),
            // b: the shared item lives in a child of its own, mod.rs only declares and
            // re-exports, and children name the sibling (directly or through the re-export).
            (
                "b/mod.rs",
                "mod shared; mod x; mod y;\npub use shared::Shared;\npub use x::run;",
            ),
            ("b/shared.rs", "pub struct Shared;"),
            ("b/x.rs", "use super::shared::Shared;\npub fn run() {}"),
            ("b/y.rs", "use super::Shared;\nfn f() { super::x::run() }"),
        ]);
        assert_eq!(
            rust_graph(&files).cycles(),
            vec![vec!["a".to_string(), "a::x".into()]]
        );
    }

    #[test]
    fn a_test_module_with_a_brace_in_a_string_is_still_left_out() {
        let files = sources(&[
            ("lib.rs", "mod a;"),
            ("a/mod.rs", "mod b;\npub use b::parse;"),
            (
                "a/b.rs",
                "pub fn parse() {}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn malformed() {\n        parse(\"{\\\"a\\\": \");\n    }\n}\n",
            ),
        ]);
        assert!(rust_graph(&files).cycles().is_empty());
    }

    #[test]
    fn a_python_cycle_through_a_lazy_relative_import_is_found() {
        let files = sources(&[
            ("pkg/__init__.py", "from . import worker\n"),
            (
                "pkg/worker.py",
                "from .adapters.base import (\n    helper,\n)\n",
            ),
            ("pkg/adapters/__init__.py", "from .base import Adapter\n"),
            (
                "pkg/adapters/base.py",
                "def f():\n    from .. import worker\n",
            ),
            (
                "pkg/other.py",
                "import pkg.worker\n# from . import adapters\n",
            ),
        ]);
        assert_eq!(
            python_graph(&files).cycles(),
            vec![vec!["pkg::adapters".to_string(), "pkg::worker".into()]]
        );
    }

    #[test]
    fn python_imports_of_a_package_from_itself_are_no_cycle() {
        let files = sources(&[
            ("pkg/__init__.py", "from .worker import run\nVERSION = 1\n"),
            (
                "pkg/worker.py",
                "from . import VERSION\nimport json\nfrom numpy import array\n",
            ),
        ]);
        assert!(python_graph(&files).cycles().is_empty());
    }
}
