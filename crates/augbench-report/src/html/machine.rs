//! The machine card, once: one readable table (CPU model, cores, SIMD, memory, kernel,
//! hypervisor, governor, build, runtime) gathered from every source's system info, whatever
//! format it came in. A fact every source agrees on is one value; where sources differ, each
//! value is listed with the libraries that reported it. Timestamps become one measured span.

use std::fmt::Write;

use serde_json::Value;

use super::markup::esc;
use crate::model::Dataset;

/// Row labels, in display order.
const FACTS: [&str; 11] = [
    "CPU",
    "Cores",
    "SIMD",
    "Memory",
    "GPU",
    "Kernel",
    "Platform",
    "Hypervisor",
    "Governor",
    "Build",
    "Runtime",
];

/// The facts of one system-info value (our machine card, the reference format's, or a cell
/// log's). Only our card has `simd`; its absence marks the others.
fn facts(v: &Value) -> Vec<(&'static str, String)> {
    let s = |p: &str| {
        v.pointer(p).and_then(|x| match x {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        })
    };
    let card = v.get("simd").is_some().then_some(v);
    let mut out = Vec::new();
    let mut push = |label, value: Option<String>| {
        if let Some(x) = value {
            out.push((label, x));
        }
    };
    push("CPU", s("/processor").or(s("/cpu")));
    push("Cores", cores(v));
    push("SIMD", card.and_then(simd));
    push("Memory", memory(v));
    push("GPU", gpus(v).or(s("/gpu")));
    push("Kernel", s("/kernel"));
    push("Platform", s("/platform").or(s("/os")));
    push("Hypervisor", card.and_then(hypervisor));
    push("Governor", s("/governor"));
    push("Build", build(v));
    push(
        "Runtime",
        s("/runtime").or(s("/python_version")).or(s("/rustc")),
    );
    out
}

fn cores(v: &Value) -> Option<String> {
    let n = |p: &str| v.pointer(p).and_then(Value::as_u64);
    let logical = n("/cpu_count").or(n("/cpu_cores"))?;
    Some(match n("/physical_cores") {
        Some(p) => format!("{p} physical, {logical} logical"),
        None => format!("{logical} logical"),
    })
}

fn simd(card: &Value) -> Option<String> {
    let list: Vec<&str> = card
        .get("simd")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Some(if list.is_empty() {
        "none detected".into()
    } else {
        list.join(" · ")
    })
}

fn memory(v: &Value) -> Option<String> {
    if let Some(b) = v.get("memory_total_bytes").and_then(Value::as_f64) {
        return Some(format!("{:.1} GiB", b / f64::from(1u32 << 30)));
    }
    v.get("ram_gb")
        .and_then(Value::as_f64)
        .map(|g| format!("{g:.1} GB"))
}

/// Every GPU of a card, in `nvidia-smi`'s order.
fn gpus(v: &Value) -> Option<String> {
    let names: Vec<&str> = v
        .get("gpus")?
        .as_array()?
        .iter()
        .filter_map(|g| g.get("name").and_then(Value::as_str))
        .collect();
    (!names.is_empty()).then(|| names.join(" · "))
}

/// A card leaves `hypervisor` out where it cannot tell.
fn hypervisor(card: &Value) -> Option<String> {
    Some(match card.get("hypervisor").and_then(Value::as_bool) {
        Some(true) => "yes (virtual machine)".into(),
        Some(false) => "no (bare metal)".into(),
        None => "cannot tell".into(),
    })
}

fn build(v: &Value) -> Option<String> {
    if let Some(b) = v.get("build").filter(|b| b.is_object()) {
        let f = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("?");
        return Some(format!(
            "augbench {} ({}), {}, {} profile, opt-level {}",
            f("version"),
            f("git_sha"),
            f("target"),
            f("profile"),
            f("opt_level")
        ));
    }
    let version = v.get("toolkit_version").and_then(Value::as_str)?;
    let sha = v.get("git_sha").and_then(Value::as_str).unwrap_or("?");
    Some(format!("augbench {version} ({sha})"))
}

/// The section: one table, then the span of the measurements.
pub fn section(out: &mut String, data: &Dataset) {
    out.push_str("<section id=\"machine\"><h2>Machine</h2>\n<table class=\"card\"><tbody>");
    let per_source: Vec<(&str, Vec<(&str, String)>)> = data
        .sources
        .iter()
        .map(|s| (s.library.as_str(), facts(&s.system_info)))
        .collect();
    let mut rows = 0;
    for label in FACTS {
        let mut values: Vec<(String, Vec<&str>)> = Vec::new();
        for (lib, fs) in &per_source {
            let Some((_, v)) = fs.iter().find(|(l, _)| *l == label) else {
                continue;
            };
            match values.iter_mut().find(|(x, _)| x == v) {
                Some((_, libs)) if !libs.contains(lib) => libs.push(lib),
                Some(_) => {}
                None => values.push((v.clone(), vec![lib])),
            }
        }
        if values.is_empty() {
            continue;
        }
        rows += 1;
        let _ = write!(out, "<tr><th scope=\"row\">{label}</th><td>");
        if let [(v, _)] = values.as_slice() {
            out.push_str(&esc(v));
        } else {
            out.push_str("<ul class=\"differs\">");
            for (v, libs) in &values {
                let _ = write!(
                    out,
                    "<li>{} <span class=\"who\">{}</span></li>",
                    esc(v),
                    esc(&libs.join(", "))
                );
            }
            out.push_str("</ul>");
        }
        out.push_str("</td></tr>");
    }
    if rows == 0 {
        out.push_str("<tr><th scope=\"row\">not recorded</th><td></td></tr>");
    }
    out.push_str("</tbody></table>\n");
    span(out, data);
    out.push_str("</section>\n");
}

/// `Measured 2026-01-01T00:00:00Z – 2026-01-01T00:05:00Z` from the sources' timestamps.
fn span(out: &mut String, data: &Dataset) {
    let mut stamps: Vec<&str> = data
        .sources
        .iter()
        .filter_map(|s| s.system_info.get("timestamp").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect();
    stamps.sort_unstable();
    let (Some(first), Some(last)) = (stamps.first(), stamps.last()) else {
        return;
    };
    let text = if first == last {
        format!("Measured {first}")
    } else {
        format!("Measured {first} – {last}")
    };
    let _ = writeln!(
        out,
        "<p class=\"note\">{} · {} result files</p>",
        esc(&text),
        data.sources.len()
    );
}
