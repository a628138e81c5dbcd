//! `augbench run`: resolves the config, writes it next to the results, executes the plan with
//! progress bars, appends benchmark cells, and prints the summary table. Ctrl-C stops after the
//! transform in flight; everything finished is already on disk and `--resume` continues. One run
//! at a time per output folder (`run_lock`).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use augbench_core::{Media, Mode, policy};
use augbench_exec::equivalence::in_run;
use augbench_exec::orchestrate::{self, JobStatus, RunReport};
use augbench_exec::time_split;
use augbench_host::run_lock::RunLock;
use indicatif::MultiProgress;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Cloud configs: write the Batch job JSON, task script, shard configs and plan into the
    /// output folder, and call nothing.
    #[arg(long)]
    pub gcp_dry_run: bool,
    /// Cloud configs: wait for the Batch job, show its tasks, and fetch the results at the end.
    #[arg(long, conflicts_with = "gcp_dry_run")]
    pub gcp_attached: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    refuse_unmeasurable_pipeline(&cfg, &args.config.config)?;
    if cfg.execution.measure == Some(augbench_core::Measure::Instructions) {
        // Before anything is built: a missing Valgrind is exit 2 with the package named.
        augbench_exec::counts::valgrind::version()?;
    }
    if cfg.is_cloud() {
        return super::cloud::run_config(&cfg, args.gcp_dry_run, args.gcp_attached);
    }
    if args.gcp_dry_run || args.gcp_attached {
        return Err(augbench_core::UsageError::new(
            format!("{} has no `cloud:` section, so there is no cloud run to submit", args.config.config.display()),
            "add a `cloud:` section (see configs/paper/), or drop --gcp-dry-run/--gcp-attached to run here",
        )
        .into());
    }
    // Settled before anything starts, so `auto` is named by the device it runs on.
    let cuda = augbench_host::gpu::cuda_present(&augbench_host::machine::card().gpus);
    let cfg = super::host_device::settle(cfg, cuda)?;
    augbench_exec::time_split::start();
    warn_oversubscribed_workers(&cfg);
    warn_if_busy();
    let plan = super::host_device::name_by_device(augbench_core::plan::build(&cfg), cuda);
    // A spec file's LIBRARY line is checked before any media is prepared or worker started.
    orchestrate::with_spec(&plan)?;
    // A/B: every pin must resolve before any environment is built (a typo is exit 2, not a
    // half-built run).
    let variants: Vec<_> = plan
        .jobs
        .iter()
        .filter_map(|j| j.variant.as_ref())
        .collect();
    augbench_env::check_pins(&variants)?;
    let out = augbench_core::naming::output_dir(&cfg);
    if out.exists() && !out.is_dir() {
        return Err(augbench_core::UsageError::new(
            format!(
                "the output `{}` is a file; the output must be a folder",
                out.display()
            ),
            "give --output (or output.output_dir) a folder path; it is created when missing",
        )
        .into());
    }
    // Held until `run` returns, whichever way (its guard releases the folder on drop).
    let lock = RunLock::acquire(&out)?;
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
    let media = time_split::part("dataset", || orchestrate::prepare_media(&cfg, &mp))?;
    let check = time_split::part("equivalence check", || equivalence_check(&plan, &mp))?;
    let decode = cfg.selection.mode == Some(Mode::Decode);
    let report = if decode {
        augbench_exec::decode::run(&plan, &media, &mp, &stop)?
    } else {
        orchestrate::execute(&plan, &media, check.as_ref(), &mp, &stop)
    };
    super::run_cells::append(&cfg, &report)?;
    if decode {
        print_decode_summary(&report);
    } else {
        print_summary(
            &report,
            &plan.jobs,
            cfg.selection.media.unwrap_or(Media::Image),
            cfg.output.reference_library.as_deref(),
        );
    }
    if let Some(check) = &check {
        println!("{}", in_run::summary_line(check, &report.out_dir));
    }
    Ok(exit_code(&report))
}

/// With `execution.check_equivalence`: the check, before any timing, its table printed. A
/// mismatch is reported (here and in the summary) and does not fail the run: the timings stay
/// valid measurements of what each library does; `augbench check equivalence` is the gate.
fn equivalence_check(
    plan: &augbench_core::plan::Plan,
    mp: &MultiProgress,
) -> anyhow::Result<Option<augbench_exec::equivalence::Check>> {
    let Some(check) = in_run::for_run(plan, mp)? else {
        return Ok(None);
    };
    mp.suspend(|| {
        println!("Equivalence check (before timing; not timed)");
        print!("{}", augbench_exec::equivalence::verdict::table(&check));
        if check.mismatched() {
            eprintln!(
                "warning: the equivalence check found a MISMATCH in {}: those rows may not compare the same work",
                check.mismatches().join(", ")
            );
        }
    });
    Ok(Some(check))
}

/// Decoders: clips/s and frames/s per decoder, then where each file went.
fn print_decode_summary(report: &RunReport) {
    let files = report.written();
    if !files.is_empty() {
        println!("\n{}", augbench_exec::decode::summary_table(&files));
    }
    print_files(report);
}

/// The run summary's unit for instruction counts (never img/s: counts are not time).
const COUNT_TABLE_UNIT: &str = "M instr/item";
const COUNT_FIGURE_LINE: &str = "figure: millions of instructions per item, counted under Valgrind (callgrind), the median over worker processes; fewer is less work (docs/methodology.md, \"Instruction counts\")";

fn print_summary(
    report: &RunReport,
    jobs: &[augbench_core::plan::Job],
    media: Media,
    reference: Option<&str>,
) {
    let files = report.written();
    let order = jobs
        .first()
        .map(|j| j.transforms.clone())
        .unwrap_or_default();
    let clip_length = (media == Media::Video).then(|| video_clip_length(&files));
    let noun = augbench_exec::summary::unit(media);
    // A pipeline number is only meaningful with its loader shape: say it in the column head.
    let counted = files
        .iter()
        .any(|f| f.metadata.benchmark_params.measure.is_some());
    let unit = match files.iter().find_map(|f| f.metadata.pipeline.as_ref()) {
        Some(p) => format!("{noun} (pipeline, w={}, b={})", p.workers, p.batch_size),
        None if counted => COUNT_TABLE_UNIT.to_string(),
        None => noun.to_string(),
    };
    let unit = unit.as_str();
    if !files.is_empty() {
        let reference = augbench_report::summary::reference_of(&files, reference);
        let table = augbench_report::summary::table(
            &files,
            &order,
            unit,
            clip_length.flatten(),
            &reference.library,
        );
        println!("\n{table}");
        if counted {
            println!("{COUNT_FIGURE_LINE}");
        } else if let Some(line) = augbench_exec::summary::figure_line(&files) {
            println!("{line}");
        }
        println!(
            "reference: {} ({})",
            reference.library,
            reference.why.describe()
        );
    }
    let counts = augbench_exec::summary::status_counts(&files);
    let counts: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!("transforms: {}", counts.join(", "));
    if let Some(line) = augbench_exec::summary::schedule_line(&files) {
        println!("{line}");
    }
    if let Some(line) = augbench_exec::summary::precision_line(&files) {
        println!("{line}");
    }
    if let Some(split) = time_split::snapshot() {
        println!("{}", split.line());
    }
    for line in augbench_exec::summary::time_lines(&files) {
        println!("{line}");
    }
    print_files(report);
}

/// Each job's file, or why it failed.
fn print_files(report: &RunReport) {
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

/// Frames per clip of a video run, from its result files (every library's is the same).
fn video_clip_length(files: &[&augbench_core::results::ResultFile]) -> Option<u64> {
    files
        .iter()
        .find_map(|f| f.metadata.benchmark_params.clip_length)
}

/// Never write a result under a label it was not measured with: pipeline mode measures the RGB
/// recipe (on images, or on video clips); multichannel loaders do not exist yet.
fn refuse_unmeasurable_pipeline(
    cfg: &augbench_core::RunConfig,
    file: &std::path::Path,
) -> Result<(), augbench_core::UsageError> {
    if cfg.selection.mode != Some(Mode::Pipeline) {
        return Ok(());
    }
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let channels = cfg.data.num_channels.unwrap_or(policy::DEFAULT_CHANNELS);
    if channels == policy::DEFAULT_CHANNELS {
        return Ok(());
    }
    Err(augbench_core::UsageError::new(
        format!(
            "{} asks for a {channels}-channel {media} pipeline, and this build measures pipeline mode for RGB images and RGB video clips only",
            file.display()
        ),
        "use `mode: micro` for this scenario, or `scenario: image-rgb` (or `video-16f`) for pipeline rows; `augbench plan` still shows the jobs",
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
    let why = augbench_host::machine::busy_reasons(&augbench_host::machine::state());
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
    if report.bad_input() {
        eprintln!("nothing was measured: every job stopped on the input above (exit code 2)");
        return ExitCode::from(2);
    }
    if report.failed() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
