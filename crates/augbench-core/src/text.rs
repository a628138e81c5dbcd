//! Plain-text tables for the terminal: columns padded to their widest cell, the first column
//! left-aligned and the others aligned as asked, an optional rule under the header row.

/// Renders `rows` (the first is the header). Numeric columns read best with `right_align`.
pub fn columns(rows: &[Vec<String>], right_align: bool, header_rule: bool) -> String {
    let cols = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i > 0 && right_align {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if n == 0 && header_rule {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::columns;

    #[test]
    fn pads_and_aligns() {
        let rows = vec![
            vec!["a".to_string(), "n".to_string()],
            vec!["long".to_string(), "12".to_string()],
        ];
        assert_eq!(columns(&rows, true, true), "a      n\n--------\nlong  12\n");
        assert_eq!(columns(&rows, false, false), "a     n\nlong  12\n");
    }
}
