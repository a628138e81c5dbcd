//! The native loader (pipeline.md): `W` worker threads fill whole batches in place, each with a
//! bounded queue of `prefetch` batches, and batch `k` comes from worker `k mod W` in the seeded
//! sample order (as PyTorch's `DataLoader` hands batches out), so batches arrive in order. With
//! no workers the caller's thread fills each batch when asked. Knows nothing about image
//! crates: what an item is (an image, or a clip of `frames` frames) comes from the [`Fill`] each
//! thread builds for itself.

pub mod batch;
pub mod crop;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;

pub use batch::{Batch, Normalize, Pixels};
pub use crop::Crop;

/// Writes one item, by its index in the dataset, into slot `slot` of a batch (a clip: all its
/// frames, with [`Batch::put_frame`]).
pub trait Fill {
    fn fill(&mut self, index: u64, batch: &mut Batch, slot: usize) -> Result<(), String>;
}

/// Builds a thread's [`Fill`] inside that thread (worker `i`; `None` for the caller's thread),
/// with what the thread reports about itself (its thread settings).
pub type MakeFill =
    Arc<dyn Fn(Option<usize>) -> Result<(Box<dyn Fill>, serde_json::Value), String> + Send + Sync>;

#[derive(Debug, Clone)]
pub struct Shape {
    pub workers: usize,
    pub batch_size: usize,
    pub prefetch: usize,
    /// Item indices, repeated without end.
    pub order: Arc<Vec<u64>>,
    /// Clips: frames per item (batches are `B×T×3×H×W`); `None` for images.
    pub frames: Option<usize>,
}

impl Shape {
    /// An empty batch buffer of this loader's shape.
    pub fn blank(&self) -> Batch {
        Batch::with_frames(self.batch_size, self.frames)
    }

    /// The dataset indices of batch `k`.
    fn indices(&self, k: u64) -> impl Iterator<Item = u64> + '_ {
        let n = self.order.len().max(1) as u64;
        let b = self.batch_size as u64;
        (0..b).map(move |i| self.order[((k * b + i) % n) as usize])
    }

    /// Fills `batch` as batch `k`.
    fn fill(&self, fill: &mut dyn Fill, k: u64, batch: &mut Batch) -> Result<(), String> {
        for (slot, index) in self.indices(k).enumerate() {
            fill.fill(index, batch, slot)?;
        }
        Ok(())
    }
}

type Delivery = Result<Batch, String>;

struct Lane {
    batches: Receiver<Delivery>,
    empties: SyncSender<Batch>,
    handle: Option<JoinHandle<()>>,
}

/// A running loader. Dropping it ends its threads.
pub struct Loader {
    shape: Shape,
    lanes: Vec<Lane>,
    /// No workers: the caller's thread fills batches with this.
    main: Option<(Box<dyn Fill>, Batch)>,
    next: u64,
    /// What each worker (or the caller's thread) reported at start.
    pub threads: Vec<serde_json::Value>,
}

impl Loader {
    /// Starts the workers; returns once every worker has built its `Fill` (or one failed).
    pub fn start(shape: Shape, make: MakeFill) -> Result<Loader, String> {
        if shape.order.is_empty() || shape.batch_size == 0 {
            return Err("a loader needs items and a batch size of at least 1".into());
        }
        if shape.workers == 0 {
            let (fill, report) = make(None)?;
            let main = Some((fill, shape.blank()));
            return Ok(Loader {
                shape,
                lanes: Vec::new(),
                main,
                next: 0,
                threads: vec![report],
            });
        }
        let mut loader = Loader {
            shape: shape.clone(),
            lanes: Vec::new(),
            main: None,
            next: 0,
            threads: Vec::new(),
        };
        for worker in 0..shape.workers {
            let (lane, report) = spawn(&shape, worker, make.clone())?;
            loader.lanes.push(lane);
            loader.threads.push(report);
        }
        Ok(loader)
    }

    /// The next batch in order. Hand it back with [`Loader::recycle`] once consumed.
    pub fn next_batch(&mut self) -> Result<Batch, String> {
        let k = self.next;
        self.next += 1;
        if let Some((fill, batch)) = self.main.as_mut() {
            let mut b = std::mem::take(batch);
            if b.shape[0] != self.shape.blank().shape[0] {
                b = self.shape.blank(); // the last one was not handed back
            }
            if let Err(e) = self.shape.fill(fill.as_mut(), k, &mut b) {
                *batch = b; // the buffer stays for the next call
                return Err(e);
            }
            return Ok(b);
        }
        let worker = (k % self.lanes.len() as u64) as usize;
        match self.lanes[worker].batches.recv() {
            Ok(delivery) => delivery,
            Err(_) => Err(format!("loader worker {worker} ended without a batch")),
        }
    }

    /// Returns a consumed batch's buffer to the worker that filled it.
    pub fn recycle(&mut self, b: Batch) {
        if let Some((_, slot)) = self.main.as_mut() {
            *slot = b;
            return;
        }
        if let Some(lane) = self.lanes.get(b.origin) {
            let _ = lane.empties.try_send(b);
        }
    }
}

impl Drop for Loader {
    fn drop(&mut self) {
        // Closing both channels ends each worker at its next send or receive.
        let handles: Vec<_> = self
            .lanes
            .iter_mut()
            .filter_map(|l| l.handle.take())
            .collect();
        self.lanes.clear();
        for h in handles {
            let _ = h.join();
        }
    }
}

/// Worker `worker`: builds its `Fill`, reports, then fills batches `worker, worker+W, …`
/// into recycled buffers until the loader is dropped. A panic becomes an error delivery.
fn spawn(
    shape: &Shape,
    worker: usize,
    make: MakeFill,
) -> Result<(Lane, serde_json::Value), String> {
    let (batch_tx, batches) = sync_channel::<Delivery>(shape.prefetch.max(1));
    let (empties, empty_rx) = sync_channel::<Batch>(shape.prefetch.max(1) + 2);
    let (ready_tx, ready_rx) = sync_channel::<Result<serde_json::Value, String>>(1);
    let shape = shape.clone();
    let handle = std::thread::Builder::new()
        .name(format!("loader-{worker}"))
        .spawn(move || {
            let run = catch_unwind(AssertUnwindSafe(|| {
                work(&shape, worker, &make, &ready_tx, &batch_tx, &empty_rx)
            }));
            if let Err(panic) = run {
                let why = panic_text(&panic);
                let _ = ready_tx.try_send(Err(format!("loader worker {worker} panicked: {why}")));
                let _ = batch_tx.send(Err(format!("loader worker {worker} panicked: {why}")));
            }
        })
        .map_err(|e| format!("cannot start loader worker {worker}: {e}"))?;
    let report = ready_rx
        .recv()
        .unwrap_or_else(|_| Err(format!("loader worker {worker} ended before it started")))?;
    let lane = Lane {
        batches,
        empties,
        handle: Some(handle),
    };
    Ok((lane, report))
}

fn work(
    shape: &Shape,
    worker: usize,
    make: &MakeFill,
    ready: &SyncSender<Result<serde_json::Value, String>>,
    out: &SyncSender<Delivery>,
    empties: &Receiver<Batch>,
) {
    let mut fill = match make(Some(worker)) {
        Ok((fill, report)) => {
            let _ = ready.send(Ok(report));
            fill
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    // Buffers: `prefetch` queued + one being consumed + one being filled, then recycled ones.
    let mut fresh = shape.prefetch.max(1) + 2;
    let mut spare = Vec::new();
    let workers = shape.workers as u64;
    let mut k = worker as u64;
    loop {
        let Some(mut b) = next_buffer(empties, &mut spare, &mut fresh, shape, worker) else {
            return;
        };
        let delivery = shape.fill(fill.as_mut(), k, &mut b).map(|()| b);
        let failed = delivery.is_err();
        if out.send(delivery).is_err() || failed {
            return;
        }
        k += workers;
    }
}

/// The buffer to fill next: the one the consumer gave back last (still in cache, so a fast
/// consumer keeps the working set at one or two batches), else a new one while fewer than
/// `fresh` exist, else the next one given back. `None` once the loader is gone.
fn next_buffer(
    empties: &Receiver<Batch>,
    spare: &mut Vec<Batch>,
    fresh: &mut usize,
    shape: &Shape,
    worker: usize,
) -> Option<Batch> {
    loop {
        match empties.try_recv() {
            Ok(b) => spare.push(b),
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Disconnected) => return None,
        }
    }
    if let Some(b) = spare.pop() {
        return Some(b);
    }
    if *fresh > 0 {
        *fresh -= 1;
        let mut b = shape.blank();
        b.origin = worker;
        return Some(b);
    }
    empties.recv().ok()
}

/// Hands memory freed by a finished loader (its batch buffers) back to the system, so the next
/// cell's memory peak starts from the worker's own baseline (glibc keeps large freed blocks in
/// its arenas otherwise); a no-op off glibc.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap memory to the system; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

#[cfg(test)]
mod tests;
