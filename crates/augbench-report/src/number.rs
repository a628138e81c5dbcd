//! How a throughput is written in every table, plot and export: its decimals and its text.
//! Below the tables and the exports, which both use it.

/// Decimals for a throughput: 0 from 100 up, 1 from 10 up, else 2.
pub fn decimals(x: f64) -> usize {
    match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    }
}

/// A throughput with `decimals(x)` digits; whole numbers below 100 drop a `.0` tail.
pub fn fmt_num(x: f64) -> String {
    let s = format!("{x:.*}", decimals(x));
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}
