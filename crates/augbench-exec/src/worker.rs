//! The one place the coordinator builds the command that starts a worker (a `CommandLine`): the
//! `augbench worker` subcommand of this binary for a native library, `python -m augbench_worker`
//! in the library's environment for a Python one, `python -m augbench_clips.bench` for a video
//! decoder, always with its thread settings; and `python -m augbench_clips`, the clip cache's
//! decoder. The protocol's client starts a built one (`Worker::start`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::config::ThreadPolicy;
use augbench_core::plan::Job;
use augbench_core::{Backend, Matrix};
use augbench_env::EnvInfo;
use augbench_host::child::CommandLine;
use indicatif::MultiProgress;

use augbench_protocol::threads::worker_env;

/// Whose worker: a library (or decoder) with its backend and environment group.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub library: &'a str,
    pub backend: Backend,
    pub env_group: &'a str,
    /// An A/B variant's environment in place of the group's own (a job's `variant`).
    pub variant: Option<&'a augbench_core::variant::Variant>,
}

impl<'a> Target<'a> {
    /// The worker of a plan's job.
    pub fn of_job(job: &'a Job) -> Self {
        Target {
            library: &job.adapter,
            backend: job.backend,
            env_group: &job.env_group,
            variant: job.variant.as_ref(),
        }
    }

    /// The worker of a library in the support matrix.
    pub fn of_library(library: &'a str) -> anyhow::Result<Self> {
        let info = Matrix::get()
            .library(library)
            .with_context(|| format!("`{library}` is not in the support matrix"))?;
        Ok(Target {
            library,
            backend: info.backend,
            env_group: &info.env_group,
            variant: None,
        })
    }
}

/// What a worker is started for.
#[derive(Debug, Clone, Copy)]
pub enum Role<'a> {
    /// Transforms of the library (micro, pipeline, the equivalence check), optionally the ones
    /// of a `--spec` file.
    Transforms { spec: Option<&'a Path> },
    /// Timing the library as a video decoder.
    Decoder,
}

/// The command that starts `target`'s worker for `role` under `threads`; a Python worker's
/// environment is built first when missing (`refresh`: re-resolve its requirements).
pub fn command(
    target: Target<'_>,
    role: Role<'_>,
    threads: ThreadPolicy,
    refresh: bool,
    mp: &MultiProgress,
) -> anyhow::Result<CommandLine> {
    let library = target.library;
    let python = || match target.variant {
        Some(v) => augbench_env::ensure_variant(target.env_group, v, Some(mp)),
        None => augbench_env::ensure(target.env_group, refresh, Some(mp)),
    };
    match (role, target.backend) {
        (Role::Decoder, _) => {
            let mut cmd = decoder_worker_command(&python()?, library)?;
            cmd.env.extend(worker_env(threads));
            Ok(cmd)
        }
        (Role::Transforms { .. }, Backend::NativeWorker) => {
            transforms_command(None, library, None, threads)
        }
        // DALI's worker is a Python worker whose pipeline ops build DALI's own pipeline.
        (Role::Transforms { spec }, Backend::PythonWorker | Backend::DaliPipeline) => {
            transforms_command(Some(&python()?), library, spec, threads)
        }
    }
}

/// The transforms worker of `library` under `threads`: in `env` (built already) a Python worker,
/// without one this binary's native worker. `command` and production's workers both start theirs
/// with it.
pub fn transforms_command(
    env: Option<&EnvInfo>,
    library: &str,
    spec: Option<&Path>,
    threads: ThreadPolicy,
) -> anyhow::Result<CommandLine> {
    let mut cmd = match env {
        Some(env) => python_worker_command(env, library, spec)?,
        None => native_command(library)?,
    };
    cmd.env.extend(worker_env(threads));
    Ok(cmd)
}

/// Any native library's worker serves the drift sentinel's kernel; this one is the one it starts.
const SENTINEL_LIBRARY: &str = "image";

/// The drift sentinel's worker: the native worker of `SENTINEL_LIBRARY`, labelled as the sentinel.
pub fn sentinel_command() -> anyhow::Result<CommandLine> {
    let mut cmd = native_command(SENTINEL_LIBRARY)?;
    cmd.label = "drift sentinel".into();
    Ok(cmd)
}

/// This binary's `worker` subcommand for a native library.
pub fn native_command(library: &str) -> anyhow::Result<CommandLine> {
    let exe =
        std::env::current_exe().context("locating the augbench binary for the native worker")?;
    // Rebuilt while running: Linux reports "<path> (deleted)"; the running image is still there.
    let self_exe = Path::new("/proc/self/exe");
    let exe = if exe.to_string_lossy().ends_with(" (deleted)") && self_exe.exists() {
        self_exe.to_path_buf()
    } else {
        exe
    };
    Ok(native_worker_command(exe, library))
}

/// `<exe> worker --library <library>`: the native worker of `library` served by the augbench
/// binary at `exe` (this one, or a built one a bench names), without thread settings.
pub fn native_worker_command(exe: PathBuf, library: &str) -> CommandLine {
    CommandLine {
        program: exe,
        args: vec!["worker".into(), "--library".into(), library.into()],
        env: Vec::new(),
        label: format!("{library} worker"),
    }
}

/// The command that starts `library`'s Python worker inside `env` (`python -m augbench_worker`,
/// with the worker package on `PYTHONPATH`), without thread settings.
pub fn python_worker_command(
    env: &EnvInfo,
    library: &str,
    spec: Option<&Path>,
) -> anyhow::Result<CommandLine> {
    let mut args = vec!["--library".to_string(), library.to_string()];
    if let Some(spec) = spec {
        args.push("--spec".into());
        args.push(spec.display().to_string());
    }
    let path = std::env::join_paths([augbench_env::worker_source_dir()?])?;
    let label = format!("{library} worker (env {})", env.group);
    Ok(python_module(env, "augbench_worker", args, path, label))
}

/// The command that starts the video decoder `decoder`'s timing worker inside `env`
/// (`python -m augbench_clips.bench`, with the clip and worker packages on `PYTHONPATH`).
fn decoder_worker_command(env: &EnvInfo, decoder: &str) -> anyhow::Result<CommandLine> {
    let path = std::env::join_paths([
        augbench_env::clips_source_dir()?,
        augbench_env::worker_source_dir()?,
    ])?;
    let args = vec!["--decoder".to_string(), decoder.to_string()];
    let label = format!("{decoder} decoder (env {})", env.group);
    Ok(python_module(
        env,
        "augbench_clips.bench",
        args,
        path,
        label,
    ))
}

/// The clip cache's video decoder, `python -m augbench_clips` in the `video_decode` environment,
/// building that environment first when missing (`refresh`: re-resolve its requirements).
pub fn clip_decoder(
    refresh: bool,
    mp: Option<&MultiProgress>,
) -> anyhow::Result<augbench_media::Decoder> {
    let group = augbench_env::VIDEO_DECODE_GROUP;
    let env = augbench_env::ensure(group, refresh, mp)?;
    let path = std::env::join_paths([augbench_env::clips_source_dir()?])?;
    let label = format!("python -m augbench_clips (env {group})");
    let cmd = python_module(&env, "augbench_clips", Vec::new(), path, label);
    Ok(augbench_media::Decoder::new(cmd, group, &env.lock()?))
}

/// `python -m <module> <args>` in `env`, with `path` as `PYTHONPATH` and no bytecode written.
fn python_module(
    env: &EnvInfo,
    module: &str,
    args: Vec<String>,
    path: std::ffi::OsString,
    label: String,
) -> CommandLine {
    let mut all = vec!["-m".to_string(), module.to_string()];
    all.extend(args);
    CommandLine {
        program: env.python.clone(),
        args: all,
        env: vec![
            ("PYTHONPATH".into(), path.to_string_lossy().into_owned()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ],
        label,
    }
}
