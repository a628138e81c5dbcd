//! `augbench cloud status|fetch|cancel`: follow a run submitted to Cloud Batch or Slurm from its
//! output folder (`cloud_run.json`), and that side of `augbench run` (dry run, detached,
//! attached).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use augbench_cloud::fetch::{self, FetchReport};
use augbench_cloud::follow;
use augbench_cloud::record::CloudRun;
use augbench_cloud::request::{Kind, Request};
use augbench_cloud::submit::{self, Options};
use augbench_core::config::CloudProvider;
use augbench_core::results::ResultFile;
use augbench_core::{Media, RunConfig, policy};

#[derive(Debug, clap::Subcommand)]
pub enum CloudCommand {
    /// Job and task states of the run submitted into an output folder (Batch or Slurm).
    Status(OutputArg),
    /// Download the run's tasks and merge every finished one into the output folder and cell log.
    Fetch(FetchArgs),
    /// Cancel the run's jobs (Batch stops their tasks and deletes their VMs; Slurm `scancel`).
    Cancel(OutputArg),
}

#[derive(Debug, clap::Args)]
pub struct FetchArgs {
    #[command(flatten)]
    pub output: OutputArg,
    /// Submit each task that ended without results again (Slurm: the same array indices; Batch:
    /// a job of their own); finished shards are never rerun.
    #[arg(long)]
    pub retry_failed: bool,
}

#[derive(Debug, clap::Args)]
pub struct OutputArg {
    /// Output folder of the submitted `augbench run` (holds cloud_run.json).
    #[arg(long, short = 'o', value_name = "DIR", default_value = policy::DEFAULT_OUTPUT_DIR)]
    pub output: PathBuf,
}

pub fn run(cmd: CloudCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CloudCommand::Status(a) => status(&a.output),
        CloudCommand::Fetch(a) => {
            let out = &a.output.output;
            let mut record = CloudRun::read(out)?;
            let (code, report) = fetch_and_show(out, &record)?;
            if a.retry_failed {
                retry(out, &mut record, &report)?;
            }
            Ok(code)
        }
        CloudCommand::Cancel(a) => {
            let record = CloudRun::read(&a.output)?;
            follow::cancel(&record)?;
            for j in &record.jobs {
                println!(
                    "cancelled job {} ({})",
                    job_label(&j.job),
                    engine_name(record.provider)
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The merged production run's tables, written where a local run writes them.
fn production_summary(out: &Path) -> anyhow::Result<()> {
    use augbench_report::production as tables;
    let run = tables::latest(out)?;
    let md = tables::markdown(&run.cells, &run.planned);
    let dir = augbench_core::production::run_dir(out, &run.run_id);
    let path = dir.join(augbench_core::production::SUMMARY_FILE);
    augbench_host::fsutil::write_atomic(&path, md.as_bytes())?;
    println!(
        "production run {}: {} cells; tables in {}",
        run.run_id,
        run.cells.len(),
        path.display()
    );
    Ok(())
}

fn engine_name(p: CloudProvider) -> &'static str {
    match p {
        CloudProvider::Gcp => "Cloud Batch",
        CloudProvider::Slurm => "Slurm",
    }
}

/// A job's name, with the engine's id where it gave one (Slurm).
fn job_label(j: &augbench_cloud::job::JobRef) -> String {
    match &j.id {
        Some(id) => format!("{} (id {id})", j.name),
        None => j.name.clone(),
    }
}

/// Resubmits the tasks the fetch could not merge that have ended, and says what it sent.
fn retry(out: &Path, record: &mut CloudRun, report: &FetchReport) -> anyhow::Result<()> {
    let waiting: Vec<String> = report
        .missing
        .iter()
        .filter(|m| !m.ended)
        .map(|m| m.index.to_string())
        .collect();
    if !waiting.is_empty() {
        println!(
            "not resubmitted, still queued or running: task {}",
            waiting.join(", ")
        );
    }
    let sent = fetch::resubmit_failed(out, record, &report.missing)?;
    if sent.is_empty() {
        println!("nothing to resubmit: every ended task was merged");
    }
    for (index, id) in &sent {
        println!("resubmitted task {index} as job {id}");
    }
    if !sent.is_empty() {
        println!(
            "  follow it: augbench cloud status --output {0}; then augbench cloud fetch --output {0}",
            out.display()
        );
    }
    Ok(())
}

fn status(out: &Path) -> anyhow::Result<ExitCode> {
    let record = CloudRun::read(out)?;
    println!("run {} ({})", record.run_name, record.run_uri);
    let engine = engine_name(record.provider);
    let newest = record.shards();
    for (job, record_job) in follow::status(&record)?.iter().zip(&record.jobs) {
        println!("{engine} job {}: {}", job_label(&record_job.job), job.state);
        for shard in &record_job.shards {
            let task = job.tasks.iter().find(|t| t.index == shard.index);
            let resent = newest
                .iter()
                .find(|(_, s)| s.index == shard.index)
                .filter(|(j, _)| **j != record_job.job);
            // A job that reports some tasks but not this one has forgotten it (Slurm: a pending
            // task cancelled, or a job older than the controller keeps).
            let state = match task {
                Some(t) => t.state.as_str(),
                None if job.tasks.is_empty() => "PENDING",
                None => "UNKNOWN",
            };
            let note = match (task, resent) {
                (_, Some((j, _))) => format!(" (resubmitted as {})", job_label(j)),
                (Some(t), None) if t.preempted() => " (preempted)".to_string(),
                _ => String::new(),
            };
            println!(
                "  task {:<3} {:<10} {} × {} transforms{note}",
                shard.index,
                state,
                shard.libraries.join(", "),
                shard.transforms.len()
            );
        }
        println!("  {}", follow::summary(&job.tasks));
    }
    Ok(ExitCode::SUCCESS)
}

/// Fetches, merges and shows what came back; exit 1 when a task could not be merged.
fn fetch_and_show(out: &Path, record: &CloudRun) -> anyhow::Result<(ExitCode, FetchReport)> {
    let report = fetch::fetch(out, record)?;
    show_fetch(out, &report);
    if record.kind == Kind::Production && !report.merged.is_empty() {
        production_summary(out)?;
    }
    let code = if report.missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    Ok((code, report))
}

fn show_fetch(out: &Path, r: &FetchReport) {
    let merged: Vec<String> = r.merged.iter().map(u64::to_string).collect();
    println!(
        "fetched into {}: tasks merged: {}; files written: {}, unchanged: {}; cells: {} new, {} replaced",
        out.display(),
        if merged.is_empty() {
            "none".to_string()
        } else {
            merged.join(", ")
        },
        r.written.len(),
        r.unchanged,
        r.cells_appended,
        r.cells_replaced
    );
    for s in &r.skipped {
        eprintln!("skipped: {s}");
    }
    for m in &r.missing {
        eprintln!(
            "task {} not merged: {}; its log ends with:",
            m.index, m.reason
        );
        for line in m.log_tail.lines() {
            eprintln!("    {line}");
        }
    }
}

/// `augbench run` on a config with a `cloud:` section.
pub fn run_config(cfg: &RunConfig, dry_run: bool, attached: bool) -> anyhow::Result<ExitCode> {
    let plan = augbench_core::plan::build(cfg);
    let cell_run_id = augbench_exec::cells_log::run_id(cfg);
    let opts = Options {
        dry_run,
        binary: std::env::current_exe()?,
        run_name: submit::run_name(cfg, &cell_run_id),
        cell_run_id,
        plan_yaml: plan.to_yaml(),
    };
    let code = send(&Request::of_run(cfg)?, opts, dry_run, attached)?;
    if code.is_some() {
        print_table(cfg, &plan);
    }
    Ok(code.unwrap_or(ExitCode::SUCCESS))
}

/// `augbench production` on a config with a `cloud:` section: (recipe block, seed) shards.
pub fn production_config(
    p: &augbench_core::production::Production,
    dry_run: bool,
    attached: bool,
) -> anyhow::Result<ExitCode> {
    let req = Request::of_production(p)?;
    let opts = Options {
        dry_run,
        binary: std::env::current_exe()?,
        run_name: submit::production_run_name(&req),
        cell_run_id: String::new(),
        plan_yaml: String::new(),
    };
    Ok(send(&req, opts, dry_run, attached)?.unwrap_or(ExitCode::SUCCESS))
}

/// Prepares and (unless a dry run) submits a request; attached, waits and fetches, returning
/// the fetch's exit code.
fn send(
    req: &Request,
    opts: Options,
    dry_run: bool,
    attached: bool,
) -> anyhow::Result<Option<ExitCode>> {
    let dry_run = dry_run || req.cloud.dry_run.unwrap_or(false);
    let attached = attached || req.cloud.attached.unwrap_or(false);
    let prepared = submit::prepare(req, &opts)?;
    for j in &prepared.submission.jobs {
        eprintln!("{}", announce(req, &opts.run_name, j));
    }
    let cloud_dir = prepared.cloud_dir.display();
    if dry_run {
        println!(
            "dry run: job spec, task script, shard configs and plan are in {cloud_dir}; nothing was uploaded or submitted"
        );
        return Ok(None);
    }
    let record = submit::submit(req, &prepared, &opts)?;
    println!("submitted {} to {}", record.run_name, record.run_uri);
    if !attached {
        for f in &record.follow {
            println!("  {f}");
        }
        return Ok(None);
    }
    follow::wait(&record)?;
    let (code, _) = fetch_and_show(&req.output, &record)?;
    Ok(Some(code))
}

/// One line naming what a job will run where.
fn announce(req: &Request, run_name: &str, j: &augbench_cloud::job::JobSpec) -> String {
    let c = &req.cloud;
    let tasks = j.shards.len();
    if c.provider == Some(CloudProvider::Slurm) {
        let partition = c.partition.as_deref().unwrap_or("the default partition");
        return format!(
            "run {run_name}: Slurm array job {} with {tasks} tasks, one node each (--exclusive), on {partition}",
            j.job.name
        );
    }
    let gpu = c
        .gpu_type
        .as_deref()
        .map(|g| format!(" + {g}"))
        .unwrap_or_default();
    format!(
        "cloud run {run_name}: Batch job {} with {tasks} tasks on {}{gpu} in {}",
        j.job.name,
        c.machine_type.as_deref().unwrap_or_default(),
        j.job.location
    )
}

/// The summary table of a local run, from the merged result files.
fn print_table(cfg: &RunConfig, plan: &augbench_core::plan::Plan) {
    use augbench_report::summary;
    let files: Vec<ResultFile> = plan
        .jobs
        .iter()
        .filter_map(|j| std::fs::read_to_string(&j.output_file).ok())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    if files.is_empty() {
        return;
    }
    let refs: Vec<&ResultFile> = files.iter().collect();
    let order = plan
        .jobs
        .first()
        .map(|j| j.transforms.clone())
        .unwrap_or_default();
    let media = cfg.selection.media.unwrap_or(Media::Image);
    let clip_length = refs
        .iter()
        .find_map(|f| f.metadata.benchmark_params.clip_length);
    let unit = augbench_report::summary::lines::unit(media);
    let reference = summary::reference_of(&refs, cfg.output.reference_library.as_deref());
    println!(
        "\n{}",
        summary::table(&refs, &order, unit, clip_length, &reference.library)
    );
}
