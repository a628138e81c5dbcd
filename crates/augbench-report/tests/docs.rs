//! README table refresh between AUGBENCH markers: idempotent, and clear errors for unknown names,
//! unmatched markers and files without markers.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a failure is the test failing"
)]

use crate::common;

use augbench_report::table::build_tables;
use augbench_report::{TableOptions, docs, load_paths};

fn tables() -> Vec<augbench_report::Table> {
    let dir = common::demo_dir();
    build_tables(
        &load_paths(&[dir.path().to_path_buf()]).unwrap(),
        &TableOptions::default(),
    )
    .unwrap()
}

const README: &str = "# Title\n\nIntro.\n\n<!-- AUGBENCH:IMAGE-RGB-MICRO:START -->\nold table\n<!-- AUGBENCH:IMAGE-RGB-MICRO:END -->\n\nMiddle.\n\n<!-- AUGBENCH:VIDEO-16F-MICRO:START -->\n<!-- AUGBENCH:VIDEO-16F-MICRO:END -->\nEnd.\n";

#[test]
fn replaces_blocks_and_is_idempotent() {
    let t = tables();
    let once = docs::update(README, &t, "README.md").unwrap();
    assert_eq!(once.names, ["IMAGE-RGB-MICRO", "VIDEO-16F-MICRO"]);
    assert!(!once.text.contains("old table"));
    assert!(once.text.starts_with(
        "# Title\n\nIntro.\n\n<!-- AUGBENCH:IMAGE-RGB-MICRO:START -->\n| Transform |"
    ));
    assert!(
        once.text
            .ends_with("<!-- AUGBENCH:VIDEO-16F-MICRO:END -->\nEnd.\n")
    );
    assert!(once.text.contains("Middle."));
    let twice = docs::update(&once.text, &t, "README.md").unwrap();
    assert_eq!(once.text, twice.text);
    insta::assert_snapshot!(once.text);
}

#[test]
fn unknown_name_lists_available() {
    let text =
        "a\n<!-- AUGBENCH:IMAGE-9CH-MICRO:START -->\n<!-- AUGBENCH:IMAGE-9CH-MICRO:END -->\n";
    let msg = common::usage_message(&docs::update(text, &tables(), "R.md").unwrap_err()).unwrap();
    assert!(msg.contains("R.md line 2: no results for marker `IMAGE-9CH-MICRO`; available: IMAGE-RGB-MICRO, VIDEO-16F-MICRO"), "{msg}");
}

#[test]
fn unmatched_markers_are_errors_with_lines() {
    let t = tables();
    let no_end = "x\ny\n<!-- AUGBENCH:IMAGE-RGB-MICRO:START -->\n";
    let msg = common::usage_message(&docs::update(no_end, &t, "R.md").unwrap_err()).unwrap();
    assert!(
        msg.contains("R.md line 3") && msg.contains("no matching"),
        "{msg}"
    );
    let no_start = "<!-- AUGBENCH:IMAGE-RGB-MICRO:END -->\n";
    let msg = common::usage_message(&docs::update(no_start, &t, "R.md").unwrap_err()).unwrap();
    assert!(msg.contains("END marker without a START"), "{msg}");
}

#[test]
fn file_without_markers_is_an_error() {
    let msg = common::usage_message(&docs::update("# nothing\n", &tables(), "R.md").unwrap_err())
        .unwrap();
    assert!(
        msg.contains("no `<!-- AUGBENCH:<NAME>:START -->` markers")
            && msg.contains("IMAGE-RGB-MICRO"),
        "{msg}"
    );
}
