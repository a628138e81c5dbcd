//! Finding the tools that build environments: the Python interpreter (`$AUGBENCH_PYTHON`, else
//! `python3` on PATH) and uv (on PATH, else installed into the cache with pip). Without uv,
//! environments fall back to `python3 -m venv` plus pip.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;
use augbench_core::UsageError;
use augbench_host::child::{self, Finished, Tail};

/// Lines of pip's output shown when installing uv fails.
const PIP_LOG_LINES: usize = 15;

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
    let target = augbench_host::cache::tools_dir().join("uv");
    let cached = target.join("bin").join("uv");
    if cached.exists() {
        return Installer::Uv(cached);
    }
    match install_uv(python, &target) {
        Ok(uv) => {
            eprintln!(
                "augbench: installed {} into {}",
                uv_version(&uv),
                target.display()
            );
            Installer::Uv(uv)
        }
        Err(why) => {
            eprintln!(
                "augbench: could not install uv ({why}); building environments with venv + pip"
            );
            Installer::VenvPip
        }
    }
}

/// Installs uv into `target` with pip, quietly: pip's notes (the root-user warning, the version
/// check) are captured and shown only when the install fails. Returns the uv binary.
pub(crate) fn install_uv(python: &Path, target: &Path) -> Result<PathBuf, String> {
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--target",
    ])
    .arg(target)
    .arg("uv")
    // As environment variables, so a pip too old to know an option ignores it.
    .env("PIP_ROOT_USER_ACTION", "ignore")
    .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    .env("PIP_NO_INPUT", "1");
    let done = child::run(&mut cmd, PIP_LOG_LINES)
        .map_err(|e| format!("cannot run {} -m pip: {}", python.display(), e.into_io()))?;
    let uv = target.join("bin").join("uv");
    if done.status.success() && uv.exists() {
        return Ok(uv);
    }
    Err(pip_failure(python, &done))
}

/// Why pip did not install uv: its status and the last lines of its stdout, then stderr.
fn pip_failure(python: &Path, done: &Finished) -> String {
    let log = Tail::new(PIP_LOG_LINES);
    log.push_text(&done.stdout_text());
    log.push_text(&done.stderr);
    format!(
        "`{} -m pip install uv` failed ({}):\n{}",
        python.display(),
        done.status,
        log.text()
    )
}

/// `uv 0.9.5` (name and version as uv reports them), or plain `uv` when it does not answer.
fn uv_version(uv: &Path) -> String {
    child::run(Command::new(uv).arg("--version"), 0)
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            let text = o.stdout_text();
            text.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "uv".to_string())
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    /// A stand-in for python3: prints what pip prints as root, and creates `bin/uv` or fails.
    fn fake_python(dir: &Path, succeed: bool) -> PathBuf {
        let script = if succeed {
            r#"#!/bin/sh
echo "WARNING: Running pip as the 'root' user can result in broken permissions" >&2
prev=""; for a; do [ "$prev" = --target ] && t=$a; prev=$a; done
mkdir -p "$t/bin" && printf '#!/bin/sh\necho uv 9.9.9\n' > "$t/bin/uv" && chmod +x "$t/bin/uv"
"#
        } else {
            "#!/bin/sh\necho 'ERROR: No matching distribution found for uv' >&2\nexit 1\n"
        };
        let path = dir.join("python3");
        std::fs::write(&path, script).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path
    }

    /// `install_uv`, retried while the fake script is "Text file busy": another test thread that
    /// forked while the script was open for writing holds it until that child execs.
    #[cfg(unix)]
    fn install_retrying(python: &Path, target: &Path) -> Result<PathBuf, String> {
        let mut last = install_uv(python, target);
        for _ in 0..50 {
            match &last {
                Err(e) if e.contains("Text file busy") => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    last = install_uv(python, target);
                }
                _ => break,
            }
        }
        last
    }

    #[cfg(unix)]
    #[test]
    fn a_successful_install_returns_uv_and_keeps_pips_warning_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tools/uv");
        let uv = install_retrying(&fake_python(dir.path(), true), &target).unwrap();
        assert_eq!(uv, target.join("bin/uv"));
        assert_eq!(uv_version(&uv), "uv 9.9.9");
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_install_reports_pips_own_words() {
        let dir = tempfile::tempdir().unwrap();
        let err =
            install_retrying(&fake_python(dir.path(), false), &dir.path().join("t")).unwrap_err();
        assert!(
            err.contains("No matching distribution found for uv"),
            "{err}"
        );
        assert!(err.contains("pip install uv` failed"), "{err}");
    }
}
