//! `augbench data`: write a synthetic dataset on demand (`synth`), or empty the dataset cache
//! (`clean`). Defaults come from augbench-core's policy.

use std::path::PathBuf;
use std::process::ExitCode;

use augbench_core::{Media, policy};
use indicatif::MultiProgress;

#[derive(Debug, clap::Subcommand)]
pub enum DataCommand {
    /// Write a deterministic synthetic dataset (JPEG images, or MJPEG AVI videos) into a new or
    /// empty folder.
    Synth {
        /// Output folder (created; must be new or empty).
        #[arg(long)]
        out: PathBuf,
        /// Number of images (or videos with --video).
        #[arg(long)]
        n: u64,
        /// Generator seed.
        #[arg(long, default_value_t = policy::SYNTH_SEED)]
        seed: u64,
        #[arg(long, help = help_video())]
        video: bool,
    },
    /// Remove every cached synthetic dataset.
    Clean,
}

/// Help for `--video`, with the synthetic video shape from policy.
fn help_video() -> String {
    let (w, h) = policy::SYNTH_VIDEO_SIZE;
    let (lo, hi) = policy::SYNTH_VIDEO_FRAMES;
    format!(
        "Write UCF101-like video files instead of images (MJPEG AVI, {w}×{h}, {} fps, {lo}–{hi} frames)",
        policy::SYNTH_VIDEO_FPS
    )
}

pub fn run(cmd: DataCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DataCommand::Synth {
            out,
            n,
            seed,
            video,
        } => {
            let media = if video { Media::Video } else { Media::Image };
            let multi = MultiProgress::new();
            let ds = augbench_media::write_synthetic(&out, seed, n, media, Some(&multi))?;
            println!(
                "wrote {} {} ({} bytes, seed {seed}) to {}",
                ds.info.file_count,
                if video { "videos" } else { "images" },
                ds.info.total_bytes,
                ds.root.display()
            );
        }
        DataCommand::Clean => {
            let dir = augbench_media::dataset::clean()?;
            println!("removed {}", dir.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
