//! `augbench cloud status|fetch|cancel`: follow a submitted cloud run from its output folder
//! (`cloud_run.json`), and the cloud side of `augbench run` (dry run, detached, attached).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use augbench_cloud::fetch::{self, FetchReport};
use augbench_cloud::follow;
use augbench_cloud::record::CloudRun;
use augbench_cloud::submit::{self, Options};
use augbench_core::results::ResultFile;
use augbench_core::{Media, RunConfig, policy};

#[derive(Debug, clap::Subcommand)]
pub enum CloudCommand {
    /// Batch job and task states of the run submitted into an output folder.
    Status(OutputArg),
    /// Download the run's tasks and merge every finished one into the output folder and cell log.
    Fetch(OutputArg),
    /// Delete the run's Batch jobs (Batch stops their tasks and deletes their VMs).
    Cancel(OutputArg),
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
            let record = CloudRun::read(&a.output)?;
            fetch_and_show(&a.output, &record)
        }
        CloudCommand::Cancel(a) => {
            let record = CloudRun::read(&a.output)?;
            follow::cancel(&record)?;
            for j in &record.jobs {
                println!("deleted Batch job {} ({})", j.job.name, j.job.location);
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn status(out: &Path) -> anyhow::Result<ExitCode> {
    let record = CloudRun::read(out)?;
    println!("run {} ({})", record.run_name, record.run_uri);
    for (job, record_job) in follow::status(&record)?.iter().zip(&record.jobs) {
        println!("job {}: {}", job.name, job.state);
        for shard in &record_job.shards {
            let task = job.tasks.iter().find(|t| t.index == shard.index);
            let state = task.map_or("PENDING", |t| t.state.as_str());
            let note = match task {
                Some(t) if t.preempted() => " (preempted)",
                _ => "",
            };
            println!(
                "  task {:<3} {:<10}{note} {} × {} transforms",
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
fn fetch_and_show(out: &Path, record: &CloudRun) -> anyhow::Result<ExitCode> {
    let report = fetch::fetch(out, record)?;
    show_fetch(out, &report);
    Ok(if report.missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
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
    let c = cfg.cloud.clone().unwrap_or_default();
    let dry_run = dry_run || c.dry_run.unwrap_or(false);
    let attached = attached || c.attached.unwrap_or(false);
    let plan = augbench_core::plan::build(cfg);
    let cell_run_id = augbench_exec::cells_log::run_id(cfg);
    let opts = Options {
        dry_run,
        binary: std::env::current_exe()?,
        run_name: submit::run_name(cfg, &cell_run_id),
        cell_run_id,
        plan_yaml: plan.to_yaml(),
    };
    let prepared = submit::prepare(cfg, &opts)?;
    for j in &prepared.submission.jobs {
        let gpu = c
            .gpu_type
            .as_deref()
            .map(|g| format!(" + {g}"))
            .unwrap_or_default();
        eprintln!(
            "cloud run {}: Batch job {} with {} tasks on {}{gpu} in {}",
            opts.run_name,
            j.job.name,
            j.shards.len(),
            c.machine_type.as_deref().unwrap_or_default(),
            j.job.location
        );
    }
    let cloud_dir = prepared.cloud_dir.display();
    if dry_run {
        println!(
            "dry run: job JSON, task script, shard configs and plan are in {cloud_dir}; nothing was uploaded or submitted"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let record = submit::submit(cfg, &prepared, &opts)?;
    let out = augbench_core::naming::output_dir(cfg);
    println!("submitted {} to {}", record.run_name, record.run_uri);
    if !attached {
        for f in &record.follow {
            println!("  {f}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    follow::wait(&record)?;
    let code = fetch_and_show(&out, &record)?;
    print_table(cfg, &plan);
    Ok(code)
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
