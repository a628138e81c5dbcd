//! Machine paths out of what `augbench publish` writes: the run's results folder and the
//! augbench cache become placeholders (`<results>`, `<augbench cache>`), and any other absolute
//! path in one of this machine's top-level folders (the home, current and temp folders among
//! them) becomes `<local>/<its last part>`. Pure but for `Scrub::for_machine`, which reads those
//! folders from the environment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Characters a path token is made of (after its leading `/`).
fn path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._+@%~-/".contains(c)
}

/// Characters after which a `/` may start a path token.
fn boundary(c: char) -> bool {
    c.is_whitespace() || "\"'=:([{,`;|".contains(c)
}

/// The placeholder for an absolute path outside the named folders, and the one of named
/// folders whose inside says nothing a reader needs (home, current, temp): only the path's last
/// part is kept after it.
pub const LOCAL: &str = "<local>";

/// `<local>`, then the last part of `inside` (a path below a local folder) when it has one.
fn local(inside: &str) -> String {
    match inside.trim_end_matches('/').rsplit('/').next() {
        Some(last) if !last.is_empty() => format!("{LOCAL}/{last}"),
        _ => LOCAL.to_string(),
    }
}

/// The rewriting rules of one machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Scrub {
    /// (folder, placeholder), longest folder first.
    prefixes: Vec<(String, String)>,
    /// The names of the root folder's entries (`usr`, `home`, `tmp`, …).
    roots: BTreeSet<String>,
}

impl Scrub {
    /// Rules for `prefixes` (a folder and its placeholder; `/` and relative folders are
    /// ignored) and the root folder's entry names `roots`.
    pub fn new(prefixes: Vec<(PathBuf, &str)>, roots: BTreeSet<String>) -> Scrub {
        let mut list: Vec<(String, String)> = prefixes
            .into_iter()
            .filter(|(p, _)| p.is_absolute() && p.parent().is_some())
            .map(|(p, with)| {
                let text = p.to_string_lossy().trim_end_matches('/').to_string();
                (text, with.to_string())
            })
            .collect();
        list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
        list.dedup_by(|a, b| a.0 == b.0);
        Scrub {
            prefixes: list,
            roots,
        }
    }

    /// The rules of this machine for a results folder `results`: that folder (as given and
    /// resolved), the augbench cache, the current folder, the home folder and the temp folder.
    pub fn for_machine(results: &Path) -> Scrub {
        let mut prefixes = vec![(results.to_path_buf(), "<results>")];
        if let Ok(real) = results.canonicalize() {
            prefixes.push((real, "<results>"));
        }
        let cache = augbench_host::cache::cache_root();
        prefixes.extend(cache.canonicalize().ok().map(|c| (c, "<augbench cache>")));
        prefixes.push((cache, "<augbench cache>"));
        if let Ok(cwd) = std::env::current_dir() {
            if let Ok(abs) = std::path::absolute(results) {
                prefixes.push((abs, "<results>"));
            }
            prefixes.push((cwd, LOCAL));
        }
        prefixes.extend(std::env::var_os("HOME").map(|h| (PathBuf::from(h), LOCAL)));
        prefixes.push((std::env::temp_dir(), LOCAL));
        let roots = std::fs::read_dir("/")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        Scrub::new(prefixes, roots)
    }

    /// `text` with every named folder replaced by its placeholder, then every other absolute
    /// path that starts in a root folder by `<local>/<last part>`.
    pub fn text(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let mut prev: Option<char> = None;
        while let Some(c) = rest.chars().next() {
            if c == '/' && prev.is_none_or(boundary) {
                let token_len = rest[1..]
                    .find(|ch: char| !path_char(ch))
                    .map_or(rest.len(), |i| i + 1);
                let token = &rest[..token_len];
                if let Some(replaced) = self.path(token) {
                    out.push_str(&replaced);
                    prev = token.chars().last();
                    rest = &rest[token_len..];
                    continue;
                }
            }
            out.push(c);
            prev = Some(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    /// What an absolute path token becomes; `None` when it is not a path of this machine.
    fn path(&self, token: &str) -> Option<String> {
        for (prefix, with) in &self.prefixes {
            if let Some(after) = token.strip_prefix(prefix.as_str())
                && (after.is_empty() || after.starts_with('/'))
            {
                return Some(match with.as_str() {
                    LOCAL => local(&after[after.len().min(1)..]),
                    _ => format!("{with}{after}"),
                });
            }
        }
        let trimmed = token.trim_end_matches('/');
        if trimmed.len() < 2 {
            return None;
        }
        let first = trimmed[1..].split('/').next().unwrap_or("");
        if first.is_empty() || !self.roots.contains(first) {
            return None;
        }
        Some(local(&trimmed[1 + first.len()..]))
    }

    /// `v` with every string (keys included) passed through `text`.
    pub fn json(&self, v: Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|i| self.json(i)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.json(v)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// Paths of this machine still in `text`: the named folders, and absolute paths that
    /// start in a root folder (what `text` would rewrite).
    pub fn leaks(&self, text: &str) -> Vec<String> {
        let mut found: Vec<String> = self
            .prefixes
            .iter()
            .filter(|(p, _)| contains_path(text, p))
            .map(|(p, _)| p.clone())
            .collect();
        if self.text(text) != text && found.is_empty() {
            found.push("an absolute path of this machine".into());
        }
        found
    }
}

/// Whether `text` holds `prefix` as a path (followed by nothing, `/` or a non-path character).
fn contains_path(text: &str, prefix: &str) -> bool {
    text.match_indices(prefix).any(|(i, _)| {
        text[i + prefix.len()..]
            .chars()
            .next()
            .is_none_or(|c| c == '/' || !path_char(c))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rules() -> Scrub {
        let roots = ["usr", "home", "tmp", "srv", "root"]
            .map(String::from)
            .into_iter()
            .collect();
        Scrub::new(
            vec![
                (
                    PathBuf::from("/home/ann/.cache/augbench"),
                    "<augbench cache>",
                ),
                (PathBuf::from("/home/ann"), LOCAL),
                (PathBuf::from("/srv/out/matrix"), "<results>"),
                (PathBuf::from("/"), "never"),
                (PathBuf::from("relative"), "never"),
            ],
            roots,
        )
    }

    #[test]
    fn named_folders_become_placeholders_longest_first() {
        let s = rules();
        assert_eq!(
            s.text("data at /home/ann/.cache/augbench/datasets/x.jpg"),
            "data at <augbench cache>/datasets/x.jpg"
        );
        assert_eq!(s.text("\"/home/ann/a/b c\""), "\"<local>/b c\"");
        assert_eq!(s.text("/home/ann"), "<local>");
        assert_eq!(s.text("--output=/srv/out/matrix"), "--output=<results>");
        // A folder whose name only starts like a named one is not that folder.
        assert_eq!(s.text("/home/annex/f"), "<local>/f");
    }

    #[test]
    fn other_absolute_paths_keep_only_their_last_part() {
        let s = rules();
        assert_eq!(
            s.text("python /usr/bin/python3 ok"),
            "python <local>/python3 ok"
        );
        assert_eq!(s.text("(/tmp)"), "(<local>)");
    }

    #[test]
    fn text_that_is_not_a_path_is_kept() {
        let s = rules();
        for t in [
            "1,204 img/s",
            "https://github.com/augbench/augbench/blob/main/docs",
            "a / b",
            "</div><svg viewBox=\"0 0 10 10\"/>",
            "±5.0% /s",
            "/opt/x is not a root here",
            "",
        ] {
            assert_eq!(s.text(t), t, "{t}");
            assert!(s.leaks(t).is_empty(), "{t}");
        }
    }

    #[test]
    fn leaks_name_what_is_left_and_json_walks_keys_and_values() {
        let s = rules();
        assert_eq!(s.leaks("x /home/ann/y"), vec!["/home/ann".to_string()]);
        assert_eq!(
            s.leaks("x /usr/lib/z"),
            vec!["an absolute path of this machine"]
        );
        let v = serde_json::json!({"/srv/out/matrix/a": ["/home/ann/b", 1, null]});
        assert_eq!(
            s.json(v),
            serde_json::json!({"<results>/a": ["<local>/b", 1, null]})
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]
        /// Whatever the text around it, nothing of this machine survives, and a second pass
        /// changes nothing.
        #[test]
        fn scrubbed_text_has_no_leaks_and_is_stable(
            before in "([a-z =:\"(]{0,7}[ =:\"(])?",
            tail in "[a-z0-9._/-]{0,12}",
            after in "[ ,\")]{0,3}[a-z ]{0,6}",
            which in 0usize..4,
        ) {
            let s = rules();
            let root = ["/home/ann", "/home/ann/.cache/augbench", "/srv/out/matrix", "/usr"][which];
            let text = format!("{before}{root}/{tail}{after}");
            let once = s.text(&text);
            prop_assert!(s.leaks(&once).is_empty(), "{text} -> {once}");
            prop_assert_eq!(s.text(&once), once.clone());
        }
    }
}
