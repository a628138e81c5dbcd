//! A cloud run from the output folder's side: write the job JSON, task script, shard configs and
//! plan under `<output>/cloud/`; unless it is a dry run, stage and upload the dataset, upload the
//! bundle (this augbench binary and those files), submit the Batch job and write
//! `<output>/cloud_run.json`. Nothing is submitted when an upload fails.

use std::path::{Path, PathBuf};

use anyhow::Context;
use augbench_core::{RunConfig, naming};
use augbench_host::fsutil::write_atomic;

use crate::gcloud;
use crate::job::{self, Layout, Submission};
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
pub fn prepare(cfg: &RunConfig, opts: &Options) -> anyhow::Result<Prepared> {
    let out = augbench_core::naming::output_dir(cfg);
    let cloud_dir = naming::cloud_dir(&out);
    let results = cfg.output.gcs_results_uri.clone().unwrap_or_default();
    let layout = Layout::new(&results, &opts.run_name);
    let (data_uri, staged) = match (&cfg.data.data_dir, &cfg.data.gcs_uri) {
        (Some(dir), _) => {
            let staged = stage::stage(dir, &cloud_dir.join("data.tar"))?;
            (layout.staged_data(&staged.sha256), Some(staged))
        }
        (None, Some(uri)) => (uri.clone(), None),
        (None, None) => anyhow::bail!("a cloud run needs `data.data_dir` or `data.gcs_uri`"),
    };
    let submission = job::build(cfg, layout, &data_uri)?;
    write_files(cfg, &submission, &cloud_dir, &opts.plan_yaml)?;
    Ok(Prepared {
        submission,
        cloud_dir,
        staged,
    })
}

fn bundle_dir(cloud_dir: &Path) -> PathBuf {
    cloud_dir.join("bundle")
}

/// Job JSON per Batch job at `<cloud>/<job>.json`; the bundle (task script, shard configs,
/// resolved config, plan) under `<cloud>/bundle/` exactly as it is uploaded.
fn write_files(
    cfg: &RunConfig,
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
        cfg.to_yaml().as_bytes(),
    )?;
    for j in &sub.jobs {
        let json = serde_json::to_vec_pretty(&j.json).context("encoding the job JSON")?;
        write_atomic(&job_file(cloud_dir, &j.job.name), &json)?;
    }
    Ok(())
}

pub fn job_file(cloud_dir: &Path, job: &str) -> PathBuf {
    cloud_dir.join(format!("{job}.json"))
}

/// Uploads the dataset (unless already there), the binary and the bundle; then submits every
/// job and writes the run record. An upload failure stops before anything is submitted.
pub fn submit(cfg: &RunConfig, prepared: &Prepared, opts: &Options) -> anyhow::Result<CloudRun> {
    let sub = &prepared.submission;
    upload(prepared, opts).context("uploading the run; nothing was submitted")?;
    let mut jobs = Vec::new();
    for j in &sub.jobs {
        gcloud::submit(&j.job, &job_file(&prepared.cloud_dir, &j.job.name))
            .with_context(|| format!("submitting Batch job {}", j.job.name))?;
        jobs.push(JobRecord {
            job: j.job.clone(),
            shards: j.shards.clone(),
        });
    }
    let out = augbench_core::naming::output_dir(cfg);
    let shown = out.display();
    let record = CloudRun {
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

fn upload(prepared: &Prepared, opts: &Options) -> anyhow::Result<()> {
    let sub = &prepared.submission;
    if let Some(staged) = &prepared.staged {
        if gcloud::exists(&sub.data_uri) {
            eprintln!("dataset: {} is already uploaded", sub.data_uri);
        } else {
            eprintln!(
                "dataset: uploading {} files ({} bytes) to {}",
                staged.files, staged.bytes, sub.data_uri
            );
            gcloud::cp_path(&staged.path, &sub.data_uri)?;
        }
    }
    eprintln!("bundle: uploading to {}", sub.layout.bundle(""));
    gcloud::cp_path(&opts.binary, &sub.layout.bundle("augbench"))?;
    let bundle = bundle_dir(&prepared.cloud_dir);
    gcloud::rsync(
        &bundle.to_string_lossy(),
        sub.layout.bundle("").trim_end_matches('/'),
    )?;
    Ok(())
}
