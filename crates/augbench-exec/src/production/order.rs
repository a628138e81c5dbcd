//! The file order of a production cell: the reference's rule, one permutation per seed shared by
//! every implementation, drawn exactly as `numpy.random.default_rng(seed).permutation(n)` draws
//! it (numpy's `SeedSequence` seeding a PCG64 XSL-RR 128/64 generator, then a Fisher–Yates
//! shuffle from the last item down with numpy's masked-rejection bounded integers), so seed 137
//! reads the files in the reference's order. Its name in every cell's settings is
//! `augbench_core::production::FILE_ORDER`.

use rand::RngCore;
use rand_pcg::Lcg128Xsl64;

/// `numpy.random.default_rng(seed).permutation(count)`.
pub fn permutation(count: u64, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..count).collect();
    let mut rng = NumpyPcg64::new(seed);
    for i in (1..order.len()).rev() {
        let j = rng.interval(i as u64) as usize;
        order.swap(i, j);
    }
    order
}

/// numpy's PCG64 bit generator: the 128-bit LCG with XSL-RR output (`rand_pcg`'s `Lcg128Xsl64`
/// is the same generator and seeding), and numpy's 32-bit draws, which hand out the low half of
/// a 64-bit draw and keep the high half for the next one.
struct NumpyPcg64 {
    pcg: Lcg128Xsl64,
    kept: Option<u32>,
}

impl NumpyPcg64 {
    fn new(seed: u64) -> NumpyPcg64 {
        let words = seed_sequence_state(seed);
        let state = (u128::from(words[0]) << 64) | u128::from(words[1]);
        let stream = (u128::from(words[2]) << 64) | u128::from(words[3]);
        NumpyPcg64 {
            pcg: Lcg128Xsl64::new(state, stream),
            kept: None,
        }
    }

    fn next_u32(&mut self) -> u32 {
        if let Some(high) = self.kept.take() {
            return high;
        }
        let draw = self.pcg.next_u64();
        self.kept = Some((draw >> 32) as u32);
        draw as u32
    }

    /// A uniform integer in `0..=max` (numpy's `random_interval`): draws masked to the smallest
    /// all-ones mask covering `max`, rejected while above it.
    fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = u64::MAX >> max.leading_zeros();
        loop {
            let value = match u32::try_from(max) {
                Ok(_) => u64::from(self.next_u32()) & mask,
                Err(_) => self.pcg.next_u64() & mask,
            };
            if value <= max {
                return value;
            }
        }
    }
}

const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const POOL: usize = 4;

/// `SeedSequence(seed).generate_state(4, uint64)`: the seed's 32-bit words mixed into a pool of
/// four, then eight 32-bit words drawn from the pool and paired little-endian into four u64.
fn seed_sequence_state(seed: u64) -> [u64; 4] {
    let mut entropy = vec![seed as u32];
    if seed >> 32 != 0 {
        entropy.push((seed >> 32) as u32);
    }
    let pool = mixed_pool(&entropy);
    let mut hash = INIT_B;
    let mut words = [0u32; 8];
    for (i, word) in words.iter_mut().enumerate() {
        let mut value = pool[i % POOL] ^ hash;
        hash = hash.wrapping_mul(MULT_B);
        value = value.wrapping_mul(hash);
        *word = value ^ (value >> 16);
    }
    std::array::from_fn(|i| u64::from(words[2 * i]) | (u64::from(words[2 * i + 1]) << 32))
}

fn mixed_pool(entropy: &[u32]) -> [u32; POOL] {
    let mut hash = INIT_A;
    let mut hashmix = |value: u32| {
        let mut value = value ^ hash;
        hash = hash.wrapping_mul(MULT_A);
        value = value.wrapping_mul(hash);
        value ^ (value >> 16)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_MULT_L
            .wrapping_mul(x)
            .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> 16)
    };
    let mut pool = [0u32; POOL];
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..POOL {
        for dst in (0..POOL).filter(|&dst| dst != src) {
            let hashed = hashmix(pool[src]);
            pool[dst] = mix(pool[dst], hashed);
        }
    }
    for &word in entropy.iter().skip(POOL) {
        for slot in pool.iter_mut() {
            *slot = mix(*slot, hashmix(word));
        }
    }
    pool
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy 2.4's `SeedSequence(137).generate_state(4, np.uint64)`.
    #[test]
    fn the_seed_sequence_gives_numpys_state() {
        assert_eq!(
            seed_sequence_state(137),
            [
                4396410553009772154,
                8440790654228043758,
                18171639629394852298,
                2410140694900202080
            ]
        );
    }

    /// The reference's first files for its three seeds over its 10000 images, as
    /// `numpy.random.default_rng(seed).permutation(10000)[:12]` gives them (numpy 2.4).
    #[test]
    fn the_reference_seeds_read_the_reference_file_order() {
        let first = |seed| permutation(10_000, seed)[..12].to_vec();
        assert_eq!(
            first(137),
            [
                565, 969, 6665, 7501, 2646, 8609, 1051, 8262, 3909, 7475, 7543, 5196
            ]
        );
        assert_eq!(
            first(138),
            [
                5283, 5163, 5480, 6331, 5939, 8684, 1130, 8124, 3333, 7166, 8897, 2627
            ]
        );
        assert_eq!(
            first(139),
            [
                4057, 8956, 5944, 3787, 1278, 1972, 9814, 2921, 4964, 4380, 5481, 4192
            ]
        );
    }

    #[test]
    fn a_short_permutation_is_numpys_in_full() {
        let numpy_50 = [
            6, 12, 2, 19, 23, 10, 13, 4, 25, 41, 26, 14, 28, 3, 18, 31, 16, 1, 15, 43, 21, 38, 40,
            42, 46, 47, 11, 36, 35, 44, 17, 20, 49, 33, 9, 30, 32, 8, 7, 39, 24, 5, 0, 22, 27, 45,
            34, 29, 37, 48,
        ];
        assert_eq!(permutation(50, 137), numpy_50);
        assert_eq!(permutation(0, 137), Vec::<u64>::new());
        assert_eq!(permutation(1, 137), [0]);
    }
}
