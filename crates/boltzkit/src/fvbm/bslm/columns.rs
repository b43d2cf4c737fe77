//! The rows a BSLM kernel call works on: the columns of a coupling's two units ([`Pair`]),
//! what the next coupling's derivative reads in the same pass ([`Next`]), and the lane
//! count every row loop steps by. Shared by the dispatching kernels and their AVX2 versions,
//! it imports neither.

/// Rows per step of every loop (two AVX2 vectors).
pub(super) const LANES: usize = 8;

/// The columns of the two units a coupling update moves.
pub(super) struct Pair<'a> {
    /// Values of unit `j`.
    pub xj: &'a [f32],
    /// Values of unit `k`.
    pub xk: &'a [f32],
    /// Means of unit `j`.
    pub ej: &'a mut [f64],
    /// Means of unit `k`.
    pub ek: &'a mut [f64],
}

/// What the next coupling `m_jn` needs for its derivative, read in the same pass.
pub(super) struct Next<'a> {
    /// `w·x` of unit `j`.
    pub wxj: &'a [f32],
    /// `w·x` of unit `n`.
    pub wxn: &'a [f32],
    /// Means of unit `n`.
    pub en: &'a [f64],
}
