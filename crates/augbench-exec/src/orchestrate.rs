//! Executes a whole plan: writes the resolved config, prepares the media once, starts each job's
//! worker (native binary or Python environment), runs the jobs under the plan's schedule
//! (interleaved across libraries, or one after another), and collects outcomes. A job that
//! cannot start is reported and the others still run.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use augbench_core::plan::{Job, Plan};
use augbench_core::{Backend, Matrix, RunConfig, Schedule, UsageError, memory, naming, policy};
use indicatif::MultiProgress;

use augbench_core::naming::output_dir;

use crate::counts::CountRun;
use crate::equivalence::Check;
use crate::job::{JobInput, JobOutcome};
use crate::runner::run_job;
use crate::scheduler::run_interleaved;
use crate::worker::{self, Role, Target};
use augbench_host::child::CommandLine;
use augbench_host::fsutil::write_atomic;

pub use crate::outcome::{JobFailure, JobStatus, RunReport};
pub use crate::run_media::{Media, prepare_media};

/// Writes `<out>/resolved_config.yaml`; feeding it back reproduces the plan.
pub fn write_resolved_config(cfg: &RunConfig) -> anyhow::Result<PathBuf> {
    let out = output_dir(cfg);
    let path = naming::resolved_config(&out);
    write_atomic(&path, cfg.to_yaml().as_bytes())?;
    Ok(path)
}

/// Runs every job of the plan (a spec file's plan already narrowed by `spec_config`); stops
/// early when `stop` is raised (Ctrl-C). `check`: the run's equivalence check, recorded in each
/// job's metadata.
pub fn execute(
    plan: &Plan,
    media: &Media,
    check: Option<&Check>,
    mp: &MultiProgress,
    stop: &AtomicBool,
) -> RunReport {
    let cfg = &plan.config;
    let jobs = match effective_schedule(plan, mp) {
        Schedule::Interleaved => interleaved(plan, media, check, mp, stop),
        Schedule::Sequential => sequential(plan, media, check, mp, stop),
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
    let available = augbench_host::system::available_memory();
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
    let counting = match CountRun::of(cfg) {
        Ok(c) => c,
        Err(e) => return failed_all(plan, &e),
    };
    let mut jobs = Vec::new();
    for job in &plan.jobs {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let status = match crate::time_split::part("environments", || worker_command(cfg, job, mp))
        {
            Err(e) => JobStatus::Failed(JobFailure::of(&e)),
            Ok(command) => match counting.as_ref() {
                Some(c) => {
                    let input = job_input(cfg, job, c.wrap(&command), media, check);
                    status_of(c.run_job(&input, mp, stop))
                }
                None => {
                    let input = job_input(cfg, job, command, media, check);
                    status_of(run_job(&input, mp, stop))
                }
            },
        };
        jobs.push((job.clone(), status));
    }
    jobs
}

/// Every job of the plan failed for the same reason.
fn failed_all(plan: &Plan, e: &anyhow::Error) -> Vec<(Job, JobStatus)> {
    let why = JobFailure::of(e);
    plan.jobs
        .iter()
        .map(|j| (j.clone(), JobStatus::Failed(why.clone())))
        .collect()
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
        match crate::time_split::part("environments", || worker_command(cfg, job, mp)) {
            Ok(command) => inputs.push(job_input(cfg, job, command, media, check)),
            Err(e) => failed.push((job.clone(), JobStatus::Failed(JobFailure::of(&e)))),
        }
    }
    let sentinel = worker::sentinel_command();
    let outcomes = run_interleaved(&inputs, sentinel, mp, stop);
    let mut jobs: Vec<(Job, JobStatus)> = inputs
        .iter()
        .zip(outcomes)
        .map(|(input, o)| (input.job.clone(), status_of(o)))
        .collect();
    jobs.extend(failed);
    jobs
}

fn job_input<'a>(
    cfg: &'a RunConfig,
    job: &'a Job,
    command: CommandLine,
    media: &'a Media,
    check: Option<&Check>,
) -> JobInput<'a> {
    let targets = media.targets.as_ref().filter(|_| job.targets.is_some());
    JobInput {
        cfg,
        job,
        command,
        paths: targets.map_or(&media.paths, |t| &t.paths),
        dataset: media.info.clone(),
        equivalence: check.map(|c| crate::equivalence::in_run::summary(c, &job.library)),
        targets,
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
    let Some(available) = augbench_host::system::available_memory() else {
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

/// The config to plan: `cfg` itself, or with `selection.spec` the config of the spec file's
/// `LIBRARY` alone (its transforms come from the worker's `hello`). Checked before any media is
/// prepared or worker started.
pub fn spec_config(cfg: &RunConfig) -> anyhow::Result<RunConfig> {
    let Some(path) = &cfg.selection.spec else {
        return Ok(cfg.clone());
    };
    let library = spec_library(path)?;
    let mut cfg = cfg.clone();
    cfg.selection.libraries = Some(vec![library]);
    Ok(cfg)
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
    if let Some((line, name)) = library_line(&text) {
        return match name {
            Some(n) if python.iter().any(|p| p == n) => Ok(n.to_string()),
            Some(n) => Err(at(line, format!("LIBRARY `{n}` is not a Python library")).into()),
            None => Err(at(line, "LIBRARY must be a string literal".into()).into()),
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

/// The `LIBRARY` line of a spec file's source: its 1-based number and the quoted name on it
/// (`None`: not a string literal). The rule is shared with the Python worker
/// (`spec_file.library_line`); `python/tests/fixtures/spec_library_cases.json` states it, and
/// both sides test against those cases.
pub fn library_line(text: &str) -> Option<(usize, Option<&str>)> {
    text.lines().enumerate().find_map(|(i, line)| {
        let value = line
            .strip_prefix("LIBRARY")
            .and_then(|r| r.trim_start().strip_prefix('='))?
            .trim();
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'');
        Some((i + 1, quote.and_then(|q| value[1..].split(q).next())))
    })
}

/// How to start the worker of `job` under the run's thread policy (`crate::worker`).
pub fn worker_command(
    cfg: &RunConfig,
    job: &Job,
    mp: &MultiProgress,
) -> anyhow::Result<CommandLine> {
    let threads = cfg
        .execution
        .thread_policy
        .unwrap_or(policy::default_thread_policy(job.mode));
    let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
    let spec = cfg.selection.spec.as_deref();
    let role = Role::Transforms { spec };
    worker::command(Target::of_job(job), role, threads, refresh, mp)
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
    fn the_library_line_follows_the_rule_shared_with_the_python_worker() {
        let text = include_str!("../../../python/tests/fixtures/spec_library_cases.json");
        let cases: serde_json::Value = serde_json::from_str(text).unwrap();
        let cases = cases["cases"].as_array().unwrap();
        assert!(cases.len() >= 10);
        for case in cases {
            let source = case["source"].as_str().unwrap();
            let want = case["line"]
                .as_u64()
                .map(|l| (l as usize, case["name"].as_str()));
            assert_eq!(library_line(source), want, "{}", case["why"]);
        }
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
