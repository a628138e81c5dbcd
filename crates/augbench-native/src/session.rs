//! The adapter contract and the loaded-media session: items held in a crate's own image type,
//! one prepared transform, the contract check (run once on item 0), and the timed loops
//! (both clocks of `clock::Loops` around each loop, outputs through `black_box`). Also the always-on
//! `Identity` transform and the debug faults (enabled by `ServeOptions::test_faults`).

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::clock::Loops;
use crate::loader::Pixels;
use crate::params::Params;
use crate::reply::failure;
use augbench_protocol::protocol::{
    CheckResponse, EmitOutput, Failure, FailureKind, TimeRequest, TimeResponse,
};

pub(crate) const DTYPE: &str = "uint8";
pub(crate) const LAYOUT: &str = "HWC";
/// Every crate's output type is an owned row-major buffer and the timed loop has no force step,
/// so a native row is contiguous and spends none of its time forcing, by construction (stated,
/// not measured: there is no force to time).
pub(crate) const OUTPUT_CONTIGUOUS: Option<bool> = Some(true);
pub(crate) const FORCE_SHARE: Option<f64> = Some(0.0);

/// A prepared transform: one call on one item, drawing its random parameters itself.
pub(crate) type Op<A> =
    Box<dyn FnMut(&<A as Adapter>::Item) -> Result<<A as Adapter>::Out, String>>;

/// One crate's side of the worker: its image type, shapes, and the transforms it supports.
pub(crate) trait Adapter: 'static {
    /// The crate's own image type, built once at `load` (pipeline loader threads share them).
    type Item: Send + Sync;
    /// What a transform returns.
    type Out;
    const LIBRARY: &'static str;

    /// Converts a decoded RGB image (stacked to the session's channel count) once, at load.
    fn convert(width: u32, height: u32, hwc: Vec<u8>) -> Result<Self::Item, String>;
    /// `[height, width, channels]`.
    fn shape(item: &Self::Item) -> [u64; 3];
    fn out_shape(out: &Self::Out) -> [u64; 3];
    /// An item's pixels (pipeline mode: the shared crop reads them).
    fn pixels(item: &Self::Item) -> Pixels<'_>;
    /// A transform output's pixels (pipeline mode: normalized into the batch).
    fn out_pixels(out: &Self::Out) -> Pixels<'_>;
    /// A transform's output as the next stage's input (production recipes chain stages): a
    /// copy through its pixels, unless the crate's output already is its image type.
    fn chain(out: Self::Out) -> Result<Self::Item, String> {
        let px = Self::out_pixels(&out);
        Self::convert(px.width as u32, px.height as u32, px.data.to_vec())
    }
    /// Builds only the named transform, or answers `unsupported` with a reason.
    fn build(name: &str, params: &Params) -> Result<Op<Self>, Failure>;
    /// Reads one file into an item (the pipeline's decode scopes, inside the loader): by default
    /// with the `image` crate, which the native libraries read files with.
    fn read_file(path: &Path) -> Result<Self::Item, String> {
        let (rgb, _) = crate::decode::decode(path)?;
        Self::convert(rgb.width, rgb.height, rgb.data)
    }
    /// The decoder `read_file` uses, as reported with pipeline rows.
    fn decoder() -> String {
        crate::versions::decoder()
    }
}

/// What the worker does with loaded media, independent of the crate.
pub(crate) trait Session {
    fn prepare(&mut self, transform: &str, params: &Value) -> Result<String, Failure>;
    /// `prepare` with the transform's parameter draws seeded from `seed`.
    fn prepare_seeded(
        &mut self,
        transform: &str,
        params: &Value,
        seed: Option<u64>,
    ) -> Result<String, Failure> {
        match seed {
            Some(seed) => crate::draw::with_seed(seed, || self.prepare(transform, params)),
            None => self.prepare(transform, params),
        }
    }
    fn check(&mut self) -> Result<CheckResponse, Failure>;
    fn time(&mut self, req: TimeRequest) -> Result<TimeResponse, Failure>;
    /// The prepared transform once on every item, each output written as raw HWC uint8 bytes
    /// to `<dir>/<index>.u8` (the equivalence check).
    fn emit(&mut self, dir: &Path) -> Result<Vec<EmitOutput>, Failure> {
        let _ = dir;
        Err(failure(
            FailureKind::Unsupported,
            "this session has no emit: load images (not clips) first".to_string(),
        ))
    }
}

enum Prepared<A: Adapter> {
    Op(Op<A>),
    /// Returns the input reference through `black_box`: the harness overhead alone.
    Identity,
    Fault(Fault),
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Fault {
    Panic,
    Hang,
    Exit,
}

pub(crate) struct Loaded<A: Adapter> {
    items: Vec<A::Item>,
    prepared: Option<Prepared<A>>,
    test_faults: bool,
    /// A mapped fault that fires after this many `time` requests served normally.
    delayed: Option<(Fault, u32)>,
    /// Copy every item afresh before each `time` request ([`FRESH_BUFFERS_ENV`]).
    fresh_buffers: bool,
}

/// `AUGBENCH_FRESH_BUFFERS=1`: each `time` request first copies the loaded items into new
/// allocations, so no timed loop reuses the pages of the one before (the noise study's
/// `fresh-buffers` condition, docs/methodology.md).
pub(crate) const FRESH_BUFFERS_ENV: &str = "AUGBENCH_FRESH_BUFFERS";

impl<A: Adapter> Loaded<A> {
    pub fn new(items: Vec<A::Item>, test_faults: bool) -> Self {
        Loaded {
            items,
            prepared: None,
            test_faults,
            delayed: None,
            fresh_buffers: std::env::var(FRESH_BUFFERS_ENV).is_ok_and(|v| v == "1"),
        }
    }

    pub fn first_shape(&self) -> Vec<u64> {
        self.items
            .first()
            .map(|i| A::shape(i).to_vec())
            .unwrap_or_default()
    }
}

/// A real transform mapped to a fault by `AUGBENCH_TEST_FAULTS=kind:Transform[@library][+N]`
/// (comma-separated), so end-to-end tests can crash or hang the worker on a transform of the
/// registry: in every library or only `library`, at once or after `N` timed requests.
pub(crate) fn mapped_fault(library: &str, transform: &str) -> Option<(Fault, u32)> {
    let (kind, after) = mapped(library, transform)?;
    fault(&format!("__{kind}")).map(|f| (f, after))
}

/// The first `kind` (and delay) `AUGBENCH_TEST_FAULTS` maps to `transform` in `library`. Besides
/// the faults, `contract` fails `prepare` as a parameter the library ignored would, and `warn`
/// answers `prepare` with a warning to record.
pub(crate) fn mapped(library: &str, transform: &str) -> Option<(String, u32)> {
    let spec = std::env::var(augbench_host::fsutil::TEST_FAULTS_ENV).ok()?;
    spec.split(',').find_map(|entry| {
        let (kind, target) = entry.split_once(':')?;
        let (target, after) = match target.split_once('+') {
            Some((t, n)) => (t, n.parse().ok()?),
            None => (target, 0),
        };
        let (name, lib) = match target.split_once('@') {
            Some((t, l)) => (t, Some(l)),
            None => (target, None),
        };
        let applies = name == transform && lib.is_none_or(|l| l == library);
        applies.then(|| (kind.to_string(), after))
    })
}

/// `prepare`'s injected outcome for `transform`: a `contract` failure, or warnings to record.
pub(crate) fn injected_prepare(library: &str, transform: &str) -> Result<Vec<String>, Failure> {
    match mapped(library, transform).map(|(kind, _)| kind).as_deref() {
        Some("contract") => Err(failure(
            FailureKind::Contract,
            format!(
                "injected fault: {transform}: the library did not take the parameters as given"
            ),
        )),
        Some("warn") => Ok(vec![format!(
            "UserWarning: injected warning while building {transform}"
        )]),
        _ => Ok(Vec::new()),
    }
}

/// `AUGBENCH_TEST_FAULTS=extra<P>:Transform[@library]`: the transform is slowed by real extra
/// work, applied once more to a centred crop of P% of each item's area (the count and A/B gate
/// tests' known slowdown).
fn extra_work(library: &str, transform: &str) -> Option<f64> {
    share_of(library, transform, "extra")
}

/// The share P/100 of a `<kind><P>` fault mapped to `transform` (P in (0, 100]).
fn share_of(library: &str, transform: &str, kind: &str) -> Option<f64> {
    let (mapped, _) = mapped(library, transform)?;
    let percent: f64 = mapped.strip_prefix(kind)?.parse().ok()?;
    (percent > 0.0 && percent <= 100.0).then_some(percent / 100.0)
}

/// `AUGBENCH_TEST_FAULTS=level<P>:Transform[@library]`: a per-process speed level, made of real
/// extra work. Every other worker process of one run (counted in the order they prepare the
/// transform, so the levels are deterministic) applies the transform once more to P% of each
/// item's area; the others run it plain (the precision rule's out-of-reach test: processes that
/// settle at levels no number of processes averages to a narrow interval).
fn level_work(library: &str, transform: &str) -> Option<f64> {
    let fraction = share_of(library, transform, "level")?;
    (process_index(transform) % 2 == 1).then_some(fraction)
}

/// This worker's index among the processes of the same run (its parent) that prepared
/// `transform` with a level fault: the first free marker file in the temporary directory.
fn process_index(transform: &str) -> usize {
    let parent = std::os::unix::process::parent_id();
    let dir = std::env::temp_dir();
    (0..64)
        .find(|n| {
            let marker = dir.join(format!("augbench-level-{parent}-{transform}-{n}"));
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(marker)
                .is_ok()
        })
        .unwrap_or(0)
}

/// `op`, then `op` once more on a centred crop of `fraction` of the item's area (each item's
/// crop made once, on its first call).
fn with_extra_work<A: Adapter>(mut op: Op<A>, fraction: f64) -> Op<A> {
    let mut crops: std::collections::HashMap<usize, A::Item> = std::collections::HashMap::new();
    Box::new(move |item: &A::Item| {
        let out = op(item)?;
        let key = std::ptr::from_ref(item) as usize;
        let crop = match crops.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(crop_of::<A>(item, fraction)?),
        };
        black_box(op(crop)?);
        Ok(out)
    })
}

/// A centred crop of `fraction` of `item`'s area, as the crate's own item.
fn crop_of<A: Adapter>(item: &A::Item, fraction: f64) -> Result<A::Item, String> {
    let p = A::pixels(item);
    let side = fraction.sqrt();
    let w = ((p.width as f64 * side).round() as usize).clamp(1, p.width.max(1));
    let h = ((p.height as f64 * side).round() as usize).clamp(1, p.height.max(1));
    let (x0, y0) = ((p.width - w) / 2, (p.height - h) / 2);
    let row = p.width * p.channels;
    let mut hwc = Vec::with_capacity(w * h * p.channels);
    for y in y0..y0 + h {
        let start = y * row + x0 * p.channels;
        hwc.extend_from_slice(
            p.data
                .get(start..start + w * p.channels)
                .unwrap_or_default(),
        );
    }
    A::convert(w as u32, h as u32, hwc)
}

fn fault(name: &str) -> Option<Fault> {
    match name {
        "__panic" => Some(Fault::Panic),
        "__hang" => Some(Fault::Hang),
        "__exit" => Some(Fault::Exit),
        _ => None,
    }
}

impl<A: Adapter> Session for Loaded<A> {
    fn prepare(&mut self, transform: &str, params: &Value) -> Result<String, Failure> {
        self.prepared = None;
        self.delayed = None;
        let mapped = mapped_fault(A::LIBRARY, transform).filter(|_| self.test_faults);
        let prepared = if transform == "Identity" {
            Prepared::Identity
        } else if let Some(f) = fault(transform).filter(|_| self.test_faults) {
            Prepared::Fault(f)
        } else if let Some((f, 0)) = mapped {
            Prepared::Fault(f)
        } else {
            self.delayed = mapped;
            let op = A::build(transform, &Params::new(transform, params))?;
            let extra = self.test_faults.then(|| {
                extra_work(A::LIBRARY, transform).or_else(|| level_work(A::LIBRARY, transform))
            });
            match extra.flatten() {
                Some(fraction) => Prepared::Op(with_extra_work::<A>(op, fraction)),
                None => Prepared::Op(op),
            }
        };
        self.prepared = Some(prepared);
        Ok(transform.to_string())
    }

    fn check(&mut self) -> Result<CheckResponse, Failure> {
        let item = self.items.first().ok_or_else(no_items)?;
        let input = A::shape(item);
        let output = match self.prepared.as_mut().ok_or_else(not_prepared)? {
            Prepared::Op(op) => A::out_shape(&op(item).map_err(transform_error)?),
            Prepared::Identity | Prepared::Fault(_) => input,
        };
        Ok(CheckResponse {
            input_shape: input.to_vec(),
            output_shape: output.to_vec(),
            input_dtype: DTYPE.into(),
            output_dtype: DTYPE.into(),
            layout: LAYOUT.into(),
            output_contiguous: OUTPUT_CONTIGUOUS,
            force_share: FORCE_SHARE,
            targets_out: None,
        })
    }

    fn emit(&mut self, dir: &Path) -> Result<Vec<EmitOutput>, Failure> {
        let Some(Prepared::Op(op)) = self.prepared.as_mut() else {
            return Err(not_prepared());
        };
        let mut outputs = Vec::with_capacity(self.items.len());
        for (index, item) in self.items.iter().enumerate() {
            let out = op(item).map_err(transform_error)?;
            outputs.push(write_output(dir, index, A::out_pixels(&out))?);
        }
        Ok(outputs)
    }

    fn time(&mut self, req: TimeRequest) -> Result<TimeResponse, Failure> {
        if self.items.is_empty() {
            return Err(no_items());
        }
        match &mut self.delayed {
            Some((f, 0)) => {
                trigger(*f);
            }
            Some((_, n)) => *n -= 1,
            None => {}
        };
        // Kept alive through the loops, so the fresh copies land on pages of their own.
        let _previous = self
            .fresh_buffers
            .then(|| self.refresh_items())
            .transpose()?;
        let prepared = self.prepared.as_mut().ok_or_else(not_prepared)?;
        let items = &self.items;
        let start = (req.start % items.len() as u64) as usize;
        let count = req.count as usize;
        let mut loops = Loops::with_capacity(req.loops);
        for _ in 0..req.loops {
            if req.markers {
                crate::markers::before_loop();
            }
            let started = Loops::start();
            match prepared {
                Prepared::Op(op) => run_op::<A>(op, items, start, count)?,
                Prepared::Identity => run_identity::<A>(items, start, count),
                Prepared::Fault(f) => trigger(*f),
            };
            loops.stop(started);
            if req.markers {
                crate::markers::after_loop();
            }
        }
        Ok(loops.finish())
    }
}

impl<A: Adapter> Loaded<A> {
    /// Replaces every item with a fresh copy and returns the old ones (`fresh_buffers`).
    fn refresh_items(&mut self) -> Result<Vec<A::Item>, Failure> {
        let fresh = self
            .items
            .iter()
            .map(|item| {
                let px = A::pixels(item);
                A::convert(px.width as u32, px.height as u32, px.data.to_vec())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(transform_error)?;
        Ok(std::mem::replace(&mut self.items, fresh))
    }
}

/// One loop: the transform once on each of `count` items from `start`, wrapping around.
fn run_op<A: Adapter>(
    op: &mut Op<A>,
    items: &[A::Item],
    start: usize,
    count: usize,
) -> Result<(), Failure> {
    let mut i = start;
    for _ in 0..count {
        black_box(op(black_box(&items[i])).map_err(transform_error)?);
        i += 1;
        if i == items.len() {
            i = 0;
        }
    }
    Ok(())
}

fn run_identity<A: Adapter>(items: &[A::Item], start: usize, count: usize) {
    let mut i = start;
    for _ in 0..count {
        black_box(&items[i]);
        i += 1;
        if i == items.len() {
            i = 0;
        }
    }
}

#[allow(clippy::panic, reason = "a fault injected on purpose by the test hook")]
pub(crate) fn trigger(f: Fault) -> ! {
    match f {
        Fault::Panic => panic!("injected fault: __panic inside time"),
        Fault::Hang => loop {
            std::thread::sleep(Duration::from_secs(3600));
        },
        Fault::Exit => std::process::exit(3),
    }
}

/// Writes one output's pixels to `<dir>/<index>.u8`.
fn write_output(dir: &Path, index: usize, px: Pixels<'_>) -> Result<EmitOutput, Failure> {
    let path = dir.join(format!("{index}.u8"));
    std::fs::write(&path, px.data).map_err(|e| {
        failure(
            FailureKind::BadRequest,
            format!("cannot write {}: {e}", path.display()),
        )
    })?;
    Ok(EmitOutput {
        file: path.display().to_string(),
        shape: vec![px.height as u64, px.width as u64, px.channels as u64],
        ..EmitOutput::default()
    })
}

fn transform_error(e: String) -> Failure {
    failure(FailureKind::Exception, e)
}

fn no_items() -> Failure {
    failure(FailureKind::BadRequest, "no items loaded".to_string())
}

fn not_prepared() -> Failure {
    failure(
        FailureKind::BadRequest,
        "no transform prepared: send `prepare` first".to_string(),
    )
}

/// The pixels of an `image::RgbImage` (the `image` and `imageproc` adapters' item type).
pub(crate) fn rgb_pixels(img: &image::RgbImage) -> Pixels<'_> {
    Pixels {
        width: img.width() as usize,
        height: img.height() as usize,
        channels: 3,
        data: img.as_raw(),
    }
}

/// A transform this crate lacks.
pub(crate) fn unsupported(library: &str, name: &str, reason: &str) -> Failure {
    failure(
        FailureKind::Unsupported,
        format!("{library} does not support {name}: {reason}"),
    )
}

/// Pins rayon (used inside kornia-imgproc) to one thread, as micro runs require; returns the
/// thread count actually in effect (a pool built earlier in this process keeps its size).
pub(crate) fn pin_threads() -> usize {
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global();
    rayon::current_num_threads()
}
