//! docs/architecture.md's crate table ("Crates: one concern each") held to the Cargo files: each
//! row's "depends on" is exactly its crate's `augbench-*` `[dependencies]`, no crate depends on
//! one its row forbids, and every workspace crate has a row. A new edge that keeps the graph
//! acyclic but breaks the layering (exec → native, report → exec) fails here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One row of the table: the crate, what it depends on, and the cell of what it must not.
struct Row {
    krate: String,
    depends: BTreeSet<String>,
    never: String,
}

/// The table's rows, the crate names as their short form (`core` for `augbench-core`).
fn table() -> Vec<Row> {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let section = doc
        .split_once("## Crates: one concern each")
        .map(|(_, rest)| rest)
        .unwrap();
    section
        .lines()
        .skip_while(|l| !l.starts_with("| crate |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            Row {
                krate: short(cells[0].trim_start_matches("| ").trim_matches('`')),
                depends: names(cells[2]),
                never: cells[3].trim_end_matches(" |").to_string(),
            }
        })
        .collect()
}

fn short(name: &str) -> String {
    name.strip_prefix("augbench-").unwrap_or(name).to_string()
}

/// "core, host (atomic writes), cells" → {core, host, cells}; "none" → {}.
fn names(cell: &str) -> BTreeSet<String> {
    let mut plain = String::new();
    let mut depth = 0;
    for c in cell.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    plain
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "none")
        .map(str::to_string)
        .collect()
}

/// The workspace crates: every folder under crates/ with a Cargo.toml, by short name.
fn workspace() -> BTreeSet<String> {
    std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .map(|p| short(&p.file_name().unwrap().to_string_lossy()))
        .collect()
}

/// The `augbench-*` entries of a crate's `[dependencies]` (not dev- or build-dependencies).
fn cargo_deps(krate: &str) -> BTreeSet<String> {
    let dir = if krate == "augbench" {
        "augbench".to_string()
    } else {
        format!("augbench-{krate}")
    };
    let text = std::fs::read_to_string(root().join("crates").join(dir).join("Cargo.toml")).unwrap();
    let mut in_deps = false;
    let mut deps = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
        } else if in_deps && let Some(rest) = line.strip_prefix("augbench-") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            deps.insert(name);
        }
    }
    deps
}

/// The crates a "must never depend on" cell forbids, given every crate's short name: "any
/// other augbench crate", "any crate but core and host", or named crates before a colon.
fn forbidden(cell: &str, all: &BTreeSet<String>, krate: &str) -> BTreeSet<String> {
    let head = cell.split(':').next().unwrap_or_default();
    let others = || all.iter().filter(|c| *c != krate).cloned();
    if head.starts_with("any other augbench crate") {
        return others().collect();
    }
    if let Some(allowed) = head.strip_prefix("any crate but ") {
        let allowed: BTreeSet<String> = allowed
            .split([',', ' '])
            .filter(|w| all.contains(*w))
            .map(str::to_string)
            .collect();
        return others().filter(|c| !allowed.contains(c)).collect();
    }
    names(head)
        .into_iter()
        .flat_map(|n| n.split_whitespace().next().map(str::to_string))
        .filter(|n| all.contains(n))
        .collect()
}

#[test]
fn the_crate_table_is_what_the_cargo_files_say() {
    let rows = table();
    let all = workspace();
    let listed: BTreeSet<String> = rows.iter().map(|r| r.krate.clone()).collect();
    assert_eq!(
        listed, all,
        "every workspace crate has one row, and no other"
    );
    for row in &rows {
        let deps = cargo_deps(&row.krate);
        assert_eq!(
            row.depends, deps,
            "{}: docs/architecture.md says it depends on {:?}, its Cargo.toml on {:?}",
            row.krate, row.depends, deps
        );
        let never = forbidden(&row.never, &all, &row.krate);
        let broken: Vec<&String> = deps.intersection(&never).collect();
        assert!(
            broken.is_empty(),
            "{} depends on {broken:?}, which its row forbids",
            row.krate
        );
    }
}

#[test]
fn the_table_parser_reads_notes_and_forbidden_lists() {
    let all: BTreeSet<String> = ["core", "host", "exec", "native"]
        .map(str::to_string)
        .into();
    assert_eq!(
        names("core, host (atomic writes, `child`), exec"),
        ["core", "host", "exec"].map(str::to_string).into()
    );
    assert!(names("none").is_empty());
    assert_eq!(forbidden("any other augbench crate", &all, "core").len(), 3);
    assert_eq!(
        forbidden("any crate but core", &all, "host"),
        ["exec", "native"].map(str::to_string).into()
    );
    assert_eq!(
        forbidden("native (the image crates), report: why", &all, "exec"),
        ["native"].map(str::to_string).into()
    );
}
