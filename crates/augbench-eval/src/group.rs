//! Grouping per-sample metric rows into per-(scene, phase) evaluation cells, in one streaming pass.
//! Rules (the seed contract, with metric detection over all rows): each metric is the mean over the
//! cell's rows; metric keys are the given ones or every numeric non-metadata key seen in any row; rows
//! without scene or phase are skipped and counted; difficulty is the first non-null value;
//! `frame_budget` the first integer (default 0); `latency_ms_mean` the mean latency.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use serde_json::Value;

use augbench_cells::error::{CellsError, Location, Result};
use augbench_host::facts::AUGBENCH_VERSION;

use crate::eval::{EvalCell, EvalLog, now_utc};
use crate::stamp::CardStamp;

/// Keys of a per-sample row that are never metrics.
pub const METADATA_KEYS: &[&str] = &[
    "id",
    "scene",
    "phase",
    "difficulty",
    "latency_ms",
    "frame_budget",
];

/// How to stamp and which metrics to keep.
#[derive(Debug, Clone, Default)]
pub struct GroupOptions {
    pub model_name: String,
    pub task: String,
    pub git_sha: Option<String>,
    /// Only these metrics, in this order; `None` detects them over all rows.
    pub metric_keys: Option<Vec<String>>,
    pub stamp: CardStamp,
}

/// One value of a per-sample row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldValue<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    /// Anything else, named for messages ("an object", "an array").
    Other(&'static str),
}

impl<'a> FieldValue<'a> {
    /// Converts a JSON value; an enum-like object `{"value": "clu"}` reads as its label.
    pub fn from_json(v: &'a Value) -> Self {
        match v {
            Value::Null => FieldValue::Null,
            Value::Bool(b) => FieldValue::Bool(*b),
            Value::Number(n) => n.as_i64().map_or(
                FieldValue::Float(n.as_f64().unwrap_or(f64::NAN)),
                FieldValue::Int,
            ),
            Value::String(s) => FieldValue::Str(s),
            Value::Array(_) => FieldValue::Other("an array"),
            Value::Object(m) => match m.get("value") {
                Some(Value::String(s)) => FieldValue::Str(s),
                _ => FieldValue::Other("an object"),
            },
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            FieldValue::Null => "null",
            FieldValue::Bool(_) => "a boolean",
            FieldValue::Int(_) | FieldValue::Float(_) => "a number",
            FieldValue::Str(_) => "a string",
            FieldValue::Other(k) => k,
        }
    }

    /// The plain label of the value (how Python's `str()` would print it), if it has one.
    fn label(&self) -> Option<String> {
        match *self {
            FieldValue::Str(s) => Some(s.to_string()),
            FieldValue::Int(i) => Some(i.to_string()),
            FieldValue::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 => {
                Some(format!("{f:.1}"))
            }
            FieldValue::Float(f) => Some(f.to_string()),
            FieldValue::Bool(b) => Some(if b { "True" } else { "False" }.to_string()),
            FieldValue::Null | FieldValue::Other(_) => None,
        }
    }
}

/// A fast non-cryptographic hasher (FxHash with a Murmur3 finalizer) for the bucket and key maps.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
        }
    }
    fn finish(&self) -> u64 {
        // Murmur3's finalizer spreads the entropy into the low bits the table indexes by.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

struct Bucket {
    scene: String,
    phase: String,
    n: i64,
    difficulty: Option<String>,
    frame_budget: Option<i64>,
    lat_sum: f64,
    lat_n: u64,
    sums: Vec<f64>,
    counts: Vec<u64>,
}

impl Bucket {
    fn ensure(&mut self, k: usize) {
        if self.sums.len() <= k {
            self.sums.resize(k + 1, 0.0);
            self.counts.resize(k + 1, 0);
        }
    }

    fn add(&mut self, k: usize, v: f64) {
        self.ensure(k);
        self.sums[k] += v;
        self.counts[k] += 1;
    }
}

struct KeyState {
    name: String,
    first_number: Option<Location>,
    first_other: Option<(Location, &'static str)>,
}

/// What a grouping produced.
#[derive(Debug, Clone)]
pub struct GroupOutcome {
    pub log: EvalLog,
    /// Rows seen, skipped ones included.
    pub rows: u64,
    /// Rows without a scene or phase.
    pub skipped: u64,
}

/// Streaming grouper: push rows (one at a time or a whole Arrow batch), then `finish`.
pub struct Grouper {
    opts: GroupOptions,
    source: PathBuf,
    buckets: Vec<Bucket>,
    index: FxMap<String, FxMap<String, usize>>,
    keys: Vec<KeyState>,
    key_index: FxMap<String, usize>,
    rows: u64,
    skipped: u64,
    /// Scene and phase dictionaries of the last batch and their (scene, phase) → bucket table.
    dict_cache: Option<(ArrayRef, ArrayRef, Vec<u32>)>,
}

impl Grouper {
    /// `source` names the input in error messages.
    pub fn new(opts: GroupOptions, source: &Path) -> Self {
        let mut g = Grouper {
            opts,
            source: source.to_path_buf(),
            buckets: Vec::new(),
            index: FxMap::default(),
            keys: Vec::new(),
            key_index: FxMap::default(),
            rows: 0,
            skipped: 0,
            dict_cache: None,
        };
        for k in g.opts.metric_keys.clone().unwrap_or_default() {
            if !g.key_index.contains_key(&k) {
                g.key_index.insert(k.clone(), g.keys.len());
                g.keys.push(KeyState {
                    name: k,
                    first_number: None,
                    first_other: None,
                });
            }
        }
        g
    }

    /// Index of a metric candidate; `None` when explicit keys were given and this is not one.
    fn key(&mut self, name: &str) -> Option<usize> {
        if let Some(&i) = self.key_index.get(name) {
            return Some(i);
        }
        if self.opts.metric_keys.is_some() {
            return None; // explicit keys were registered up front
        }
        self.keys.push(KeyState {
            name: name.to_string(),
            first_number: None,
            first_other: None,
        });
        self.key_index.insert(name.to_string(), self.keys.len() - 1);
        Some(self.keys.len() - 1)
    }

    fn bucket(&mut self, scene: &str, phase: &str) -> usize {
        if let Some(&b) = self.index.get(scene).and_then(|m| m.get(phase)) {
            return b;
        }
        let b = self.buckets.len();
        self.buckets.push(Bucket {
            scene: scene.to_string(),
            phase: phase.to_string(),
            n: 0,
            difficulty: None,
            frame_budget: None,
            lat_sum: 0.0,
            lat_n: 0,
            sums: Vec::new(),
            counts: Vec::new(),
        });
        self.index
            .entry(scene.to_string())
            .or_default()
            .insert(phase.to_string(), b);
        b
    }

    fn label_of(&self, v: FieldValue<'_>, key: &str, at: Location) -> Result<Option<String>> {
        match v {
            FieldValue::Null => Ok(None),
            FieldValue::Other(found) => Err(CellsError::BadValue {
                path: self.source.clone(),
                at,
                column: key.to_string(),
                expected: "a string or a number",
                found: found.to_string(),
            }),
            v => Ok(v.label()),
        }
    }

    /// Adds one row; `at` locates it in the input for error messages.
    pub fn push_row(&mut self, fields: &[(&str, FieldValue<'_>)], at: Location) -> Result<()> {
        self.rows += 1;
        let get = |k: &str| {
            fields
                .iter()
                .find(|(n, _)| *n == k)
                .map_or(FieldValue::Null, |(_, v)| *v)
        };
        let scene = self.label_of(get("scene"), "scene", at)?;
        let phase = self.label_of(get("phase"), "phase", at)?;
        let bucket = match (scene, phase) {
            (Some(s), Some(p)) => Some(self.bucket(&s, &p)),
            _ => {
                self.skipped += 1;
                None
            }
        };
        if let Some(b) = bucket {
            self.buckets[b].n += 1;
        }
        for (name, value) in fields {
            self.push_field(bucket, name, *value, at)?;
        }
        Ok(())
    }

    fn push_field(
        &mut self,
        bucket: Option<usize>,
        name: &str,
        v: FieldValue<'_>,
        at: Location,
    ) -> Result<()> {
        match name {
            "id" | "scene" | "phase" => {}
            "difficulty" => {
                let label = self.label_of(v, name, at)?;
                if let (Some(b), Some(l)) = (bucket, label) {
                    self.buckets[b].difficulty.get_or_insert(l);
                }
            }
            "latency_ms" => {
                if let (Some(b), FieldValue::Int(_) | FieldValue::Float(_)) = (bucket, v) {
                    self.buckets[b].lat_sum += as_f64(v);
                    self.buckets[b].lat_n += 1;
                }
            }
            "frame_budget" => {
                if let (Some(b), FieldValue::Int(i)) = (bucket, v) {
                    self.buckets[b].frame_budget.get_or_insert(i);
                }
            }
            _ => self.push_metric(bucket, name, v, at),
        }
        Ok(())
    }

    fn push_metric(&mut self, bucket: Option<usize>, name: &str, v: FieldValue<'_>, at: Location) {
        if v == FieldValue::Null {
            return;
        }
        let Some(k) = self.key(name) else { return };
        match v {
            FieldValue::Int(_) | FieldValue::Float(_) => {
                self.keys[k].first_number.get_or_insert(at);
                if let Some(b) = bucket {
                    self.buckets[b].add(k, as_f64(v));
                }
            }
            other => {
                self.keys[k].first_other.get_or_insert((at, other.kind()));
            }
        }
    }

    /// Adds a whole Arrow batch (columns named like row keys); `first_row` is its 0-based offset.
    pub fn push_batch(&mut self, batch: &RecordBatch, first_row: u64) -> Result<()> {
        let n = batch.num_rows();
        self.rows += n as u64;
        let schema = batch.schema();
        let col = |name: &str| schema.index_of(name).ok().map(|i| batch.column(i).as_ref());
        let scenes = col("scene")
            .map(|a| labels(a, &self.source, "scene", first_row))
            .transpose()?;
        let phases = col("phase")
            .map(|a| labels(a, &self.source, "phase", first_row))
            .transpose()?;
        let ids = self.bucket_ids(scenes.as_ref(), phases.as_ref(), n);
        for (i, field) in schema.fields().iter().enumerate() {
            self.push_column(field.name(), batch.column(i).as_ref(), &ids, first_row)?;
        }
        Ok(())
    }

    fn bucket_ids(
        &mut self,
        scenes: Option<&Labels<'_>>,
        phases: Option<&Labels<'_>>,
        n: usize,
    ) -> Vec<u32> {
        let mut ids = vec![u32::MAX; n];
        let (Some(scenes), Some(phases)) = (scenes, phases) else {
            self.skipped += n as u64;
            return ids;
        };
        if let (Labels::Dict(sk, sv, sa), Labels::Dict(pk, pv, pa)) = (scenes, phases)
            && sv.len().saturating_mul(pv.len()) <= (4 * n).max(1 << 16)
        {
            self.bucket_ids_dict((sk, sv, sa), (pk, pv, pa), &mut ids);
            return ids;
        }
        let mut last: Option<(&str, &str, usize)> = None;
        for (r, id) in ids.iter_mut().enumerate() {
            let (Some(s), Some(p)) = (scenes.get(r), phases.get(r)) else {
                self.skipped += 1;
                continue;
            };
            let b = match last {
                Some((ls, lp, b)) if ls == s && lp == p => b,
                _ => self.bucket(s, p),
            };
            last = Some((s, p, b));
            self.buckets[b].n += 1;
            *id = b as u32;
        }
        ids
    }

    /// Dictionary-encoded scene and phase: one hash lookup per distinct pair of a batch.
    fn bucket_ids_dict(
        &mut self,
        scenes: (&[usize], &Labels<'_>, &ArrayRef),
        phases: (&[usize], &Labels<'_>, &ArrayRef),
        ids: &mut [u32],
    ) {
        let (sk, sv, sa) = scenes;
        let (pk, pv, pa) = phases;
        let n_phase_values = pv.len();
        // Batches of one row group share their dictionaries: reuse the pair → bucket table.
        let mut table = match self.dict_cache.take() {
            Some((s, p, t)) if Arc::ptr_eq(&s, sa) && Arc::ptr_eq(&p, pa) => t,
            _ => vec![u32::MAX - 1; sv.len() * n_phase_values],
        };
        for (r, id) in ids.iter_mut().enumerate() {
            let (s, p) = (sk[r], pk[r]);
            if s == usize::MAX || p == usize::MAX {
                self.skipped += 1;
                continue;
            }
            let Some(slot) = table.get_mut(s * n_phase_values + p) else {
                self.skipped += 1;
                continue;
            };
            if *slot == u32::MAX - 1 {
                *slot = match (sv.get(s), pv.get(p)) {
                    (Some(scene), Some(phase)) => self.bucket(scene, phase) as u32,
                    _ => u32::MAX,
                };
            }
            if *slot == u32::MAX {
                self.skipped += 1;
                continue;
            }
            self.buckets[*slot as usize].n += 1;
            *id = *slot;
        }
        self.dict_cache = Some((sa.clone(), pa.clone(), table));
    }

    fn push_column(
        &mut self,
        name: &str,
        a: &dyn Array,
        ids: &[u32],
        first_row: u64,
    ) -> Result<()> {
        let at = |r: usize| Location::Row(first_row + r as u64 + 1);
        match name {
            "id" | "scene" | "phase" => {}
            "difficulty" => {
                let ls = labels(a, &self.source, name, first_row)?;
                for (r, id) in ids.iter().enumerate() {
                    if let (Some(b), Some(l)) = (self.buckets.get_mut(*id as usize), ls.get(r))
                        && b.difficulty.is_none()
                    {
                        b.difficulty = Some(l.to_string());
                    }
                }
            }
            "latency_ms" => for_numbers(a, |r, v| {
                if let Some(b) = self.buckets.get_mut(ids[r] as usize) {
                    b.lat_sum += v;
                    b.lat_n += 1;
                }
            }),
            "frame_budget" if a.data_type() == &DataType::Int64 => {
                let ints = a.as_primitive::<Int64Type>();
                for (r, v) in ints.iter().enumerate() {
                    if let (Some(b), Some(v)) = (self.buckets.get_mut(ids[r] as usize), v) {
                        b.frame_budget.get_or_insert(v);
                    }
                }
            }
            "frame_budget" => {}
            _ => {
                let Some(k) = self.key(name) else {
                    return Ok(());
                };
                let first_valid = (0..a.len()).find(|&r| a.is_valid(r));
                let Some(first) = first_valid else {
                    return Ok(());
                };
                if !matches!(a.data_type(), DataType::Int64 | DataType::Float64) {
                    self.keys[k]
                        .first_other
                        .get_or_insert((at(first), type_kind(a.data_type())));
                    return Ok(());
                }
                self.keys[k].first_number.get_or_insert(at(first));
                self.accumulate(k, a, ids);
            }
        }
        Ok(())
    }

    /// Adds a numeric column to metric `k`, summing into flat per-bucket arrays (cache friendly).
    fn accumulate(&mut self, k: usize, a: &dyn Array, ids: &[u32]) {
        let mut sums = vec![0.0; self.buckets.len()];
        let mut counts = vec![0u64; self.buckets.len()];
        for_numbers(a, |r, v| {
            if let Some(s) = sums.get_mut(ids[r] as usize) {
                *s += v;
                counts[ids[r] as usize] += 1;
            }
        });
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            bucket.ensure(k);
            bucket.sums[k] += sums[b];
            bucket.counts[k] += counts[b];
        }
    }

    /// The metric names, or a type error for a metric that is not always a number.
    fn metric_names(&self) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        for (k, key) in self.keys.iter().enumerate() {
            match (key.first_number, key.first_other) {
                (Some(first), Some((at, found))) => {
                    return Err(CellsError::TypeChange {
                        path: self.source.clone(),
                        at,
                        column: key.name.clone(),
                        found,
                        expected: "a number",
                        first,
                    });
                }
                (None, Some((at, found))) if self.opts.metric_keys.is_some() => {
                    return Err(CellsError::BadValue {
                        path: self.source.clone(),
                        at,
                        column: key.name.clone(),
                        expected: "a number (it was given as a metric key)",
                        found: found.to_string(),
                    });
                }
                (Some(_), None) => out.push(k),
                _ if self.opts.metric_keys.is_some() => out.push(k),
                _ => {}
            }
        }
        Ok(out)
    }

    /// Builds the cells, in order of each (scene, phase) pair's first row.
    pub fn finish(self) -> Result<GroupOutcome> {
        let metric_keys = self.metric_names()?;
        let log = EvalLog {
            metric_names: metric_keys
                .iter()
                .map(|&k| self.keys[k].name.clone())
                .collect(),
            cells: self.cells(&metric_keys),
        };
        Ok(GroupOutcome {
            log,
            rows: self.rows,
            skipped: self.skipped,
        })
    }

    fn cells(&self, metric_keys: &[usize]) -> Vec<EvalCell> {
        let timestamp = now_utc();
        let s = &self.opts.stamp;
        let mean = |sum: f64, n: u64| (n > 0).then(|| sum / n as f64);
        self.buckets
            .iter()
            .map(|b| EvalCell {
                model_name: self.opts.model_name.clone(),
                task: self.opts.task.clone(),
                scene_id: b.scene.clone(),
                phase: b.phase.clone(),
                difficulty: b.difficulty.clone(),
                n_samples: b.n,
                frame_budget: b.frame_budget.unwrap_or(0),
                latency_ms_mean: mean(b.lat_sum, b.lat_n),
                gpu_name: s.gpu_name.clone(),
                gpu_memory_gb: s.gpu_memory_gb,
                precision: s.precision.clone(),
                batch_size: s.batch_size,
                toolkit_version: AUGBENCH_VERSION.to_string(),
                git_sha: self.opts.git_sha.clone(),
                timestamp_utc: timestamp.clone(),
                metrics: metric_keys
                    .iter()
                    .map(|&k| {
                        mean(
                            b.sums.get(k).copied().unwrap_or(0.0),
                            b.counts.get(k).copied().unwrap_or(0),
                        )
                    })
                    .collect(),
            })
            .collect()
    }
}

fn as_f64(v: FieldValue<'_>) -> f64 {
    match v {
        FieldValue::Int(i) => i as f64,
        FieldValue::Float(f) => f,
        _ => f64::NAN,
    }
}

fn type_kind(dt: &DataType) -> &'static str {
    match dt {
        DataType::Utf8 => "a string",
        DataType::List(_) => "a list",
        _ => "a non-numeric value",
    }
}

/// Calls `f(row, value)` for every non-null value of an Int64 or Float64 array.
fn for_numbers(a: &dyn Array, mut f: impl FnMut(usize, f64)) {
    match a.data_type() {
        DataType::Float64 => {
            let p = a.as_primitive::<Float64Type>();
            let vals = p.values();
            if p.null_count() == 0 {
                vals.iter().enumerate().for_each(|(r, v)| f(r, *v));
            } else {
                (0..p.len())
                    .filter(|&r| p.is_valid(r))
                    .for_each(|r| f(r, vals[r]));
            }
        }
        DataType::Int64 => {
            let p = a.as_primitive::<Int64Type>();
            (0..p.len())
                .filter(|&r| p.is_valid(r))
                .for_each(|r| f(r, p.value(r) as f64));
        }
        _ => {}
    }
}

/// Labels of a scene/phase/difficulty column: strings borrowed, numbers printed.
enum Labels<'a> {
    Borrowed(&'a arrow_array::StringArray),
    Owned(Vec<Option<String>>),
    /// Dictionary keys per row (usize::MAX for null) and the labels of the dictionary values.
    Dict(Vec<usize>, Box<Labels<'a>>, ArrayRef),
}

impl Labels<'_> {
    fn get(&self, r: usize) -> Option<&str> {
        match self {
            Labels::Borrowed(a) => (r < a.len() && a.is_valid(r)).then(|| a.value(r)),
            Labels::Owned(v) => v.get(r).and_then(|x| x.as_deref()),
            Labels::Dict(keys, values, _) => keys.get(r).and_then(|&k| values.get(k)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Labels::Borrowed(a) => a.len(),
            Labels::Owned(v) => v.len(),
            Labels::Dict(keys, _, _) => keys.len(),
        }
    }
}

fn labels<'a>(a: &'a dyn Array, path: &Path, column: &str, first_row: u64) -> Result<Labels<'a>> {
    if let Some(dict) = a.as_any_dictionary_opt() {
        let values = labels(dict.values().as_ref(), path, column, first_row)?;
        let keys = dict.normalized_keys();
        let keys = (0..a.len())
            .map(|r| if a.is_valid(r) { keys[r] } else { usize::MAX })
            .collect();
        return Ok(Labels::Dict(keys, Box::new(values), dict.values().clone()));
    }
    match a.data_type() {
        DataType::Utf8 => Ok(Labels::Borrowed(a.as_string::<i32>())),
        DataType::Int64 => Ok(Labels::Owned(
            a.as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map(|i| i.to_string()))
                .collect(),
        )),
        DataType::Float64 => Ok(Labels::Owned(
            a.as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.and_then(|f| FieldValue::Float(f).label()))
                .collect(),
        )),
        other => Err(CellsError::BadValue {
            path: path.to_path_buf(),
            at: Location::Row(first_row + 1),
            column: column.to_string(),
            expected: "a string or a number",
            found: other.to_string(),
        }),
    }
}
