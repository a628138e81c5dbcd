//! `augbench run`: resolves the config, writes it next to the results, executes the plan with
//! progress bars, appends benchmark cells, and prints the summary table. Ctrl-C stops after the
//! transform in flight; everything finished is already on disk and `--resume` continues. One run
//! at a time per output folder (`run_lock`).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use augbench_core::{Media, Mode, policy};
use augbench_exec::orchestrate::{self, JobStatus, RunReport};
use augbench_exec::run_lock::RunLock;
use indicatif::MultiProgress;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    if cfg.is_cloud() {
        return Err(augbench_core::UsageError::new(
            format!("{} describes a cloud run, and this build runs locally only", args.config.config.display()),
            "`augbench plan` shows its jobs; to run them here, drop the `cloud:` section and set `data.data_dir`",
        )
        .into());
    }
    refuse_unmeasurable_pipeline(&cfg, &args.config.config)?;
    warn_oversubscribed_workers(&cfg);
    warn_if_busy();
    let plan = augbench_core::plan::build(&cfg);
    // Held until `run` returns, whichever way (its guard releases the folder on drop).
    let lock = RunLock::acquire(&orchestrate::output_dir(&cfg))?;
    if let Some(note) = &lock.note {
        eprintln!("{note}");
    }
    let resolved = orchestrate::write_resolved_config(&cfg)?;
    eprintln!(
        "augbench: {} jobs; resolved config: {}",
        plan.jobs.len(),
        resolved.display()
    );
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // A second Ctrl-C falls through to the default handler only if this one cannot be installed.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let mp = MultiProgress::new();
    let media = orchestrate::prepare_media(&cfg, &mp)?;
    let report = orchestrate::execute(&plan, &media, &mp, &stop);
    super::run_cells::append(&cfg, &report)?;
    print_summary(
        &report,
        &plan.jobs,
        cfg.selection.media.unwrap_or(Media::Image),
    );
    Ok(exit_code(&report))
}

fn print_summary(report: &RunReport, jobs: &[augbench_core::plan::Job], media: Media) {
    let files: Vec<_> = report
        .jobs
        .iter()
        .filter_map(|(_, s)| match s {
            JobStatus::Finished(f) | JobStatus::Interrupted(f) => Some(f),
            JobStatus::Failed(_) => None,
        })
        .collect();
    let order = jobs
        .first()
        .map(|j| j.transforms.clone())
        .unwrap_or_default();
    let noun = if media == Media::Video {
        "videos/s"
    } else {
        "img/s"
    };
    // A pipeline number is only meaningful with its loader shape: say it in the column head.
    let unit = match report.jobs.iter().find_map(|(_, s)| match s {
        JobStatus::Finished(f) | JobStatus::Interrupted(f) => f.metadata.pipeline.as_ref(),
        JobStatus::Failed(_) => None,
    }) {
        Some(p) => format!("{noun} (pipeline, w={}, b={})", p.workers, p.batch_size),
        None => noun.to_string(),
    };
    let unit = unit.as_str();
    if !files.is_empty() {
        println!("\n{}", augbench_exec::summary::table(&files, &order, unit));
    }
    let counts = augbench_exec::summary::status_counts(&files);
    let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!("transforms: {}", counts.join(", "));
    if let Some(line) = augbench_exec::summary::schedule_line(&files) {
        println!("{line}");
    }
    for (job, status) in &report.jobs {
        match status {
            JobStatus::Finished(_) => println!("  {} → {}", job.library, job.output_file.display()),
            JobStatus::Interrupted(_) => println!(
                "  {} → {} (interrupted; rerun with --resume)",
                job.library,
                job.output_file.display()
            ),
            JobStatus::Failed(e) => eprintln!("  {} FAILED: {e}", job.library),
        }
    }
}

/// Never write a result under a label it was not measured with: pipeline mode measures the RGB
/// image recipe; video and multichannel loaders do not exist yet.
fn refuse_unmeasurable_pipeline(
    cfg: &augbench_core::RunConfig,
    file: &std::path::Path,
) -> Result<(), augbench_core::UsageError> {
    if cfg.selection.mode != Some(Mode::Pipeline) {
        return Ok(());
    }
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let channels = cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS);
    if media == Media::Image && channels == policy::DEFAULT_CHANNELS {
        return Ok(());
    }
    Err(augbench_core::UsageError::new(
        format!(
            "{} asks for a {channels}-channel {media} pipeline, and this build measures pipeline mode for RGB images only",
            file.display()
        ),
        "use `mode: micro` for this scenario, or `scenario: image-rgb` for pipeline rows; `augbench plan` still shows the jobs",
    ))
}

/// More loader workers than cores is allowed (and recorded), but the user should know.
fn warn_oversubscribed_workers(cfg: &augbench_core::RunConfig) {
    let workers = cfg.execution.workers.unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    if cfg.selection.mode == Some(Mode::Pipeline) && workers > cores {
        eprintln!(
            "warning: {workers} loader workers on {cores} cores: the workers share cores, so the pipeline rows measure an oversubscribed machine"
        );
    }
}

/// Like pyperf's system checks: a loaded machine or a stealing hypervisor makes numbers noisy.
fn warn_if_busy() {
    let why = augbench_exec::machine::busy_reasons(&augbench_exec::machine::state());
    if !why.is_empty() {
        eprintln!(
            "warning: the machine is busy: {}. Numbers measured now carry more noise; `augbench doctor` shows the machine card",
            why.join("; ")
        );
    }
}

fn exit_code(report: &RunReport) -> ExitCode {
    if report.interrupted() {
        eprintln!(
            "interrupted: finished transforms are saved; rerun the same command with --resume to continue"
        );
        return ExitCode::from(1);
    }
    if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
