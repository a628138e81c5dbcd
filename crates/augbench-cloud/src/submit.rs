//! A run on another engine from the output folder's side: write the job spec, task script, shard
//! configs and plan under `<output>/cloud/`; unless it is a dry run, check the engine, stage and
//! upload the dataset, upload the bundle (this augbench binary and those files) to the run's
//! store, submit the job and write `<output>/cloud_run.json`. Nothing is submitted when a check
//! or an upload fails, and an output folder that already follows a run is never reused.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::config::CloudProvider;
use augbench_core::{RunConfig, UsageError, naming};
use augbench_host::fsutil::write_atomic;

use crate::engine::Engine;
use crate::engines;
use crate::job::{self, Layout, Request, Submission, job_file};
use crate::record::{CloudRun, JobRecord};
use crate::stage;

/// How to run a resolved cloud config.
#[derive(Debug, Clone)]
pub struct Options {
    /// Write the files and call nothing.
    pub dry_run: bool,
    /// The Linux x86_64 augbench binary the VMs run (this one).
    pub binary: PathBuf,
    /// Names the run prefix and the Batch job (`<scenario>-<mode>-<config hash>-<time>`).
    pub run_name: String,
    /// The run id of the cells (the config hash).
    pub cell_run_id: String,
    /// The plan, as `augbench plan` prints it.
    pub plan_yaml: String,
}

/// The local files of a prepared run.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub submission: Submission,
    pub cloud_dir: PathBuf,
    /// The staged tarball when `data.data_dir` was packed here.
    pub staged: Option<stage::Staged>,
}

/// `production-<config hash>-<UTC time>` for a production request.
pub fn production_run_name(req: &Request) -> String {
    let hash = augbench_core::production::cell::sha256_hex(req.resolved_yaml.as_bytes());
    let time = chrono::Utc::now().format("%Y%m%dt%H%M%S");
    format!("production-{}-{time}", &hash[..12])
}

/// `<scenario>-<mode>-<config hash>-<UTC time>`.
pub fn run_name(cfg: &RunConfig, cell_run_id: &str) -> String {
    let time = chrono::Utc::now().format("%Y%m%dt%H%M%S");
    let scenario = cfg.selection.scenario.as_deref().unwrap_or("run");
    let mode = cfg
        .selection
        .mode
        .map(|m| m.to_string())
        .unwrap_or_default();
    format!("{scenario}-{mode}-{cell_run_id}-{time}")
}

/// Stages the dataset when it is local and writes every file of the run under `<output>/cloud/`.
pub fn prepare(req: &Request, opts: &Options) -> anyhow::Result<Prepared> {
    let cloud_dir = naming::cloud_dir(&req.output);
    let layout = Layout::new(&req.store_root, &opts.run_name);
    let slurm = req.cloud.provider == Some(CloudProvider::Slurm);
    let (data_uri, staged) = match (&req.data.data_dir, &req.data.gcs_uri) {
        (Some(dir), _) => {
            let staged = stage::stage(dir, &cloud_dir.join("data.tar"))?;
            (layout.staged_data(&staged.sha256), Some(staged))
        }
        (None, Some(uri)) => (uri.clone(), None),
        // Slurm tasks generate the embedded dataset themselves (the same seeded images).
        (None, None) if slurm => (String::new(), None),
        (None, None) => anyhow::bail!("a cloud run needs `data.data_dir` or `data.gcs_uri`"),
    };
    let submission = job::build(req, layout, &data_uri)?;
    write_files(req, &submission, &cloud_dir, &opts.plan_yaml)?;
    Ok(Prepared {
        submission,
        cloud_dir,
        staged,
    })
}

/// An output folder follows one run: submitting a second into it would hide the first.
fn refuse_reuse(out: &Path) -> anyhow::Result<()> {
    let Ok(earlier) = CloudRun::read(out) else {
        return Ok(());
    };
    Err(UsageError::new(
        format!(
            "{} already follows run {} (submitted {}); its results would be mixed with this run's",
            out.display(),
            earlier.run_name,
            earlier.submitted_utc
        ),
        format!(
            "pass another --output, or follow that run: augbench cloud fetch --output {}",
            out.display()
        ),
    )
    .into())
}

fn bundle_dir(cloud_dir: &Path) -> PathBuf {
    cloud_dir.join("bundle")
}

/// Job JSON per Batch job at `<cloud>/<job>.json`; the bundle (task script, shard configs,
/// resolved config, plan) under `<cloud>/bundle/` exactly as it is uploaded.
fn write_files(
    req: &Request,
    sub: &Submission,
    cloud_dir: &Path,
    plan_yaml: &str,
) -> anyhow::Result<()> {
    let bundle = bundle_dir(cloud_dir);
    write_atomic(&bundle.join("task.sh"), sub.task_script.as_bytes())?;
    for (index, text) in &sub.shard_configs {
        write_atomic(
            &bundle.join(format!("shards/{index}.yaml")),
            text.as_bytes(),
        )?;
    }
    write_atomic(&bundle.join("plan.yaml"), plan_yaml.as_bytes())?;
    write_atomic(
        &bundle.join(naming::RESOLVED_CONFIG_FILE),
        req.resolved_yaml.as_bytes(),
    )?;
    for j in &sub.jobs {
        let json = serde_json::to_vec_pretty(&j.json).context("encoding the job JSON")?;
        write_atomic(&job_file(cloud_dir, &j.job.name), &json)?;
    }
    Ok(())
}

/// Checks the engine, uploads the dataset (unless already there), the binary and the bundle;
/// then submits every job and writes the run record. A failed check or upload stops before
/// anything is submitted.
pub fn submit(req: &Request, prepared: &Prepared, opts: &Options) -> anyhow::Result<CloudRun> {
    let sub = &prepared.submission;
    let out = req.output.clone();
    refuse_reuse(&out)?;
    let provider = req.cloud.provider.unwrap_or(CloudProvider::Gcp);
    let engine = engines::of(provider);
    engine.preflight(&req.cloud)?;
    upload(engine.as_ref(), prepared, opts).context("uploading the run; nothing was submitted")?;
    let mut jobs = Vec::new();
    for j in &sub.jobs {
        let job = engine
            .submit(j, &prepared.cloud_dir)
            .with_context(|| format!("submitting job {}", j.job.name))?;
        jobs.push(JobRecord {
            job,
            shards: j.shards.clone(),
        });
    }
    let shown = out.display();
    let record = CloudRun {
        provider,
        kind: req.kind,
        run_name: sub.layout.run_name.clone(),
        run_uri: sub.layout.run_uri.clone(),
        data_uri: sub.data_uri.clone(),
        cell_run_id: opts.cell_run_id.clone(),
        submitted_utc: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        jobs,
        follow: vec![
            format!("augbench cloud status --output {shown}"),
            format!("augbench cloud fetch --output {shown}"),
            format!("augbench cloud cancel --output {shown}"),
        ],
    };
    record.write(&out)?;
    Ok(record)
}

fn upload(engine: &dyn Engine, prepared: &Prepared, opts: &Options) -> anyhow::Result<()> {
    let sub = &prepared.submission;
    let store = engine.store();
    if let Some(staged) = &prepared.staged {
        if store.exists(&sub.data_uri) {
            eprintln!("dataset: {} is already uploaded", sub.data_uri);
        } else {
            eprintln!(
                "dataset: uploading {} files ({} bytes) to {}",
                staged.files, staged.bytes, sub.data_uri
            );
            store.put(&staged.path, &sub.data_uri)?;
        }
    }
    eprintln!("bundle: uploading to {}", sub.layout.bundle(""));
    store.put(&opts.binary, &sub.layout.bundle("augbench"))?;
    let bundle = bundle_dir(&prepared.cloud_dir);
    store.put_dir(&bundle, sub.layout.bundle("").trim_end_matches('/'))?;
    Ok(())
}
