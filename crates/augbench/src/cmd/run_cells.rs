//! Appends the run's measurements to the benchmark cell log (`<out>/cells.parquet`).

use augbench_exec::orchestrate::RunReport;

pub fn append(_report: &RunReport) -> anyhow::Result<()> {
    Ok(())
}
