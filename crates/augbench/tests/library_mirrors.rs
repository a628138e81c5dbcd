//! The library lists outside the runner's registries agree with `specs/matrix.yaml` (the
//! registries themselves are `library_registry`'s): the Python test suite's tables in
//! `python/tests/conftest.py`, the tables of scripts and studies that map a library to its
//! environment group or its backend, and every library a script or study names on a command line
//! or in a config. Each disagreement is listed with the file that holds it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use augbench_catalog::matrix::{Backend, Matrix};
use augbench_core::Mode;

const CONFTEST: &str = "python/tests/conftest.py";

#[test]
fn every_mirror_of_the_library_list_agrees_with_the_matrix() {
    let m = Matrix::get();
    let mut problems = conftest_problems(m);
    problems.extend(table_problems(m));
    problems.extend(named_problems(m));
    assert!(
        problems.is_empty(),
        "specs/matrix.yaml is the list of libraries; these mirrors disagree with it:\n  {}",
        problems.join("\n  ")
    );
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The text of the Python literal assigned to `name` (`name = {…}`, `name: T = (…)`), up to the
/// first closing bracket of its kind: the tables read here hold no nested braces.
fn literal<'a>(text: &'a str, name: &str) -> &'a str {
    let start = text
        .find(&format!("\n{name} ="))
        .or_else(|| text.find(&format!("\n{name}:")))
        .unwrap_or_else(|| panic!("no `{name} =` table"));
    let body = &text[start..];
    let open = body.find(['{', '(']).unwrap();
    let close = if body[open..].starts_with('{') {
        '}'
    } else {
        ')'
    };
    &body[open..open + body[open..].find(close).unwrap()]
}

/// The double-quoted strings of `text`, in order.
fn quoted(text: &str) -> Vec<String> {
    text.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// `(key, values)` of each entry of a dict literal: a quoted string followed by `:` is a key, the
/// quoted strings up to the next key are its values.
fn entries(dict: &str) -> Vec<(String, Vec<String>)> {
    let parts: Vec<&str> = dict.split('"').collect();
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for (i, s) in parts.iter().enumerate().skip(1).step_by(2) {
        let after = parts.get(i + 1).copied().unwrap_or_default();
        if after.trim_start().starts_with(':') {
            out.push((s.to_string(), Vec::new()));
        } else if let Some((_, values)) = out.last_mut() {
            values.push(s.to_string());
        }
    }
    out
}

fn names_of(m: &Matrix, backend: Backend) -> BTreeSet<String> {
    let libs = m.libraries.iter().filter(|l| l.backend == backend);
    libs.map(|l| l.name.clone()).collect()
}

/// conftest.py: `LIBRARY_MODULES` is every Python-worker library, `LIBRARY_DISTRIBUTIONS` names
/// each one's package, `PROMISED_WITH` names only libraries and decoders.
fn conftest_problems(m: &Matrix) -> Vec<String> {
    let text = read(CONFTEST);
    let mut out = Vec::new();
    let modules: BTreeSet<String> = entries(literal(&text, "LIBRARY_MODULES"))
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    let python = names_of(m, Backend::PythonWorker);
    if modules != python {
        out.push(format!(
            "{CONFTEST}: LIBRARY_MODULES has {modules:?}, the matrix's python_worker libraries are {python:?}"
        ));
    }
    for (lib, values) in entries(literal(&text, "LIBRARY_DISTRIBUTIONS")) {
        let package = m.library(&lib).map(|l| vec![l.package.clone()]);
        if package.as_ref() != Some(&values) {
            out.push(format!(
                "{CONFTEST}: LIBRARY_DISTRIBUTIONS says `{lib}` is {values:?}, the matrix {package:?}"
            ));
        }
    }
    for (name, _) in entries(literal(&text, "PROMISED_WITH")) {
        let decoder = m.decoders.iter().any(|d| d.name == name);
        if m.library(&name).is_none() && !decoder {
            out.push(format!(
                "{CONFTEST}: PROMISED_WITH has `{name}`, neither a library nor a decoder of the matrix"
            ));
        }
    }
    out
}

/// Tables of scripts and studies: the native crates of the noise study, and each library's
/// pipeline environment group in the pipeline fidelity and production checks.
fn table_problems(m: &Matrix) -> Vec<String> {
    let mut out = Vec::new();
    let native: BTreeSet<String> = quoted(literal(&read("studies/noise_study.py"), "NATIVE"))
        .into_iter()
        .collect();
    if native != names_of(m, Backend::NativeWorker) {
        out.push(format!(
            "studies/noise_study.py: NATIVE has {native:?}, the matrix's native_worker libraries are {:?}",
            names_of(m, Backend::NativeWorker)
        ));
    }
    for (file, table) in [
        ("scripts/pipeline_fidelity.py", "LIBRARIES"),
        ("scripts/production_check.py", "GROUPS"),
    ] {
        for (lib, groups) in entries(literal(&read(file), table)) {
            let want = m.library(&lib).map(|l| l.env_group_for(Mode::Pipeline));
            if groups.first().map(String::as_str) != want {
                out.push(format!(
                    "{file}: {table} puts `{lib}` in {groups:?}, the matrix's pipeline group is {want:?}"
                ));
            }
        }
    }
    out
}

/// Every library a script or study names: after `--libraries` on a command line, in a config's
/// `libraries: [...]`, in a `LIBRARIES` default or tuple, is one of the matrix.
fn named_problems(m: &Matrix) -> Vec<String> {
    let mut out = Vec::new();
    for file in tool_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let rel = file
            .strip_prefix(repo())
            .unwrap_or(&file)
            .display()
            .to_string();
        for name in named_libraries(&text) {
            if m.library(&name).is_none() {
                out.push(format!(
                    "{rel}: names library `{name}`, which the matrix does not list"
                ));
            }
        }
    }
    out
}

/// The files of `scripts/` and `studies/`.
fn tool_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["scripts", "studies"] {
        let entries = std::fs::read_dir(repo().join(dir)).unwrap();
        files.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
    }
    files.sort();
    files
}

/// The library names a script's text gives in the forms [`named_problems`] reads.
fn named_libraries(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for part in text.split("--libraries ").skip(1) {
        let words = part
            .split([' ', ','])
            .map(|w| w.trim_matches(['"', '\'', ')', ']']));
        names.extend(words.take_while(|w| is_name(w)).map(str::to_string));
    }
    for part in text.split("libraries: [").skip(1) {
        let list = part.split(']').next().unwrap_or_default();
        names.extend(list.split(',').map(|w| w.trim().to_string()));
    }
    for part in text.split("LIBRARIES:-").skip(1) {
        let list = part.split('}').next().unwrap_or_default();
        names.extend(list.split_whitespace().map(str::to_string));
    }
    if let Some(start) = text.find("\nLIBRARIES = (") {
        names.extend(quoted(literal(&text[start..], "LIBRARIES")));
    }
    // A template (`{', '.join(libraries)}`) or a variable is not a name.
    names.retain(|n| is_name(n));
    names
}

/// Whether `w` reads as a library name (lower case, digits, `_` and `-`, not an option).
fn is_name(w: &str) -> bool {
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-';
    !w.is_empty() && !w.starts_with('-') && w.chars().all(allowed)
}

#[test]
fn the_readers_find_names_and_entries_in_every_form() {
    let dict = "{\"a\": \"x\", \"b\": (\"y\", \"z\"),\n    \"c\": \"w\"}";
    let e = entries(dict);
    assert_eq!(e.len(), 3, "{e:?}");
    assert_eq!(
        e[1],
        ("b".to_string(), vec!["y".to_string(), "z".to_string()])
    );
    let text = "x --libraries albumentationsx pillow --num-items 5\n\
        y --libraries a,b \\\n  libraries: [c, d]\n\
        read -r -a LIBS <<<\"${LIBRARIES:-e f}\"\nLIBRARIES = (\"g\", \"h\")\n\
        z = f\"libraries: [{', '.join(libraries)}]\"\n";
    assert_eq!(
        named_libraries(text),
        [
            "albumentationsx",
            "pillow",
            "a",
            "b",
            "c",
            "d",
            "e",
            "f",
            "g",
            "h"
        ]
    );
}
