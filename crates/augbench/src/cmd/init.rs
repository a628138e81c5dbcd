//! `augbench init [NAME]`: writes one of the example configs built into the binary
//! (`augbench_catalog::examples`) into the current folder, so a run needs no clone of the
//! repository; without a name it lists them. An existing file is overwritten only with `--force`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use augbench_catalog::examples::{self, EXAMPLES};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The example to write (`augbench init` with no name lists them).
    pub name: Option<String>,
    /// Write it here instead of `<NAME>.yaml` in the current folder.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Overwrite the file when it exists.
    #[arg(long)]
    pub force: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(name) = args.name else {
        return super::output::emit(&listing());
    };
    let example = examples::find(&name).ok_or_else(|| unknown(&name))?;
    let path = args
        .out
        .unwrap_or_else(|| PathBuf::from(example.file_name()));
    if path.exists() && !args.force {
        return Err(augbench_core::UsageError::new(
            format!("{} already exists; nothing was written", path.display()),
            "pass --force to overwrite it, or write the example elsewhere with --out FILE",
        )
        .into());
    }
    augbench_host::fsutil::write_atomic(&path, example.text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    println!(
        "wrote {} ({})\nrun it:  augbench {} --config {}",
        path.display(),
        example.summary(),
        if augbench_core::production::is_production_config(example.text) {
            "production"
        } else {
            "run"
        },
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Every example, one line each: its name and its first comment line.
fn listing() -> String {
    let width = EXAMPLES.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let mut out =
        String::from("Examples built into augbench (augbench init NAME writes NAME.yaml here):\n");
    for e in EXAMPLES {
        out.push_str(&format!("  {:width$}  {}\n", e.name, e.summary()));
    }
    out
}

fn unknown(name: &str) -> augbench_core::UsageError {
    let names: Vec<&str> = EXAMPLES.iter().map(|e| e.name).collect();
    augbench_core::UsageError::new(
        format!("no example called `{name}`"),
        augbench_catalog::config_error::suggest(name, &names),
    )
}
