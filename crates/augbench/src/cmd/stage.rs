//! `augbench stage`: pack a data folder's media files into a deterministic tarball for cloud
//! runs and print its SHA-256 (the name it is uploaded under).

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder of media (read recursively; hidden files and macOS junk are left out).
    #[arg(long, value_name = "DIR")]
    pub data_dir: PathBuf,
    /// Tarball to write.
    #[arg(long, value_name = "FILE.tar")]
    pub out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let s = augbench_cloud::stage::stage(&args.data_dir, &args.out)?;
    println!("{}  {}", s.sha256, s.path.display());
    eprintln!("{} media files, {} bytes", s.files, s.bytes);
    Ok(ExitCode::SUCCESS)
}
