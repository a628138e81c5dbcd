//! JSON text repair before parsing: Python's `json` writes `NaN`, `Infinity` and `-Infinity`
//! as bare tokens, which are not JSON. Outside strings they become `null` (a missing value).

use std::borrow::Cow;

const TOKENS: [&str; 3] = ["-Infinity", "Infinity", "NaN"];

/// Replaces bare non-finite number tokens outside string literals with `null`.
pub fn non_finite_to_null(text: &str) -> Cow<'_, str> {
    if !TOKENS.iter().any(|t| text.contains(t)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
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
            out.push_str("null");
            rest = &rest[t.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_tokens_outside_strings_only() {
        let s = r#"{"a": NaN, "b": [-Infinity, 1, Infinity], "c": "NaN \" NaN"}"#;
        assert_eq!(
            non_finite_to_null(s),
            r#"{"a": null, "b": [null, 1, null], "c": "NaN \" NaN"}"#
        );
    }

    #[test]
    fn leaves_plain_json_alone() {
        assert!(matches!(
            non_finite_to_null(r#"{"a": 1}"#),
            Cow::Borrowed(_)
        ));
    }
}
