//! The production recipe catalog (docs/pipeline.md, "The production recipe catalog"): whole loader
//! recipes read from the embedded `specs/recipes/rgb.yaml` or a user's file, the catalog's table of
//! known ops (parameter names and what each does to the sample size), the validation of both as
//! located user errors, and the CPU prefix rule (`collatable_prefix`). Shown by `augbench list
//! recipes` and resolved into production cells by `production`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_saphyr::{Location, Spanned};

use crate::config_error::{ConfigError, locate_key, nearest, suggest};
use crate::recipe::Normalize;

const RGB_YAML: &str = include_str!("../../../specs/recipes/rgb.yaml");
const RGB_PATH: &str = "specs/recipes/rgb.yaml";

/// The embedded rgb catalog's text (what a production run id hashes).
pub fn embedded_text() -> &'static str {
    RGB_YAML
}

/// The stages that end every recipe and are never written in the catalog.
pub const IMPLICIT_TAIL: [&str; 2] = ["Normalize", "ToTensor"];

/// Where the reference's facts come from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceFacts {
    pub repository: String,
    pub commit: String,
    pub recipe_set: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Layout {
    #[allow(clippy::upper_case_acronyms, reason = "the layout's own spelling")]
    BCHW,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    Float16,
    Float32,
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dtype::Float16 => "float16",
            Dtype::Float32 => "float32",
        })
    }
}

/// The batch every recipe delivers, after the implicit Normalize and ToTensor.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Output {
    pub layout: Layout,
    pub channels: u32,
    pub height: u64,
    pub width: u64,
    /// The default output dtype.
    pub dtype: Dtype,
    pub normalize: Normalize,
}

impl Output {
    /// `[height, width]`: the size every sample must have to be collated.
    pub fn size(&self) -> [u64; 2] {
        [self.height, self.width]
    }
}

/// How each (implementation, recipe, seed) cell runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Execution {
    pub batch_size: u64,
    pub warmup_batches: u64,
    pub measured_batches: u64,
    pub seeds: Vec<u64>,
    pub workers: u64,
    pub prefetch: u64,
    pub persistent_workers: bool,
    pub pin_memory: bool,
    pub prewarm: bool,
}

/// What an op does to the sample's height × width, as declared under `ops:`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SizeRule {
    Keep,
    /// Set by one parameter (N or [H, W]) or two (height, width).
    FixedBy(Vec<String>),
    Transpose,
    /// Swaps height and width for some images only.
    MaybeTranspose,
    /// To a size the catalog does not compute.
    Changes,
}

/// One known op: the parameters a stage must give, and its size rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Op {
    pub name: String,
    pub params: Vec<String>,
    pub size: SizeRule,
}

/// A stage's size rule with its parameters applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeEffect {
    Keep,
    Set([u64; 2]),
    Transpose,
    MaybeTranspose,
    Changes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Random {
    /// Fresh random values for every image.
    #[serde(rename = "per_image")]
    PerImage,
    /// Deterministic.
    #[serde(rename = "none")]
    Deterministic,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub op: String,
    pub params: BTreeMap<String, serde_json::Value>,
    pub random: Random,
    pub size: SizeEffect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Recipe {
    pub id: String,
    /// The transform the recipe is about (a name in specs/transforms.yaml).
    pub row: String,
    /// In order, without the implicit Normalize and ToTensor.
    pub stages: Vec<Stage>,
    pub implementations: Vec<String>,
    /// The line of the recipe's `id` in its file.
    pub line: u64,
}

/// A validated recipe catalog.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub file: PathBuf,
    pub family: String,
    pub source: SourceFacts,
    pub output: Output,
    pub execution: Execution,
    pub implementations: Vec<String>,
    /// The decoder the workload reads each implementation's files with (`decoders:`), by
    /// implementation; absent where the catalog names none. A production config with
    /// `decoders: reference` uses these.
    pub decoders: BTreeMap<String, String>,
    pub ops: Vec<Op>,
    pub recipes: Vec<Recipe>,
}

/// A place in a catalog file (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: PathBuf,
    pub line: u64,
    pub column: u64,
}

impl Loc {
    fn new(file: &Path, at: &Location) -> Self {
        Loc {
            file: file.to_path_buf(),
            line: at.line(),
            column: at.column(),
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        Ok(())
    }
}

/// A catalog mistake a user can fix: where it is, what is wrong, and a hint. Exit code 2.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error("{}: cannot read the recipe catalog: {reason}\n  hint: check the path; a catalog is a UTF-8 YAML file such as {RGB_PATH}", file.display())]
    Read { file: PathBuf, reason: String },
    /// Not YAML, or not the schema (unknown or missing keys, wrong types): the parser's error.
    #[error(transparent)]
    Parse(ConfigError),
    #[error(
        "{at}: catalog version {version} is not supported\n  hint: this augbench reads `version: 1`"
    )]
    Version { at: Loc, version: u32 },
    #[error(
        "{at}: op `{op}` takes its size from `{param}`, which is not one of its params\n  hint: {hint}"
    )]
    BadSizeRule {
        at: Loc,
        op: String,
        param: String,
        hint: String,
    },
    #[error(
        "{at}: recipe `{recipe}`: `{op}` ends every recipe implicitly and is never written as a stage\n  hint: remove this stage; `output:` holds the Normalize and ToTensor settings"
    )]
    ImplicitStage { at: Loc, recipe: String, op: String },
    #[error("{at}: recipe `{recipe}`: unknown op `{op}`\n  hint: {hint}")]
    UnknownOp {
        at: Loc,
        recipe: String,
        op: String,
        hint: String,
    },
    #[error("{at}: {stage}: unknown parameter `{param}`\n  hint: {hint}")]
    UnknownParam {
        at: Loc,
        stage: String,
        param: String,
        hint: String,
    },
    #[error(
        "{at}: {stage}: parameter `{param}` is missing\n  hint: a stage gives every parameter its op declares under `ops:`: {params}"
    )]
    MissingParam {
        at: Loc,
        stage: String,
        param: String,
        params: String,
    },
    #[error(
        "{at}: {stage}: `{param}: {value}` is not a size\n  hint: a size is a whole number N (N × N) or [height, width]; two size parameters are whole numbers each"
    )]
    BadSize {
        at: Loc,
        stage: String,
        param: String,
        value: String,
    },
    #[error("{at}: `{key}: false` asks for a loader augbench does not run\n  hint: {hint}")]
    Unhonoured {
        at: Loc,
        key: &'static str,
        hint: &'static str,
    },
    #[error("{at}: recipe `{recipe}`: unknown implementation `{name}`\n  hint: {hint}")]
    UnknownImplementation {
        at: Loc,
        recipe: String,
        name: String,
        hint: String,
    },
    #[error(
        "{at}: recipe `{recipe}` lists implementation `{name}` twice\n  hint: list each implementation once"
    )]
    DuplicateImplementation {
        at: Loc,
        recipe: String,
        name: String,
    },
    #[error("{at}: decoders: {problem}\n  hint: {hint}")]
    Decoders {
        at: Loc,
        problem: String,
        hint: String,
    },
    #[error(
        "{at}: duplicate recipe id `{id}` (first at line {first_line})\n  hint: recipe ids are unique; rename or remove one of the two"
    )]
    DuplicateId {
        at: Loc,
        id: String,
        first_line: u64,
    },
    #[error("{at}: recipe `{recipe}` never delivers collatable {}×{} samples: {reason}\n  hint: follow the stages that change the size with one that fixes it at {}×{}, such as RandomCrop224 or CenterCrop224 (the reference puts RandomCrop224 after Pad, LongestMaxSize and SmallestMaxSize)", size[0], size[1], size[0], size[1])]
    NotCollatable {
        at: Loc,
        recipe: String,
        reason: String,
        size: [u64; 2],
    },
}

impl CatalogError {
    /// The 1-based line the error names, where it names one.
    pub fn line(&self) -> Option<u64> {
        use CatalogError::*;
        match self {
            Read { .. } => None,
            Parse(e) => e.line,
            Version { at, .. }
            | BadSizeRule { at, .. }
            | ImplicitStage { at, .. }
            | UnknownOp { at, .. }
            | UnknownParam { at, .. }
            | MissingParam { at, .. }
            | BadSize { at, .. }
            | UnknownImplementation { at, .. }
            | DuplicateImplementation { at, .. }
            | Decoders { at, .. }
            | DuplicateId { at, .. }
            | NotCollatable { at, .. }
            | Unhonoured { at, .. } => (at.line > 0).then_some(at.line),
        }
    }
}

/// The CPU prefix rule: the index of the first stage after which every sample is `size`
/// (`[height, width]`) and stays so through the last stage. Loader workers run
/// `stages[..=prefix]`; the stages after it keep the size and may run on the collated batch.
/// None when the recipe does not end at `size` for every sample. Source images vary in size, so
/// before the first stage the size is unknown.
pub fn collatable_prefix(recipe: &Recipe, size: [u64; 2]) -> Option<usize> {
    let sizes = sizes_after(recipe);
    if *sizes.last()? != Some(size) {
        return None;
    }
    Some(
        sizes
            .iter()
            .rposition(|s| *s != Some(size))
            .map_or(0, |i| i + 1),
    )
}

/// The sample size after each stage: Some when every sample has that one size.
fn sizes_after(recipe: &Recipe) -> Vec<Option<[u64; 2]>> {
    let mut size: Option<[u64; 2]> = None;
    recipe
        .stages
        .iter()
        .map(|stage| {
            size = match stage.size {
                SizeEffect::Keep => size,
                SizeEffect::Set(s) => Some(s),
                SizeEffect::Transpose => size.map(|[h, w]| [w, h]),
                SizeEffect::MaybeTranspose => size.filter(|[h, w]| h == w),
                SizeEffect::Changes => None,
            };
            size
        })
        .collect()
}

/// Why `collatable_prefix` found none, in words.
fn not_collatable_reason(recipe: &Recipe, size: [u64; 2]) -> String {
    let sizes = sizes_after(recipe);
    let Some(last) = sizes.last().copied() else {
        return "it has no stages".into();
    };
    let op = |i: usize| &recipe.stages[i].op;
    // The last stage that changed the size (before the first stage it is unknown).
    let changed = (0..sizes.len())
        .rev()
        .find(|&i| sizes[i] != if i == 0 { None } else { sizes[i - 1] });
    match (last, changed) {
        (Some([h, w]), Some(i)) => format!(
            "its samples end at {h}×{w}, not {}×{} (set by stage {} `{}`)",
            size[0],
            size[1],
            i + 1,
            op(i)
        ),
        _ => match recipe
            .stages
            .iter()
            .rposition(|s| s.size != SizeEffect::Keep)
        {
            Some(i) => format!(
                "after stage {} `{}` the samples have no one known size, and no later stage fixes it",
                i + 1,
                op(i)
            ),
            None => "no stage sets the size, so the samples keep the source images' varying sizes"
                .into(),
        },
    }
}

impl Catalog {
    /// The embedded rgb catalog, parsed once. Its validity is a build-time fact checked by tests.
    #[allow(
        clippy::panic,
        reason = "embedded at build time, never user input; tests parse it"
    )]
    pub fn embedded() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| match Catalog::parse(Path::new(RGB_PATH), RGB_YAML) {
            Ok(c) => c,
            Err(e) => panic!("embedded {RGB_PATH} is invalid: {e}"),
        })
    }

    /// A user's catalog file.
    pub fn from_path(path: &Path) -> Result<Catalog, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|e| CatalogError::Read {
            file: path.to_path_buf(),
            reason: if e.kind() == std::io::ErrorKind::InvalidData {
                "not UTF-8 text".into()
            } else {
                e.to_string()
            },
        })?;
        Catalog::parse(path, &text)
    }

    /// Parses and validates catalog `text`; errors name `file`.
    pub fn parse(file: &Path, text: &str) -> Result<Catalog, CatalogError> {
        let raw: RawCatalog = serde_saphyr::from_str(text).map_err(|e| {
            let mut e = ConfigError::from_parse(file, text, &e);
            if e.hint.contains("configs/examples") {
                e.hint = format!("see {RGB_PATH} for the schema, described in its header");
            }
            CatalogError::Parse(e)
        })?;
        honoured(file, text, &raw.execution)?;
        raw.validate(file)
    }

    pub fn op(&self, name: &str) -> Option<&Op> {
        self.ops.iter().find(|o| o.name == name)
    }

    pub fn recipe(&self, id: &str) -> Option<&Recipe> {
        self.recipes.iter().find(|r| r.id == id)
    }

    /// The (implementation, recipe) pairs: the cells per seed.
    pub fn pairs(&self) -> usize {
        self.recipes.iter().map(|r| r.implementations.len()).sum()
    }

    /// How many recipes implementation `name` runs (its coverage, apart from any speed).
    pub fn covered(&self, name: &str) -> usize {
        self.recipes
            .iter()
            .filter(|r| r.implementations.iter().any(|i| i == name))
            .count()
    }

    /// The CPU prefix of `recipe` under this catalog's output size (`collatable_prefix`).
    pub fn prefix(&self, recipe: &Recipe) -> Option<usize> {
        collatable_prefix(recipe, self.output.size())
    }
}

// ---- the file as written, with locations ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    version: Spanned<u32>,
    family: String,
    source: SourceFacts,
    output: Output,
    execution: Execution,
    implementations: Vec<String>,
    #[serde(default)]
    decoders: Option<SpannedMap<String>>,
    ops: SpannedMap<RawOp>,
    recipes: Vec<RawRecipe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOp {
    params: Vec<String>,
    size: SizeRule,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecipe {
    id: Spanned<String>,
    row: String,
    stages: Vec<RawStage>,
    implementations: Vec<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStage {
    op: Spanned<String>,
    params: SpannedMap<serde_json::Value>,
    random: Random,
}

/// A mapping whose keys keep their locations, in file order.
struct SpannedMap<V>(Vec<(Spanned<String>, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for SpannedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct MapVisitor<V>(PhantomData<V>);
        impl<'de, V: Deserialize<'de>> Visitor<'de> for MapVisitor<V> {
            type Value = SpannedMap<V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    entries.push((key, map.next_value()?));
                }
                Ok(SpannedMap(entries))
            }
        }
        d.deserialize_map(MapVisitor(PhantomData))
    }
}

impl RawCatalog {
    fn validate(self, file: &Path) -> Result<Catalog, CatalogError> {
        if self.version.value != 1 {
            return Err(CatalogError::Version {
                at: Loc::new(file, &self.version.referenced),
                version: self.version.value,
            });
        }
        let ops = validate_ops(file, self.ops)?;
        let decoders = validate_decoders(file, &self.implementations, self.decoders)?;
        let size = self.output.size();
        let mut first_line: HashMap<String, u64> = HashMap::new();
        let mut recipes = Vec::with_capacity(self.recipes.len());
        for raw in self.recipes {
            let at = Loc::new(file, &raw.id.referenced);
            if let Some(first) = first_line.get(&raw.id.value) {
                return Err(CatalogError::DuplicateId {
                    at,
                    id: raw.id.value,
                    first_line: *first,
                });
            }
            first_line.insert(raw.id.value.clone(), at.line);
            let recipe = validate_recipe(file, &ops, &self.implementations, raw)?;
            if collatable_prefix(&recipe, size).is_none() {
                return Err(CatalogError::NotCollatable {
                    reason: not_collatable_reason(&recipe, size),
                    recipe: recipe.id,
                    at,
                    size,
                });
            }
            recipes.push(recipe);
        }
        Ok(Catalog {
            file: file.to_path_buf(),
            family: self.family,
            source: self.source,
            output: self.output,
            execution: self.execution,
            implementations: self.implementations,
            decoders,
            ops,
            recipes,
        })
    }
}

/// `decoders:`: each key one of `implementations` (the parser refuses a key given twice); each
/// value a non-empty name.
fn validate_decoders(
    file: &Path,
    implementations: &[String],
    raw: Option<SpannedMap<String>>,
) -> Result<BTreeMap<String, String>, CatalogError> {
    let known: Vec<&str> = implementations.iter().map(String::as_str).collect();
    let mut decoders = BTreeMap::new();
    for (name, decoder) in raw.map(|m| m.0).unwrap_or_default() {
        let at = Loc::new(file, &name.referenced);
        let problem = if !implementations.contains(&name.value) {
            Some((
                format!("unknown implementation `{}`", name.value),
                format!(
                    "{}; a new one is added to the top-level `implementations:` first",
                    suggest(&name.value, &known)
                ),
            ))
        } else if decoder.trim().is_empty() {
            Some((
                format!("`{}` names no decoder", name.value),
                "give the decoder's name, e.g. `simplejpeg` or `torchvision.io`".into(),
            ))
        } else {
            None
        };
        if let Some((problem, hint)) = problem {
            return Err(CatalogError::Decoders { at, problem, hint });
        }
        decoders.insert(name.value, decoder);
    }
    Ok(decoders)
}

/// The execution settings augbench has no other way to run, each refused at its line when off:
/// a cell's loader workers live for its one pass; every file is read once, untimed, before the
/// first cell (the run id hashes it); batches are pinned where they are copied to a GPU (on the
/// host boundary nothing is copied, so nothing is pinned).
const ALWAYS_ON: [(&str, &str); 3] = [
    (
        "persistent_workers",
        "a cell's loader workers live for its one pass of batches; set it true",
    ),
    (
        "prewarm",
        "augbench reads every file once before the first cell (hashing the dataset into the run id), so no cell pays for the page cache; set it true",
    ),
    (
        "pin_memory",
        "augbench pins a batch where it is copied to the GPU (`_gpu` implementations) and never on the host boundary; set it true",
    ),
];

fn honoured(file: &Path, text: &str, e: &Execution) -> Result<(), CatalogError> {
    let values = [e.persistent_workers, e.prewarm, e.pin_memory];
    let Some(&(key, hint)) = ALWAYS_ON
        .iter()
        .zip(values)
        .find(|(_, on)| !on)
        .map(|(k, _)| k)
    else {
        return Ok(());
    };
    let (line, column) = locate_key(text, &["execution", key]).unwrap_or((0, 0));
    let at = Loc {
        file: file.to_path_buf(),
        line,
        column,
    };
    Err(CatalogError::Unhonoured { at, key, hint })
}

fn validate_ops(file: &Path, raw: SpannedMap<RawOp>) -> Result<Vec<Op>, CatalogError> {
    let mut ops = Vec::with_capacity(raw.0.len());
    for (name, op) in raw.0 {
        if let SizeRule::FixedBy(by) = &op.size {
            let declared: Vec<&str> = op.params.iter().map(String::as_str).collect();
            let bad = if by.is_empty() || by.len() > 2 {
                Some((
                    format!("{by:?}"),
                    "`fixed_by` names one size parameter or two (height, width)".to_string(),
                ))
            } else {
                by.iter()
                    .find(|p| !op.params.contains(p))
                    .map(|p| (p.clone(), suggest(p, &declared)))
            };
            if let Some((param, hint)) = bad {
                return Err(CatalogError::BadSizeRule {
                    at: Loc::new(file, &name.referenced),
                    op: name.value,
                    param,
                    hint,
                });
            }
        }
        ops.push(Op {
            name: name.value,
            params: op.params,
            size: op.size,
        });
    }
    Ok(ops)
}

fn validate_recipe(
    file: &Path,
    ops: &[Op],
    implementations: &[String],
    raw: RawRecipe,
) -> Result<Recipe, CatalogError> {
    let id = raw.id.value;
    let mut stages = Vec::with_capacity(raw.stages.len());
    for (i, stage) in raw.stages.into_iter().enumerate() {
        stages.push(validate_stage(file, ops, &id, i, stage)?);
    }
    let mut seen = HashSet::new();
    let known: Vec<&str> = implementations.iter().map(String::as_str).collect();
    for name in &raw.implementations {
        let at = Loc::new(file, &name.referenced);
        if !implementations.contains(&name.value) {
            return Err(CatalogError::UnknownImplementation {
                at,
                recipe: id,
                name: name.value.clone(),
                hint: format!(
                    "{}; a new one is added to the top-level `implementations:` first",
                    suggest(&name.value, &known)
                ),
            });
        }
        if !seen.insert(name.value.as_str()) {
            return Err(CatalogError::DuplicateImplementation {
                at,
                recipe: id,
                name: name.value.clone(),
            });
        }
    }
    Ok(Recipe {
        line: raw.id.referenced.line(),
        id,
        row: raw.row,
        stages,
        implementations: raw.implementations.into_iter().map(|s| s.value).collect(),
    })
}

fn validate_stage(
    file: &Path,
    ops: &[Op],
    recipe: &str,
    index: usize,
    raw: RawStage,
) -> Result<Stage, CatalogError> {
    let at = Loc::new(file, &raw.op.referenced);
    let name = raw.op.value;
    if IMPLICIT_TAIL.contains(&name.as_str()) {
        return Err(CatalogError::ImplicitStage {
            at,
            recipe: recipe.to_string(),
            op: name,
        });
    }
    let Some(op) = ops.iter().find(|o| o.name == name) else {
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        let hint = match nearest(&name, &names) {
            Some(best) => format!("did you mean `{best}`? the known ops are the keys of `ops:`"),
            None => "the known ops are the keys of `ops:`; a new op is declared there with its `params` and `size`".to_string(),
        };
        return Err(CatalogError::UnknownOp {
            at,
            recipe: recipe.to_string(),
            op: name,
            hint,
        });
    };
    let stage = format!("recipe `{recipe}`, stage {} (`{name}`)", index + 1);
    let declared: Vec<&str> = op.params.iter().map(String::as_str).collect();
    let mut params = BTreeMap::new();
    let mut param_at = HashMap::new();
    for (key, value) in raw.params.0 {
        if !op.params.contains(&key.value) {
            let hint = if declared.is_empty() {
                format!("`{name}` takes no parameters: write `params: {{}}`")
            } else {
                suggest(&key.value, &declared)
            };
            return Err(CatalogError::UnknownParam {
                at: Loc::new(file, &key.referenced),
                stage,
                param: key.value,
                hint,
            });
        }
        param_at.insert(key.value.clone(), Loc::new(file, &key.referenced));
        params.insert(key.value, value);
    }
    if let Some(missing) = op.params.iter().find(|p| !params.contains_key(*p)) {
        return Err(CatalogError::MissingParam {
            at,
            stage,
            param: missing.clone(),
            params: declared
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let size = match &op.size {
        SizeRule::Keep => SizeEffect::Keep,
        SizeRule::Transpose => SizeEffect::Transpose,
        SizeRule::MaybeTranspose => SizeEffect::MaybeTranspose,
        SizeRule::Changes => SizeEffect::Changes,
        SizeRule::FixedBy(by) => {
            let values: Vec<(&String, &serde_json::Value)> = by
                .iter()
                .filter_map(|p| params.get(p).map(|v| (p, v)))
                .collect();
            let set = match values.as_slice() {
                [(_, v)] => size_of(v),
                [(_, h), (_, w)] => h.as_u64().zip(w.as_u64()).map(|(h, w)| [h, w]),
                _ => None,
            };
            match set {
                Some(s) => SizeEffect::Set(s),
                None => {
                    let (param, value) = values
                        .iter()
                        .find(|(_, v)| size_of(v).is_none())
                        .or(values.first())
                        .map(|(p, v)| (p.to_string(), v.to_string()))
                        .unwrap_or_default();
                    return Err(CatalogError::BadSize {
                        at: param_at.remove(&param).unwrap_or(at),
                        stage,
                        param,
                        value,
                    });
                }
            }
        }
    };
    Ok(Stage {
        op: name,
        params,
        random: raw.random,
        size,
    })
}

/// A size parameter's value: N (N × N) or [H, W], whole numbers.
fn size_of(v: &serde_json::Value) -> Option<[u64; 2]> {
    if let Some(n) = v.as_u64() {
        return Some([n, n]);
    }
    match v.as_array()?.as_slice() {
        [h, w] => Some([h.as_u64()?, w.as_u64()?]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// Recipe rows that are not transforms of specs/transforms.yaml, each with the reason.
    /// Empty today: every reference row is a registry transform.
    const ROWS_NOT_IN_REGISTRY: &[(&str, &str)] = &[];

    const HEAD: &str = "\
version: 1
family: rgb
source: {repository: example/bench, commit: abc, recipe_set: test}
output:
  layout: BCHW
  channels: 3
  height: 224
  width: 224
  dtype: float16
  normalize: {mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225]}
execution:
  batch_size: 256
  warmup_batches: 1
  measured_batches: 32
  seeds: [137, 138, 139]
  workers: 15
  prefetch: 2
  persistent_workers: true
  pin_memory: true
  prewarm: true
implementations: [cpu_a, cpu_b, gpu_a]
ops:
  RandomCrop224: {params: [height, width], size: {fixed_by: [height, width]}}
  Resize: {params: [target_size, interpolation], size: {fixed_by: [target_size]}}
  Pad: {params: [padding], size: changes}
  LongestMaxSize: {params: [max_size], size: changes}
  HorizontalFlip: {params: [], size: keep}
  Affine: {params: [angle, scale], size: keep}
  Transpose: {params: [], size: transpose}
recipes:
";

    const CROP: &str = "{op: RandomCrop224, params: {height: 224, width: 224}, random: per_image}";

    /// A catalog: HEAD plus one recipe per (id, stages) with implementations [cpu_a, gpu_a].
    fn catalog(recipes: &[(&str, &[&str])]) -> String {
        let mut text = HEAD.to_string();
        for (id, stages) in recipes {
            text.push_str(&format!("  - id: {id}\n    row: {id}\n"));
            if stages.is_empty() {
                text.push_str("    stages: []\n");
            } else {
                text.push_str("    stages:\n");
            }
            for s in *stages {
                text.push_str(&format!("      - {s}\n"));
            }
            text.push_str("    implementations: [cpu_a, gpu_a]\n");
        }
        text
    }

    fn parse(text: &str) -> Result<Catalog, CatalogError> {
        Catalog::parse(Path::new("t.yaml"), text)
    }

    #[test]
    fn coverage_counts_the_recipes_an_implementation_runs() {
        let c = parse(&catalog(&[("a", &[CROP]), ("b", &[CROP])])).unwrap();
        assert_eq!((c.covered("cpu_a"), c.covered("gpu_a")), (2, 2));
        assert_eq!(
            c.covered("cpu_b"),
            0,
            "listed among implementations, in no recipe"
        );
        assert_eq!(c.covered("nobody"), 0);
    }

    fn err(text: &str) -> CatalogError {
        parse(text).unwrap_err()
    }

    /// The 1-based line of the first line of `text` containing `needle`.
    fn line_of(text: &str, needle: &str) -> u64 {
        let i = text.lines().position(|l| l.contains(needle)).unwrap();
        i as u64 + 1
    }

    /// Asserts the error names `t.yaml:LINE:` in its message and a hint.
    fn assert_at(e: &CatalogError, line: u64) {
        let text = e.to_string();
        assert_eq!(e.line(), Some(line), "{text}");
        assert!(text.starts_with(&format!("t.yaml:{line}:")), "{text}");
        assert!(text.contains("\n  hint: "), "{text}");
    }

    #[test]
    fn parses_stages_with_exact_values_and_size_effects() {
        let text = catalog(&[(
            "Flip",
            &[
                CROP,
                "{op: HorizontalFlip, params: {}, random: none}",
                "{op: Affine, params: {angle: 25.0, scale: 2}, random: per_image}",
            ],
        )]);
        let c = parse(&text).unwrap();
        assert_eq!(c.family, "rgb");
        assert_eq!(c.output.size(), [224, 224]);
        assert_eq!(c.output.dtype, Dtype::Float16);
        assert_eq!(c.execution.seeds, [137, 138, 139]);
        assert_eq!(c.pairs(), 2);
        let r = c.recipe("Flip").unwrap();
        assert_eq!(r.line, line_of(&text, "- id: Flip"));
        assert_eq!(r.stages[0].size, SizeEffect::Set([224, 224]));
        assert_eq!(r.stages[0].random, Random::PerImage);
        assert_eq!(r.stages[1].size, SizeEffect::Keep);
        assert_eq!(r.stages[1].random, Random::Deterministic);
        // Numeric types are kept: 25.0 stays a float, 2 an integer.
        let affine = &r.stages[2].params;
        assert!(affine["angle"].is_f64(), "{affine:?}");
        assert_eq!(affine["angle"].to_string(), "25.0");
        assert!(affine["scale"].is_u64(), "{affine:?}");
        assert_eq!(c.prefix(r), Some(0));
        assert_eq!(
            c.op("Pad").map(|o| &o.size),
            Some(&SizeRule::Changes),
            "ops keep their rules"
        );
    }

    #[test]
    fn unknown_op_names_the_line_and_the_nearest_op() {
        let text = catalog(&[(
            "Crop",
            &["{op: RandomCrop22, params: {height: 224, width: 224}, random: per_image}"],
        )]);
        let e = err(&text);
        assert!(matches!(e, CatalogError::UnknownOp { .. }), "{e:?}");
        assert_at(&e, line_of(&text, "RandomCrop22,"));
        assert!(
            e.to_string().contains("did you mean `RandomCrop224`?"),
            "{e}"
        );
        assert!(e.to_string().contains("recipe `Crop`"), "{e}");
    }

    #[test]
    fn unknown_parameter_names_its_own_line_and_the_nearest_name() {
        // Flow style: the stage's line.
        let text = catalog(&[(
            "Crop",
            &["{op: RandomCrop224, params: {heigth: 224, width: 224}, random: per_image}"],
        )]);
        let e = err(&text);
        assert!(matches!(e, CatalogError::UnknownParam { .. }), "{e:?}");
        assert_at(&e, line_of(&text, "heigth"));
        assert!(e.to_string().contains("did you mean `height`?"), "{e}");
        assert!(e.to_string().contains("stage 1 (`RandomCrop224`)"), "{e}");
        // Block style: the key's own line, not the stage's.
        let block = HEAD.to_string()
            + "  - id: Crop\n    row: Crop\n    stages:\n      - op: RandomCrop224\n        params:\n          height: 224\n          widht: 224\n        random: per_image\n    implementations: [cpu_a]\n";
        let e = err(&block);
        assert_at(&e, line_of(&block, "widht"));
        // An op without parameters says so.
        let text = catalog(&[(
            "Flip",
            &[CROP, "{op: HorizontalFlip, params: {p: 1}, random: none}"],
        )]);
        let e = err(&text);
        assert!(e.to_string().contains("takes no parameters"), "{e}");
    }

    #[test]
    fn a_missing_parameter_is_named() {
        let text = catalog(&[(
            "Crop",
            &["{op: RandomCrop224, params: {height: 224}, random: per_image}"],
        )]);
        let e = err(&text);
        assert!(
            matches!(e, CatalogError::MissingParam { ref param, .. } if param == "width"),
            "{e:?}"
        );
        assert_at(&e, line_of(&text, "{op: RandomCrop224"));
    }

    #[test]
    fn normalize_and_to_tensor_are_implicit() {
        for op in IMPLICIT_TAIL {
            let stage = format!("{{op: {op}, params: {{}}, random: none}}");
            let text = catalog(&[("Crop", &[CROP, &stage])]);
            let e = err(&text);
            assert!(matches!(e, CatalogError::ImplicitStage { .. }), "{e:?}");
            assert_at(&e, line_of(&text, &format!("op: {op}")));
        }
    }

    #[test]
    fn duplicate_ids_name_both_lines() {
        let text = catalog(&[("Crop", &[CROP]), ("Other", &[CROP]), ("Crop", &[CROP])]);
        let e = err(&text);
        let first = line_of(&text, "- id: Crop");
        let second = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains("- id: Crop"))
            .nth(1)
            .map(|(i, _)| i as u64 + 1)
            .unwrap();
        assert!(
            matches!(e, CatalogError::DuplicateId { first_line, .. } if first_line == first),
            "{e:?}"
        );
        assert_at(&e, second);
    }

    /// `decoders:` maps declared implementations to a decoder each; a mistake names its line.
    #[test]
    fn decoders_name_declared_implementations_once() {
        let with = |lines: &str| {
            let text = catalog(&[("Crop", &[CROP])]).replace(
                "implementations: [cpu_a, cpu_b, gpu_a]\n",
                &format!("implementations: [cpu_a, cpu_b, gpu_a]\ndecoders:\n{lines}"),
            );
            (parse(&text), text)
        };
        let (ok, _) = with("  cpu_a: simplejpeg\n  gpu_a: torchvision.io\n");
        let decoders = ok.unwrap().decoders;
        assert_eq!(
            decoders.get("cpu_a").map(String::as_str),
            Some("simplejpeg")
        );
        assert_eq!(decoders.get("cpu_b"), None);
        for (lines, needle, says) in [
            (
                "  cpu_c: simplejpeg\n",
                "cpu_c:",
                "unknown implementation `cpu_c`",
            ),
            ("  cpu_a: ''\n", "cpu_a: ''", "`cpu_a` names no decoder"),
            (
                "  cpu_a: x\n  cpu_a: y\n",
                "cpu_a: y",
                "duplicate key `cpu_a`",
            ),
        ] {
            let (e, text) = with(lines);
            let e = e.unwrap_err();
            assert!(e.to_string().contains(says), "{e}");
            assert_at(&e, line_of(&text, needle));
        }
        assert!(
            parse(&catalog(&[("Crop", &[CROP])]))
                .unwrap()
                .decoders
                .is_empty()
        );
    }

    #[test]
    fn recipes_that_never_reach_224_are_refused_by_name() {
        let pad = "{op: Pad, params: {padding: 10}, random: none}";
        let longest = "{op: LongestMaxSize, params: {max_size: 512}, random: per_image}";
        let resize512 =
            "{op: Resize, params: {target_size: 512, interpolation: bilinear}, random: none}";
        let flip = "{op: HorizontalFlip, params: {}, random: none}";
        let cases: &[(&[&str], &str)] = &[
            (
                &[pad],
                "after stage 1 `Pad` the samples have no one known size",
            ),
            (&[longest], "after stage 1 `LongestMaxSize`"),
            (
                &[resize512],
                "end at 512×512, not 224×224 (set by stage 1 `Resize`)",
            ),
            (&[CROP, pad], "after stage 2 `Pad`"),
            (&[flip], "no stage sets the size"),
            (&[], "it has no stages"),
        ];
        for (stages, reason) in cases {
            let text = catalog(&[("Ok", &[CROP]), ("Bad", stages)]);
            let e = err(&text);
            assert!(
                matches!(e, CatalogError::NotCollatable { ref recipe, .. } if recipe == "Bad"),
                "{e:?}"
            );
            assert_at(&e, line_of(&text, "- id: Bad"));
            let msg = e.to_string();
            assert!(
                msg.contains("recipe `Bad` never delivers collatable 224×224 samples"),
                "{msg}"
            );
            assert!(msg.contains(reason), "{reason}: {msg}");
        }
        // A crop after the size-changing stage fixes it.
        let text = catalog(&[("PadCrop", &[pad, CROP, flip])]);
        let c = parse(&text).unwrap();
        assert_eq!(c.prefix(&c.recipes[0]), Some(1));
    }

    #[test]
    fn implementations_must_be_declared_and_listed_once() {
        let text = catalog(&[("Crop", &[CROP])]).replace("[cpu_a, gpu_a]\n", "[cpu_a, gpu_b]\n");
        let e = err(&text);
        assert!(
            matches!(e, CatalogError::UnknownImplementation { .. }),
            "{e:?}"
        );
        assert_at(&e, line_of(&text, "[cpu_a, gpu_b]"));
        assert!(e.to_string().contains("did you mean `gpu_a`?"), "{e}");
        let text = catalog(&[("Crop", &[CROP])]).replace("[cpu_a, gpu_a]\n", "[cpu_a, cpu_a]\n");
        let e = err(&text);
        assert!(
            matches!(e, CatalogError::DuplicateImplementation { .. }),
            "{e:?}"
        );
        assert_at(&e, line_of(&text, "[cpu_a, cpu_a]"));
    }

    #[test]
    fn size_parameters_must_be_sizes() {
        let stage =
            "{op: Resize, params: {target_size: big, interpolation: bilinear}, random: none}";
        let text = catalog(&[("Resize", &[stage])]);
        let e = err(&text);
        assert!(
            matches!(e, CatalogError::BadSize { ref param, .. } if param == "target_size"),
            "{e:?}"
        );
        let line = line_of(&text, "target_size: big");
        assert_at(&e, line);
        // At the key itself, not at the stage's op.
        let column = text
            .lines()
            .nth(line as usize - 1)
            .unwrap()
            .find("target_size")
            .unwrap();
        assert!(
            matches!(e, CatalogError::BadSize { ref at, .. } if at.column == column as u64 + 1),
            "{e:?}"
        );
        // [H, W] is a size too.
        let stage = "{op: Resize, params: {target_size: [224, 224], interpolation: bilinear}, random: none}";
        assert!(parse(&catalog(&[("Resize", &[stage])])).is_ok());
    }

    /// Loader settings augbench cannot run otherwise are refused at their line, not ignored.
    #[test]
    fn execution_settings_that_are_always_on_are_refused_when_off() {
        for key in ["persistent_workers", "prewarm", "pin_memory"] {
            let text = catalog(&[("Crop", &[CROP])])
                .replace(&format!("{key}: true"), &format!("{key}: false"));
            let e = err(&text);
            assert!(
                matches!(e, CatalogError::Unhonoured { key: k, .. } if k == key),
                "{key}: {e:?}"
            );
            assert_at(&e, line_of(&text, &format!("{key}: false")));
        }
    }

    #[test]
    fn the_ops_table_is_checked() {
        let text = catalog(&[("Crop", &[CROP])]).replace(
            "size: {fixed_by: [target_size]}",
            "size: {fixed_by: [target_sise]}",
        );
        let e = err(&text);
        assert!(matches!(e, CatalogError::BadSizeRule { .. }), "{e:?}");
        assert_at(&e, line_of(&text, "  Resize:"));
        assert!(e.to_string().contains("did you mean `target_size`?"), "{e}");
        let text = catalog(&[("Crop", &[CROP])]).replace("version: 1", "version: 2");
        let e = err(&text);
        assert!(
            matches!(e, CatalogError::Version { version: 2, .. }),
            "{e:?}"
        );
        assert_at(&e, 1);
    }

    #[test]
    fn schema_mistakes_are_located_parse_errors() {
        let text = catalog(&[("Crop", &[CROP])]).replace("    stages:\n", "    stagez:\n");
        let e = err(&text);
        assert!(matches!(e, CatalogError::Parse(_)), "{e:?}");
        assert_eq!(e.line(), Some(line_of(&text, "stagez")), "{e}");
        assert!(e.to_string().contains("did you mean `stages`?"), "{e}");
        let text = catalog(&[("Crop", &[CROP])]).replace("random: per_image", "random: per-image");
        let e = err(&text);
        assert_eq!(e.line(), Some(line_of(&text, "per-image")), "{e}");
        assert!(e.to_string().contains("did you mean `per_image`?"), "{e}");
        let e = Catalog::from_path(Path::new("/nonexistent/recipes.yaml")).unwrap_err();
        assert!(matches!(e, CatalogError::Read { .. }), "{e:?}");
        assert!(e.to_string().contains("hint: "), "{e}");
    }

    #[test]
    fn from_path_reads_a_user_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.yaml");
        std::fs::write(&path, catalog(&[("Crop", &[CROP])])).unwrap();
        let c = Catalog::from_path(&path).unwrap();
        assert_eq!(c.file, path);
        let bad = catalog(&[("Crop", &["{op: Pad, params: {padding: 1}, random: none}"])]);
        std::fs::write(&path, &bad).unwrap();
        let e = Catalog::from_path(&path).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!("{}:", path.display())),
            "{e}"
        );
    }

    fn recipe_of(effects: &[SizeEffect]) -> Recipe {
        Recipe {
            id: "r".into(),
            row: "r".into(),
            stages: effects
                .iter()
                .map(|&size| Stage {
                    op: "X".into(),
                    params: BTreeMap::new(),
                    random: Random::Deterministic,
                    size,
                })
                .collect(),
            implementations: vec![],
            line: 0,
        }
    }

    #[test]
    fn the_prefix_is_where_samples_become_224_for_good() {
        use SizeEffect::*;
        const S: [u64; 2] = [224, 224];
        let p = |e: &[SizeEffect]| collatable_prefix(&recipe_of(e), S);
        assert_eq!(p(&[]), None);
        assert_eq!(p(&[Keep]), None, "source sizes vary");
        assert_eq!(p(&[Set(S)]), Some(0));
        assert_eq!(p(&[Set(S), Keep, Transpose, MaybeTranspose]), Some(0));
        assert_eq!(p(&[Changes, Set(S), Keep]), Some(1));
        assert_eq!(p(&[Set(S), Changes]), None);
        assert_eq!(p(&[Set(S), Changes, Set(S), Keep]), Some(2));
        assert_eq!(p(&[Set([512, 512]), Keep]), None);
        assert_eq!(p(&[Set([512, 512]), Set(S)]), Some(1));
        // A transpose keeps a square and never makes one; a random one leaves two sizes.
        assert_eq!(p(&[Set(S), Transpose]), Some(0));
        assert_eq!(p(&[Set([224, 300]), Transpose]), None);
        assert_eq!(p(&[Set([300, 224]), MaybeTranspose]), None);
        assert_eq!(p(&[Set([300, 224]), MaybeTranspose, Set(S)]), Some(2));
    }

    #[test]
    fn the_embedded_catalog_is_the_reference_workload() {
        let c = Catalog::embedded();
        assert_eq!(c.family, "rgb");
        assert_eq!(c.recipes.len(), 57);
        assert_eq!(c.pairs(), 253);
        assert_eq!(c.output.size(), [224, 224]);
        assert_eq!(c.output.channels, 3);
        assert_eq!(c.output.dtype, Dtype::Float16);
        assert_eq!(c.execution.batch_size, 256);
        assert_eq!(c.execution.seeds, [137, 138, 139]);
        let reg = Registry::get();
        for r in &c.recipes {
            assert!(c.prefix(r).is_some(), "{} never reaches 224×224", r.id);
            assert!(
                r.implementations.len() >= 2,
                "{} has fewer than 2 implementations",
                r.id
            );
            let allowed = ROWS_NOT_IN_REGISTRY.iter().any(|(row, _)| *row == r.row);
            assert!(
                reg.spec(&r.row).is_some() || allowed,
                "{}: row `{}` is neither a registry transform nor allow-listed",
                r.id,
                r.row
            );
            for s in &r.stages {
                assert_eq!(
                    s.params.len(),
                    c.op(&s.op).unwrap().params.len(),
                    "{}",
                    r.id
                );
            }
        }
        for (row, why) in ROWS_NOT_IN_REGISTRY {
            assert!(
                reg.spec(row).is_none(),
                "{row} is in the registry: drop it from the list"
            );
            assert!(
                c.recipes.iter().any(|r| r.row == *row),
                "{row} is no recipe's row"
            );
            assert!(!why.is_empty());
        }
        // The exact values survive: the reference's floats stay floats.
        let rrc = c.recipe("RandomResizedCrop+Normalize+ToTensor").unwrap();
        assert_eq!(
            rrc.stages[0].params["ratio"].to_string(),
            "[0.75,1.3333333333333333]"
        );
        assert_eq!(rrc.stages[0].params["scale"].to_string(), "[0.08,1.0]");
    }

    #[test]
    fn catalog_ops_take_the_registry_parameter_names() {
        let reg = Registry::get();
        for op in &Catalog::embedded().ops {
            if let Some(spec) = reg.spec(&op.name) {
                let mut mine = op.params.clone();
                mine.sort();
                let theirs: Vec<String> = spec.params.keys().cloned().collect();
                assert_eq!(mine, theirs, "{}", op.name);
            }
        }
    }

    #[test]
    fn cpu_prefix_of_every_recipe() {
        let c = Catalog::embedded();
        let width = c.recipes.iter().map(|r| r.id.len()).max().unwrap_or(0);
        let table: String = c
            .recipes
            .iter()
            .map(|r| {
                let n = c.prefix(r).map_or(0, |p| p + 1);
                format!("{:width$}  {n}/{}\n", r.id, r.stages.len())
            })
            .collect();
        let text = format!(
            "# recipe id  CPU-prefix stages / all stages (Normalize, ToTensor implicit)\n{table}"
        );
        insta::assert_snapshot!(text);
    }
}
