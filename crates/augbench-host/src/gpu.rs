//! NVIDIA GPUs as `nvidia-smi` lists them: the one place augbench asks it. The machine card
//! (`machine::card`) calls it once per process and holds the list; the device question of
//! `augbench run` (is there a CUDA device at all) is asked of that list. Parsing its CSV answer is
//! pure and unit-tested.

use std::process::Command;

use augbench_core::machine_card::MachineGpu;

/// The GPUs `nvidia-smi` lists, in its order; empty where it is missing or fails.
pub fn nvidia_gpus() -> Vec<MachineGpu> {
    Command::new("nvidia-smi")
        .args([
            "--query-gpu=name,memory.total",
            "--format=csv,noheader,nounits",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| parse_gpus(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or_default()
}

/// Whether a worker can be offered a CUDA device: `gpus` (the machine card's list) is not empty
/// and `CUDA_VISIBLE_DEVICES` does not hide them all (empty or `-1`).
pub fn cuda_present(gpus: &[MachineGpu]) -> bool {
    let hidden = std::env::var("CUDA_VISIBLE_DEVICES").is_ok_and(|v| matches!(v.trim(), "" | "-1"));
    !hidden && !gpus.is_empty()
}

/// Parses `name, MiB` lines of `nvidia-smi --query-gpu=name,memory.total` (CSV, no header, no
/// units); a line whose memory is not a number (`[N/A]`) still names a GPU, one without the two
/// fields does not.
pub fn parse_gpus(stdout: &str) -> Vec<MachineGpu> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            let (name, mib) = line.rsplit_once(',')?;
            Some(MachineGpu {
                name: name.trim().to_string(),
                memory_gib: mib.trim().parse::<f64>().ok().map(|m| m / 1024.0),
            })
        })
        .filter(|g| !g.name.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_one_gpu_per_csv_line() {
        let gpus = parse_gpus("NVIDIA L4, 23034\nNVIDIA H200, [N/A]\n\n");
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].name, "NVIDIA L4");
        assert!((gpus[0].memory_gib.unwrap() - 22.494).abs() < 1e-3);
        assert_eq!(gpus[1].memory_gib, None);
        assert!(parse_gpus("").is_empty());
        assert!(parse_gpus("garbage").is_empty());
        assert!(parse_gpus("No devices were found\n").is_empty());
    }
}
