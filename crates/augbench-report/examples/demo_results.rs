//! Writes the deterministic demo results (`augbench_report::sample::demo`) into a folder, laid
//! out as `augbench run` would, so the report commands can be tried without running anything:
//! `cargo run -p augbench-report --example demo_results -- <DIR> [--ab]` (`--ab`: the A/B demo,
//! `sample::ab_demo`, two Pillow variants in the same rounds, instead).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a development tool run by hand, not the product"
)]

fn main() -> anyhow::Result<()> {
    let Some(dir) = std::env::args_os().nth(1) else {
        anyhow::bail!("usage: demo_results <DIR> [--ab]");
    };
    let files = match std::env::args().nth(2).as_deref() {
        None => augbench_report::sample::demo(),
        Some("--ab") => augbench_report::sample::ab_demo(),
        Some(other) => {
            anyhow::bail!("unknown argument {other:?}; usage: demo_results <DIR> [--ab]")
        }
    };
    for file in files {
        println!(
            "{}",
            augbench_report::sample::write(std::path::Path::new(&dir), &file)?.display()
        );
    }
    Ok(())
}
