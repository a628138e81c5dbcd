//! `augbench run`: parses the arguments, hands a cloud config to `cloud`, and otherwise runs the
//! config here through `augbench_exec::session` (which owns the run end to end), then prints
//! the summary `augbench_report::summary` renders and exits with the run's code. Ctrl-C stops
//! after the transform in flight; everything finished is already on disk and `--resume`
//! continues.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use augbench_core::{Media, RunConfig};
use augbench_exec::equivalence::in_run;
use augbench_exec::orchestrate::{JobStatus, RunReport};
use augbench_exec::session::{self, Outcome};
use augbench_report::summary::{self, JobLine, JobState, RunView};
use indicatif::MultiProgress;

use super::config_args::ConfigArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Configs with a `cloud:` section (Batch or Slurm): write the job spec, task script, shard
    /// configs and plan into the output folder, and call nothing.
    #[arg(long, visible_alias = "remote-dry-run")]
    pub gcp_dry_run: bool,
    /// Configs with a `cloud:` section (Batch or Slurm): wait for the job, show its tasks, and
    /// fetch the results at the end.
    #[arg(
        long,
        visible_alias = "remote-attached",
        conflicts_with = "gcp_dry_run"
    )]
    pub gcp_attached: bool,
    /// Run the config N times, one after another, each into its own folder of the output folder
    /// (`invocation-1`, …), and record them as one baseline (`baseline.json`, with the drift
    /// between them): `compare --baseline <output>` then reads all N (docs/ci.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["gcp_dry_run", "gcp_attached"])]
    pub invocations: Option<u32>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cfg = args.config.resolve()?;
    if cfg.is_cloud() {
        refuse_cloud_invocations(&args)?;
        session::preflight(&cfg, &args.config.config)?;
        return super::cloud::run_config(&cfg, args.gcp_dry_run, args.gcp_attached);
    }
    if args.gcp_dry_run || args.gcp_attached {
        return Err(augbench_core::UsageError::new(
            format!("{} has no `cloud:` section, so there is no cloud run to submit", args.config.config.display()),
            "add a `cloud:` section (see configs/paper/), or drop --gcp-dry-run/--gcp-attached to run here",
        )
        .into());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // A second Ctrl-C falls through to the default handler only if this one cannot be installed.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    match args.invocations {
        None => once(&cfg, &args, &stop).map(|(code, _)| code),
        Some(n) => invocations(cfg, &args, n as usize, &stop),
    }
}

/// `--invocations` runs a config here N times; a cloud config's shards run elsewhere, once.
fn refuse_cloud_invocations(args: &Args) -> anyhow::Result<()> {
    match args.invocations {
        None => Ok(()),
        Some(_) => Err(augbench_core::UsageError::new(
            format!(
                "{} has a `cloud:` section: its shards run on the cloud, once, so --invocations cannot repeat them here",
                args.config.config.display()
            ),
            "drop --invocations, or remove the `cloud:` section to build a baseline of repeated runs on this machine",
        )
        .into()),
    }
}

/// One run of `cfg`, its summary printed: its exit code, and whether it finished cleanly.
fn once(cfg: &RunConfig, args: &Args, stop: &AtomicBool) -> anyhow::Result<(ExitCode, bool)> {
    let mp = MultiProgress::new();
    let outcome = session::run(cfg, &args.config.config, &mp, stop)?;
    if let Some(cells) = &outcome.cells {
        eprintln!("{}", summary::cells_line(cells));
    }
    for line in summary::render(&view(&outcome)) {
        if line.to_stderr {
            eprintln!("{}", line.text);
        } else {
            println!("{}", line.text);
        }
    }
    let r = &outcome.report;
    let clean = !(r.interrupted() || r.bad_input() || r.failed());
    Ok((exit_code(r), clean))
}

/// `--invocations N`: `cfg` run N times into `<output>/invocation-i`, then the baseline record
/// (`report::baseline`). An invocation that does not finish cleanly stops the series before the
/// record is written (every finished invocation stays on disk; `--resume` goes on).
fn invocations(
    cfg: RunConfig,
    args: &Args,
    n: usize,
    stop: &AtomicBool,
) -> anyhow::Result<ExitCode> {
    let out = augbench_core::naming::output_dir(&cfg);
    let names: Vec<String> = (1..=n)
        .map(augbench_core::naming::invocation_name)
        .collect();
    for (i, name) in names.iter().enumerate() {
        let mut one = cfg.clone();
        one.output.output_dir = Some(out.join(name));
        eprintln!(
            "augbench: invocation {} of {n} into {}",
            i + 1,
            out.join(name).display()
        );
        let (code, clean) = once(&one, args, stop)?;
        if !clean {
            eprintln!(
                "invocation {} of {n} did not finish cleanly: no baseline record written",
                i + 1
            );
            return Ok(code);
        }
    }
    let loaded = names
        .iter()
        .map(|name| super::compare::load(&[out.join(name)]))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let record = augbench_report::baseline::write(&out, &names, &loaded)?;
    eprintln!("{}", augbench_report::summary::baseline_line(&out, &record));
    Ok(ExitCode::SUCCESS)
}

/// What the summary reads of the run.
fn view(outcome: &Outcome) -> RunView<'_> {
    let cfg = &outcome.plan.config;
    let report = &outcome.report;
    RunView {
        files: report.written(),
        transforms: outcome
            .plan
            .jobs
            .first()
            .map(|j| j.transforms.clone())
            .unwrap_or_default(),
        media: cfg.selection.media.unwrap_or(Media::Image),
        reference: cfg.output.reference_library.as_deref(),
        decode: outcome.decode(),
        time_split: augbench_exec::time_split::snapshot().map(|s| s.line()),
        jobs: report
            .jobs
            .iter()
            .map(|(job, status)| job_line(job, status))
            .collect(),
        equivalence: outcome
            .check
            .as_ref()
            .map(|c| in_run::summary_line(c, &report.out_dir)),
    }
}

fn job_line(job: &augbench_core::plan::Job, status: &JobStatus) -> JobLine {
    let state = match status {
        JobStatus::Finished(_) => JobState::Finished,
        JobStatus::Interrupted(_) => JobState::Interrupted,
        JobStatus::Failed(e) => JobState::Failed(e.to_string()),
    };
    JobLine {
        library: job.library.clone(),
        file: job.output_file.clone(),
        state,
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
