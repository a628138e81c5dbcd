//! The drift sentinel's reference kernel: a few milliseconds of fixed, deterministic memory and
//! arithmetic work (a buffer filled by a xorshift generator, then mixed in passes). Its time only
//! changes when the machine's speed does, so the scheduler times it every round as a record of the
//! host's drift. Served by the native worker (`{"op":"sentinel"}`).

use std::hint::black_box;
use std::time::Instant;

use augbench_core::policy;

/// One run of the kernel over `buf` (refilled first, so every run does the same work); returns a
/// checksum so nothing can be optimized away.
pub fn kernel(buf: &mut [u64], passes: u32) -> u64 {
    let words = buf.len().max(1);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for slot in buf.iter_mut() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *slot = x;
    }
    let mut acc = 0u64;
    for pass in 0..passes {
        let stride = 1 + (pass as usize * 7) % 13;
        for i in 0..words {
            let j = (i * stride) % words;
            let v = buf[j].rotate_left(pass + 1) ^ acc;
            buf[j] = v.wrapping_mul(0x2545_F491_4F6C_DD1D);
            acc = acc.wrapping_add(v);
        }
    }
    acc
}

/// Nanoseconds of each of `loops` runs of the kernel at policy's size. The buffer is allocated
/// once, outside the timings, so page faults of a fresh allocation are not timed.
pub fn time(loops: u64) -> Vec<u64> {
    let mut buf = vec![1u64; (policy::SENTINEL_BYTES / 8).max(1)];
    (0..loops.max(1))
        .map(|_| {
            let t = Instant::now();
            black_box(kernel(black_box(&mut buf), policy::SENTINEL_PASSES));
            t.elapsed().as_nanos() as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_is_deterministic_and_depends_on_its_work() {
        let (mut a, mut b) = (vec![0u64; 1 << 13], vec![7u64; 1 << 13]);
        assert_eq!(
            kernel(&mut a, 3),
            kernel(&mut b, 3),
            "the buffer is refilled"
        );
        assert_ne!(kernel(&mut a, 3), kernel(&mut a, 4));
    }

    #[test]
    fn one_timing_per_loop() {
        let ns = time(2);
        assert_eq!(ns.len(), 2);
        assert!(ns.iter().all(|n| *n > 0));
    }
}
