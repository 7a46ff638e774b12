//! Where the generators' decisions come from: a seeded [`Rng`] for the
//! differential oracle, or libFuzzer's bytes for the fuzz target.

/// A source of decisions.
pub trait Choices {
    /// A number below `n` (`n >= 1`). A source that runs dry answers 0, and
    /// choice 0 is always the simplest one, so generation always ends.
    fn below(&mut self, n: usize) -> usize;
}

/// SplitMix64: small, seeded, the same sequence on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Choices for Rng {
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
