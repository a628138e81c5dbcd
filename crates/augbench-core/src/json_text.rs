//! JSON text written by other tools, and where its parse errors are. Python's `json` writes bare
//! `NaN`, `Infinity` and `-Infinity`, which are not JSON: outside string literals they are read as
//! `null`. A parse error is placed in the original text as a byte offset plus line and column.

use std::borrow::Cow;
use std::fmt;

const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];
const NULL: &str = "null";

/// Text with its non-finite tokens replaced, and where each replacement went (to map a parse
/// error in the repaired text back to the original).
pub struct Repaired<'a> {
    pub text: Cow<'a, str>,
    /// (offset in the repaired text, length of the original token), in order.
    edits: Vec<(usize, usize)>,
}

impl Repaired<'_> {
    /// The byte offset in the original text of byte `at` of the repaired text.
    pub fn original_offset(&self, at: usize) -> usize {
        let mut shift: isize = 0;
        for &(pos, len) in &self.edits {
            if at < pos {
                break;
            }
            if at < pos + NULL.len() {
                return pos.saturating_add_signed(shift);
            }
            shift += len as isize - NULL.len() as isize;
        }
        at.saturating_add_signed(shift)
    }
}

/// Replaces bare `NaN`, `Infinity` and `-Infinity` tokens outside string literals with `null`.
/// Text inside strings (`"NaN"`, `"Infinity war"`) is never touched.
pub fn non_finite_to_null(text: &str) -> Repaired<'_> {
    if !TOKENS.iter().any(|t| text.contains(t)) {
        return Repaired {
            text: Cow::Borrowed(text),
            edits: Vec::new(),
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut edits = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if let Some(t) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            edits.push((out.len(), t.len()));
            out.push_str(NULL);
            rest = &rest[t.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Repaired {
        text: Cow::Owned(out),
        edits,
    }
}

/// Where in a text a JSON parse stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorAt {
    /// 0-based byte offset of the offending byte (the text's length when it ended early).
    pub byte: usize,
    /// 1-based line and column (column in bytes, as serde_json counts).
    pub line: usize,
    pub column: usize,
    /// The text ended before the value did (a truncated file).
    pub eof: bool,
}

impl fmt::Display for ErrorAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "byte {} (line {}, column {})",
            self.byte, self.line, self.column
        )
    }
}

/// The place of `err` in `text`, which must be the text serde_json parsed. `None` when the
/// error has no position (serde_json reports line 0 then).
pub fn error_at(text: &str, err: &serde_json::Error) -> Option<ErrorAt> {
    error_at_offset(text, err).map(|byte| locate(text, byte, err.is_eof()))
}

/// Like [`error_at`], for an error in `repaired.text`, placed in `original`.
pub fn error_at_repaired(
    original: &str,
    repaired: &Repaired<'_>,
    err: &serde_json::Error,
) -> Option<ErrorAt> {
    let at = error_at_offset(&repaired.text, err)?;
    let byte = if err.is_eof() {
        original.len()
    } else {
        repaired.original_offset(at).min(original.len())
    };
    Some(locate(original, byte, err.is_eof()))
}

/// serde_json's message without its trailing " at line L column C".
pub fn message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

/// Byte offset of serde_json's (line, column): the column counts bytes of that line, and points
/// at the byte it stopped on (column 0: the newline ending the line before).
fn error_at_offset(text: &str, err: &serde_json::Error) -> Option<usize> {
    if err.line() == 0 {
        return None;
    }
    if err.is_eof() {
        return Some(text.len());
    }
    let line_start = if err.line() == 1 {
        0
    } else {
        text.bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'\n')
            .nth(err.line() - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    Some(
        (line_start + err.column())
            .saturating_sub(1)
            .min(text.len()),
    )
}

/// 1-based line and column of byte `byte` of `text`.
fn locate(text: &str, byte: usize, eof: bool) -> ErrorAt {
    let before = &text.as_bytes()[..byte.min(text.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    ErrorAt {
        byte,
        line,
        column: byte - line_start + 1,
        eof,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(text: &str) -> serde_json::Error {
        serde_json::from_str::<serde_json::Value>(text).unwrap_err()
    }

    #[test]
    fn replaces_tokens_outside_strings_only() {
        let s = r#"{"a": NaN, "b": [-Infinity, 1, Infinity], "c": "NaN \" NaN"}"#;
        assert_eq!(
            non_finite_to_null(s).text,
            r#"{"a": null, "b": [null, 1, null], "c": "NaN \" NaN"}"#
        );
        assert!(matches!(
            non_finite_to_null(r#"{"a": 1}"#).text,
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn offsets_in_the_repaired_text_map_back() {
        let s = r#"[NaN, -Infinity, x]"#;
        let r = non_finite_to_null(s);
        assert_eq!(r.text, "[null, null, x]");
        let x = r.text.find('x').unwrap();
        assert_eq!(r.original_offset(x), s.find('x').unwrap());
        assert_eq!(r.original_offset(2), 1, "inside a replacement: its start");
        let e = error_at_repaired(s, &r, &parse_err(&r.text)).unwrap();
        assert_eq!((e.byte, e.line, e.column), (17, 1, 18));
    }

    #[test]
    fn a_syntax_error_is_placed_on_its_byte() {
        let s = "{\n  \"a\": 1,\n  \"b\": x\n}";
        let e = error_at(s, &parse_err(s)).unwrap();
        assert_eq!(&s[e.byte..=e.byte], "x");
        assert_eq!((e.line, e.column, e.eof), (3, 8, false));
        assert_eq!(e.to_string(), "byte 19 (line 3, column 8)");
    }

    #[test]
    fn a_truncated_text_ends_at_its_length() {
        let s = "{\n  \"a\": [1, 2";
        let e = error_at(s, &parse_err(s)).unwrap();
        assert_eq!((e.byte, e.line, e.eof), (s.len(), 2, true));
        assert!(e.to_string().starts_with("byte 14 (line 2"), "{e}");
        let empty = error_at("", &parse_err("")).unwrap();
        assert_eq!((empty.byte, empty.line, empty.column), (0, 1, 1));
    }

    #[test]
    fn message_drops_the_location_suffix() {
        assert_eq!(message(&parse_err("[1,")), "EOF while parsing a value");
    }
}
