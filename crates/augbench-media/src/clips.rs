//! The clip sampling rule, the one source of truth for which frames of a video make its clip:
//! `linspace(0, n-1, L)` truncated to integers, and a video shorter than the clip repeats its
//! last frame. The Python decoder (`augbench_clips.decode.sample_indices`) implements the same
//! formula; a test runs both over a grid and compares.

/// Name and version of the rule, recorded in results and part of the clip cache key. Bump the
/// version whenever [`sample_indices`] (or its Python twin) changes.
pub const SAMPLING_RULE: &str = "linspace-floor-repeat-last/v1";

/// Frame indices of a clip of `clip_length` frames taken from a video of `frames` frames.
///
/// `frames >= clip_length`: `floor(k * (frames - 1) / (clip_length - 1))` for `k` in
/// `0..clip_length` (just `[0]` when `clip_length == 1`). `frames < clip_length`: `0..frames`,
/// then the last index repeated up to `clip_length`. No frames or an empty clip: no indices.
/// Integer arithmetic, so the rule is exact in every language: NumPy's float
/// `linspace(...).astype(int)` lands just below an integer in rare cases (n=31, L=23, k=11 gives
/// 14 where the exact value is 15); this rule takes the exact value.
pub fn sample_indices(frames: u64, clip_length: u64) -> Vec<u64> {
    if frames == 0 || clip_length == 0 {
        return Vec::new();
    }
    if frames < clip_length {
        let last = frames - 1;
        return (0..clip_length).map(|k| k.min(last)).collect();
    }
    if clip_length == 1 {
        return vec![0];
    }
    let span = u128::from(frames - 1);
    let steps = u128::from(clip_length - 1);
    (0..clip_length)
        .map(|k| (u128::from(k) * span / steps) as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_values() {
        assert_eq!(sample_indices(5, 3), vec![0, 2, 4]);
        assert_eq!(sample_indices(10, 4), vec![0, 3, 6, 9]);
        assert_eq!(
            sample_indices(40, 16),
            vec![0, 2, 5, 7, 10, 13, 15, 18, 20, 23, 26, 28, 31, 33, 36, 39]
        );
        assert_eq!(sample_indices(16, 16), (0..16).collect::<Vec<_>>());
        assert_eq!(sample_indices(7, 1), vec![0]);
        // Where NumPy's float linspace truncates to 14, the exact value is 15.
        assert_eq!(sample_indices(31, 23)[11], 15);
    }

    #[test]
    fn a_short_video_repeats_its_last_frame() {
        assert_eq!(sample_indices(3, 6), vec![0, 1, 2, 2, 2, 2]);
        assert_eq!(sample_indices(1, 4), vec![0, 0, 0, 0]);
    }

    #[test]
    fn nothing_to_sample_gives_no_indices() {
        assert!(sample_indices(0, 16).is_empty());
        assert!(sample_indices(10, 0).is_empty());
    }

    #[test]
    fn equals_the_exact_linspace_truncated() {
        // linspace(0, n-1, L) truncated, with the float error NumPy can have nudged away.
        for n in 1..200u64 {
            for l in 2..40u64 {
                if n < l {
                    continue;
                }
                let want: Vec<u64> = (0..l)
                    .map(|k| (k as f64 * (n - 1) as f64 / (l - 1) as f64 + 1e-9).floor() as u64)
                    .collect();
                assert_eq!(sample_indices(n, l), want, "n={n} L={l}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, rng_seed: proptest::test_runner::RngSeed::Fixed(13), ..ProptestConfig::default() })]

        #[test]
        fn length_range_order_and_ends(n in 1u64..100_000, l in 1u64..300) {
            let idx = sample_indices(n, l);
            prop_assert_eq!(idx.len() as u64, l);
            prop_assert!(idx.iter().all(|&i| i < n));
            prop_assert!(idx.windows(2).all(|w| w[0] <= w[1]));
            prop_assert_eq!(idx[0], 0);
            prop_assert_eq!(*idx.last().unwrap(), if l == 1 { 0 } else { n - 1 });
            if n >= l {
                prop_assert!(idx.windows(2).all(|w| w[0] < w[1]), "distinct when the video is long enough");
            }
        }
    }
}
