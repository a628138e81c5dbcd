//! Executes a whole plan: writes the resolved config, prepares the media once, starts each job's
//! worker (native binary or Python environment), runs the jobs in order, and collects outcomes.
//! A job that cannot start is reported and the others still run.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use augbench_core::plan::{Job, Plan};
use augbench_core::results::ResultFile;
use augbench_core::{Backend, RunConfig, naming, policy};
use indicatif::MultiProgress;

use crate::client::WorkerCommand;
use crate::fsutil::write_atomic;
use crate::media;
use crate::runner::{JobInput, run_job};
use crate::threads::worker_env;

/// The outcome of one job.
pub enum JobStatus {
    Finished(ResultFile),
    Interrupted(ResultFile),
    Failed(String),
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

    pub fn failed(&self) -> bool {
        self.jobs
            .iter()
            .any(|(_, s)| matches!(s, JobStatus::Failed(_)))
    }
}

/// Media for every job of the run: a scanned `data_dir` or the cached synthetic dataset.
pub struct Media {
    pub paths: Vec<String>,
    pub info: augbench_core::results::DatasetInfo,
}

pub fn prepare_media(cfg: &RunConfig, mp: &MultiProgress) -> anyhow::Result<Media> {
    let media = cfg.selection.media.unwrap_or(augbench_core::Media::Image);
    let n = cfg.data.num_items;
    let (items, info) = match &cfg.data.data_dir {
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
    let paths = items.iter().map(|p| p.display().to_string()).collect();
    Ok(Media { paths, info })
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
pub fn execute(plan: &Plan, media: &Media, mp: &MultiProgress, stop: &AtomicBool) -> RunReport {
    let cfg = &plan.config;
    let mut jobs = Vec::new();
    for job in &plan.jobs {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        let status = match worker_command(cfg, job, mp) {
            Err(e) => JobStatus::Failed(format!("{e:#}")),
            Ok(command) => {
                let input = JobInput {
                    cfg,
                    job,
                    command,
                    paths: &media.paths,
                    dataset: media.info.clone(),
                };
                match run_job(&input, mp, stop) {
                    Ok(o) if o.interrupted => JobStatus::Interrupted(o.results),
                    Ok(o) => JobStatus::Finished(o.results),
                    Err(e) => JobStatus::Failed(format!("{e:#}")),
                }
            }
        };
        jobs.push((job.clone(), status));
    }
    RunReport {
        jobs,
        out_dir: output_dir(cfg),
    }
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
        Backend::NativeWorker => native_command(&job.library)?,
        Backend::PythonWorker => {
            let refresh = cfg.execution.refresh_requirements.unwrap_or(true);
            let env = crate::env::ensure(&job.env_group, refresh, Some(mp))?;
            crate::env::python_worker_command(&env, &job.library, cfg.selection.spec.as_deref())?
        }
        Backend::DaliPipeline => anyhow::bail!(
            "{} runs only as a CUDA pipeline backend, which this build does not drive yet",
            job.library
        ),
    };
    cmd.env.extend(worker_env(policy));
    Ok(cmd)
}

fn native_command(library: &str) -> anyhow::Result<WorkerCommand> {
    let exe =
        std::env::current_exe().context("locating the augbench binary for the native worker")?;
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
