//! `augbench production`: measures the production cells a config asks for (docs/pipeline.md,
//! "Production cells"), keeps the cells a run with the same inputs already wrote, and prints
//! and writes the run's tables (`--plan`: what it would measure, `production_plan`). Exit 1 when
//! a cell recorded an error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use augbench_core::production::cell::CellStatus;
use augbench_exec::production;
use augbench_host::fsutil::write_atomic;
use augbench_report::production as tables;
use indicatif::MultiProgress;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A production config (e.g. configs/examples/production_rgb_small.yaml).
    #[arg(long)]
    pub config: PathBuf,
    /// Use only the first N images of the dataset.
    #[arg(long)]
    pub num_items: Option<u64>,
    /// Write under this folder instead of the config's `output.output_dir`.
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    /// Read the images from this folder instead of the config's `data.data_dir`.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Use each environment's lock as it is, without resolving its requirements again.
    #[arg(long)]
    pub no_refresh_requirements: bool,
    /// Configs with a `cloud:` section: write the job spec, task script and shard configs into
    /// the output folder, and call nothing.
    #[arg(long)]
    pub remote_dry_run: bool,
    /// Configs with a `cloud:` section: wait for the job, then fetch and merge its cells.
    #[arg(long, conflicts_with = "remote_dry_run")]
    pub remote_attached: bool,
    /// Print what the config would measure (cells, worker starts, a time estimate from the
    /// output folder's latest run) and measure nothing.
    #[arg(long)]
    pub plan: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut p = augbench_core::production::load(&args.config)?;
    if let Some(n) = args.num_items {
        p.config.data.num_items = Some(n);
    }
    if let Some(dir) = args.output_dir {
        p.config.output.output_dir = Some(dir);
    }
    if let Some(dir) = args.data_dir {
        p.config.data.data_dir = Some(dir);
    }
    if p.config.cloud.is_some() && !args.plan {
        return super::cloud::production_config(&p, args.remote_dry_run, args.remote_attached);
    }
    if args.remote_dry_run || args.remote_attached {
        return Err(augbench_core::UsageError::new(
            format!("{} has no `cloud:` section, so there is no run to submit", args.config.display()),
            "add a `cloud:` section (docs/cluster.md), or drop --remote-dry-run/--remote-attached to run here",
        )
        .into());
    }
    if args.plan {
        print!(
            "{}",
            super::production_plan::show(&p, &args.config, &p.output_dir())
        );
        return Ok(ExitCode::SUCCESS);
    }
    let cuda = augbench_host::machine::cuda_here();
    gpu_present(&p, cuda)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    let mp = MultiProgress::new();
    let run = production::run(&p, !args.no_refresh_requirements, &mp, &stop)?;
    let md = tables::markdown(&run.cells, &tables::Planned::of(&p));
    let path = run.run_dir.join(augbench_core::production::SUMMARY_FILE);
    write_atomic(&path, md.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
    println!("{md}");
    let kept = run.cells.len() - run.measured_now;
    println!(
        "run {}: {} cells measured now, {kept} kept from disk; cells and summary in {}",
        run.run_id,
        run.measured_now,
        run.run_dir.display()
    );
    if run.interrupted {
        eprintln!(
            "interrupted: every finished cell is on disk; run the same command again to go on"
        );
        return Ok(ExitCode::from(1));
    }
    let errors = run
        .cells
        .iter()
        .filter(|c| c.status == CellStatus::Error)
        .count();
    if errors > 0 {
        eprintln!(
            "{errors} cells recorded an error (see their files); running again measures them again"
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// A `_gpu` implementation needs a CUDA device on this machine: without one the run is refused
/// before anything is measured (exit 2), as `device: cuda` is in run configs.
fn gpu_present(
    p: &augbench_core::production::Production,
    cuda: bool,
) -> Result<(), augbench_core::UsageError> {
    let gpu: Vec<&str> = p
        .implementations
        .iter()
        .filter(|i| i.device == augbench_core::Device::Cuda)
        .map(|i| i.name.as_str())
        .collect();
    if cuda || gpu.is_empty() {
        return Ok(());
    }
    Err(augbench_core::UsageError::new(
        format!(
            "{} run on the GPU, but this machine has no CUDA device (nvidia-smi lists no GPU, or CUDA_VISIBLE_DEVICES hides them); nothing was run",
            gpu.join(", ")
        ),
        "measure the `_cpu` implementations here, or run the config on a machine with an NVIDIA GPU",
    ))
}
