//! Config errors a user can fix: they name the file, the line and column where known, and carry a
//! hint (the nearest valid key or value, or the list of valid values). Exit code 2. `Source`
//! remembers where a config came from, so resolution and validation can locate their errors.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: Option<u64>,
    pub column: Option<u64>,
    pub message: String,
    pub hint: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        write!(f, ": {}", self.message)?;
        if !self.hint.is_empty() {
            write!(f, "\n  hint: {}", self.hint)?;
        }
        Ok(())
    }
}

impl ConfigError {
    pub fn new(file: &Path, message: impl Into<String>, hint: impl Into<String>) -> Self {
        ConfigError {
            file: file.to_path_buf(),
            line: None,
            column: None,
            message: message.into(),
            hint: hint.into(),
        }
    }

    pub fn io(file: &Path, err: &std::io::Error) -> Self {
        if err.kind() == std::io::ErrorKind::InvalidData {
            return ConfigError::new(
                file,
                "not UTF-8 text (a binary file, or another text encoding such as UTF-16)",
                "a config is YAML saved as UTF-8; check the path given to --config, or re-save the file as UTF-8",
            );
        }
        ConfigError::new(
            file,
            format!("cannot read config: {err}"),
            "check the path given to --config",
        )
    }

    /// Turns a YAML/serde error into a located error with a suggestion where one exists.
    pub fn from_parse(file: &Path, text: &str, err: &serde_saphyr::Error) -> Self {
        let raw = err.without_snippet().to_string();
        let loc = err.location();
        let message = strip_location(&first_line(&raw));
        let token = loc.and_then(|l| token_at(text, l.line(), l.column()));
        let (message, hint) = match unknown_name_hint(&message) {
            Some(hint) => (message, hint),
            None => explain(&message, text, token.as_deref()),
        };
        ConfigError {
            file: file.to_path_buf(),
            line: loc.map(|l| l.line()),
            column: loc.map(|l| l.column()),
            message,
            hint,
        }
    }

    /// A semantic error at `key_path` (e.g. `["execution", "workers"]`), located in `text` if found.
    pub fn at_key(
        file: &Path,
        text: &str,
        key_path: &[&str],
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        let mut e = ConfigError::new(file, message, hint);
        if let Some((line, col)) = locate_key(text, key_path) {
            e.line = Some(line);
            e.column = Some(col);
        }
        e
    }
}

/// Where to look when nothing more specific applies.
const GENERIC_HINT: &str =
    "see configs/examples/ for valid configs; `augbench validate --config F` checks a file";

/// A clearer message and a specific hint for the parser's terse ones.
fn explain(message: &str, text: &str, token: Option<&str>) -> (String, String) {
    let given = token.map(|t| format!(", got `{t}`")).unwrap_or_default();
    let pair = |m: String, h: &str| (m, h.to_string());
    if text.trim().is_empty() {
        return pair(
            "the file is empty".into(),
            "a config needs at least `version: 1`; see configs/examples/ for complete ones",
        );
    }
    if let Some(kind) = message.strip_prefix("invalid ") {
        let want = match kind {
            "u64" | "u32" | "u16" | "u8" | "usize" => "a whole number of at least 0",
            "i64" | "i32" => "a whole number",
            "f64" | "f32" => "a number",
            "bool" => "true or false",
            _ => return pair(message.to_string(), GENERIC_HINT),
        };
        return pair(
            format!("expected {want}{given}"),
            "write the number plainly (no quotes, no unit); counts are whole numbers such as 10",
        );
    }
    if let Some(key) = message.strip_prefix("duplicate mapping key: ") {
        let key = key.split(',').next().unwrap_or(key).trim();
        return pair(
            format!("duplicate key `{key}`"),
            "each key may appear once in its section; remove one of the two",
        );
    }
    if message.contains("tabs disallowed") {
        return pair(
            "a tab in the indentation".into(),
            "YAML indents with spaces only; replace the tabs with spaces",
        );
    }
    if message == "expected mapping start" {
        return pair(
            format!("expected a mapping (`key: value` lines){given}"),
            "a config is a mapping such as `version: 1` and `selection:` sections; see configs/examples/",
        );
    }
    if message == "missing field `version`" {
        return pair(
            message.to_string(),
            "add `version: 1` as the first line (the config format version)",
        );
    }
    if message.starts_with("mapping values are not allowed") {
        return pair(
            format!("{message} (a key indented deeper than its section)"),
            "line up this key with the other keys of its section, using spaces",
        );
    }
    if message.contains("unclosed quote") {
        return pair(
            message.to_string(),
            "close the quoted string on the same line, or drop the quotes",
        );
    }
    if message == "expected sequence start" {
        return pair(
            format!("expected a list{given}"),
            "write a list as `[a, b]` or as `- a` lines",
        );
    }
    pair(message.to_string(), GENERIC_HINT)
}

/// The word at 1-based (line, column) of `text`, up to the end of the line or a separator.
fn token_at(text: &str, line: u64, column: u64) -> Option<String> {
    let l = text
        .lines()
        .nth(usize::try_from(line).ok()?.checked_sub(1)?)?;
    let start = usize::try_from(column).ok()?.checked_sub(1)?;
    let rest = l.get(start..)?;
    // A flow collection (`{a: 1}`, `[a]`) is shown whole; a scalar up to its separator.
    let end = if rest.starts_with(['{', '[']) {
        rest.find(" #").unwrap_or(rest.len())
    } else {
        rest.find([',', ']', '}', '#']).unwrap_or(rest.len())
    };
    let token = rest[..end].trim();
    (!token.is_empty() && token.len() <= 80).then(|| token.to_string())
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" and "unknown variant" messages,
/// suggests the nearest valid name and lists the valid ones.
fn unknown_name_hint(message: &str) -> Option<String> {
    if !(message.contains("unknown field") || message.contains("unknown variant")) {
        return None;
    }
    let given = message.split('`').nth(1)?;
    let (_, tail) = message.split_once("expected one of ")?;
    let valid: Vec<&str> = tail
        .split(", ")
        .map(|v| v.trim().trim_matches('`'))
        .filter(|v| !v.is_empty())
        .collect();
    Some(suggest(given, &valid))
}

/// The file:line:column prefix already says where; drop the parser's own " at line L, column C".
fn strip_location(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// "did you mean `x`?" when something is close, plus the full list of valid names.
pub fn suggest(given: &str, valid: &[&str]) -> String {
    let list = valid
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match nearest(given, valid) {
        Some(best) => format!("did you mean `{best}`? valid: {list}"),
        None => format!("valid: {list}"),
    }
}

/// The nearest valid name by normalized Damerau–Levenshtein similarity, if it is close enough.
pub fn nearest<'a>(given: &str, valid: &[&'a str]) -> Option<&'a str> {
    valid
        .iter()
        .map(|v| (strsim::normalized_damerau_levenshtein(given, v), *v))
        .filter(|(score, _)| *score >= 0.6)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, v)| v)
}

/// Finds `key_path` in a block-style YAML text: each key must appear, in order, at a deeper
/// indentation than its parent. Returns 1-based (line, column) of the last key.
pub fn locate_key(text: &str, key_path: &[&str]) -> Option<(u64, u64)> {
    let mut min_indent = 0usize;
    let mut found = None;
    let mut lines = text.lines().enumerate();
    for key in key_path {
        let pattern = format!("{key}:");
        let (idx, indent) = lines.by_ref().find_map(|(i, l)| {
            let trimmed = l.trim_start();
            let indent = l.len() - trimmed.len();
            (indent >= min_indent && trimmed.starts_with(&pattern)).then_some((i, indent))
        })?;
        found = Some((idx as u64 + 1, indent as u64 + 1));
        min_indent = indent + 1;
    }
    found
}

/// Where a config came from, so errors can point at the right line.
#[derive(Debug, Clone)]
pub struct Source {
    pub file: PathBuf,
    pub text: String,
    /// (config key, flag) pairs set from the command line; errors on those keys name the flag.
    pub cli_keys: Vec<(&'static str, &'static str)>,
}

impl Source {
    pub fn new(file: &Path, text: &str) -> Self {
        Source {
            file: file.to_path_buf(),
            text: text.to_string(),
            cli_keys: Vec::new(),
        }
    }

    /// A located error for `key_path`; keys that came from the command line are named as such.
    pub fn error(
        &self,
        key_path: &[&str],
        message: String,
        hint: impl Into<String>,
    ) -> ConfigError {
        let last = key_path.last().copied().unwrap_or_default();
        if let Some((_, flag)) = self.cli_keys.iter().find(|(k, _)| *k == last) {
            return ConfigError::new(&self.file, format!("{message} (set by {flag})"), hint);
        }
        ConfigError::at_key(&self.file, &self.text, key_path, message, hint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_nearest_field() {
        let m = "unknown field `num_itms`, expected one of `data_dir`, `num_items`";
        let h = unknown_name_hint(m).unwrap();
        assert!(h.starts_with("did you mean `num_items`?"), "{h}");
        let m = "unknown field `num_itms`, expected one of data_dir, num_items";
        let h = unknown_name_hint(m).unwrap();
        assert!(h.starts_with("did you mean `num_items`?"), "{h}");
        assert!(h.ends_with("`data_dir`, `num_items`"), "{h}");
    }

    #[test]
    fn location_suffix_is_dropped() {
        assert_eq!(
            strip_location("unknown field `x` at line 5, column 3"),
            "unknown field `x`"
        );
    }

    #[test]
    fn terse_parser_messages_are_explained() {
        let (m, h) = explain("invalid u64", "x: -5\n", Some("-5"));
        assert_eq!(m, "expected a whole number of at least 0, got `-5`");
        assert!(h.contains("whole numbers"), "{h}");
        let (m, _) = explain(
            "duplicate mapping key: mode, set DuplicateKeyPolicy in Options if acceptable",
            "a: 1",
            None,
        );
        assert_eq!(m, "duplicate key `mode`");
        assert_eq!(explain("anything", " \n", None).0, "the file is empty");
        assert_eq!(token_at("a: 1\nb: [x, y]\n", 2, 5), Some("x".into()));
    }

    #[test]
    fn no_suggestion_when_nothing_is_close() {
        assert_eq!(nearest("zzzzzz", &["num_items", "data_dir"]), None);
    }

    #[test]
    fn locates_nested_keys() {
        let text = "version: 1\nexecution:\n  num_runs: 3\n  workers: 2\n";
        assert_eq!(locate_key(text, &["execution", "workers"]), Some((4, 3)));
        assert_eq!(locate_key(text, &["execution", "missing"]), None);
    }
}
