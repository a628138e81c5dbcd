//! How a duration reads for people, one format everywhere: precision notes, progress bars, the
//! time split and estimates all print seconds through `seconds`.

/// Seconds for people: `0.4 s`, `12 s`, `5 min 3 s`.
pub fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else {
        let m = (s / 60.0).floor();
        format!("{m:.0} min {:.0} s", s - m * 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_durations_keep_a_decimal_and_long_ones_read_in_minutes() {
        assert_eq!(seconds(0.44), "0.4 s");
        assert_eq!(seconds(12.3), "12 s");
        assert_eq!(seconds(303.0), "5 min 3 s");
    }
}
