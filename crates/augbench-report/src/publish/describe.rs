//! What a published folder says about itself: its kind, the manifest's head, the machine in
//! one line and the README a reader opens first. Shared by the run and production publishers.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Run,
    Production,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::Production => "production",
        }
    }
}

/// The manifest's fields before its file list. `measured` holds the sources' measurement times;
/// where they record none (production cells and run records carry no clock time), the span is
/// null, not an empty string that reads as a time.
pub fn head(name: &str, kind: Kind, machine: &str, measured: &[String]) -> serde_json::Value {
    let (from, to) = (measured.iter().min(), measured.iter().max());
    serde_json::json!({
        "format": 1,
        "name": name,
        "kind": kind.word(),
        "machine": machine,
        "measured_from": from,
        "measured_to": to,
        "published_with": format!("augbench {}", env!("CARGO_PKG_VERSION")),
        "open": "index.html",
    })
}

/// A machine card in one line: CPU, threads, memory, architecture, OS, GPUs.
pub fn machine_line(card: &augbench_core::machine_card::MachineCard) -> String {
    let gib = card.memory_total_bytes as f64 / (1u64 << 30) as f64;
    let mut line = format!(
        "{}, {} threads, {gib:.0} GiB, {} {}",
        card.processor, card.cpu_count, card.machine, card.platform
    );
    if let Some(simd) = &card.simd {
        line.push_str(&format!(", SIMD {}", simd.join(" ")));
    }
    if card.hypervisor == Some(true) {
        line.push_str(", virtual machine");
    }
    for g in &card.gpus {
        line.push_str(&format!(", GPU {}", g.name));
    }
    line
}

/// The published README: what it is, the machine, how to open it, what each file is.
pub fn readme(name: &str, what: &str, machine: &str, files: &[(&str, &str)]) -> String {
    let mut out = format!(
        "# {name}\n\n{what}\n\nMeasured on: {machine}.\n\nOpen `index.html` in a browser (it loads nothing from the network). Published with augbench {}; `manifest.json` lists every file with its SHA-256.\n\n| file | what |\n|---|---|\n",
        env!("CARGO_PKG_VERSION")
    );
    for (file, about) in files {
        out.push_str(&format!("| `{file}` | {about} |\n"));
    }
    out
}
