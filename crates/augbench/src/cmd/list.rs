//! `augbench list scenarios|libraries|decoders|transforms|recipes`: the support matrix, the
//! registry and the production recipe catalog (embedded, or a user's file, validated) as tables.

use std::process::ExitCode;

use augbench_catalog::matrix::LibraryInfo;
use augbench_catalog::registry::OutputRule;
use augbench_core::{Backend, Matrix, Registry, UsageError};
use augbench_exec::production::coverage::{self, Coverage};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// Scenarios with their media, channels, curated set and libraries.
    Scenarios,
    /// Libraries with licence, pinned version, backend, environment group, devices and modes.
    Libraries {
        /// Only libraries that run this scenario.
        #[arg(long)]
        scenario: Option<String>,
    },
    /// Video decoders of the decode scenarios, with environment group, access pattern and output.
    Decoders,
    /// Registered transforms with their output rule; `--scenario` limits to its curated set.
    Transforms {
        #[arg(long)]
        scenario: Option<String>,
    },
    /// The production recipe catalog: each recipe's stages, where the CPU prefix rule splits them
    /// (loader workers, then the batch), and each implementation's coverage, asked of its worker
    /// where its environment is built. Measured by `augbench production`.
    Recipes {
        /// A catalog file of your own, validated (exit 2 at its line); the embedded rgb catalog
        /// without it.
        #[arg(long, value_name = "YAML")]
        file: Option<std::path::PathBuf>,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let rows = match args.what {
        What::Scenarios => scenarios(),
        What::Libraries { scenario } => libraries(scenario.as_deref())?,
        What::Decoders => decoders(),
        What::Transforms { scenario } => transforms(scenario.as_deref())?,
        What::Recipes { file } => return recipes(file.as_deref()),
    };
    super::output::emit(&augbench_core::text::columns(&rows, false, false))
}

/// The recipe table, then each implementation's coverage (`n / N recipes`).
fn recipes(file: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    use augbench_catalog::recipes::Catalog;
    let owned;
    let catalog = match file {
        Some(path) => {
            owned = Catalog::from_path(path)?;
            &owned
        }
        None => Catalog::embedded(),
    };
    let [h, w] = catalog.output.size();
    let head = format!(
        "{}: {} recipes, {} implementations, {} cells per seed; every recipe ends {h}×{w} → Normalize → ToTensor ({})\n",
        catalog.file.display(),
        catalog.recipes.len(),
        catalog.implementations.len(),
        catalog.pairs(),
        catalog.output.dtype
    );
    let columns = |rows: &[Vec<String>]| augbench_core::text::columns(rows, false, false);
    let recipes = columns(&recipe_rows(catalog));
    let coverage = columns(&coverage_rows(catalog));
    super::output::emit(&format!("{head}{recipes}\n{coverage}"))
}

fn recipe_rows(catalog: &augbench_catalog::recipes::Catalog) -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "recipe",
        "row",
        "loader workers run",
        "then (may run on the batch)",
        "implementations",
    ])];
    for r in &catalog.recipes {
        let ops: Vec<&str> = r.stages.iter().map(|s| s.op.as_str()).collect();
        let split = catalog.prefix(r).map_or(ops.len(), |i| i + 1);
        let after = ops[split..].join(" → ");
        rows.push(vec![
            r.id.clone(),
            r.row.clone(),
            ops[..split].join(" → "),
            if after.is_empty() { "-".into() } else { after },
            r.implementations.len().to_string(),
        ]);
    }
    rows
}

/// Per implementation, the recipes a run would measure out of all of them (coverage, apart from
/// any speed), asked of what runs (`augbench_exec::production::coverage`): the catalog's
/// implementations beside what the catalog lists for them, then the native crates.
fn coverage_rows(catalog: &augbench_catalog::recipes::Catalog) -> Vec<Vec<String>> {
    use augbench_core::production::Implementation;
    let total = catalog.recipes.len();
    let native = augbench_native::Library::ALL.map(|lib| format!("{}_cpu", lib.name()));
    let names: Vec<&String> = catalog.implementations.iter().chain(&native).collect();
    let named: Vec<_> = names.iter().map(|n| Implementation::named(n)).collect();
    let imps: Vec<Implementation> = named.iter().filter_map(|n| n.clone().ok()).collect();
    let mut answers = coverage::ask_all(catalog, &imps, &catalog.recipes).into_iter();
    let mut rows = vec![header(&[
        "implementation",
        "measures",
        "catalog lists",
        "asked",
    ])];
    for (name, imp) in names.into_iter().zip(named) {
        let listed = match catalog.implementations.contains(name) {
            true => format!("{}/{total}", catalog.covered(name)),
            false => "-".into(),
        };
        let row = match imp {
            Ok(imp) => {
                // One answer per resolved implementation, in order.
                let answer = answers.next().unwrap_or_else(|| Coverage::NotAsked {
                    why: "no answer".into(),
                });
                let n = catalog
                    .recipes
                    .iter()
                    .filter(|r| answer.measures(&imp, r))
                    .count();
                vec![format!("{n}/{total}"), listed, asked(&imp, &answer)]
            }
            Err(why) => vec!["0".into(), listed, format!("not measurable: {why}")],
        };
        rows.push([vec![name.clone()], row].concat());
    }
    rows
}

/// Where a coverage count comes from, in a word or a line.
fn asked(imp: &augbench_core::production::Implementation, answer: &Coverage) -> String {
    match answer {
        // Every recipe is a native crate's to try: the count says it.
        Coverage::Asked { .. } if imp.native => "worker: native crate, the stages it builds".into(),
        Coverage::Asked { refused } if refused.is_empty() => "worker: builds every one".into(),
        Coverage::Asked { refused } => {
            let ids: Vec<&str> = refused.keys().map(String::as_str).collect();
            format!("worker: refuses {}", ids.join(", "))
        }
        Coverage::NotAsked { why } => format!("not asked ({why}): the catalog's list"),
    }
}

fn scenarios() -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "scenario",
        "media",
        "channels",
        "set",
        "libraries",
    ])];
    for s in &Matrix::get().scenarios {
        let (set, who) = if s.is_decode() {
            (
                "-".to_string(),
                format!("decoders: {}", s.decoders.join(", ")),
            )
        } else {
            (s.set.clone(), s.libraries.join(", "))
        };
        rows.push(vec![
            s.name.clone(),
            s.media.to_string(),
            s.channels.to_string(),
            set,
            who,
        ]);
    }
    rows
}

fn decoders() -> Vec<Vec<String>> {
    let mut rows = vec![header(&[
        "decoder",
        "env group",
        "package",
        "access",
        "returns",
    ])];
    for d in &Matrix::get().decoders {
        rows.push(vec![
            d.name.clone(),
            d.env_group.clone(),
            d.package.clone(),
            d.access.to_string(),
            d.output.clone(),
        ]);
    }
    rows
}

fn libraries(scenario: Option<&str>) -> anyhow::Result<Vec<Vec<String>>> {
    let m = Matrix::get();
    let allowed = scenario
        .map(find_scenario)
        .transpose()?
        .map(|s| s.libraries.clone());
    let mut rows = vec![header(&[
        "library",
        "licence",
        "version",
        "backend",
        "env group",
        "devices",
        "modes",
    ])];
    for l in &m.libraries {
        if allowed.as_ref().is_some_and(|a| !a.contains(&l.name)) {
            continue;
        }
        rows.push(vec![
            l.name.clone(),
            l.licence.clone(),
            version(l).unwrap_or("-").to_string(),
            l.backend.to_string(),
            l.env_group.clone(),
            join(&l.devices),
            join(&l.modes),
        ]);
    }
    Ok(rows)
}

/// The version augbench measures: the pin in the group's committed lock (Python), or the crate
/// linked into this binary (native); none for a library without a lock here.
fn version(l: &LibraryInfo) -> Option<&'static str> {
    match l.backend {
        Backend::NativeWorker => augbench_native::versions::CRATE_VERSIONS
            .iter()
            .find(|(name, _)| *name == l.package)
            .map(|(_, v)| *v),
        Backend::PythonWorker | Backend::DaliPipeline => {
            augbench_env::pinned_version(&l.env_group, &l.package)
        }
    }
}

fn transforms(scenario: Option<&str>) -> anyhow::Result<Vec<Vec<String>>> {
    let reg = Registry::get();
    let set = scenario
        .map(find_scenario)
        .transpose()?
        .and_then(|s| reg.set(&s.set));
    let mut rows = vec![header(&["transform", "output", "dtype", "params"])];
    for t in &reg.transforms {
        if set.is_some_and(|s| !s.contains(&t.name)) {
            continue;
        }
        let output = match &t.output {
            OutputRule::Same => "same".to_string(),
            OutputRule::Fixed { size } => format!("{}x{}", size[0], size[1]),
            OutputRule::Depends => "depends".to_string(),
        };
        let dtype = serde_json::to_value(t.dtype)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        let params = serde_json::to_string(&t.params).unwrap_or_default();
        rows.push(vec![
            t.name.clone(),
            output,
            dtype.unwrap_or_default(),
            params,
        ]);
    }
    Ok(rows)
}

fn find_scenario(name: &str) -> anyhow::Result<&'static augbench_catalog::matrix::ScenarioInfo> {
    let m = Matrix::get();
    m.scenario(name).ok_or_else(|| {
        let hint = augbench_catalog::config_error::suggest(name, &m.scenario_names());
        UsageError::new(format!("unknown scenario `{name}`"), hint).into()
    })
}

fn header(cols: &[&str]) -> Vec<String> {
    cols.iter().map(|c| c.to_string()).collect()
}

fn join<T: ToString>(xs: &[T]) -> String {
    xs.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
