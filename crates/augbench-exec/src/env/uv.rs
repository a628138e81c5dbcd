//! Finding the tools that build environments: the Python interpreter (`$AUGBENCH_PYTHON`, else
//! `python3` on PATH) and uv (on PATH, else installed into the cache with pip). Without uv,
//! environments fall back to `python3 -m venv` plus pip.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use augbench_core::UsageError;

/// How environments get built.
#[derive(Debug, Clone)]
pub enum Installer {
    Uv(PathBuf),
    VenvPip,
}

/// The interpreter environments are built from, and its version (`3.11.7`).
pub fn find_python() -> anyhow::Result<(PathBuf, String)> {
    let candidate = std::env::var_os("AUGBENCH_PYTHON")
        .map(PathBuf::from)
        .or_else(|| which("python3"))
        .ok_or_else(|| {
            UsageError::new(
                "no Python interpreter found (python3 is not on PATH)",
                "install Python 3.10+ or set AUGBENCH_PYTHON to an interpreter",
            )
        })?;
    let out = Command::new(&candidate)
        .args([
            "-c",
            "import sys; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])",
        ])
        .output()
        .with_context(|| format!("running {}", candidate.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut lines = text.lines();
    match (out.status.success(), lines.next(), lines.next()) {
        (true, Some(exe), Some(version)) => Ok((PathBuf::from(exe), version.trim().to_string())),
        _ => Err(UsageError::new(
            format!(
                "{} does not run as a Python interpreter",
                candidate.display()
            ),
            "set AUGBENCH_PYTHON to a working python3",
        )
        .into()),
    }
}

/// uv on PATH, else uv installed into the cache (`python3 -m pip install uv`), else venv + pip.
pub fn installer(python: &Path) -> Installer {
    if let Some(uv) = which("uv") {
        return Installer::Uv(uv);
    }
    let target = crate::cache::tools_dir().join("uv");
    let cached = target.join("bin").join("uv");
    if cached.exists() {
        return Installer::Uv(cached);
    }
    let ok = Command::new(python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--target",
        ])
        .arg(&target)
        .arg("uv")
        .status()
        .is_ok_and(|s| s.success());
    if ok && cached.exists() {
        Installer::Uv(cached)
    } else {
        Installer::VenvPip
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
