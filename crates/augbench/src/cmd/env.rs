//! `augbench env list|build|clean|lock|python`: the cached Python environments of each group.

use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::MultiProgress;

#[derive(Debug, clap::Subcommand)]
pub enum EnvCommand {
    /// Environment groups, whether each is built, and where.
    List,
    /// Build (or reuse) the environments of the given groups (all when none is given).
    Build {
        groups: Vec<String>,
        /// Build from the committed locks instead of resolving the inputs again.
        #[arg(long)]
        no_refresh_requirements: bool,
    },
    /// Remove every cached environment.
    Clean,
    /// Regenerate the committed locks envs/<group>.txt from envs/<group>.in (in a checkout).
    Lock {
        groups: Vec<String>,
        /// Folder holding the .in files.
        #[arg(long, default_value = "envs")]
        envs_dir: PathBuf,
    },
    /// Print the interpreter of a group's environment (building it from its lock if needed).
    Python { group: String },
}

pub fn run(cmd: EnvCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        EnvCommand::List => {
            for e in augbench_env::list()? {
                let state = if e.built { "built" } else { "not built" };
                println!("{:<16} {:<10} {}", e.group, state, e.dir.display());
            }
        }
        EnvCommand::Build {
            groups,
            no_refresh_requirements,
        } => {
            let mp = MultiProgress::new();
            for g in names(groups) {
                let e = augbench_env::ensure(&g, !no_refresh_requirements, Some(&mp))?;
                println!("{:<16} {}", e.group, e.dir.display());
            }
        }
        EnvCommand::Clean => {
            for p in augbench_env::clean()? {
                println!("removed {}", p.display());
            }
        }
        EnvCommand::Lock { groups, envs_dir } => {
            for g in names(groups) {
                println!(
                    "wrote {}",
                    augbench_env::lock_group(&g, &envs_dir)?.display()
                );
            }
        }
        EnvCommand::Python { group } => {
            let e = augbench_env::ensure(&group, false, None)?;
            println!("{}", e.python.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn names(groups: Vec<String>) -> Vec<String> {
    if groups.is_empty() {
        augbench_env::groups()
            .iter()
            .map(|g| g.name.to_string())
            .collect()
    } else {
        groups
    }
}
