//! Production cells in the native worker (docs/pipeline.md, "Production cells"): a catalog
//! recipe's stages chained per sample in the loader threads (`RandomCrop224` as the shared crop,
//! every other stage the crate's own transform of that op) into a batch of raw pixel values, then
//! normalized and cast to the run's dtype on the caller's thread (where a Python worker's main
//! process does it), and the measured pass timed as the Python workers time theirs.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use augbench_catalog::recipe::Recipe;
use augbench_protocol::protocol::{
    ChainStage, Failure, FailureKind, ProductionCellRequest, ProductionCellResponse,
};
use half::f16;
use half::slice::HalfFloatSliceExt;
use serde_json::json;

use super::source::Source;
use crate::draw;
use crate::loader::{Batch, Crop, Fill, Loader, MakeFill, Normalize, Shape, batch};
use crate::params::Params;
use crate::reply::failure;
use crate::session::{Adapter, Op};

/// One cell over `source` (the run's files): the chain probed on this thread first, so a stage
/// the crate cannot build answers `unsupported` before any loader thread starts.
pub(super) fn cell<A: Adapter>(
    source: &Arc<Source<A>>,
    req: &ProductionCellRequest,
) -> Result<ProductionCellResponse, Failure> {
    check(source, req)?;
    let mut tail = Tail::new(req)?;
    probe::<A>(&req.stages)?;
    let shape = Shape {
        workers: req.workers as usize,
        batch_size: req.batch_size as usize,
        prefetch: req.prefetch.max(1) as usize,
        order: Arc::new(req.order.clone()),
        frames: None,
    };
    let chain = Arc::new(Chain {
        stages: req.stages.clone(),
        seed: req.seed,
    });
    let started = Instant::now();
    let mut loader = Loader::start(shape, make_fill(source, &chain)).map_err(exception)?;
    take(&mut loader, &mut tail, 1)?; // the first batch: the threads' start and the first warm-up
    let time_to_first_batch = started.elapsed().as_secs_f64();
    take(&mut loader, &mut tail, req.warmup_batches.saturating_sub(1))?;
    let (ns, contract) = timed(&mut loader, &mut tail, req)?;
    Ok(ProductionCellResponse {
        items: ns.len() as u64 * req.batch_size,
        ns,
        time_to_first_batch,
        batch: contract,
        warmup_batches: req.warmup_batches.max(1),
        worker_threads: json!(loader.threads),
        loader: loader_label(req),
        stages_in_workers: req.stages.len() as u64,
        decoder: A::decoder(),
        device: "cpu".into(),
        gpu_memory: None,
    })
}

/// The request against the loaded files: what a `bad_request` is, before anything is built.
fn check<A: Adapter>(source: &Source<A>, req: &ProductionCellRequest) -> Result<(), Failure> {
    if matches!(source, Source::Clips(_) | Source::ClipPaths(_)) {
        return Err(bad(
            "production cells take images: load the run's files, not clips",
        ));
    }
    let count = source.len() as u64;
    let problem = if req.stages.is_empty() {
        Some("\"stages\" must be a non-empty list".to_string())
    } else if req.stages_in_workers != req.stages.len() as u64 {
        Some(format!(
            "the native loader runs every stage in its threads (it has no device to run a batch on): \"stages_in_workers\" must be {}",
            req.stages.len()
        ))
    } else if req.order.is_empty() || req.order.iter().any(|&i| i >= count) {
        Some(format!(
            "\"order\" must be a non-empty list of item indices below {count}"
        ))
    } else if req.batch_size == 0 || req.measured_batches == 0 {
        Some("\"batch_size\" and \"measured_batches\" must be at least 1".into())
    } else if req.size.contains(&0) {
        Some("\"size\" must be [height, width], both at least 1".into())
    } else if req.std.iter().any(|s| !s.is_finite() || *s == 0.0) {
        Some("\"std\" must be 3 non-zero numbers".into())
    } else {
        req.decoder.as_ref().map(|decoder| {
            format!(
                "a native crate decodes with its own crate, not `{decoder}`: leave \"decoder\" out"
            )
        })
    };
    problem.map_or(Ok(()), |p| Err(bad(&p)))
}

/// What every loader thread builds its chain from.
struct Chain {
    stages: Vec<ChainStage>,
    seed: u64,
}

/// A built stage: the shared crop, or the crate's transform.
enum Step<A: Adapter> {
    Crop(Box<Crop>),
    Op(Op<A>),
}

/// Whether an op is the recipe's crop that every native row takes from augbench (the crates have
/// no random crop of their own): `RandomCrop224`; other crop ops are the crate's.
pub(crate) fn is_shared_crop(op: &str) -> bool {
    op == Recipe::get().crop
}

fn shared_crop(stage: &ChainStage) -> bool {
    stage.crop && is_shared_crop(&stage.op)
}

/// Every stage built once, untimed: the first one the crate cannot build names the recipe's
/// stage in its `unsupported` answer.
fn probe<A: Adapter>(stages: &[ChainStage]) -> Result<(), Failure> {
    build::<A>(stages, 0).map(|_| ())
}

/// The stages as `Step`s: stage `i`'s random draws come from a stream of its own, derived from
/// `seed`, so no two stages (a crop's window and a rotation's angle) share their numbers.
fn build<A: Adapter>(stages: &[ChainStage], seed: u64) -> Result<Vec<Step<A>>, Failure> {
    stages
        .iter()
        .enumerate()
        .map(|(i, stage)| {
            let p = Params::new(&stage.op, &stage.params);
            let own = mix(seed, i as u64);
            let step = if shared_crop(stage) {
                let size = (p.dim("width")? as usize, p.dim("height")? as usize);
                Ok(Step::Crop(Box::new(Crop::new(size.0, size.1, own))))
            } else {
                draw::with_seed(own, || A::build(&stage.op, &p)).map(Step::Op)
            };
            step.map_err(|f| named(i, stage, f))
        })
        .collect()
}

/// A seed for stream `k` of `seed` (SplitMix64's finalizer over both): nearby cell seeds,
/// threads and stages give unrelated streams, where `seed + k` would give seed 137's second
/// stream to seed 138's first.
fn mix(seed: u64, k: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(k.wrapping_add(1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A failure to build stage `i`, naming it as the Python workers do (`stage 2 (Rotate): …`).
fn named(i: usize, stage: &ChainStage, mut f: Failure) -> Failure {
    f.error = format!("stage {} ({}): {}", i + 1, stage.op, f.error);
    f
}

/// Each loader thread's chain: built inside the thread, with its own stream of the cell's seed
/// and a one-thread rayon pool.
fn make_fill<A: Adapter>(source: &Arc<Source<A>>, chain: &Arc<Chain>) -> MakeFill {
    let (source, chain) = (source.clone(), chain.clone());
    Arc::new(move |worker: Option<usize>| {
        let pool = worker.map(|_| super::recipe::own_pool()).transpose()?;
        let seed = mix(chain.seed, worker.map_or(0, |w| w as u64 + 1));
        let steps = build::<A>(&chain.stages, seed).map_err(|f| f.error)?;
        let report = json!({ "worker": worker, "rayon": rayon::current_num_threads() });
        let fill = ChainFill::<A> {
            source: source.clone(),
            steps,
            _pool: pool,
        };
        Ok((Box::new(fill) as Box<dyn Fill>, report))
    })
}

struct ChainFill<A: Adapter> {
    source: Arc<Source<A>>,
    steps: Vec<Step<A>>,
    /// Keeps this thread's rayon pool alive.
    _pool: Option<rayon::ThreadPool>,
}

/// The image between two stages: a stage's own result, or the crate's output.
enum Now<A: Adapter> {
    Item(A::Item),
    Out(A::Out),
}

impl<A: Adapter> Fill for ChainFill<A> {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        let source = self.source.clone();
        let missing = || format!("no item {index}");
        match &*source {
            Source::Items(items) => {
                let item = items.get(index as usize).ok_or_else(missing)?;
                self.sample(item, batch, slot)
                    .map_err(|e| format!("item {index}: {e}"))
            }
            Source::Paths(paths) => {
                let path = paths.get(index as usize).ok_or_else(missing)?;
                let item = A::read_file(std::path::Path::new(path))
                    .map_err(|e| format!("could not decode {path}: {e}"))?;
                self.sample(&item, batch, slot)
                    .map_err(|e| format!("{path}: {e}"))
            }
            Source::Clips(_) | Source::ClipPaths(_) => Err("production cells take images".into()),
        }
    }
}

impl<A: Adapter> ChainFill<A> {
    /// Every stage in order on one decoded image, the result's pixel values into slot `slot`
    /// (as float32, unnormalized: the collation of a uint8 batch, written in place).
    fn sample(&mut self, item: &A::Item, batch: &mut Batch, slot: usize) -> Result<(), String> {
        let mut now: Option<Now<A>> = None;
        for step in &mut self.steps {
            let owned;
            let input: &A::Item = match now.take() {
                None => item,
                Some(Now::Item(i)) => {
                    owned = i;
                    &owned
                }
                Some(Now::Out(o)) => {
                    owned = A::chain(o)?;
                    &owned
                }
            };
            now = Some(match step {
                Step::Crop(crop) => {
                    let px = A::pixels(input);
                    let at = crop.place(px)?;
                    let (w, h) = crop.size();
                    Now::Item(A::convert(
                        w as u32,
                        h as u32,
                        crop.apply_owned_at(px, at)?,
                    )?)
                }
                Step::Op(t) => Now::Out(t(input)?),
            });
        }
        let px = match &now {
            None => A::pixels(item),
            Some(Now::Item(i)) => A::pixels(i),
            Some(Now::Out(o)) => A::out_pixels(o),
        };
        batch.put(slot, px, &Normalize::identity())
    }
}

/// The end of every batch on the caller's thread, as a Python worker's main process ends its
/// collated batch: the pixel values normalized in place, then cast to the run's dtype (float16
/// into a buffer reused from batch to batch; float32 is the batch itself).
struct Tail {
    norm: Normalize,
    half: Option<Vec<f16>>,
    dtype: String,
}

impl Tail {
    fn new(req: &ProductionCellRequest) -> Result<Tail, Failure> {
        let half = match req.dtype.as_str() {
            "float16" => Some(Vec::new()),
            "float32" => None,
            other => {
                let msg = format!("\"dtype\" must be float16 or float32, got {other:?}");
                return Err(bad(&msg));
            }
        };
        Ok(Tail {
            norm: Normalize::new(req.mean, req.std),
            half,
            dtype: req.dtype.clone(),
        })
    }

    fn apply(&mut self, b: &mut Batch) {
        let [_, _, h, w] = b.shape;
        self.norm.apply(&mut b.data, h * w);
        match self.half.as_mut() {
            Some(out) => {
                out.resize(b.data.len(), f16::ZERO);
                out.convert_from_f32_slice(&b.data);
                black_box(&out); // delivered to the training step
            }
            None => {
                black_box(&b.data);
            }
        }
    }

    /// The contract on what the last measured batch delivered (the float16 values widened back
    /// for the statistics): its shape, dtype and normalized statistics.
    fn contract(&self, b: Batch, size: [u64; 2]) -> Result<serde_json::Value, Failure> {
        let delivered = match &self.half {
            Some(out) => {
                let mut view = Batch::new(b.shape[0]);
                view.shape = b.shape;
                view.data = out.iter().map(|v| v.to_f32()).collect();
                view
            }
            None => b,
        };
        let mut seen = batch::check(&delivered, Some(size), None)
            .map_err(|e| failure(FailureKind::Contract, e))?;
        seen["dtype"] = json!(self.dtype);
        seen["device"] = json!("cpu");
        Ok(seen)
    }
}

/// Takes `n` batches untimed, each through the tail.
fn take(loader: &mut Loader, tail: &mut Tail, n: u64) -> Result<(), Failure> {
    for _ in 0..n {
        let mut b = loader.next_batch().map_err(exception)?;
        tail.apply(&mut b);
        loader.recycle(b);
    }
    Ok(())
}

/// The measured batches' arrivals (ns after the clock started, right after the last warm-up
/// batch), each through the tail; every batch's form (`form`) is checked after its time is read,
/// the last one's whole contract after the clock stops.
fn timed(
    loader: &mut Loader,
    tail: &mut Tail,
    req: &ProductionCellRequest,
) -> Result<(Vec<u64>, serde_json::Value), Failure> {
    let mut ns = Vec::new();
    let mut last = None;
    let expected = [req.batch_size, 3, req.size[0], req.size[1]];
    let t0 = Instant::now();
    for k in 0..req.measured_batches {
        let mut b = loader.next_batch().map_err(exception)?;
        tail.apply(&mut b);
        ns.push(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
        form(&b, expected, k)?;
        if k + 1 == req.measured_batches {
            last = Some(b);
        } else {
            loader.recycle(b);
        }
    }
    let last = last.ok_or_else(|| bad("no measured batch"))?;
    let mut contract = tail.contract(last, [req.size[0], req.size[1]])?;
    contract["checked"] = json!({ "form": ns.len(), "values": ["last"] });
    Ok((ns, contract))
}

/// The contract's form on measured batch `k` (from 0): `expected`, `B×3×H×W` at the cell's batch
/// size and output size. A comparison of four numbers, so it runs inside the window.
fn form(b: &Batch, expected: [u64; 4], k: u64) -> Result<(), Failure> {
    if b.shape.map(|d| d as u64) == expected && b.frames.is_none() {
        return Ok(());
    }
    let msg = format!(
        "measured batch {} is {:?}, expected {expected:?}",
        k + 1,
        b.dims()
    );
    Err(failure(FailureKind::Contract, msg))
}

fn loader_label(req: &ProductionCellRequest) -> serde_json::Value {
    let threads = req.workers > 0;
    json!({
        "kind": "native threads (augbench)",
        "workers": req.workers,
        "prefetch_per_worker": if threads { req.prefetch.max(1) } else { 0 },
        "persistent_workers": threads,
        "pin_memory": false,
        "drop_last": true,
        "collation": "in place: each sample's pixel values into its slot of a preallocated B×3×H×W float32 buffer, in its loader thread",
        "normalize": format!("on the caller's thread, then cast to {}", req.dtype),
        "crop": format!("{} is augbench's shared crop; every other stage is the crate's", Recipe::get().crop),
    })
}

fn exception(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn bad(e: &str) -> Failure {
    failure(FailureKind::BadRequest, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measured_batch_of_another_shape_breaks_the_contract_naming_it() {
        let mut b = Batch::new(2);
        b.shape = [2, 3, 224, 224];
        assert!(form(&b, [2, 3, 224, 224], 0).is_ok());
        b.shape = [2, 3, 200, 224];
        let e = form(&b, [2, 3, 224, 224], 1).unwrap_err();
        assert_eq!(e.kind, FailureKind::Contract);
        assert_eq!(
            e.error,
            "measured batch 2 is [2, 3, 200, 224], expected [2, 3, 224, 224]"
        );
    }
}
