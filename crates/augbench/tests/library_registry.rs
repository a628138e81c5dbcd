//! `specs/matrix.yaml` is the one list of libraries: this walks every library in it and names each
//! place that lacks it (the `envs/` groups augbench-env embeds, the Python adapter table
//! `LIBRARIES` of `adapters/__init__.py`, the native `Library` enum), then each of those places
//! for a library, adapter or group the matrix lacks. Adding a library: run this and read the list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use augbench_catalog::matrix::{Backend, LibraryInfo, Matrix};
use augbench_native::Library;

/// The Python adapter package, relative to the repository root.
const ADAPTERS: &str = "python/augbench_worker/adapters";

/// `LIBRARIES` of the Python adapter registry: library → (module, distribution).
type PythonTable = BTreeMap<String, (String, String)>;

#[test]
fn every_library_of_the_matrix_is_registered_and_nothing_else_is() {
    let table = python_table();
    let m = Matrix::get();
    let mut problems: Vec<String> = m
        .libraries
        .iter()
        .flat_map(|lib| missing_for(lib, &table))
        .collect();
    problems.extend(python_extras(m, &table));
    problems.extend(native_extras(m));
    problems.extend(unused_groups(m));
    assert!(
        problems.is_empty(),
        "specs/matrix.yaml is the list of libraries; these places disagree with it:\n  {}",
        problems.join("\n  ")
    );
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn is_python(lib: &LibraryInfo) -> bool {
    lib.backend != Backend::NativeWorker
}

/// What the places a library must be registered in say is missing for `lib`.
fn missing_for(lib: &LibraryInfo, table: &PythonTable) -> Vec<String> {
    if !is_python(lib) {
        return missing_native(lib);
    }
    let groups = std::iter::once(&lib.env_group).chain(&lib.pipeline_env_group);
    let mut out: Vec<String> = groups.filter_map(|g| missing_group(&lib.name, g)).collect();
    out.extend(missing_adapter(lib, table));
    out
}

/// An environment group needs its input and lock in `envs/`, embedded by augbench-env.
fn missing_group(library: &str, group: &str) -> Option<String> {
    for file in [format!("envs/{group}.in"), format!("envs/{group}.txt")] {
        if !repo().join(&file).is_file() {
            return Some(format!(
                "library `{library}`: its environment group `{group}` has no {file}"
            ));
        }
    }
    augbench_env::group_assets(group).is_none().then(|| {
        format!("library `{library}`: its environment group `{group}` is not embedded by augbench_env::groups()")
    })
}

fn missing_adapter(lib: &LibraryInfo, table: &PythonTable) -> Vec<String> {
    let name = &lib.name;
    let Some((module, distribution)) = table.get(name) else {
        return vec![format!(
            "library `{name}`: missing from LIBRARIES in {ADAPTERS}/__init__.py"
        )];
    };
    let mut out = Vec::new();
    if !repo().join(ADAPTERS).join(format!("{module}.py")).is_file() {
        out.push(format!(
            "library `{name}`: its adapter module {ADAPTERS}/{module}.py does not exist"
        ));
    }
    if *distribution != lib.package {
        out.push(format!(
            "library `{name}`: LIBRARIES in {ADAPTERS}/__init__.py names distribution `{distribution}`, specs/matrix.yaml package `{}`",
            lib.package
        ));
    }
    out
}

fn missing_native(lib: &LibraryInfo) -> Vec<String> {
    let name = &lib.name;
    let Ok(native) = Library::parse(name) else {
        return vec![format!(
            "library `{name}`: not a variant of augbench_native::Library (crates/augbench-native/src/library.rs)"
        )];
    };
    let crates = augbench_native::versions::for_library(native);
    if crates.iter().any(|(c, _)| *c == lib.package) {
        return Vec::new();
    }
    vec![format!(
        "library `{name}`: its package `{}` is not among the crates augbench_native::versions::for_library reports",
        lib.package
    )]
}

/// Python adapters, in `LIBRARIES` or as a module defining `ADAPTER`, that no matrix library uses.
fn python_extras(m: &Matrix, table: &PythonTable) -> Vec<String> {
    let python = |name: &str| m.library(name).is_some_and(is_python);
    let mut out: Vec<String> = table
        .keys()
        .filter(|name| !python(name))
        .map(|name| format!("LIBRARIES in {ADAPTERS}/__init__.py has `{name}`, which specs/matrix.yaml does not list as a Python library"))
        .collect();
    for module in adapter_modules() {
        if !table.values().any(|(m, _)| *m == module) {
            out.push(format!(
                "{ADAPTERS}/{module}.py defines an ADAPTER that no entry of LIBRARIES uses"
            ));
        }
    }
    out
}

fn native_extras(m: &Matrix) -> Vec<String> {
    let native = |name: &str| m.library(name).is_some_and(|l| !is_python(l));
    Library::ALL
        .iter()
        .filter(|lib| !native(lib.name()))
        .map(|lib| format!("augbench_native::Library has `{}`, which specs/matrix.yaml does not list as a native_worker library", lib.name()))
        .collect()
}

/// Groups of `envs/` that no library or decoder of the matrix runs in.
fn unused_groups(m: &Matrix) -> Vec<String> {
    let libraries = m.libraries.iter();
    let mut used: Vec<&str> = libraries
        .flat_map(|l| std::iter::once(&l.env_group).chain(&l.pipeline_env_group))
        .map(String::as_str)
        .collect();
    used.extend(m.decoders.iter().map(|d| d.env_group.as_str()));
    augbench_env::groups()
        .iter()
        .filter(|g| !used.contains(&g.name))
        .map(|g| {
            format!(
                "envs/{}.in: no library or decoder of specs/matrix.yaml runs in this group",
                g.name
            )
        })
        .collect()
}

/// Reads `LIBRARIES` from the text of `adapters/__init__.py`: every line between its `{` and `}`
/// is blank, a comment, or `"name": ("module", "distribution"),`.
fn python_table() -> PythonTable {
    let path = repo().join(ADAPTERS).join("__init__.py");
    let text = std::fs::read_to_string(&path).unwrap();
    let (_, after) = text.split_once("\nLIBRARIES:").expect("no LIBRARIES table");
    let (_, body) = after.split_once('{').unwrap();
    let (body, _) = body.split_once('}').unwrap();
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| table_entry(l).unwrap_or_else(|| panic!("cannot read LIBRARIES line `{l}`")))
        .collect()
}

fn table_entry(line: &str) -> Option<(String, (String, String))> {
    let quoted: Vec<&str> = line.split('"').skip(1).step_by(2).collect();
    match quoted[..] {
        [name, module, distribution] => Some((name.into(), (module.into(), distribution.into()))),
        _ => None,
    }
}

/// The modules of the adapter package that define an `ADAPTER`.
fn adapter_modules() -> Vec<String> {
    let dir = repo().join(ADAPTERS);
    let files = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path());
    files
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines().any(|l| l.starts_with("ADAPTER ="))
        })
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect()
}
