//! Building and caching environments. An environment lives in
//! `<cache>/envs/<group>-<key>` where key hashes the lock, the Python version and the group; it is
//! built in a temp folder, its modules compiled to bytecode, and renamed into place, so a killed
//! build never leaves a broken one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use augbench_core::{UsageError, policy};
use augbench_host::child::{self, last_lines};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use sha2::{Digest, Sha256};

use crate::assets::{group_assets, groups};
use crate::uv::{Installer, find_python, installer};

pub(super) const COMPLETE: &str = ".augbench-complete";
/// Marks an environment whose installed modules are compiled to bytecode (`compile_bytecode`).
const BYTECODE: &str = ".augbench-bytecode";

/// A built (or buildable) environment.
#[derive(Debug, Clone)]
pub struct EnvInfo {
    pub group: String,
    pub dir: PathBuf,
    pub python: PathBuf,
    pub built: bool,
}

impl EnvInfo {
    /// The lock the environment was built from (kept in its completion marker).
    pub fn lock(&self) -> anyhow::Result<String> {
        let marker = self.dir.join(COMPLETE);
        std::fs::read_to_string(&marker).with_context(|| format!("reading {}", marker.display()))
    }
}

pub(super) fn env_key(group: &str, lock: &str, py_version: &str) -> String {
    let mut h = Sha256::new();
    for part in [group, py_version, lock] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("{:x}", h.finalize())[..16].to_string()
}

pub(super) fn venv_python(dir: &Path) -> PathBuf {
    dir.join("bin").join("python")
}

fn unknown_group(group: &str) -> anyhow::Error {
    let valid: Vec<&str> = groups().iter().map(|g| g.name).collect();
    UsageError::new(
        format!("environment group `{group}` has no Python requirements here"),
        format!("groups with environments: {}", valid.join(", ")),
    )
    .into()
}

/// The lock to build from: the committed one, or a fresh `uv pip compile` of the input when
/// `refresh` is on (written into the cache, never over the committed lock). A refreshed lock is
/// reused for `policy::LOCK_REFRESH_MAX_AGE_SEC`, so a run with cached environments does not pay
/// for resolving again.
fn lock_text(
    group: &str,
    refresh: bool,
    python: &Path,
    version: &str,
    inst: &Installer,
) -> anyhow::Result<String> {
    let assets = group_assets(group).ok_or_else(|| unknown_group(group))?;
    let (true, Installer::Uv(uv)) = (refresh, inst) else {
        return Ok(assets.lock.to_string());
    };
    let dir = augbench_host::cache::cache_root().join("locks");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let input = dir.join(format!("{group}-py{version}.in"));
    let out = dir.join(format!("{group}-py{version}.txt"));
    if let Some(text) = recent_lock(&input, &out, assets.input) {
        return Ok(text);
    }
    // Input and lock replace the cached pair only after a successful compile.
    let (pending_in, pending_out) = (
        input.with_extension("in.pending"),
        out.with_extension("txt.pending"),
    );
    std::fs::write(&pending_in, assets.input)
        .with_context(|| format!("writing {}", pending_in.display()))?;
    compile(group, uv, python, &pending_in, &pending_out)
        .with_context(|| format!("the requirements of `{group}` could not be resolved (hint: `--no-refresh-requirements` builds from the committed envs/{group}.txt)"))?;
    std::fs::rename(&pending_out, &out).with_context(|| format!("writing {}", out.display()))?;
    std::fs::rename(&pending_in, &input).with_context(|| format!("writing {}", input.display()))?;
    std::fs::read_to_string(&out).with_context(|| format!("reading {}", out.display()))
}

/// A lock compiled from the same input within the refresh window, if there is one.
fn recent_lock(input: &Path, out: &Path, requirements: &str) -> Option<String> {
    let same_input = std::fs::read_to_string(input).ok()? == requirements;
    let age = std::fs::metadata(out)
        .ok()?
        .modified()
        .ok()?
        .elapsed()
        .ok()?;
    let fresh = age.as_secs_f64() < policy::LOCK_REFRESH_MAX_AGE_SEC;
    (same_input && fresh)
        .then(|| std::fs::read_to_string(out).ok())
        .flatten()
}

/// uv's wording when no set of versions satisfies the requirements (a pin that does not exist).
const UNRESOLVABLE: &str = "No solution found";

/// Lines of `uv pip compile`'s stderr kept: all of a resolution error, whose first line is the
/// one that says it is `UNRESOLVABLE` (what the user is shown is its last lines).
const COMPILE_STDERR_LINES: usize = 1000;

fn compile(group: &str, uv: &Path, python: &Path, input: &Path, out: &Path) -> anyhow::Result<()> {
    let mut cmd = Command::new(uv);
    cmd.args(["pip", "compile", "--quiet", "--no-header"])
        .arg(input)
        .arg("-o")
        .arg(out)
        .arg("--python")
        .arg(python)
        .env("UV_PYTHON_DOWNLOADS", "never");
    let done = child::run(&mut cmd, COMPILE_STDERR_LINES).context("running uv pip compile")?;
    if !done.status.success() {
        if done.stderr.contains(UNRESOLVABLE) {
            return Err(unresolvable(group, input, &done.stderr));
        }
        let tail = last_lines(&done.stderr, policy::STDERR_TAIL_LINES);
        anyhow::bail!("uv pip compile failed:\n{tail}");
    }
    Ok(())
}

/// A requirement of `group` that no published version satisfies: the user's pin to fix (exit 2).
fn unresolvable(group: &str, input: &Path, stderr: &str) -> anyhow::Error {
    UsageError::new(
        format!(
            "environment group `{group}`: its requirements ({}) do not resolve:\n{}",
            input.display(),
            last_lines(stderr, policy::STDERR_TAIL_LINES)
        ),
        format!("fix the pin in envs/{group}.in (`augbench env lock {group}` re-resolves it)"),
    )
    .into()
}

/// Regenerates the committed lock `envs/<group>.txt` (run from the repository root).
pub fn lock_group(group: &str, envs_dir: &Path) -> anyhow::Result<PathBuf> {
    let (python, _) = find_python()?;
    let Installer::Uv(uv) = installer(&python) else {
        anyhow::bail!("locking needs uv, and uv could not be found or installed");
    };
    let input = envs_dir.join(format!("{group}.in"));
    if !input.exists() {
        return Err(unknown_group(group));
    }
    let out = envs_dir.join(format!("{group}.txt"));
    compile(group, &uv, &python, &input, &out)?;
    Ok(out)
}

/// Returns the environment of `group`, building it first if needed.
pub fn ensure(group: &str, refresh: bool, mp: Option<&MultiProgress>) -> anyhow::Result<EnvInfo> {
    let (python, version) = find_python()?;
    let inst = installer(&python);
    let lock = lock_text(group, refresh, &python, &version, &inst)?;
    let dir = augbench_host::cache::envs_dir()
        .join(format!("{group}-{}", env_key(group, &lock, &version)));
    if ready(&dir, group, mp)? {
        return Ok(EnvInfo {
            group: group.into(),
            python: venv_python(&dir),
            dir,
            built: true,
        });
    }
    let bar = spinner(mp, format!("Build environment ({group})"));
    let result = build_into(&dir, &python, &inst, &lock, &[]);
    bar.finish_and_clear();
    result.with_context(|| format!("building the `{group}` environment in {}", dir.display()))?;
    Ok(EnvInfo {
        group: group.into(),
        python: venv_python(&dir),
        dir,
        built: true,
    })
}

/// Builds `dir` from `lock`, then installs each of `extra` (installer arguments: a variant's pin,
/// requirement file or checkout) over it. A `dir` without the complete mark (a build that did not
/// finish, or a copy of one) is removed first, never used; one another augbench finished
/// meanwhile is kept, and this build dropped (`fsutil::build_dir`).
pub(super) fn build_into(
    dir: &Path,
    python: &Path,
    inst: &Installer,
    lock: &str,
    extra: &[Vec<std::ffi::OsString>],
) -> anyhow::Result<()> {
    place(dir, |tmp| install_into(tmp, python, inst, lock, extra))
}

/// Builds `dir` through `install` in a temp sibling and renames it into place, removing an
/// unfinished `dir` first and keeping one another augbench finished meanwhile.
fn place(dir: &Path, install: impl FnOnce(&Path) -> anyhow::Result<()>) -> anyhow::Result<()> {
    if dir.exists() && !dir.join(COMPLETE).exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("removing the unfinished environment {}", dir.display()))?;
    }
    augbench_host::fsutil::build_dir(dir, install, |d| d.join(COMPLETE).exists())?;
    Ok(())
}

/// Creates the venv `tmp`, installs `lock` and `extra` into it, compiles it and marks it complete.
fn install_into(
    tmp: &Path,
    python: &Path,
    inst: &Installer,
    lock: &str,
    extra: &[Vec<std::ffi::OsString>],
) -> anyhow::Result<()> {
    let lock_file = lock_file_beside(tmp);
    std::fs::write(&lock_file, lock).context("writing the lock")?;
    let installed = run_installers(tmp, python, inst, &lock_file, extra);
    let _ = std::fs::remove_file(&lock_file);
    installed?;
    compile_bytecode(tmp)?;
    std::fs::write(tmp.join(COMPLETE), lock).context("marking the environment complete")
}

/// `<tmp>.lock.txt`: the lock the installer reads, beside the venv (not inside it), as unique as
/// `tmp`.
fn lock_file_beside(tmp: &Path) -> std::path::PathBuf {
    let mut name = tmp.file_name().unwrap_or_default().to_os_string();
    name.push(".lock.txt");
    tmp.with_file_name(name)
}

/// Runs the installer steps: the venv, the lock, then each of `extra`.
fn run_installers(
    tmp: &Path,
    python: &Path,
    inst: &Installer,
    lock_file: &Path,
    extra: &[Vec<std::ffi::OsString>],
) -> anyhow::Result<()> {
    let mut steps: Vec<Command> = match inst {
        Installer::Uv(uv) => vec![
            cmd(uv, &["venv", "--quiet", "--python"], &[python, tmp]),
            cmd(
                uv,
                &["pip", "install", "--quiet", "--python"],
                &[&venv_python(tmp), Path::new("-r"), lock_file],
            ),
        ],
        Installer::VenvPip => vec![
            cmd(python, &["-m", "venv"], &[tmp]),
            cmd(
                &venv_python(tmp),
                &["-m", "pip", "install", "--quiet", "-r"],
                &[lock_file],
            ),
        ],
    };
    steps.extend(extra.iter().map(|args| install_step(inst, tmp, args)));
    for mut step in steps {
        step.env("UV_PYTHON_DOWNLOADS", "never");
        let done =
            child::run(&mut step, policy::STDERR_TAIL_LINES).context("starting an installer")?;
        done.check(format!("{:?}", step.get_program()))?;
    }
    Ok(())
}

/// Whether the environment in `dir` is built. One cached before environments were compiled to
/// bytecode is compiled now, once (`label` names it on the spinner).
pub(super) fn ready(dir: &Path, label: &str, mp: Option<&MultiProgress>) -> anyhow::Result<bool> {
    if !dir.join(COMPLETE).exists() {
        return Ok(false);
    }
    if !dir.join(BYTECODE).exists() {
        let bar = spinner(mp, format!("Compile bytecode ({label})"));
        let result = compile_bytecode(dir);
        bar.finish_and_clear();
        result
            .with_context(|| format!("compiling the `{label}` environment in {}", dir.display()))?;
    }
    Ok(true)
}

/// Compiles every installed module of the venv in `dir` to bytecode, as pip does at install and
/// uv does not by default. Without it a worker compiles its library's modules again at every
/// start wherever Python may not write its cache (`PYTHONDONTWRITEBYTECODE`, a read-only
/// cache): `import torchvision` took 10 s instead of 4 here. Files that do not compile (a
/// library's templates or Python 2 examples) stay source, as they do under pip.
fn compile_bytecode(dir: &Path) -> anyhow::Result<()> {
    const SCRIPT: &str = "import compileall, sysconfig\n\
        compileall.compile_dir(sysconfig.get_paths()['purelib'], quiet=2, workers=0)\n";
    let mut cmd = Command::new(venv_python(dir));
    cmd.args(["-c", SCRIPT]);
    child::run(&mut cmd, policy::STDERR_TAIL_LINES)
        .context("starting the environment's Python to compile its modules")?
        .check("compiling the installed modules to bytecode")?;
    std::fs::write(dir.join(BYTECODE), "").context("marking the environment compiled")
}

/// `<installer> install <args>` into the venv at `venv`.
fn install_step(inst: &Installer, venv: &Path, args: &[std::ffi::OsString]) -> Command {
    let mut c = match inst {
        Installer::Uv(uv) => cmd(
            uv,
            &["pip", "install", "--quiet", "--python"],
            &[&venv_python(venv)],
        ),
        Installer::VenvPip => cmd(
            &venv_python(venv),
            &["-m", "pip", "install", "--quiet"],
            &[],
        ),
    };
    c.args(args);
    c
}

fn cmd(program: &Path, args: &[&str], paths: &[&Path]) -> Command {
    let mut c = Command::new(program);
    c.args(args).args(paths);
    c
}

pub(super) fn spinner(mp: Option<&MultiProgress>, label: String) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    let pb = match mp {
        Some(mp) => mp.add(pb),
        None => pb,
    };
    pb.set_style(
        ProgressStyle::with_template("{spinner} {prefix} {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    pb.set_prefix(label);
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// The environments of every group: built ones with their folder, others as not built.
pub fn list() -> anyhow::Result<Vec<EnvInfo>> {
    let (_, version) = find_python()?;
    Ok(groups()
        .iter()
        .map(|g| {
            let dir = augbench_host::cache::envs_dir().join(format!(
                "{}-{}",
                g.name,
                env_key(g.name, g.lock, &version)
            ));
            EnvInfo {
                group: g.name.to_string(),
                python: venv_python(&dir),
                built: dir.join(COMPLETE).exists(),
                dir,
            }
        })
        .collect())
}

/// Removes every cached environment (and cached locks and worker sources).
pub fn clean() -> anyhow::Result<Vec<PathBuf>> {
    let root = augbench_host::cache::cache_root();
    let mut removed = Vec::new();
    for sub in ["envs", "locks", "worker-src"] {
        let p = root.join(sub);
        if p.exists() {
            std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
            removed.push(p);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unfinished environment in the way is replaced; a finished one is kept.
    #[test]
    fn a_finished_build_replaces_an_unfinished_one_and_keeps_a_finished_one() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("env");
        let build = |mark: &'static str| {
            move |tmp: &Path| -> anyhow::Result<()> {
                std::fs::create_dir_all(tmp.join("bin"))?;
                Ok(std::fs::write(tmp.join(COMPLETE), mark)?)
            }
        };
        std::fs::create_dir_all(dir.join("bin")).unwrap(); // a bare venv, never finished
        place(&dir, build("first")).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(COMPLETE)).unwrap(),
            "first"
        );
        place(&dir, build("second")).unwrap(); // built meanwhile by another augbench
        assert_eq!(
            std::fs::read_to_string(dir.join(COMPLETE)).unwrap(),
            "first"
        );
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 1);
    }

    #[test]
    fn key_changes_with_lock_python_and_group() {
        let k = env_key("pillow", "pillow==1", "3.11.7");
        assert_ne!(k, env_key("pillow", "pillow==2", "3.11.7"));
        assert_ne!(k, env_key("pillow", "pillow==1", "3.12.0"));
        assert_ne!(k, env_key("torch_stack", "pillow==1", "3.11.7"));
        assert_eq!(k, env_key("pillow", "pillow==1", "3.11.7"));
    }
}
