//! Production cells' config (docs/pipeline.md, "Production cells"): the YAML a user writes, its
//! resolution against the recipe catalog (every setting left out takes the catalog's
//! `execution` or `output` value), its validation as located user errors, and the cells it asks
//! for, one per (implementation, recipe, seed), and per loader-worker count in a sweep. The cell
//! file format is `cell`'s.

pub mod cell;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::{DataConfig, OutputConfig};
use augbench_catalog::config_error::{ConfigError, suggest};
use augbench_catalog::recipes::{Catalog, Dtype, Recipe};

pub const PRODUCTION_CONFIG_VERSION: u32 = 1;

/// The output folder's layout: `latest.json` (the latest run's record) and `runs/<run id>/`
/// holding `run.json`, `summary.md` and `cells/` (`cell::path`).
pub const LATEST_FILE: &str = "latest.json";
pub const RECORD_FILE: &str = "run.json";
pub const SUMMARY_FILE: &str = "summary.md";

/// The file order of every cell: the reference's, `numpy.random.default_rng(seed).permutation(n)`
/// (drawn by augbench-exec's `production::order`).
pub const FILE_ORDER: &str = "numpy-pcg64";

/// The folder of run `run_id` under the output folder `out`.
pub fn run_dir(out: &Path, run_id: &str) -> PathBuf {
    out.join("runs").join(run_id)
}

/// A production config a user can fix (exit 2): the config itself, or the catalog it names.
#[derive(Debug, thiserror::Error)]
pub enum ProductionConfigError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Catalog(#[from] augbench_catalog::recipes::CatalogError),
}

/// The file a user writes: `production:` (what to measure), `data:` and `output:` as in run configs.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionConfig {
    pub version: u32,
    pub production: ProductionSettings,
    #[serde(default)]
    pub data: DataConfig,
    #[serde(default)]
    pub output: OutputConfig,
    /// Send the cells to Google Cloud Batch or Slurm, in shards (docs/cluster.md, "Production
    /// cells"); the same section as a run config's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cloud: Option<crate::config::CloudConfig>,
}

/// What to measure; every field left out takes the catalog's value.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProductionSettings {
    /// A recipe catalog file; absent: the embedded rgb catalog (`specs/recipes/rgb.yaml`).
    pub catalog: Option<PathBuf>,
    /// Catalog implementation names (`<library>_<device>`), or a native crate's (`image_cpu`).
    pub implementations: Vec<String>,
    /// Recipes by id or by row name; absent: every recipe of the catalog.
    pub recipes: Option<Vec<String>>,
    pub seeds: Option<Vec<u64>>,
    pub batch_size: Option<u64>,
    pub warmup_batches: Option<u64>,
    pub measured_batches: Option<u64>,
    /// Loader workers per cell: one count, or a list to sweep (one cell per count).
    pub workers: Option<Workers>,
    pub prefetch: Option<u64>,
    pub dtype: Option<Dtype>,
    /// Sample the loader's memory around each cell (default true; false: the sampler's cost
    /// can be measured against a run without it).
    pub memory: Option<bool>,
    /// Which decoder reads the files (default `library`).
    pub decoders: Option<Decoders>,
}

/// Which decoder a cell reads its files with (`production.decoders`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decoders {
    /// Each library's own decoder (its adapter's).
    #[default]
    Library,
    /// The decoder the catalog's `decoders:` names for each implementation, as the workload reads
    /// its files (the reference: SimpleJPEG for AlbumentationsX, torchvision.io for Kornia).
    Reference,
}

impl Decoders {
    /// As the config writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Decoders::Library => "library",
            Decoders::Reference => "reference",
        }
    }
}

/// Loader workers of a cell (`production.workers`): one count for every cell, or a sweep, a list
/// of two or more counts with one cell per count (and its own column in the tables). `0` loads in
/// the worker's main process; `N` starts N loaders (processes for a Python library, each running
/// it single-threaded; threads for the native loader).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Workers {
    One(u64),
    Sweep(Vec<u64>),
}

impl Workers {
    /// The counts measured, in config order.
    pub fn values(&self) -> &[u64] {
        match self {
            Workers::One(w) => std::slice::from_ref(w),
            Workers::Sweep(ws) => ws,
        }
    }

    /// The count of cell `id`: its own in a sweep, else the one count.
    pub fn of(&self, id: &cell::CellId) -> u64 {
        id.workers
            .unwrap_or_else(|| self.values().first().copied().unwrap_or(0))
    }

    /// Whether each count gets cells of its own (a list in the config).
    pub fn is_sweep(&self) -> bool {
        matches!(self, Workers::Sweep(_))
    }
}

/// A count or a list of counts; anything else says what `workers` takes (a negative count is
/// named as one, not as a type mismatch).
impl<'de> Deserialize<'de> for Workers {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Counts;
        const EXPECTED: &str =
            "a count of loader workers (0 or more) or a list of counts to sweep, e.g. [0, 1, 2, 4]";
        impl<'de> serde::de::Visitor<'de> for Counts {
            type Value = Workers;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Workers, E> {
                Ok(Workers::One(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Workers, E> {
                u64::try_from(v).map(Workers::One).map_err(|_| {
                    E::custom(format!(
                        "`workers: {v}`: a count of loader workers cannot be negative"
                    ))
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Workers, A::Error> {
                let mut counts = Vec::new();
                while let Some(v) = seq.next_element::<i64>()? {
                    let count = u64::try_from(v).map_err(|_| {
                        serde::de::Error::custom(format!(
                            "`workers: [.., {v}, ..]`: a count of loader workers cannot be negative"
                        ))
                    })?;
                    counts.push(count);
                }
                Ok(Workers::Sweep(counts))
            }
        }
        d.deserialize_any(Counts)
    }
}

/// The decoders a Python worker reads files with when a cell asks for one by name
/// (python/augbench_worker/decoders.py, whose pytest holds the two lists equal).
pub const WORKER_DECODERS: [&str; 3] = ["pillow", "simplejpeg", "torchvision.io"];

/// Every setting of a cell, resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellSettings {
    pub batch_size: u64,
    pub warmup_batches: u64,
    pub measured_batches: u64,
    pub workers: Workers,
    pub prefetch: u64,
    pub dtype: String,
    pub sample_memory: bool,
    pub decoders: Decoders,
    /// How each seed orders the files (`FILE_ORDER`).
    pub order: &'static str,
    pub height: u64,
    pub width: u64,
    pub mean: [f64; 3],
    pub std: [f64; 3],
}

/// One implementation: a library on a device, the catalog's or a native crate's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Implementation {
    pub name: String,
    pub library: String,
    /// `cpu` (`<library>_cpu`) or `cuda` (`<library>_gpu`: the batch on the GPU).
    pub device: crate::Device,
    /// A native crate: not in the catalog; its worker builds each recipe or refuses a stage.
    pub native: bool,
}

impl Implementation {
    /// The implementation `name` names outside a config (a catalog's list), resolved as a config
    /// resolves it, or why augbench cannot run it.
    pub fn named(name: &str) -> Result<Implementation, String> {
        let err =
            |_: &str, message: String, _: String| ConfigError::new(Path::new(""), message, "");
        implementation(name, &err).map_err(|e| e.message)
    }

    /// Where and in what form its batches end, the cell's timing boundary: `host float16` (the
    /// main process normalizes and casts on the CPU; the reference's CPU implementations end on
    /// the device instead), or `cuda float16` (normalized and cast on the device, synchronized).
    pub fn boundary(&self, settings: &CellSettings) -> String {
        let place = match self.device {
            crate::Device::Cuda => "cuda",
            _ => "host",
        };
        format!("{place} {}", settings.dtype)
    }
}

/// A config resolved against its catalog: what every cell runs with.
#[derive(Debug, Clone)]
pub struct Production {
    pub config: ProductionConfig,
    pub catalog: Catalog,
    /// The catalog file's text (hashed into the run id).
    pub catalog_text: String,
    pub implementations: Vec<Implementation>,
    pub recipes: Vec<Recipe>,
    pub seeds: Vec<u64>,
    pub settings: CellSettings,
}

impl Production {
    /// Whether `implementation` is asked to measure `recipe`: one of the recipe's in the catalog,
    /// or a native crate (which the catalog does not list: its worker answers `unsupported`,
    /// naming the stage, for a recipe it cannot build).
    pub fn listed(recipe: &Recipe, implementation: &Implementation) -> bool {
        implementation.native || recipe.implementations.contains(&implementation.name)
    }

    /// The decoder a cell of `imp` asks its worker for by name: the catalog's for it under
    /// `decoders: reference` (`resolve` checked there is one), else none (the library's own).
    pub fn decoder_for(&self, imp: &Implementation) -> Option<String> {
        match self.settings.decoders {
            Decoders::Reference => self.catalog.decoders.get(&imp.name).cloned(),
            Decoders::Library => None,
        }
    }

    /// The cells the config asks for: implementations × recipes × seeds × loader-worker counts.
    pub fn cells(&self) -> usize {
        self.implementations.len()
            * self.recipes.len()
            * self.seeds.len()
            * self.settings.workers.values().len()
    }

    /// The folder the run writes under: the config's `output.output_dir`, else policy's.
    pub fn output_dir(&self) -> PathBuf {
        self.config
            .output
            .output_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from(crate::policy::PRODUCTION_OUTPUT_DIR))
    }
}

pub use crate::config::is_production_config;

/// Reads, parses and resolves a production config file.
pub fn load(path: &Path) -> Result<Production, ProductionConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::io(path, &e))?;
    let config = parse(&text, path)?;
    resolve(config, &text, path)
}

pub fn parse(text: &str, file: &Path) -> Result<ProductionConfig, ConfigError> {
    if !is_production_config(text) && text.lines().any(|l| l.starts_with("selection:")) {
        return Err(ConfigError::at_key(
            file,
            text,
            &["selection"],
            "this is a run config (micro, pipeline or decode rows), not a production config",
            format!(
                "run it with `augbench run --config {}`; a production config has a `production:` section (configs/examples/production_rgb_small.yaml)",
                file.display()
            ),
        ));
    }
    let cfg: ProductionConfig =
        serde_saphyr::from_str(text).map_err(|e| ConfigError::from_parse(file, text, &e))?;
    if cfg.version != PRODUCTION_CONFIG_VERSION {
        return Err(ConfigError::at_key(
            file,
            text,
            &["version"],
            format!("unsupported production config version {}", cfg.version),
            format!("this augbench reads `version: {PRODUCTION_CONFIG_VERSION}`"),
        ));
    }
    Ok(cfg)
}

/// The config against its catalog; a value no cell can run with is an error at its key.
pub fn resolve(
    config: ProductionConfig,
    text: &str,
    file: &Path,
) -> Result<Production, ProductionConfigError> {
    let (catalog, catalog_text) = catalog_of(&config, file)?;
    let err = |key: &str, message: String, hint: String| {
        ConfigError::at_key(file, text, &["production", key], message, hint)
    };
    let p = &config.production;
    let implementations = implementations(p, &catalog, &err)?;
    let recipes = recipes(p, &catalog, &err)?;
    let seeds = p
        .seeds
        .clone()
        .unwrap_or_else(|| catalog.execution.seeds.clone());
    if let Some(twice) = seeds
        .iter()
        .enumerate()
        .find(|(i, s)| seeds[..*i].contains(s))
    {
        return Err(err(
            "seeds",
            format!("seed {} is listed twice", twice.1),
            "list each seed once".into(),
        )
        .into());
    }
    if seeds.is_empty() {
        return Err(err(
            "seeds",
            "no seeds".into(),
            "give at least one, e.g. `seeds: [137]`".into(),
        )
        .into());
    }
    let settings = settings(p, &catalog, &err)?;
    if settings.decoders == Decoders::Reference {
        reference_decoders(&catalog, &implementations, &err)?;
    }
    let mut config = config;
    if config.cloud.is_some() && config.production.catalog.is_some() {
        return Err(err(
            "catalog",
            "a catalog file is not sent with a run on another engine".into(),
            "use the embedded catalog (remove `catalog:`), or run this config here".into(),
        )
        .into());
    }
    if let Some(c) = config.cloud.as_mut() {
        let blocks = shard_blocks(c.shards, seeds.len(), recipes.len());
        let results = config.output.gcs_results_uri.clone();
        crate::cloud::fill_engine(c, blocks * seeds.len() as u64, results);
        let src = crate::Source::new(file, text);
        crate::cloud::check_engine(c, &config.output, &config.data, &src)?;
    }
    Ok(Production {
        config,
        catalog,
        catalog_text,
        implementations,
        recipes,
        seeds,
        settings,
    })
}

/// Recipe blocks per seed for `shards` asked (absent: one block, so one shard per seed).
fn shard_blocks(shards: Option<u64>, seeds: usize, recipes: usize) -> u64 {
    let asked = shards.unwrap_or(seeds as u64).max(1);
    asked
        .div_ceil(seeds.max(1) as u64)
        .clamp(1, recipes.max(1) as u64)
}

/// A production config's shards: (recipe block, seed), every implementation in each, so every
/// ratio between implementations is measured on one machine, and a shard's cells share the
/// run id of the whole (its inputs do not depend on which recipes or seeds it measures).
pub fn shards(p: &Production) -> Vec<crate::cloud::Shard> {
    let recipes: Vec<String> = p.recipes.iter().map(|r| r.id.clone()).collect();
    // The resolved `shards` is blocks × seeds (`resolve`).
    let seeds = p.seeds.len().max(1) as u64;
    let resolved = p
        .config
        .cloud
        .as_ref()
        .and_then(|c| c.shards)
        .unwrap_or(seeds);
    let blocks = (resolved / seeds).max(1);
    let implementations: Vec<String> = p.implementations.iter().map(|i| i.name.clone()).collect();
    let mut out = Vec::new();
    for &seed in &p.seeds {
        for block in crate::cloud::split(&recipes, blocks as usize) {
            out.push(crate::cloud::Shard {
                index: out.len() as u64,
                libraries: implementations.clone(),
                transforms: block,
                seeds: Some(vec![seed]),
            });
        }
    }
    out
}

/// The cells a run asks for, as its record keeps them (`run.json`, `latest.json`): what the
/// tables count as planned.
pub fn planned_settings(p: &Production) -> serde_json::Value {
    serde_json::json!({
        "implementations": p.implementations.iter().map(|i| &i.name).collect::<Vec<_>>(),
        "recipes": p.recipes.iter().map(|r| &r.id).collect::<Vec<_>>(),
        "rows": p.recipes.iter().map(|r| &r.row).collect::<Vec<_>>(),
        "seeds": p.seeds,
        "cell": p.settings,
    })
}

type ErrAt<'a> = dyn Fn(&str, String, String) -> ConfigError + 'a;

fn catalog_of(
    config: &ProductionConfig,
    file: &Path,
) -> Result<(Catalog, String), ProductionConfigError> {
    match &config.production.catalog {
        None => Ok((
            Catalog::embedded().clone(),
            augbench_catalog::recipes::embedded_text().to_string(),
        )),
        Some(path) => {
            let path = file.parent().unwrap_or(Path::new(".")).join(path);
            let catalog = Catalog::from_path(&path)?;
            let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::io(&path, &e))?;
            Ok((catalog, text))
        }
    }
}

fn implementations(
    p: &ProductionSettings,
    catalog: &Catalog,
    err: &ErrAt<'_>,
) -> Result<Vec<Implementation>, ConfigError> {
    let mut known: Vec<String> = catalog.implementations.clone();
    let native: Vec<String> = native_implementations()
        .filter(|n| !known.contains(n))
        .collect();
    known.extend(native);
    if p.implementations.is_empty() {
        return Err(err(
            "implementations",
            "no implementations".into(),
            format!("name one or more of: {}", known.join(", ")),
        ));
    }
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    p.implementations
        .iter()
        .map(|name| {
            if !known.contains(&name.as_str()) {
                return Err(err(
                    "implementations",
                    format!("unknown implementation `{name}`"),
                    suggest(name, &known),
                ));
            }
            if p.implementations.iter().filter(|n| *n == name).count() > 1 {
                return Err(err(
                    "implementations",
                    format!("`{name}` is listed twice"),
                    "list each implementation once".into(),
                ));
            }
            implementation(name, err)
        })
        .collect()
}

/// The native crates' implementations (`<crate>_cpu`): not the catalog's, so each recipe's
/// support is what the crate can build (`Production::listed`).
fn native_implementations() -> impl Iterator<Item = String> {
    crate::Matrix::get()
        .libraries
        .iter()
        .filter(|l| l.backend == crate::Backend::NativeWorker)
        .map(|l| format!("{}_cpu", l.name))
}

/// A known implementation name as a library of the support matrix on a device augbench measures.
fn implementation(name: &str, err: &ErrAt<'_>) -> Result<Implementation, ConfigError> {
    let (library, device) = name.rsplit_once('_').unwrap_or((name, "cpu"));
    let Some(info) = crate::Matrix::get().library(library) else {
        let known: Vec<&str> = crate::Matrix::get().library_names();
        return Err(err(
            "implementations",
            format!("`{name}`: augbench has no library `{library}` to run it"),
            format!(
                "name implementations `<library>_cpu` after a library of the support matrix ({})",
                known.join(", ")
            ),
        ));
    };
    if info.backend == crate::Backend::DaliPipeline {
        return Err(err(
            "implementations",
            format!("augbench cannot measure `{name}` yet: DALI builds its own pipeline, and production cells are built on a DataLoader (Python) or the native loader"),
            "leave DALI out of production configs; its pipeline rows (`augbench run`, configs/examples/gpu_check_dali.yaml) measure it".into(),
        ));
    }
    let gpu = info.devices.contains(&crate::Device::Cuda);
    let device = match device {
        "cpu" => crate::Device::Cpu,
        "gpu" if gpu => crate::Device::Cuda,
        _ => {
            let also = if gpu {
                format!(" or `{library}_gpu`")
            } else {
                String::new()
            };
            return Err(err(
                "implementations",
                format!("`{name}`: {library} has no production cells on that device"),
                format!("name it `{library}_cpu`{also}"),
            ));
        }
    };
    Ok(Implementation {
        name: name.to_string(),
        library: library.to_string(),
        device,
        native: info.backend == crate::Backend::NativeWorker,
    })
}

/// Under `decoders: reference`, every implementation has a decoder in the catalog that a worker
/// reads with (native crates decode with their own crate: the workload names none for them).
fn reference_decoders(
    catalog: &Catalog,
    implementations: &[Implementation],
    err: &ErrAt<'_>,
) -> Result<(), ConfigError> {
    let leave = "or leave `decoders` out (each library reads with its own decoder)";
    for imp in implementations {
        let Some(decoder) = catalog.decoders.get(&imp.name) else {
            let why = if imp.native {
                "a native crate decodes with its own crate"
            } else {
                "the catalog's `decoders:` has no entry for it"
            };
            return Err(err(
                "decoders",
                format!(
                    "`decoders: reference`: the workload names no decoder for `{}` ({why})",
                    imp.name
                ),
                format!("drop `{}` from this config, {leave}", imp.name),
            ));
        };
        if !WORKER_DECODERS.contains(&decoder.as_str()) {
            return Err(err(
                "decoders",
                format!(
                    "`decoders: reference`: augbench cannot read files with `{decoder}`, the catalog's decoder for `{}`",
                    imp.name
                ),
                format!(
                    "augbench reads with {}; drop `{}`, {leave}",
                    WORKER_DECODERS.join(", "),
                    imp.name
                ),
            ));
        }
    }
    Ok(())
}

fn recipes(
    p: &ProductionSettings,
    catalog: &Catalog,
    err: &ErrAt<'_>,
) -> Result<Vec<Recipe>, ConfigError> {
    let Some(wanted) = &p.recipes else {
        return Ok(catalog.recipes.clone());
    };
    if wanted.is_empty() {
        return Err(err(
            "recipes",
            "no recipes".into(),
            "name recipes by id or row, or leave `recipes` out for all of them".into(),
        ));
    }
    let names: Vec<&str> = catalog.recipes.iter().map(|r| r.row.as_str()).collect();
    let found: Vec<Recipe> = wanted
        .iter()
        .map(|w| {
            catalog
                .recipes
                .iter()
                .find(|r| &r.id == w || &r.row == w)
                .cloned()
                .ok_or_else(|| {
                    err(
                        "recipes",
                        format!("no recipe `{w}` in the catalog"),
                        suggest(w, &names),
                    )
                })
        })
        .collect::<Result<_, _>>()?;
    for (i, r) in found.iter().enumerate() {
        if found[..i].iter().any(|earlier| earlier.id == r.id) {
            return Err(err(
                "recipes",
                format!("recipe `{}` is listed twice", r.id),
                "list each recipe once (by id or by row)".into(),
            ));
        }
    }
    Ok(found)
}

/// `workers` as given (absent: the catalog's count), each count at most what augbench starts, a
/// sweep neither empty nor listing a count twice.
fn workers(given: Option<Workers>, catalog: u64, err: &ErrAt<'_>) -> Result<Workers, ConfigError> {
    let workers = given.unwrap_or(Workers::One(catalog));
    let values = workers.values();
    let max = crate::policy::MAX_LOADER_WORKERS;
    let problem = if let Some(w) = values.iter().find(|w| **w > max) {
        let given = match workers {
            Workers::One(_) => format!("`workers: {w}`"),
            Workers::Sweep(_) => format!("`{w}` in `workers:`"),
        };
        Some(format!(
            "{given} is more loader processes than augbench starts (at most {max})"
        ))
    } else if workers.is_sweep() && values.len() < 2 {
        Some(format!(
            "`workers: {}` sweeps fewer than two counts",
            serde_json::to_string(values).unwrap_or_default()
        ))
    } else {
        values
            .iter()
            .enumerate()
            .find(|(i, w)| values[..*i].contains(w))
            .map(|(_, w)| format!("the count {w} is listed twice in `workers:`"))
    };
    match problem {
        Some(message) => Err(err(
            "workers",
            message,
            format!(
                "give one count (`workers: 2`; the catalog's is {catalog}: about as many as the machine has cores) or a list of two or more distinct counts to sweep, e.g. `workers: [0, 1, 2, 4]`"
            ),
        )),
        None => Ok(workers),
    }
}

fn settings(
    p: &ProductionSettings,
    catalog: &Catalog,
    err: &ErrAt<'_>,
) -> Result<CellSettings, ConfigError> {
    let e = &catalog.execution;
    let positive = |key: &str, value: Option<u64>, default: u64| match value.unwrap_or(default) {
        0 => Err(err(
            key,
            format!("`{key}` must be at least 1"),
            format!("the catalog's value is {default}"),
        )),
        v => Ok(v),
    };
    let o = &catalog.output;
    Ok(CellSettings {
        batch_size: positive("batch_size", p.batch_size, e.batch_size)?,
        warmup_batches: positive("warmup_batches", p.warmup_batches, e.warmup_batches)?,
        measured_batches: positive("measured_batches", p.measured_batches, e.measured_batches)?,
        workers: workers(p.workers.clone(), e.workers, err)?,
        prefetch: positive("prefetch", p.prefetch, e.prefetch)?,
        dtype: p.dtype.unwrap_or(o.dtype).to_string(),
        sample_memory: p.memory.unwrap_or(true),
        decoders: p.decoders.unwrap_or_default(),
        order: FILE_ORDER,
        height: o.height,
        width: o.width,
        mean: o.normalize.mean,
        std: o.normalize.std,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(body: &str) -> Result<Production, ProductionConfigError> {
        let text = format!("version: 1\nproduction:\n{body}");
        let path = Path::new("p.yaml");
        resolve(parse(&text, path)?, &text, path)
    }

    #[test]
    fn settings_left_out_take_the_catalogs_values() {
        let p = resolved("  implementations: [pillow_cpu]\n  recipes: [Resize, HorizontalFlip]\n")
            .unwrap();
        let e = &Catalog::embedded().execution;
        assert_eq!(p.settings.batch_size, e.batch_size);
        assert_eq!(p.settings.workers, Workers::One(e.workers));
        assert_eq!(p.seeds, e.seeds);
        assert_eq!(
            p.settings.dtype,
            Catalog::embedded().output.dtype.to_string()
        );
        assert_eq!(p.recipes.len(), 2);
        assert_eq!(p.implementations[0].library, "pillow");
    }

    /// A list of counts is a sweep (each count its own cells); one count, as before, is not,
    /// and hashes into the run id as the number it always was.
    #[test]
    fn a_list_of_worker_counts_is_a_sweep() {
        let p = resolved("  implementations: [pillow_cpu]\n  workers: [0, 2, 1]\n").unwrap();
        assert_eq!(p.settings.workers, Workers::Sweep(vec![0, 2, 1]));
        assert!(p.settings.workers.is_sweep());
        assert_eq!(p.settings.workers.values(), [0, 2, 1]);
        let one = resolved("  implementations: [pillow_cpu]\n  workers: 3\n").unwrap();
        assert!(!one.settings.workers.is_sweep());
        let settings = serde_json::to_value(&one.settings).unwrap();
        assert_eq!(settings["workers"], 3);
        assert_eq!(p.cells(), p.recipes.len() * p.seeds.len() * 3);
    }

    #[test]
    fn a_native_crate_is_an_implementation_the_catalog_does_not_list() {
        let p =
            resolved("  implementations: [image_cpu, pillow_cpu]\n  recipes: [Resize]\n").unwrap();
        let [native, python] = &p.implementations[..] else {
            panic!("two implementations")
        };
        assert!(native.native && !python.native);
        assert!(!p.recipes[0].implementations.contains(&native.name));
        assert!(Production::listed(&p.recipes[0], native));
        let e = resolved("  implementations: [imag_cpu]\n").unwrap_err();
        assert!(format!("{e:#}").contains("`image_cpu`"), "{e:#}");
    }

    #[test]
    fn a_recipe_is_found_by_id_or_row() {
        let p = resolved(
            "  implementations: [pillow_cpu]\n  recipes: [Resize224+Normalize+ToTensor]\n",
        )
        .unwrap();
        assert_eq!(p.recipes[0].row, "Resize");
    }

    #[test]
    fn each_kind_of_config_given_to_the_other_command_says_which_command_reads_it() {
        let path = Path::new("q.yaml");
        let run = "version: 1\nselection:\n  libraries: [pillow]\n";
        let e = parse(run, path).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.hint.contains("augbench run --config q.yaml"), "{e}");
        let production = "version: 1\nproduction:\n  implementations: [pillow_cpu]\n";
        let e = crate::RunConfig::from_yaml(production, path).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.hint.contains("augbench production --config q.yaml"),
            "{e}"
        );
    }

    /// `decoders: reference` asks each implementation's worker for the catalog's decoder; left
    /// out, every library reads with its own (no decoder asked for).
    #[test]
    fn reference_decoders_come_from_the_catalog() {
        let body = "  implementations: [albumentationsx_cpu, kornia_cpu, pillow_cpu]\n";
        let library = resolved(body).unwrap();
        assert_eq!(library.settings.decoders, Decoders::Library);
        let reference = resolved(&format!("{body}  decoders: reference\n")).unwrap();
        let asked: Vec<Option<String>> = reference
            .implementations
            .iter()
            .map(|i| reference.decoder_for(i))
            .collect();
        let want = ["simplejpeg", "torchvision.io", "pillow"];
        assert_eq!(asked, want.map(|d| Some(d.to_string())));
        assert!(
            library
                .implementations
                .iter()
                .all(|i| library.decoder_for(i).is_none())
        );
        for (imp, decoder) in &reference.catalog.decoders {
            let measurable = Implementation::named(imp).is_ok();
            assert!(
                !measurable || WORKER_DECODERS.contains(&decoder.as_str()),
                "{imp}: {decoder}"
            );
        }
    }

    #[test]
    fn mistakes_are_errors_at_their_line_with_a_hint() {
        for (body, line, says) in [
            (
                "  implementations: [pilow_cpu]\n",
                3,
                "did you mean `pillow_cpu`",
            ),
            ("  implementations: [dali_gpu]\n", 3, "DataLoader"),
            (
                "  implementations: [pillow_cpu]\n  recipes: [Rezise]\n",
                4,
                "Resize",
            ),
            (
                "  implementations: [pillow_cpu]\n  batch_size: 0\n",
                4,
                "at least 1",
            ),
            (
                "  implementations: [pillow_cpu]\n  seeds: []\n",
                4,
                "no seeds",
            ),
            ("  implementations: []\n", 3, "no implementations"),
            (
                "  implementations: [pillow_cpu, pillow_cpu]\n",
                3,
                "listed twice",
            ),
            (
                "  implementations: [pillow_cpu]\n  recipes: [Resize, Resize224+Normalize+ToTensor]\n",
                4,
                "listed twice",
            ),
            (
                "  implementations: [pillow_cpu]\n  seeds: [1, 1]\n",
                4,
                "listed twice",
            ),
            (
                "  implementations: [albumentationsx_cpu, image_cpu]\n  decoders: reference\n",
                4,
                "no decoder for `image_cpu` (a native crate decodes with its own crate)",
            ),
            (
                "  implementations: [pillow_cpu]\n  decoders: simplejpeg\n",
                4,
                "library",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: [1, 2, 1]\n",
                4,
                "the count 1 is listed twice",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: []\n",
                4,
                "sweeps fewer than two counts",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: [2]\n",
                4,
                "`workers: 2`",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: [0, 1500]\n",
                4,
                "at most 256",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: -1\n",
                4,
                "cannot be negative",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: [0, -2]\n",
                4,
                "cannot be negative",
            ),
            (
                "  implementations: [pillow_cpu]\n  workers: many\n",
                4,
                "a list of counts to sweep",
            ),
        ] {
            let e = resolved(body).unwrap_err();
            let text = format!("{e:#}");
            let ProductionConfigError::Config(c) = e else {
                panic!("{text}")
            };
            assert_eq!(c.line, Some(line), "{body}: {text}");
            assert!(
                text.contains(says) || c.hint.contains(says),
                "{body}: {text} / {}",
                c.hint
            );
        }
    }
}
