//! Executes a whole plan: writes the resolved config, prepares the media once, starts each job's
//! worker (native binary or Python environment), runs the jobs under the plan's schedule
//! (interleaved across libraries, or one after another), and collects outcomes. A job that
//! cannot start is reported and the others still run.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use augbench_core::plan::{Job, Plan};
use augbench_core::results::ResultFile;
use augbench_core::{Backend, Matrix, RunConfig, Schedule, UsageError, memory, naming, policy};
use indicatif::MultiProgress;

use crate::client::WorkerCommand;
use crate::equivalence::Check;
use crate::fsutil::write_atomic;
use crate::job::{JobInput, JobOutcome};
use crate::media;
use crate::runner::run_job;
use crate::scheduler::run_interleaved;
use crate::threads::worker_env;

/// The outcome of one job.
pub enum JobStatus {
    Finished(ResultFile),
    Interrupted(ResultFile),
    Failed(JobFailure),
}

/// Why a job failed: the whole error chain in one message, and whether the user's input caused
/// it (a spec file or media to fix; see `RunReport::bad_input`).
#[derive(Debug, Clone)]
pub struct JobFailure {
    pub message: String,
    pub bad_input: bool,
}

impl JobFailure {
    /// A failure that is not the user's input to fix.
    pub fn message(message: String) -> Self {
        JobFailure {
            message,
            bad_input: false,
        }
    }

    pub(crate) fn of(e: &anyhow::Error) -> Self {
        JobFailure {
            message: format!("{e:#}"),
            bad_input: e.chain().any(|c| c.is::<UsageError>()),
        }
    }
}

impl std::fmt::Display for JobFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub struct RunReport {
    pub jobs: Vec<(Job, JobStatus)>,
    pub out_dir: PathBuf,
}

impl RunReport {
    pub fn interrupted(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, s)| matches!(s, JobStatus::Interrupted(_)))
    }

    /// The result files the run wrote: finished jobs and interrupted ones (their finished rows).
    pub fn written(&self) -> Vec<&ResultFile> {
        self.jobs
            .iter()
            .filter_map(|(_, s)| match s {
                JobStatus::Finished(f) | JobStatus::Interrupted(f) => Some(f),
                JobStatus::Failed(_) => None,
            })
            .collect()
    }

    pub fn failed(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, s)| matches!(s, JobStatus::Failed(_)))
    }

    /// Every job failed, each because of the user's input (bad media, a broken spec file):
    /// nothing was measured, and the fix is the user's (exit code 2).
    pub fn bad_input(&self) -> bool {
        !self.jobs.is_empty()
            && self
                .jobs
                .iter()
                .all(|(_, s)| matches!(s, JobStatus::Failed(f) if f.bad_input))
    }
}

/// Media for every job of the run: a scanned `data_dir` or the cached synthetic dataset; for
/// video, the clip folders of the clip cache.
pub struct Media {
    pub paths: Vec<String>,
    pub info: augbench_core::results::DatasetInfo,
    /// Video: one clip-cache entry per input (readable or skipped with its reason), in input order.
    pub clip_entries: Vec<media::clip_decode::Entry>,
}

pub fn prepare_media(cfg: &RunConfig, mp: &MultiProgress) -> anyhow::Result<Media> {
    let media = cfg.selection.media.unwrap_or(augbench_core::Media::Image);
    let n = cfg.data.num_items;
    let (mut items, mut info) = match &cfg.data.data_dir {
        Some(dir) => {
            let s = media::scan(dir, media, n)?;
            (s.items, s.info)
        }
        None => {
            let seed = cfg.data.synthetic_seed.unwrap_or(policy::SYNTH_SEED);
            let count = n.unwrap_or_else(|| policy::default_num_items(media));
            let d = media::synthetic_dataset(seed, count, media, Some(mp))?;
            (d.items, d.info)
        }
    };
    let mut clip_entries = Vec::new();
    if media == augbench_core::Media::Video {
        let clips = video_clips(cfg, &items, mp)?;
        info.skipped = clips.skipped().count() as u64;
        info.clips = Some(clips.info.clone());
        items = clips.clips;
        clip_entries = clips.entries;
    }
    let paths = items.iter().map(|p| p.display().to_string()).collect();
    Ok(Media {
        paths,
        info,
        clip_entries,
    })
}

/// The clip cache of the video inputs (decoding them on first use), its skips reported.
fn video_clips(
    cfg: &RunConfig,
    items: &[PathBuf],
    mp: &MultiProgress,
) -> anyhow::Result<media::ClipCache> {
    let clip_length = cfg.data.clip_length.unwrap_or(policy::DEFAULT_CLIP_LENGTH);
    let decoder = if items.iter().any(|p| media::scan::is_video_file(p)) {
        let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
        Some(media::Decoder::ensure(refresh, Some(mp))?)
    } else {
        None
    };
    let clips = media::clip_cache::build(items, clip_length, decoder.as_ref(), Some(mp))?;
    clips.report(mp);
    Ok(clips)
}

/// Writes `<out>/resolved_config.yaml`; feeding it back reproduces the plan.
pub fn write_resolved_config(cfg: &RunConfig) -> anyhow::Result<PathBuf> {
    let out = output_dir(cfg);
    let path = naming::resolved_config(&out);
    write_atomic(&path, cfg.to_yaml().as_bytes())?;
    Ok(path)
}

pub fn output_dir(cfg: &RunConfig) -> PathBuf {
    cfg.output
        .output_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(policy::DEFAULT_OUTPUT_DIR))
}

/// Runs every job of the plan in order; stops early when `stop` is raised (Ctrl-C).
/// With a `--spec` file, the one job of the spec's `LIBRARY` runs instead of the plan's jobs.
/// `check`: the run's equivalence check, recorded in each job's metadata.
pub fn execute(
    plan: &Plan,
    media: &Media,
    check: Option<&Check>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> RunReport {
    let plan = match with_spec(plan) {
        Ok(p) => p,
        Err(e) => {
            let why = JobFailure::of(&e);
            let jobs = plan
                .jobs
                .iter()
                .map(|j| (j.clone(), JobStatus::Failed(why.clone())))
                .collect();
            return RunReport {
                jobs,
                out_dir: output_dir(&plan.config),
            };
        }
    };
    let cfg = &plan.config;
    let jobs = match effective_schedule(&plan, mp) {
        Schedule::Interleaved => interleaved(&plan, media, check, mp, stop),
        Schedule::Sequential => sequential(&plan, media, check, mp, stop),
    };
    RunReport {
        jobs,
        out_dir: output_dir(cfg),
    }
}

/// The plan's schedule, except that pipeline runs whose loaders would not all fit in the memory
/// available now run one library after another (each result file records the schedule it ran).
fn effective_schedule(plan: &Plan, mp: &MultiProgress) -> Schedule {
    let pipeline = plan.config.selection.mode == Some(augbench_core::Mode::Pipeline);
    let available = crate::system::available_memory();
    match (plan.schedule, available) {
        (Schedule::Interleaved, Some(free)) if pipeline && plan.memory.held_at_once > free => {
            mp.suspend(|| {
                eprintln!(
                    "note: every library's loader at once needs about {}, more than the {} available; pipeline libraries run one after another (sequential)",
                    memory::human_bytes(plan.memory.held_at_once),
                    memory::human_bytes(free)
                )
            });
            Schedule::Sequential
        }
        (s, _) => s,
    }
}

/// One job after another, each on its own.
fn sequential(
    plan: &Plan,
    media: &Media,
    check: Option<&Check>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> Vec<(Job, JobStatus)> {
    let cfg = &plan.config;
    let mut jobs = Vec::new();
    for job in &plan.jobs {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let status = match worker_command(cfg, job, mp) {
            Err(e) => JobStatus::Failed(JobFailure::of(&e)),
            Ok(command) => {
                let input = job_input(cfg, job, command, media, check);
                status_of(run_job(&input, mp, stop))
            }
        };
        jobs.push((job.clone(), status));
    }
    jobs
}

/// Every job at once, transform by transform in paired rounds (`scheduler`). A job whose worker
/// cannot be had fails alone.
fn interleaved(
    plan: &Plan,
    media: &Media,
    check: Option<&Check>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> Vec<(Job, JobStatus)> {
    let cfg = &plan.config;
    warn_memory(plan, mp);
    let mut failed = Vec::new();
    let mut inputs = Vec::new();
    for job in &plan.jobs {
        match worker_command(cfg, job, mp) {
            Ok(command) => inputs.push(job_input(cfg, job, command, media, check)),
            Err(e) => failed.push((job.clone(), JobStatus::Failed(JobFailure::of(&e)))),
        }
    }
    let sentinel = native_command(SENTINEL_LIBRARY).map(|mut c| {
        c.label = "drift sentinel".into();
        c
    });
    let outcomes = run_interleaved(&inputs, sentinel, mp, stop);
    let mut jobs: Vec<(Job, JobStatus)> = inputs
        .iter()
        .zip(outcomes)
        .map(|(input, o)| (input.job.clone(), status_of(o)))
        .collect();
    jobs.extend(failed);
    jobs
}

/// Any native library's worker serves the sentinel kernel; this one is the one it starts.
const SENTINEL_LIBRARY: &str = "image";

fn job_input<'a>(
    cfg: &'a RunConfig,
    job: &'a Job,
    command: WorkerCommand,
    media: &'a Media,
    check: Option<&Check>,
) -> JobInput<'a> {
    JobInput {
        cfg,
        job,
        command,
        paths: &media.paths,
        dataset: media.info.clone(),
        equivalence: check.map(|c| crate::equivalence::in_run::summary(c, &job.library)),
    }
}

fn status_of(outcome: anyhow::Result<JobOutcome>) -> JobStatus {
    match outcome {
        Ok(o) if o.interrupted => JobStatus::Interrupted(o.results),
        Ok(o) => JobStatus::Finished(o.results),
        Err(e) => JobStatus::Failed(JobFailure::of(&e)),
    }
}

/// The interleaved schedule holds every library's media at once: say so when the plan's
/// estimate exceeds the memory available now.
fn warn_memory(plan: &Plan, mp: &MultiProgress) {
    let Some(available) = crate::system::available_memory() else {
        return;
    };
    let need = plan.memory.held_at_once;
    if need > available {
        mp.suspend(|| {
            eprintln!(
                "warning: the interleaved schedule holds every library's decoded media at once (about {}), more than the {} available; use fewer items (--num-items) or `schedule: sequential`",
                memory::human_bytes(need),
                memory::human_bytes(available)
            )
        });
    }
}

/// The plan to execute: `plan` itself, or with `selection.spec` the plan of the spec file's
/// `LIBRARY` alone (its transforms come from the worker's `hello`).
pub fn with_spec(plan: &Plan) -> anyhow::Result<Plan> {
    let Some(path) = &plan.config.selection.spec else {
        return Ok(plan.clone());
    };
    let library = spec_library(path)?;
    let mut cfg = plan.config.clone();
    cfg.selection.libraries = Some(vec![library]);
    Ok(augbench_core::plan::build(&cfg))
}

/// The `LIBRARY = "<name>"` line of a spec file, read without running Python so the right
/// environment can be chosen; the worker validates the whole file before any timing.
pub fn spec_library(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError::new(
            format!("cannot read spec file {}: {e}", path.display()),
            "a spec file is Python source saved as UTF-8; check the path given to --spec",
        )
    })?;
    let python: Vec<String> = Matrix::get()
        .libraries
        .iter()
        .filter(|l| l.backend == Backend::PythonWorker)
        .map(|l| l.name.clone())
        .collect();
    let at = |line: usize, msg: String| {
        UsageError::new(
            format!("spec file {} line {line}: {msg}", path.display()),
            format!("set LIBRARY to one of {}", python.join(", ")),
        )
    };
    for (i, line) in text.lines().enumerate() {
        let Some(value) = line
            .strip_prefix("LIBRARY")
            .and_then(|r| r.trim_start().strip_prefix('='))
        else {
            continue;
        };
        let value = value.trim();
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'');
        let name = quote.and_then(|q| value[1..].split(q).next());
        return match name {
            Some(n) if python.iter().any(|p| p == n) => Ok(n.to_string()),
            Some(n) => Err(at(i + 1, format!("LIBRARY `{n}` is not a Python library")).into()),
            None => Err(at(i + 1, "LIBRARY must be a string literal".into()).into()),
        };
    }
    Err(UsageError::new(
        format!("spec file {}: LIBRARY is not defined", path.display()),
        format!(
            "add a line such as LIBRARY = \"{}\" (one of {})",
            python.first().map_or("", String::as_str),
            python.join(", ")
        ),
    )
    .into())
}

/// How to start the worker of `job`: this binary for native crates, the group's Python env otherwise.
pub fn worker_command(
    cfg: &RunConfig,
    job: &Job,
    mp: &MultiProgress,
) -> anyhow::Result<WorkerCommand> {
    let policy = cfg
        .execution
        .thread_policy
        .unwrap_or(policy::default_thread_policy(job.mode));
    let mut cmd = match job.backend {
        Backend::NativeWorker => native_command(&job.adapter)?,
        Backend::PythonWorker => {
            let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
            let env = match &job.variant {
                Some(v) => crate::env::ensure_variant(&job.env_group, v, Some(mp))?,
                None => crate::env::ensure(&job.env_group, refresh, Some(mp))?,
            };
            crate::env::python_worker_command(&env, &job.adapter, cfg.selection.spec.as_deref())?
        }
        Backend::DaliPipeline => anyhow::bail!(
            "{} runs only as a CUDA pipeline backend, which this build does not drive yet",
            job.library
        ),
    };
    cmd.env.extend(worker_env(policy));
    Ok(cmd)
}

pub(crate) fn native_command(library: &str) -> anyhow::Result<WorkerCommand> {
    let exe =
        std::env::current_exe().context("locating the augbench binary for the native worker")?;
    // Rebuilt while running: Linux reports "<path> (deleted)"; the running image is still there.
    let self_exe = Path::new("/proc/self/exe");
    let exe = if exe.to_string_lossy().ends_with(" (deleted)") && self_exe.exists() {
        self_exe.to_path_buf()
    } else {
        exe
    };
    Ok(WorkerCommand {
        program: exe,
        args: vec!["worker".into(), "--library".into(), library.into()],
        env: Vec::new(),
        label: format!("{library} worker"),
    })
}

/// The path a job's results are written to, relative to the run's output folder.
pub fn relative_to<'a>(path: &'a Path, base: &Path) -> &'a Path {
    path.strip_prefix(base).unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("my_spec.py");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn library_is_read_from_the_spec_file() {
        let (_d, p) = spec("import x\nLIBRARY = 'pillow'  # mine\nTRANSFORMS = []\n");
        assert_eq!(spec_library(&p).unwrap(), "pillow");
    }

    #[test]
    fn a_missing_or_wrong_library_names_the_file_and_line() {
        let (_d, p) = spec("TRANSFORMS = []\n");
        let e = format!("{:#}", spec_library(&p).unwrap_err());
        assert!(e.contains("my_spec.py: LIBRARY is not defined"), "{e}");
        let (_d, p) = spec("\nLIBRARY = \"image\"\n");
        let e = format!("{:#}", spec_library(&p).unwrap_err());
        assert!(e.contains("my_spec.py line 2: LIBRARY `image`"), "{e}");
        let (_d, p) = spec("LIBRARY = NAME\n");
        let e = format!("{:#}", spec_library(&p).unwrap_err());
        assert!(
            e.contains("line 1: LIBRARY must be a string literal"),
            "{e}"
        );
    }
}
