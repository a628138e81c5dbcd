//! Measures a production run's missing cells: the dataset prepared and prewarmed once, the run
//! id from every input, then the implementations taking turns over blocks of (recipe, seed,
//! loader-worker count) groups in a Williams design's order (`cell_order`), each cell measured by
//! its implementation's worker (a Python one in its pipeline environment, or the native one; the
//! only worker up) while the coordinator samples its tree.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use augbench_catalog::recipes::{Catalog, Recipe};
use augbench_core::config::ThreadPolicy;
use augbench_core::production::{Implementation, Production, run_dir};
use augbench_core::{Matrix, Mode, RunConfig, policy};
use augbench_host::fsutil::write_atomic;
use augbench_host::memory_sampler::{MemoryPeaks, Sampler, default_period};
use augbench_protocol::client::{Worker, WorkerError};
use augbench_protocol::protocol::{
    ChainStage, FailureKind, LoadRequest, ProductionCellRequest, ProductionCellResponse, Request,
};
use indicatif::{MultiProgress, ProgressBar};

use super::identity::{RunInputs, dataset_bytes};
use augbench_core::production::cell::{self, CELL_SCHEMA, Cell, CellId, CellStatus, sha256_hex};

/// Where a production run wrote its cells.
pub struct ProductionRun {
    pub run_id: String,
    pub run_dir: PathBuf,
    /// Every cell of the run, in config order (kept from disk or measured now).
    pub cells: Vec<Cell>,
    /// Cells measured by this invocation (the rest were already on disk).
    pub measured_now: usize,
    pub interrupted: bool,
}

/// The seed's permutation of `count` items, shared by every implementation: the reference's
/// (`order::permutation`).
pub fn seed_order(count: u64, seed: u64) -> Vec<u64> {
    super::order::permutation(count, seed)
}

/// Runs every missing cell of `p`; cells already on disk and valid are kept as they are.
/// `refresh`: re-resolve each environment's requirements before use.
pub fn run(
    p: &Production,
    refresh: bool,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<ProductionRun> {
    let media = crate::run_media::prepare_media(&media_config(p), mp)?;
    let envs = environments(p, refresh, mp)?;
    let inputs = run_inputs(p, &media.paths, &envs, mp)?;
    let run_id = inputs.run_id();
    let out = p.output_dir();
    let run_dir = run_dir(&out, &run_id);
    super::record::open(&out, &run_dir, &run_id, &inputs, p, mp)?;
    let total = p.cells() as u64;
    let bar = crate::progress::steps_bar(mp, "Production cells".into(), total);
    let mut run = ProductionRun {
        run_id,
        run_dir,
        cells: Vec::new(),
        measured_now: 0,
        interrupted: false,
    };
    let mut slots = p
        .implementations
        .iter()
        .zip(&envs)
        .map(|(imp, env)| Slot::new(imp, env.as_ref(), &media.paths))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let walked = walk(p, &mut slots, &mut run, &bar, mp, stop);
    for slot in &mut slots {
        slot.stop();
    }
    bar.finish_and_clear();
    let mut placed = walked?;
    placed.sort_by_key(|(rank, _)| *rank);
    run.cells = placed.into_iter().map(|(_, c)| c).collect();
    Ok(run)
}

/// Every cell in `cell_order`, with its place in config order: measured while no stop is asked;
/// after a stop, only the cells on disk that validate, so a stopped run still reports every cell
/// it keeps. One worker is up at a time: before a cell is measured every other implementation's
/// worker is shut down, since an idle worker would share its pages (the Python runtime, libtorch)
/// with the measured tree and so split the tree's PSS.
fn walk(
    p: &Production,
    slots: &mut [Slot<'_>],
    run: &mut ProductionRun,
    bar: &ProgressBar,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<(usize, Cell)>> {
    let mut placed = Vec::new();
    let extent = Extent::of(p);
    for at in cell_order(extent, policy::PRODUCTION_ORDER_BLOCK) {
        let (Some(recipe), Some(&seed), Some(&workers), Some(imp)) = (
            p.recipes.get(at.recipe),
            p.seeds.get(at.seed),
            p.settings.workers.values().get(at.workers),
            slots.get(at.implementation).map(|s| s.imp),
        ) else {
            continue;
        };
        run.interrupted |= stop.load(Ordering::SeqCst);
        let found = kept(p, (imp, recipe), (seed, workers), run);
        let cell = match found {
            (_, kept, _) if run.interrupted => kept,
            (_, Some(kept), _) => {
                bar.inc(1);
                Some(kept)
            }
            (id, None, invalid) => {
                if Production::listed(recipe, imp) {
                    shut_down_all_but(slots, at.implementation);
                }
                let Some(slot) = slots.get_mut(at.implementation) else {
                    continue;
                };
                Some(one_cell(p, slot, recipe, (id, invalid), run, bar, mp)?)
            }
        };
        if let Some(cell) = cell {
            placed.push((at.config_rank(extent), cell));
        }
    }
    Ok(placed)
}

/// How many recipes, seeds, loader-worker counts and implementations a run crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub recipes: usize,
    pub seeds: usize,
    pub workers: usize,
    pub implementations: usize,
}

impl Extent {
    pub fn of(p: &Production) -> Extent {
        Extent {
            recipes: p.recipes.len(),
            seeds: p.seeds.len(),
            workers: p.settings.workers.values().len(),
            implementations: p.implementations.len(),
        }
    }
}

/// Where one cell sits: indices into the run's recipes, seeds, loader-worker counts and
/// implementations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellAt {
    pub recipe: usize,
    pub seed: usize,
    pub workers: usize,
    pub implementation: usize,
}

impl CellAt {
    /// Its place in config order (implementation, then recipe, then seed, then workers).
    fn config_rank(self, e: Extent) -> usize {
        ((self.implementation * e.recipes + self.recipe) * e.seeds + self.seed) * e.workers
            + self.workers
    }
}

/// The order cells are measured in. The (recipe, seed, workers) groups, recipe by recipe, seed by
/// seed and count by count, are cut into blocks of `block` consecutive (recipe, seed) pairs with
/// all their counts (at most half the pairs, so a short run has two blocks); each implementation
/// in turn measures a block's cells, so implementations compared
/// on a recipe are measured at most (implementations − 1) blocks apart, not a whole run apart.
/// Successive blocks take the rows of a Williams design (`williams_rows`) in turn, so over a cycle
/// of rows each implementation goes first as often as any other and follows each other one as
/// often.
pub fn cell_order(e: Extent, block: usize) -> Vec<CellAt> {
    let rows = williams_rows(e.implementations);
    let groups: Vec<(usize, usize, usize)> = (0..e.recipes)
        .flat_map(|recipe| (0..e.seeds).map(move |seed| (recipe, seed)))
        .flat_map(|(recipe, seed)| (0..e.workers).map(move |w| (recipe, seed, w)))
        .collect();
    let mut order = Vec::with_capacity(groups.len() * e.implementations);
    // `block` (recipe, seed) pairs, each with every count, so a turn measures all of a recipe's
    // counts; at most half the pairs
    let counts = e.workers.max(1);
    let pairs = groups.len() / counts;
    let block = block.min(pairs.div_ceil(2)).max(1) * counts;
    for (k, chunk) in groups.chunks(block).enumerate() {
        let Some(row) = rows.get(k % rows.len().max(1)) else {
            continue;
        };
        for &implementation in row {
            order.extend(chunk.iter().map(|&(recipe, seed, workers)| CellAt {
                recipe,
                seed,
                workers,
                implementation,
            }));
        }
    }
    order
}

/// The rows of a Williams design for `n` treatments (a Latin square balanced for first-order
/// carry-over): in every row each treatment once; over all rows each treatment in each position
/// equally often and right after each other treatment equally often. `n` rows for even `n`, `2n`
/// (each row and its reverse) for odd `n`.
pub fn williams_rows(n: usize) -> Vec<Vec<usize>> {
    // 0, 1, n-1, 2, n-2, ...: consecutive differences take every value mod n once.
    let first: Vec<usize> = (0..n)
        .map(|k| match k {
            0 => 0,
            k if k % 2 == 1 => k.div_ceil(2),
            k => n - k / 2,
        })
        .collect();
    let mut rows: Vec<Vec<usize>> = (0..n)
        .map(|shift| first.iter().map(|&t| (t + shift) % n).collect())
        .collect();
    if n % 2 == 1 {
        let reversed: Vec<Vec<usize>> = rows
            .iter()
            .map(|r| r.iter().rev().copied().collect())
            .collect();
        rows.extend(reversed);
    }
    rows
}

/// The run's data settings as a run config, for the shared media preparation.
fn media_config(p: &Production) -> RunConfig {
    RunConfig {
        version: augbench_core::config::CONFIG_VERSION,
        selection: Default::default(),
        data: p.config.data.clone(),
        execution: Default::default(),
        output: Default::default(),
        cloud: None,
    }
}

/// Each Python implementation's pipeline environment, built when missing (`None` for a native
/// crate: its worker is this binary).
fn environments(
    p: &Production,
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<Vec<Option<augbench_env::EnvInfo>>> {
    p.implementations
        .iter()
        .map(|imp| {
            let info = Matrix::get()
                .library(&imp.library)
                .with_context(|| format!("`{}` is not in the support matrix", imp.library))?;
            if imp.native {
                return Ok(None);
            }
            augbench_env::ensure(info.env_group_for(Mode::Pipeline), refresh, Some(mp)).map(Some)
        })
        .collect()
}

/// Every input hashed. Hashing the dataset reads every file once, before the first cell and
/// untimed: it is the prewarm, so no cell pays for the page cache.
fn run_inputs(
    p: &Production,
    paths: &[String],
    envs: &[Option<augbench_env::EnvInfo>],
    mp: &MultiProgress,
) -> anyhow::Result<RunInputs> {
    let mut inputs = RunInputs::new();
    // The cell settings only: which implementations, recipes and seeds a run asks for is not an
    // input of any cell (each cell's file names its own), so growing a run keeps its cells.
    // A sweep's counts are like its seeds (each cell's id names its own), so the list is not
    // hashed: growing or reordering a sweep keeps its cells.
    let mut settings = serde_json::to_string(&p.settings).unwrap_or_default();
    if p.settings.workers.is_sweep() {
        let mut marked = serde_json::to_value(&p.settings).unwrap_or_default();
        marked["workers"] = "sweep".into();
        settings = marked.to_string();
    }
    inputs.add("settings", settings.as_bytes());
    inputs.add("catalog", p.catalog_text.as_bytes());
    let spinner =
        crate::progress::labelled_spinner(mp, format!("Prewarm and hash {} files", paths.len()));
    inputs.add("dataset", &dataset_bytes(paths)?);
    spinner.finish_and_clear();
    let mut locks = String::new();
    for env in envs.iter().flatten() {
        locks.push_str(&format!("[{}]\n{}\n", env.group, env.lock()?));
    }
    inputs.add("environments", locks.as_bytes());
    // augbench's input is its build facts (version, commit, profile) and the coordinator binary's
    // own bytes (a rebuild from edited sources keeps the facts); the rest is the machine's: the
    // card's fixed facts (a job's runtime, time and load are not the machine's).
    let mut card = augbench_host::machine::card().fixed();
    let build = serde_json::to_string(&card.build).unwrap_or_default();
    let exe = std::env::current_exe().context("finding augbench's own binary to hash it")?;
    let bytes = std::fs::read(&exe)
        .with_context(|| format!("reading augbench's binary {} to hash it", exe.display()))?;
    inputs.add(
        "augbench",
        format!("{build}\n{}", sha256_hex(&bytes)).as_bytes(),
    );
    card.build = None;
    inputs.add(
        "machine",
        serde_json::to_string(&card).unwrap_or_default().as_bytes(),
    );
    // The Python worker package's content hash (its extracted folder's name): a changed worker
    // changes what a cell measures even where augbench's build does not.
    if p.implementations.iter().any(|i| !i.native) {
        let worker = augbench_env::worker_source_dir()?;
        let worker = worker
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        inputs.add("worker", worker.as_bytes());
    }
    // The native worker is this binary: its bytes, since a rebuild from edited sources (or with
    // other compiler flags) keeps the commit and profile the build facts name.
    if let Some(native) = p.implementations.iter().find(|i| i.native) {
        let exe = crate::worker::native_command(&native.library)?.program;
        let bytes = std::fs::read(&exe)
            .with_context(|| format!("reading the native worker {} to hash it", exe.display()))?;
        inputs.add("native worker", &bytes);
    }
    Ok(inputs)
}

/// The worker of `imp`: started for a cell to measure, shut down when another implementation
/// measures (`walk`), restarted after a cell it lost.
struct Slot<'a> {
    imp: &'a Implementation,
    command: augbench_host::child::CommandLine,
    paths: &'a [String],
    worker: Option<(Worker, serde_json::Value)>,
}

impl<'a> Slot<'a> {
    fn new(
        imp: &'a Implementation,
        env: Option<&augbench_env::EnvInfo>,
        paths: &'a [String],
    ) -> anyhow::Result<Self> {
        let command = crate::worker::transforms_command(
            env,
            &imp.library,
            None,
            ThreadPolicy::PipelineDefault,
        )?;
        Ok(Slot {
            imp,
            command,
            paths,
            worker: None,
        })
    }

    fn stop(&mut self) {
        if let Some((w, _)) = self.worker.take() {
            w.shutdown();
        }
    }
}

/// Shuts down every worker but the one of implementation `keep`.
fn shut_down_all_but(slots: &mut [Slot<'_>], keep: usize) {
    for (i, slot) in slots.iter_mut().enumerate() {
        if i != keep {
            slot.stop();
        }
    }
}

/// A cell's id; the cell, when its file is there and valid; why not, when it is there but invalid.
type Found = (CellId, Option<Cell>, Option<String>);

fn kept(
    p: &Production,
    (imp, recipe): (&Implementation, &Recipe),
    (seed, workers): (u64, u64),
    run: &ProductionRun,
) -> Found {
    let id = CellId {
        run_id: run.run_id.clone(),
        family: p.catalog.family.clone(),
        implementation: imp.name.clone(),
        recipe: recipe.id.clone(),
        seed,
        workers: p.settings.workers.is_sweep().then_some(workers),
    };
    match cell::validate(&cell::path(&run.run_dir, &id), &id) {
        Some(Ok(cell)) => (id, Some(cell), None),
        Some(Err(why)) => (id, None, Some(why)),
        None => (id, None, None),
    }
}

/// One missing or invalid cell (`invalid`: why its file was refused), measured and written at
/// once.
fn one_cell(
    p: &Production,
    slot: &mut Slot<'_>,
    recipe: &Recipe,
    (id, invalid): (CellId, Option<String>),
    run: &mut ProductionRun,
    bar: &ProgressBar,
    mp: &MultiProgress,
) -> anyhow::Result<Cell> {
    bar.set_message(format!("{} {} seed {}", id.column(), recipe.row, id.seed));
    let path = cell::path(&run.run_dir, &id);
    if let Some(why) = invalid {
        mp.suspend(|| eprintln!("note: {} is measured again: {why}", path.display()));
    }
    let mut cell = measure_cell(p, slot, recipe, id, mp);
    write_atomic(&path, &cell.to_bytes())?;
    run.measured_now += 1;
    bar.inc(1);
    Ok(cell)
}

fn measure_cell(
    p: &Production,
    slot: &mut Slot<'_>,
    recipe: &Recipe,
    id: CellId,
    mp: &MultiProgress,
) -> Cell {
    let workers = p.settings.workers.of(&id);
    let mut settings = serde_json::to_value(&p.settings).unwrap_or_default();
    // A swept cell's settings name its own count.
    settings["workers"] = workers.into();
    let mut cell = Cell {
        schema: CELL_SCHEMA,
        row: recipe.row.clone(),
        status: CellStatus::Unsupported,
        reason: None,
        items_per_sec: None,
        memory: None,
        measured: serde_json::Value::Null,
        settings,
        boundary: Some(slot.imp.boundary(&p.settings)),
        versions: serde_json::Value::Null,
        digest: String::new(),
        id,
    };
    if !Production::listed(recipe, slot.imp) {
        cell.reason = Some(format!(
            "the catalog does not list {} for this recipe",
            slot.imp.name
        ));
        return cell;
    }
    match measured(p, slot, recipe, (cell.id.seed, workers), mp) {
        Ok((response, memory, versions)) => {
            let seconds = response.ns.last().copied().unwrap_or(0) as f64 / 1e9;
            cell.status = CellStatus::Ok;
            cell.items_per_sec = (seconds > 0.0).then(|| response.items as f64 / seconds);
            cell.memory = Some(loader_seen(memory, slot.imp, workers));
            cell.versions = versions;
            cell.measured = serde_json::to_value(&response).unwrap_or_default();
        }
        Err(e) => {
            let unsupported = matches!(&e, WorkerError::Failed { failure, .. } if failure.kind == FailureKind::Unsupported);
            cell.status = if unsupported {
                CellStatus::Unsupported
            } else {
                CellStatus::Error
            };
            cell.reason = Some(match &e {
                WorkerError::Failed { failure, .. } => failure.error.clone(),
                other => other.to_string(),
            });
            // a worker that failed a cell is not trusted with the next one
            if !unsupported && let Some((mut w, _)) = slot.worker.take() {
                w.kill();
            }
        }
    }
    cell
}

/// Readings that never saw the loader at work (a cell shorter than the sampling period) say
/// nothing about it: they are marked unavailable, with why, rather than reported low. A Python
/// loader is seen in a reading of the worker and its `workers` loader processes; a native one runs
/// in the worker's own threads, so it is seen only by a reading between the one taken before the
/// cell's request and the one after its reply (three or more readings).
fn loader_seen(mut memory: MemoryPeaks, imp: &Implementation, workers: u64) -> MemoryPeaks {
    let (seen, what) = if imp.native {
        (
            memory.samples >= 3,
            "a reading while the cell ran".to_string(),
        )
    } else {
        let processes = u64::from(memory.max_processes) > workers;
        (
            processes,
            format!("the worker and its {workers} loader processes"),
        )
    };
    if memory.unavailable.is_none() && !seen {
        memory.unavailable = Some(format!(
            "the sampler never saw the loader at work (it needs {what}; {} readings over {} ms, at most {} processes): the cell was too short to sample; measure more batches",
            memory.samples, memory.span_ms, memory.max_processes
        ));
    }
    memory
}

type Measured = (ProductionCellResponse, MemoryPeaks, serde_json::Value);

fn measured(
    p: &Production,
    slot: &mut Slot<'_>,
    recipe: &Recipe,
    (seed, workers): (u64, u64),
    mp: &MultiProgress,
) -> Result<Measured, WorkerError> {
    let req = cell_request(
        p,
        (slot.imp, recipe),
        (seed, workers),
        slot.paths.len() as u64,
    );
    let (worker, versions) = started(slot, mp)?;
    let sampler = p
        .settings
        .sample_memory
        .then(|| Sampler::start(worker.pid(), default_period()));
    let response = worker.call::<ProductionCellResponse>(&Request::ProductionCell(req), timeout(p));
    let memory = match sampler {
        Some(Ok(s)) => s.stop(),
        Some(Err(e)) => {
            MemoryPeaks::unavailable(format!("the memory sampler could not start: {e}"))
        }
        None => MemoryPeaks::unavailable("not sampled (`memory: false`)".into()),
    };
    Ok((response?, memory, versions.clone()))
}

fn started<'s>(
    slot: &'s mut Slot<'_>,
    mp: &MultiProgress,
) -> Result<&'s mut (Worker, serde_json::Value), WorkerError> {
    let fresh = match slot.worker.take() {
        Some(w) => w,
        None => start_worker(slot, mp)?,
    };
    Ok(slot.worker.insert(fresh))
}

fn start_worker(
    slot: &Slot<'_>,
    mp: &MultiProgress,
) -> Result<(Worker, serde_json::Value), WorkerError> {
    let spinner = crate::progress::labelled_spinner(mp, format!("Start {}", slot.imp.name));
    let started = start_and_load(slot);
    spinner.finish_and_clear();
    started
}

fn start_and_load(slot: &Slot<'_>) -> Result<(Worker, serde_json::Value), WorkerError> {
    let mut worker = Worker::start(&slot.command, policy::STDERR_TAIL_LINES)?;
    let wait = Duration::from_secs_f64(policy::PRODUCTION_START_TIMEOUT_SEC);
    let hello = worker.request(&Request::Hello, wait)?;
    let load = LoadRequest {
        media: "image".into(),
        paths: slot.paths.to_vec(),
        channels: 3,
        clip_length: policy::DEFAULT_CLIP_LENGTH,
        device: slot.imp.device.to_string(),
        pipeline: true,
        preload: Some(false),
        targets: None,
    };
    worker.request(&Request::Load(load), wait)?;
    Ok((worker, hello.get("versions").cloned().unwrap_or_default()))
}

fn cell_request(
    p: &Production,
    (imp, recipe): (&Implementation, &Recipe),
    (seed, workers): (u64, u64),
    count: u64,
) -> ProductionCellRequest {
    let s = &p.settings;
    ProductionCellRequest {
        stages_in_workers: stages_in_workers(&p.catalog, imp, recipe),
        recipe: recipe.id.clone(),
        stages: chain_stages(recipe),
        dtype: s.dtype.clone(),
        mean: s.mean,
        std: s.std,
        size: [s.height, s.width],
        order: seed_order(count, seed),
        seed,
        batch_size: s.batch_size,
        workers,
        prefetch: s.prefetch,
        warmup_batches: s.warmup_batches,
        measured_batches: s.measured_batches,
        decoder: p.decoder_for(imp),
    }
}

/// The recipe's stages as a worker gets them, each marked where it is one of the crop transforms.
pub(super) fn chain_stages(recipe: &Recipe) -> Vec<ChainStage> {
    let crops = &augbench_catalog::recipe::Recipe::get().crop_transforms;
    let stage = |st: &augbench_catalog::recipes::Stage| ChainStage {
        op: st.op.clone(),
        params: serde_json::to_value(&st.params).unwrap_or_default(),
        crop: crops.contains(&st.op),
    };
    recipe.stages.iter().map(stage).collect()
}

/// How many of the recipe's stages the loader workers run (the CPU prefix rule): on the CPU all
/// of them; on the GPU the collatable prefix, and the rest on the collated batch on the device.
pub(super) fn stages_in_workers(catalog: &Catalog, imp: &Implementation, recipe: &Recipe) -> u64 {
    let all = recipe.stages.len();
    let prefix = match imp.device {
        augbench_core::Device::Cuda => catalog.prefix(recipe).map_or(all, |last| last + 1),
        _ => all,
    };
    prefix as u64
}

/// A cell's whole pass may take long (a slow recipe, many batches): its own generous limit.
fn timeout(p: &Production) -> Duration {
    let batches = (p.settings.warmup_batches + p.settings.measured_batches) as f64;
    let items = batches * p.settings.batch_size as f64;
    Duration::from_secs_f64(
        policy::PRODUCTION_START_TIMEOUT_SEC + items * policy::PRODUCTION_CELL_SEC_PER_ITEM_LIMIT,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_that_never_saw_the_loader_workers_are_not_reported() {
        let imp = |library: &str| Implementation {
            name: format!("{library}_cpu"),
            library: library.into(),
            device: augbench_core::Device::Cpu,
            native: library == "image",
        };
        let seen = |processes: u32, samples: u64, imp: &Implementation, workers: u64| {
            let mut m = MemoryPeaks::unavailable(String::new());
            m.unavailable = None;
            (m.max_processes, m.samples) = (processes, samples);
            loader_seen(m, imp, workers).unavailable
        };
        let (pillow, image) = (imp("pillow"), imp("image"));
        assert!(seen(3, 2, &pillow, 2).is_none());
        assert!(seen(1, 2, &pillow, 0).is_none());
        let why = seen(2, 9, &pillow, 2).unwrap();
        assert!(why.contains("never saw the loader at work"), "{why}");
        assert!(why.contains("its 2 loader processes"), "{why}");
        // Native loader workers are threads: one process, but a reading inside the cell.
        assert!(seen(1, 3, &image, 2).is_none());
        let why = seen(1, 2, &image, 2).unwrap();
        assert!(why.contains("a reading while the cell ran"), "{why}");
    }

    #[test]
    fn williams_rows_balance_positions_and_successors() {
        for n in 1..=7 {
            let rows = williams_rows(n);
            assert_eq!(rows.len(), if n % 2 == 0 { n } else { 2 * n }, "n = {n}");
            let mut at = vec![vec![0; n]; n];
            let mut after = vec![vec![0; n]; n];
            for row in &rows {
                let mut sorted = row.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "each once: {row:?}");
                for (position, &t) in row.iter().enumerate() {
                    at[t][position] += 1;
                }
                for pair in row.windows(2) {
                    after[pair[0]][pair[1]] += 1;
                }
            }
            let each = rows.len() / n;
            assert!(at.iter().flatten().all(|&c| c == each), "n = {n}: {at:?}");
            // n(n - 1) successions per n rows over n(n - 1) ordered pairs.
            let each_pair = if n % 2 == 0 { 1 } else { 2 };
            for (a, row) in after.iter().enumerate() {
                for (b, &c) in row.iter().enumerate() {
                    let want = if a == b { 0 } else { each_pair };
                    assert_eq!(c, want, "n = {n}: {b} after {a}");
                }
            }
        }
    }

    #[test]
    fn implementations_take_blocks_of_groups_in_the_designs_rows() {
        // 5 recipes × 2 seeds = 10 groups; blocks of 4, 4 and 2 groups; 3 implementations.
        let extent = |recipes, seeds, workers, implementations| Extent {
            recipes,
            seeds,
            workers,
            implementations,
        };
        let order = cell_order(extent(5, 2, 1, 3), 4);
        assert_eq!(order.len(), 30);
        let rows = williams_rows(3);
        let turns: Vec<(usize, usize)> = order
            .chunk_by(|a, b| a.implementation == b.implementation)
            .map(|turn| (turn[0].implementation, turn.len()))
            .collect();
        let expected: Vec<(usize, usize)> = [4, 4, 2]
            .iter()
            .enumerate()
            .flat_map(|(k, &size)| rows[k].iter().map(move |&i| (i, size)))
            .collect();
        assert_eq!(turns, expected);
        let first_block: Vec<(usize, usize)> =
            order[..4].iter().map(|c| (c.recipe, c.seed)).collect();
        assert_eq!(first_block, [(0, 0), (0, 1), (1, 0), (1, 1)]);
        let mut ranks: Vec<usize> = order
            .iter()
            .map(|c| c.config_rank(extent(5, 2, 1, 3)))
            .collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (0..30).collect::<Vec<_>>(), "every cell once");
        let imps =
            |order: Vec<CellAt>| -> Vec<usize> { order.iter().map(|c| c.implementation).collect() };
        let per_group = imps(cell_order(extent(2, 1, 1, 2), 1));
        assert_eq!(
            per_group,
            [0, 1, 1, 0],
            "one group a block: who goes first alternates"
        );
        let short = imps(cell_order(extent(1, 3, 1, 2), 4));
        assert_eq!(
            short,
            [0, 0, 1, 1, 1, 0],
            "a short run still has two blocks"
        );
        assert!(cell_order(extent(3, 1, 1, 0), 4).is_empty());
    }

    /// In a sweep the counts are the innermost group dimension and a block is whole (recipe,
    /// seed) pairs with every count, so an implementation measures all of a recipe's counts in one
    /// turn, whatever the number of counts; every cell comes once.
    #[test]
    fn a_sweep_of_worker_counts_keeps_a_recipes_counts_in_one_turn() {
        for (recipes, workers, block) in [(2, 3, 3), (5, 5, 4), (1, 2, 4), (3, 4, 1)] {
            let e = Extent {
                recipes,
                seeds: 1,
                workers,
                implementations: 2,
            };
            let order = cell_order(e, block);
            assert_eq!(order.len(), recipes * workers * 2);
            for turn in order.chunk_by(|a, b| a.implementation == b.implementation) {
                assert_eq!(turn.len() % workers, 0, "{e:?}: a turn of whole recipes");
                for recipe in turn.chunks(workers) {
                    let counts: Vec<usize> = recipe.iter().map(|c| c.workers).collect();
                    assert_eq!(counts, (0..workers).collect::<Vec<_>>(), "{e:?}");
                    assert!(recipe.iter().all(|c| c.recipe == recipe[0].recipe));
                }
            }
            let mut ranks: Vec<usize> = order.iter().map(|c| c.config_rank(e)).collect();
            ranks.sort_unstable();
            assert_eq!(
                ranks,
                (0..order.len()).collect::<Vec<_>>(),
                "every cell once"
            );
        }
    }

    #[test]
    fn each_seed_has_its_own_permutation_shared_by_every_implementation() {
        let a = seed_order(50, 137);
        assert_eq!(a, seed_order(50, 137));
        assert_ne!(a, seed_order(50, 138));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<u64>>());
    }
}
