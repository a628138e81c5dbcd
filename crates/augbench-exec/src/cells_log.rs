//! Appends a run's measurements to the benchmark cell log (`<out>/cells.parquet`). The run id
//! hashes the resolved config (without `resume`), so resuming a run replaces its rows; a cloud
//! run's shards record the same id.

use crate::outcome::RunReport;
use augbench_cells::{AppendReport, append_bench_cells, cells_from_results};
use augbench_core::{RunConfig, naming};
use sha2::{Digest, Sha256};

/// Appends the report's written result files as cells; `None` when nothing was measured.
pub fn append(cfg: &RunConfig, report: &RunReport) -> anyhow::Result<Option<AppendReport>> {
    let run_id = run_id(cfg);
    let rustc = augbench_host::facts::rustc_version();
    let cells: Vec<_> = report
        .written()
        .into_iter()
        // Each file's own machine card: the machine is probed once, when the run starts.
        .flat_map(|f| cells_from_results(f, &run_id, &rustc))
        .filter(|c| !c.status.is_empty())
        .collect();
    if cells.is_empty() {
        return Ok(None);
    }
    let path = naming::cells_log(&report.out_dir);
    Ok(Some(append_bench_cells(&path, &cells)?))
}

/// First 12 hex digits of the SHA-256 of the resolved config with `resume` cleared.
pub fn run_id(cfg: &RunConfig) -> String {
    let mut c = cfg.clone();
    c.execution.resume = Some(false);
    let digest = Sha256::digest(c.to_yaml().as_bytes());
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_does_not_change_the_run_id_but_other_settings_do() {
        let mut a = RunConfig {
            version: 1,
            ..Default::default()
        };
        let base = run_id(&a);
        a.execution.resume = Some(true);
        assert_eq!(run_id(&a), base);
        a.execution.num_runs = Some(9);
        assert_ne!(run_id(&a), base);
    }
}
