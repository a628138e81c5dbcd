//! `augbench run`: resolves the config, writes it next to the results, executes the plan with
//! progress bars, appends benchmark cells, and prints the summary table. Ctrl-C stops after the
//! transform in flight; everything finished is already on disk and `--resume` continues.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use augbench_core::Media;
use augbench_exec::orchestrate::{self, JobStatus, RunReport};
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
    if cfg.selection.mode == Some(augbench_core::Mode::Pipeline) {
        // Never write a result under a label it was not measured with: a pipeline row must come
        // out of a real training loader, which this build does not drive yet.
        return Err(augbench_core::UsageError::new(
            format!(
                "{} asks for pipeline mode, and this build measures micro mode only",
                args.config.config.display()
            ),
            "use `mode: micro` (loader workers and batch size do not apply there); `augbench plan` still shows the pipeline jobs",
        )
        .into());
    }
    let plan = augbench_core::plan::build(&cfg);
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
    let unit = if media == Media::Video {
        "videos/s"
    } else {
        "img/s"
    };
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
