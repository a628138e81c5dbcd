//! One row's recipe inside a loader thread: the stages a `pipeline_prepare` names (shared crop,
//! the crate's transform or none for the ceiling, shared normalize), built per thread with its
//! own seeded crop and one-thread rayon pool, and the item fill that writes into the batch. A
//! clip gets one crop window for all its frames; the crate's transform runs frame by frame and
//! draws its random parameters per frame (the crates have no clip type), as in video micro.

use std::sync::Arc;

use augbench_catalog::recipe::Recipe;
use serde_json::{Value, json};

use super::source::Source;
use crate::draw;
use crate::loader::{Batch, Crop, Fill, MakeFill, Normalize};
use crate::params::Params;
use crate::reply::failure;
use crate::session::{Adapter, Fault, Op, trigger};
use augbench_protocol::protocol::{Failure, FailureKind, PipelinePrepareRequest};

/// What every loader thread builds its recipe from.
pub(super) struct Stages {
    pub transform: String,
    pub params: Value,
    /// The ceiling row: no transform.
    pub ceiling: bool,
    /// The shared crop's size, when the transform is not itself the crop.
    pub crop: Option<(usize, usize)>,
    norm: Normalize,
    seed: u64,
    /// A debug fault that fires inside the loader instead of the transform.
    pub fault: Option<Fault>,
}

pub(super) fn stages(req: &PipelinePrepareRequest) -> Result<Stages, Failure> {
    let crop = match &req.crop {
        None => None,
        Some(stage) if stage.name == Recipe::get().crop => {
            let p = Params::new(&stage.name, &stage.params);
            Some((p.dim("width")? as usize, p.dim("height")? as usize))
        }
        Some(stage) => {
            let msg = format!(
                "the native loader's shared crop is {}, not {}",
                Recipe::get().crop,
                stage.name
            );
            return Err(failure(FailureKind::Unsupported, msg));
        }
    };
    Ok(Stages {
        transform: req.transform.clone(),
        params: req.params.clone(),
        ceiling: req.ceiling,
        crop,
        norm: Normalize::new(req.mean, req.std),
        seed: req.seed,
        fault: None,
    })
}

/// Each thread's recipe: built inside the thread (a worker gets its own one-thread rayon pool,
/// so crates that use rayon stay on their loader thread).
pub(super) fn make_fill<A: Adapter>(source: &Arc<Source<A>>, stages: &Arc<Stages>) -> MakeFill {
    let (source, stages) = (source.clone(), stages.clone());
    Arc::new(move |worker: Option<usize>| {
        let pool = worker.map(|_| own_pool()).transpose()?;
        let t = transform::<A>(&stages, worker)?;
        let seed = thread_seed(stages.seed, worker);
        let crop = stages.crop.map(|(w, h)| Crop::new(w, h, seed));
        let report = json!({ "worker": worker, "rayon": rayon::current_num_threads() });
        let fill = RecipeFill::<A> {
            source: source.clone(),
            crop,
            t,
            norm: stages.norm,
            _pool: pool,
        };
        Ok((Box::new(fill) as Box<dyn Fill>, report))
    })
}

/// The seed of a thread's crop and transform: the row's seed, offset per loader worker.
pub(super) fn thread_seed(seed: u64, worker: Option<usize>) -> u64 {
    seed.wrapping_add(worker.map_or(0, |w| w as u64 + 1))
}

/// A one-thread rayon pool that the calling (loader) thread itself belongs to.
pub(super) fn own_pool() -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .map_err(|e| format!("cannot pin the loader thread's rayon pool: {e}"))
}

/// The thread's transform: none for the ceiling row; a debug fault fires in the loader's worker
/// threads only (the preflight runs the real recipe).
fn transform<A: Adapter>(stages: &Stages, worker: Option<usize>) -> Result<Option<Op<A>>, String> {
    if let Some(f) = stages.fault.filter(|_| worker.is_some()) {
        return Ok(Some(fault_op::<A>(f)));
    }
    if stages.ceiling {
        return Ok(None);
    }
    let p = Params::new(&stages.transform, &stages.params);
    let seed = thread_seed(stages.seed, worker);
    draw::with_seed(seed, || A::build(&stages.transform, &p))
        .map(Some)
        .map_err(|f| f.error)
}

struct RecipeFill<A: Adapter> {
    source: Arc<Source<A>>,
    crop: Option<Crop>,
    t: Option<Op<A>>,
    norm: Normalize,
    /// Keeps this thread's rayon pool alive.
    _pool: Option<rayon::ThreadPool>,
}

impl<A: Adapter> Fill for RecipeFill<A> {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String> {
        let i = index as usize;
        let missing = || format!("no item {index}");
        match &*self.source.clone() {
            Source::Items(items) => {
                let item = items.get(i).ok_or_else(missing)?;
                self.image(item, batch, slot)
                    .map_err(|e| format!("item {index}: {e}"))
            }
            Source::Paths(paths) => {
                let path = paths.get(i).ok_or_else(missing)?;
                let item = read::<A>(path)?;
                self.image(&item, batch, slot)
                    .map_err(|e| format!("{path}: {e}"))
            }
            Source::Clips(clips) => {
                let clip = clips.get(i).ok_or_else(missing)?;
                self.clip(clip, batch, slot)
                    .map_err(|e| format!("clip {index}: {e}"))
            }
            Source::ClipPaths(folders) => {
                let folder = folders.get(i).ok_or_else(missing)?;
                let clip = read_clip::<A>(folder)?;
                self.clip(&clip, batch, slot)
                    .map_err(|e| format!("{folder}: {e}"))
            }
        }
    }
}

impl<A: Adapter> RecipeFill<A> {
    fn image(&mut self, item: &A::Item, batch: &mut Batch, slot: usize) -> Result<(), String> {
        if let Some(t) = batch.frames {
            return Err(format!(
                "the batch holds clips of {t} frames, and this item is an image"
            ));
        }
        self.recipe(item, None, batch, slot)
    }

    /// Every frame of a clip into its slots, cut at one crop window drawn for the whole clip.
    fn clip(&mut self, frames: &[A::Item], batch: &mut Batch, slot: usize) -> Result<(), String> {
        let t_len = batch
            .frames
            .ok_or("the batch holds images, and this item is a clip")?;
        if frames.len() != t_len {
            return Err(format!(
                "the clip has {} frames, where the batch holds clips of {t_len}",
                frames.len()
            ));
        }
        let at = match (self.crop.as_mut(), frames.first()) {
            (Some(crop), Some(first)) => Some(crop.place(A::pixels(first))?),
            _ => None,
        };
        for (t, frame) in frames.iter().enumerate() {
            self.recipe(frame, at, batch, slot * t_len + t)
                .map_err(|e| format!("frame {t}: {e}"))?;
        }
        Ok(())
    }

    /// One image (or frame) into batch slot `plane`; `at`: the clip's crop window, else drawn.
    fn recipe(
        &mut self,
        item: &A::Item,
        at: Option<(usize, usize)>,
        batch: &mut Batch,
        plane: usize,
    ) -> Result<(), String> {
        let norm = self.norm;
        match (self.crop.as_mut(), self.t.as_mut()) {
            (Some(crop), t) => {
                let px = A::pixels(item);
                let at = match at {
                    Some(at) => at,
                    None => crop.place(px)?,
                };
                let Some(t) = t else {
                    return batch.put(plane, crop.apply_at(px, at)?, &norm);
                };
                let (w, h) = crop.size();
                let cropped = A::convert(w as u32, h as u32, crop.apply_owned_at(px, at)?)?;
                batch.put(plane, A::out_pixels(&t(&cropped)?), &norm)
            }
            (None, Some(t)) => batch.put(plane, A::out_pixels(&t(item)?), &norm),
            (None, None) => batch.put(plane, A::pixels(item), &norm),
        }
    }
}

/// A transform that fires `f` on every item, as a crashing or hanging augmentation would (the
/// ceiling row too, so a test can break any row).
fn fault_op<A: Adapter>(f: Fault) -> Op<A> {
    Box::new(move |_| trigger(f))
}

/// Reads one clip folder inside the loader (decode scopes), named in the error.
fn read_clip<A: Adapter>(folder: &str) -> Result<Vec<A::Item>, String> {
    let frames = crate::clips::read_clip(std::path::Path::new(folder))
        .map_err(|e| format!("could not read clip {folder}: {e}"))?;
    frames
        .into_iter()
        .map(|f| A::convert(f.width, f.height, f.data))
        .collect::<Result<Vec<_>, String>>()
        .map_err(|e| format!("{folder}: {e}"))
}

/// Decodes one file inside the loader (decode scopes) with the crate's decoder, named in the error.
fn read<A: Adapter>(path: &str) -> Result<A::Item, String> {
    A::read_file(std::path::Path::new(path)).map_err(|e| format!("could not decode {path}: {e}"))
}
