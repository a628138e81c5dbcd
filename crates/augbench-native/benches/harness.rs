//! Engine benchmarks (issue 3, item 7): figures, not timed tests.
//! (a) Harness overhead: `Identity` timed inside a real native worker process (the worker's own
//!     clock, and the coordinator's wall time per `time` request) against a bare in-process loop
//!     over the same decoded items with the same `black_box` pattern.
//! (b) Protocol round trip: `hello` to the native worker and to the Pillow worker, with p50/p95/p99.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use augbench_core::{Device, Matrix, Media, policy};
use augbench_host::child::CommandLine;
use augbench_protocol::client::Worker;
use augbench_protocol::protocol::{
    CheckResponse, HelloResponse, LoadRequest, LoadResponse, PrepareRequest, PrepareResponse,
    Request, TimeRequest, TimeResponse,
};
use criterion::{BenchmarkId, Criterion, Throughput};
use image::RgbImage;

/// Set on this bench binary to make it serve the worker protocol (`augbench_native::serve`, the
/// code behind `augbench worker`); used as the native worker when `AUGBENCH_BIN` is not given.
const SELF_WORKER_ENV: &str = "AUGBENCH_BENCH_AS_WORKER";
/// A built `augbench` binary to spawn as `augbench worker --library image` (absolute path).
const BIN_ENV: &str = "AUGBENCH_BIN";
/// Optional file to receive the round-trip percentiles as JSON.
const OUT_ENV: &str = "AUGBENCH_BENCH_OUT";
const NATIVE_LIBRARY: &str = "image";
const PYTHON_LIBRARY: &str = "pillow";
/// Synthetic JPEGs loaded by both sides.
const ITEMS: u64 = 20;
/// Loops per `time` request for the coordinator-side wall time.
const WALL_LOOPS: [u64; 3] = [1, 100, 10_000];
/// Cap on `loops` per request when criterion asks for many iterations (keeps replies small).
const MAX_LOOPS_PER_REQUEST: u64 = 10_000;
/// `hello` round trips sampled for the percentiles (a handful in `cargo test` mode).
const RTT_SAMPLES: usize = 2_000;
const RTT_SAMPLES_TEST_MODE: usize = 10;

fn main() -> anyhow::Result<()> {
    if let Ok(library) = std::env::var(SELF_WORKER_ENV) {
        let (stdin, stdout) = (std::io::stdin().lock(), std::io::stdout().lock());
        return augbench_native::serve(&library, stdin, stdout);
    }
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let fx = Fixture::new()?;
    let native = native_command()?;
    let mut worker = identity_worker(&native, &fx.paths)?;
    bench_identity(&mut c, &fx.items, &mut worker);
    bench_wall(&mut c, &mut worker);
    worker.shutdown();
    let samples = if bench_mode {
        RTT_SAMPLES
    } else {
        RTT_SAMPLES_TEST_MODE
    };
    let mut rtts = vec![bench_hello(&mut c, "native", &native, samples)?];
    match python_command()? {
        Some(py) => rtts.push(bench_hello(&mut c, "python", &py, samples)?),
        None => eprintln!(
            "skipping the Python round trip: the `{PYTHON_LIBRARY}` environment is not built (run `augbench env build`)"
        ),
    }
    c.final_summary();
    report_rtts(&rtts)
}

/// The synthetic dataset on disk (for the worker) and decoded in-process (for the bare loop).
struct Fixture {
    _dir: tempfile::TempDir,
    paths: Vec<String>,
    items: Vec<RgbImage>,
}

impl Fixture {
    fn new() -> anyhow::Result<Fixture> {
        let dir = tempfile::tempdir().context("creating a temp folder for the dataset")?;
        let out = dir.path().join("synth");
        let ds =
            augbench_media::write_synthetic(&out, policy::SYNTH_SEED, ITEMS, Media::Image, None)?;
        let items = ds
            .items
            .iter()
            .map(|p| decode(p))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let paths = ds.items.iter().map(|p| p.display().to_string()).collect();
        Ok(Fixture {
            _dir: dir,
            paths,
            items,
        })
    }
}

fn decode(path: &Path) -> anyhow::Result<RgbImage> {
    let img = image::open(path).with_context(|| format!("decoding {}", path.display()))?;
    Ok(img.to_rgb8())
}

fn timeout() -> Duration {
    Duration::from_secs_f64(policy::REQUEST_TIMEOUT_SEC)
}

/// `augbench worker --library image` when `AUGBENCH_BIN` is set, else this binary as the worker.
fn native_command() -> anyhow::Result<CommandLine> {
    Ok(match std::env::var_os(BIN_ENV) {
        Some(bin) => augbench_exec::worker::native_worker_command(bin.into(), NATIVE_LIBRARY),
        None => CommandLine {
            program: std::env::current_exe().context("locating the bench binary")?,
            args: Vec::new(),
            env: vec![(SELF_WORKER_ENV.into(), NATIVE_LIBRARY.into())],
            label: format!("{NATIVE_LIBRARY} worker"),
        },
    })
}

/// The Pillow worker, started as `augbench run` starts it; `None` when its env is not built.
fn python_command() -> anyhow::Result<Option<CommandLine>> {
    let group = Matrix::get()
        .library(PYTHON_LIBRARY)
        .map(|l| l.env_group.clone())
        .context("pillow is missing from the library matrix")?;
    let built = augbench_env::list()?
        .into_iter()
        .find(|e| e.group == group && e.built);
    built
        .map(|env| augbench_exec::worker::python_worker_command(&env, PYTHON_LIBRARY, None))
        .transpose()
}

/// A native worker with the dataset loaded and `Identity` prepared and checked.
fn identity_worker(cmd: &CommandLine, paths: &[String]) -> anyhow::Result<Worker> {
    let mut w = Worker::start(cmd, policy::STDERR_TAIL_LINES)?;
    let _: HelloResponse = w.call(&Request::Hello, timeout())?;
    let load = Request::Load(LoadRequest {
        media: Media::Image.to_string(),
        paths: paths.to_vec(),
        channels: policy::DEFAULT_CHANNELS,
        clip_length: policy::DEFAULT_CLIP_LENGTH,
        device: Device::Cpu.to_string(),
        pipeline: false,
        preload: None,
        targets: None,
    });
    let loaded: LoadResponse = w.call(&load, timeout())?;
    anyhow::ensure!(loaded.count == ITEMS, "worker loaded {}", loaded.count);
    let prepare = Request::Prepare(PrepareRequest {
        transform: "Identity".into(),
        params: serde_json::json!({}),
        device: Device::Cpu.to_string(),
        batch: None,
        seed: None,
    });
    let _: PrepareResponse = w.call(&prepare, timeout())?;
    let _: CheckResponse = w.call(&Request::Check, timeout())?;
    Ok(w)
}

/// (a) ns per item: bare loop, bare loop through a boxed op (the worker's path for real
/// transforms), and `Identity` on the worker's own clock.
fn bench_identity(c: &mut Criterion, items: &[RgbImage], worker: &mut Worker) {
    let mut g = c.benchmark_group("harness_identity");
    g.throughput(Throughput::Elements(ITEMS));
    g.bench_function("bare", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| identity_loop(items)).sum())
    });
    let mut op: DynOp = Box::new(|img: &RgbImage| Ok(img.width()));
    g.bench_function("bare_boxed_op", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| op_loop(&mut op, items)).sum())
    });
    g.bench_function("worker_clock", |b| {
        b.iter_custom(|iters| worker_clock(worker, iters))
    });
    g.finish();
}

/// One loop as the worker's `Identity` runs it: each item once, through `black_box`.
fn identity_loop(items: &[RgbImage]) -> Duration {
    let mut i = 0;
    let t0 = Instant::now();
    for _ in 0..items.len() {
        black_box(&items[i]);
        i += 1;
        if i == items.len() {
            i = 0;
        }
    }
    t0.elapsed()
}

type DynOp = Box<dyn FnMut(&RgbImage) -> Result<u32, String>>;

/// One loop as the worker runs a real transform: a boxed op per item, its output black-boxed.
fn op_loop(op: &mut DynOp, items: &[RgbImage]) -> Duration {
    let mut i = 0;
    let t0 = Instant::now();
    for _ in 0..items.len() {
        if let Err(e) = op(black_box(&items[i])).map(black_box) {
            panic!("identity op failed: {e}");
        }
        i += 1;
        if i == items.len() {
            i = 0;
        }
    }
    t0.elapsed()
}

fn time_request(loops: u64) -> Request {
    Request::Time(TimeRequest {
        start: 0,
        count: ITEMS,
        loops,
        markers: false,
    })
}

/// The sum of the worker's per-loop times over `loops` loops (protocol cost excluded).
fn worker_clock(worker: &mut Worker, loops: u64) -> Duration {
    let mut left = loops;
    let mut total = 0u64;
    while left > 0 {
        let n = left.min(MAX_LOOPS_PER_REQUEST);
        let reply: TimeResponse = worker
            .call(&time_request(n), timeout())
            .unwrap_or_else(|e| panic!("{e}"));
        total += reply.ns.iter().sum::<u64>();
        left -= n;
    }
    Duration::from_nanos(total)
}

/// (a) Coordinator-side wall time of a whole `time` request, per item of all its loops.
fn bench_wall(c: &mut Criterion, worker: &mut Worker) {
    let mut g = c.benchmark_group("harness_wall");
    for loops in WALL_LOOPS {
        g.throughput(Throughput::Elements(ITEMS * loops));
        g.bench_with_input(BenchmarkId::new("time_request", loops), &loops, |b, &l| {
            b.iter_custom(|iters| (0..iters).map(|_| wall_once(worker, l)).sum())
        });
    }
    g.finish();
}

fn wall_once(worker: &mut Worker, loops: u64) -> Duration {
    let t0 = Instant::now();
    let reply: Result<TimeResponse, _> = worker.call(&time_request(loops), timeout());
    let elapsed = t0.elapsed();
    if let Err(e) = reply {
        panic!("{e}");
    }
    elapsed
}

/// Round-trip percentiles of one worker, in microseconds.
struct Rtt {
    worker: &'static str,
    samples: usize,
    p50: f64,
    p95: f64,
    p99: f64,
}

/// (b) `hello` round trips: a criterion bench, then `samples` timed one by one for percentiles.
fn bench_hello(
    c: &mut Criterion,
    name: &'static str,
    cmd: &CommandLine,
    samples: usize,
) -> anyhow::Result<Rtt> {
    let mut w = Worker::start(cmd, policy::STDERR_TAIL_LINES)?;
    hello(&mut w);
    c.bench_function(&format!("hello_rtt/{name}"), |b| b.iter(|| hello(&mut w)));
    let mut us: Vec<f64> = (0..samples)
        .map(|_| {
            let t0 = Instant::now();
            hello(&mut w);
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    w.shutdown();
    us.sort_by(f64::total_cmp);
    let p = |q| augbench_stats::percentile_sorted(&us, q);
    Ok(Rtt {
        worker: name,
        samples,
        p50: p(50.0),
        p95: p(95.0),
        p99: p(99.0),
    })
}

fn hello(w: &mut Worker) -> HelloResponse {
    w.call(&Request::Hello, timeout())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Prints the percentiles and, with `AUGBENCH_BENCH_OUT`, writes them as JSON (atomically).
fn report_rtts(rtts: &[Rtt]) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    for r in rtts {
        println!(
            "hello round trip ({}, {} samples): p50 {:.1} µs, p95 {:.1} µs, p99 {:.1} µs",
            r.worker, r.samples, r.p50, r.p95, r.p99
        );
        rows.push(serde_json::json!({
            "worker": r.worker, "samples": r.samples,
            "p50_us": r.p50, "p95_us": r.p95, "p99_us": r.p99,
        }));
    }
    let Some(out) = std::env::var_os(OUT_ENV) else {
        return Ok(());
    };
    let text = serde_json::to_string_pretty(&serde_json::json!({ "hello_rtt": rows }))?;
    augbench_host::fsutil::write_atomic(Path::new(&out), text.as_bytes())
}
