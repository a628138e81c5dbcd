//! Context sections of the HTML report: library versions, and the run parameters of each
//! group, shown once when every library used the same ones (the machine card is `machine`).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::markup::esc;
use crate::model::{Dataset, Source};
use crate::table::Table;

/// One key/value table of a JSON object (nested values shown as compact JSON).
fn kv_table(out: &mut String, v: &Value) {
    out.push_str("<table class=\"kv\"><tbody>");
    match v.as_object() {
        Some(map) if !map.is_empty() => {
            for (k, x) in map {
                let text = x.as_str().map_or_else(|| x.to_string(), str::to_string);
                let _ = write!(out, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(&text));
            }
        }
        _ => out.push_str("<tr><td>not recorded</td><td></td></tr>"),
    }
    out.push_str("</tbody></table>\n");
}

/// Distinct values of a field across sources, each with the libraries that reported it.
fn distinct<'a>(
    sources: impl Iterator<Item = &'a Source>,
    f: impl Fn(&Source) -> &Value,
) -> Vec<(Value, Vec<String>)> {
    let mut out: Vec<(Value, Vec<String>)> = Vec::new();
    for s in sources {
        let v = f(s).clone();
        match out.iter_mut().find(|(x, _)| *x == v) {
            Some((_, libs)) if !libs.contains(&s.library) => libs.push(s.library.clone()),
            Some(_) => {}
            None => out.push((v, vec![s.library.clone()])),
        }
    }
    out
}

pub fn versions(out: &mut String, data: &Dataset) {
    out.push_str(
        "<section id=\"versions\"><h2>Library versions</h2><table class=\"kv\"><thead><tr><th>Library</th>\
         <th>Version</th><th>Other packages in its environment</th></tr></thead><tbody>",
    );
    let mut rows: BTreeMap<(String, String), String> = BTreeMap::new();
    for s in &data.sources {
        let others: Vec<String> = s
            .library_versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        rows.entry((s.library.clone(), s.library_version.clone()))
            .or_insert_with(|| others.join(", "));
    }
    for ((lib, version), others) in rows {
        let version = if version.is_empty() {
            "not recorded".to_string()
        } else {
            version
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&lib),
            esc(&version),
            esc(&others)
        );
    }
    out.push_str("</tbody></table></section>\n");
}

/// Run parameters and thread settings of one group, collapsed.
pub fn params(out: &mut String, data: &Dataset, t: &Table) {
    let sources = || data.sources.iter().filter(|s| s.key == t.key);
    out.push_str("<details><summary>Run parameters and thread settings</summary>");
    for (title, field) in [("Run parameters", 0), ("Thread settings", 1)] {
        let sets = distinct(sources(), |s| {
            if field == 0 {
                &s.benchmark_params
            } else {
                &s.thread_settings
            }
        });
        for (v, libs) in &sets {
            let who = if sets.len() == 1 {
                "all libraries".to_string()
            } else {
                libs.join(", ")
            };
            let _ = write!(out, "<h3>{title} ({})</h3>", esc(&who));
            kv_table(out, v);
        }
    }
    out.push_str("</details>\n");
}
