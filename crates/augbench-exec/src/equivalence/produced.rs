//! What one library's worker produced for one transform of the equivalence check, read back
//! from its `emit` files: the outputs per seed, or why there are none. The running side fills it
//! (`running`), the verdicts read it (`verdict`).

/// What one library produced for one transform: per seed, the outputs for every input.
#[derive(Debug, Clone)]
pub enum Produced {
    Outputs(Vec<Vec<Output>>),
    Unsupported(String),
    Failed(String),
}

/// One emitted output, read back.
#[derive(Debug, Clone)]
pub struct Output {
    pub shape: [usize; 3],
    pub data: Vec<u8>,
}
