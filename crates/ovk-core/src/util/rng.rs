//! A small seeded generator (SplitMix64) for splits, label draws, Nyström samples and
//! synthetic data. Reproducible across platforms and releases — which an external crate's
//! stream does not promise — so the same seed gives bit-identical sessions.

/// The SplitMix64 generator; its state is one u64.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x853c_49e6_748f_ea9b)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform(); // (0, 1]
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: usize) -> usize {
        let v = (self.uniform() * n as f64) as usize;
        // `v % n.max(1)`, whose division is rarely needed (v reaches n only by rounding):
        // shuffling 10⁶ indices took a median 28 ms against 33 ms with it (2026-12-02).
        if v < n {
            v
        } else {
            v % n.max(1)
        }
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }

    /// `k` distinct indices from `0..n`, in random order.
    pub fn sample(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        self.shuffle(&mut idx);
        idx.truncate(k.min(n));
        idx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_draws_what_the_modulo_formula_drew() {
        // Splits and samples of saved sessions replay only if every draw is unchanged.
        for n in [
            0usize,
            1,
            2,
            3,
            7,
            1000,
            999_983,
            1 << 40,
            (1 << 53) + 1,
            usize::MAX,
        ] {
            let (mut a, mut b) = (Rng::new(n as u64), Rng::new(n as u64));
            for _ in 0..10_000 {
                let want = (b.uniform() * n as f64) as usize % n.max(1);
                assert_eq!(a.below(n), want, "n = {n}");
            }
        }
    }

    #[test]
    fn reproducible_and_uniformish() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = Rng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        let mut r = Rng::new(1);
        let mean: f64 = (0..10_000).map(|_| r.uniform()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02);
        let mut s = r.sample(10, 10);
        s.sort();
        assert_eq!(s, (0..10).collect::<Vec<_>>());
    }
}
