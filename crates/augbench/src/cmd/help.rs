//! The pointer at the end of every `--help`: which page of `docs/` explains the command. One table
//! maps each top-level subcommand to its page; nested subcommands (`cells group`) inherit theirs.

use clap::Command;

/// Where the guides live, relative to a checkout of augbench.
pub const DOCS_DIR: &str = "docs";

/// The pages for the top-level command itself.
const TOP: &str = "methodology.md, results.md, cells.md, specs.md and ci.md";

/// Top-level subcommand → the page that explains it.
pub const PAGES: &[(&str, &str)] = &[
    (
        "run",
        "methodology.md (what is timed, runs, intervals) and results.md (the files)",
    ),
    ("plan", "methodology.md (schedule, processes, runs)"),
    ("validate", "specs.md (configs and custom spec files)"),
    (
        "list",
        "specs.md (transforms, libraries and the support matrix)",
    ),
    ("cells", "cells.md (evaluation and benchmark cell logs)"),
    (
        "compare",
        "ci.md (regression verdicts) and results.md (the tables' inputs)",
    ),
    ("check", "equivalence.md (tolerances, references, verdicts)"),
    ("plot", "results.md (what the plots are drawn from)"),
    ("report", "results.md (what the report is drawn from)"),
    (
        "publish",
        "publish.md (what a published folder holds, what is refused)",
    ),
    (
        "init",
        "install.md (running from an installed binary or wheel)",
    ),
    ("docs", "ci.md (keeping README tables current)"),
    ("env", "specs.md (environment groups and adding a library)"),
    ("data", "methodology.md (the synthetic dataset)"),
    ("stage", "cloud.md (staging a dataset for cloud runs)"),
    (
        "cloud",
        "cloud.md (Google Cloud Batch runs: submit, status, fetch, cancel)",
    ),
    ("worker", "protocol.md (the worker protocol)"),
];

/// The `after_help` line for a page entry.
pub fn pointer(page: &str) -> String {
    format!("Docs: {DOCS_DIR}/{page}, in the augbench repository (README.md links every guide)")
}

/// How to call `augbench` by name after building it (the README says the same).
pub const ON_PATH: &str = "augbench on PATH: uv tool install augbench-cli (a wheel, docs/install.md), or from a clone cargo install --path crates/augbench (or alias augbench=target/release/augbench)";

/// Adds the docs pointer to the top-level help and to every subcommand, nested ones included;
/// the top-level help also says how to put augbench on PATH.
pub fn with_docs(cmd: Command) -> Command {
    let cmd = cmd.after_help(format!("{ON_PATH}\n{}", pointer(TOP)));
    cmd.mut_subcommands(|sub| {
        let page = PAGES
            .iter()
            .find(|(name, _)| *name == sub.get_name())
            .map_or(TOP, |(_, page)| *page);
        inherit(sub, &pointer(page))
    })
}

/// Sets `text` as the help footer of `cmd` and of all its subcommands.
fn inherit(cmd: Command, text: &str) -> Command {
    let owned = text.to_string();
    cmd.after_help(owned.clone())
        .mut_subcommands(move |sub| inherit(sub, &owned))
}
