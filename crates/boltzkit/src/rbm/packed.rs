//! The packed-weight cache of an [`Rbm`](super::Rbm): `W` and `Wᵀ` packed for the sparse 0/1
//! products ([`PackedWeights`]) and their rewrite block by block during an SGD step
//! ([`Repack`]). A cache, not state: the model's parameters are its own.

use crate::linalg::binary::{self, BlockWriter, Packed};
use crate::linalg::{self, Op};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// `W` and `Wᵀ` packed for the sparse 0/1 products ([`Packed`]), each built on first
/// use and invalidated whenever the parameters may change ([`Rbm::params_mut`](super::Rbm::params_mut)); the buffers
/// of invalidated packings are kept as spares and packed into again (a training run packs
/// both once per update: no allocation, no clearing). A cache, not state: clones start empty
/// and comparisons ignore it.
#[derive(Default)]
pub(crate) struct PackedWeights {
    pub(super) w: OnceLock<Packed>,
    pub(super) wt: OnceLock<Packed>,
    pub(super) spare_w: Mutex<Option<Packed>>,
    pub(super) spare_wt: Mutex<Option<Packed>>,
    /// [`Repack`]'s flags, one per block of rows: whether it is written yet (kept, so a
    /// step allocates nothing once warm).
    written: Vec<AtomicBool>,
}

impl PackedWeights {
    /// `W` (`nv × nh` row-major) packed in strips, built on first use after an invalidation.
    #[inline]
    pub(super) fn packed_w(&self, w: &[f32], nv: usize, nh: usize) -> &Packed {
        self.w.get_or_init(|| {
            let mut p = take_spare(&self.spare_w);
            p.pack(w, nv, nh);
            p
        })
    }

    /// `Wᵀ` of `W` (`nv × nh` row-major) packed in strips, built on first use after an
    /// invalidation.
    #[inline]
    pub(super) fn packed_wt(&self, w: &[f32], nv: usize, nh: usize) -> &Packed {
        self.wt.get_or_init(|| {
            let mut p = take_spare(&self.spare_wt);
            p.pack_transposed(w, nv, nh);
            p
        })
    }

    /// `out ← X·W` (`to_visible = false`) or `X·Wᵀ` for `W` `nv × nh` row-major, shapes
    /// checked by the caller: the sums of selected rows of the packed `W` / `Wᵀ` when `X` is
    /// 0/1 (a row with more ones than zeros as the column totals minus its zeros' rows) and
    /// the entries listed are at most [`binary::max_density`] of all, else the dense GEMM.
    /// The same bits for any thread count.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn product(
        &self,
        w: &[f32],
        nv: usize,
        nh: usize,
        x: &[f32],
        out: &mut [f32],
        to_visible: bool,
    ) {
        let (n_in, n_out) = if to_visible { (nh, nv) } else { (nv, nh) };
        let batch = x.len() / n_in;
        let max_density = binary::max_density(n_in);
        let sparse = binary::with_scratch(|s| {
            s.lists
                .rows_or_complements_of(x, n_in, max_density)
                .map(|_| {
                    let packed = if to_visible {
                        self.packed_wt(w, nv, nh)
                    } else {
                        self.packed_w(w, nv, nh)
                    };
                    binary::sum_selected(&s.lists, packed, out)
                })
        });
        if sparse.is_none() {
            let op_w = if to_visible { Op::T } else { Op::N };
            linalg::sgemm_par(Op::N, op_w, batch, n_out, n_in, 1.0, x, w, 0.0, out);
        }
    }

    /// Invalidates both packings, keeping their buffers as spares.
    pub(super) fn invalidate(&mut self) {
        if let Some(p) = self.w.take() {
            *self.spare_w.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
        if let Some(p) = self.wt.take() {
            *self.spare_wt.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
    }
}

/// The packings of a new `W` written block by block during an optimizer's pass over it
/// ([`Rbm::params_mut_repacking`](super::Rbm::params_mut_repacking)); installed in the model's cache by [`Repack::finish`]
/// once every block is written (else, or when dropped, kept as spare buffers).
pub(crate) struct Repack<'a> {
    cache: &'a mut PackedWeights,
    w: Option<(Packed, BlockWriter)>,
    wt: Option<(Packed, BlockWriter)>,
    rows: usize,
    block_rows: usize,
}

impl<'a> Repack<'a> {
    pub(super) fn new(
        cache: &'a mut PackedWeights,
        nv: usize,
        nh: usize,
        w: bool,
        wt: bool,
    ) -> Self {
        let writer = |slot: &Mutex<Option<Packed>>, transposed: bool| {
            let mut p = take_spare(slot);
            let writer = p.block_writer(nv, nh, transposed);
            (p, writer)
        };
        let w = w.then(|| writer(&cache.spare_w, false));
        let wt = wt.then(|| writer(&cache.spare_wt, true));
        let block_rows = wt
            .as_ref()
            .or(w.as_ref())
            .map_or(1, |(_, b)| b.block_rows());
        cache.written.clear();
        cache
            .written
            .resize_with(nv.div_ceil(block_rows), || AtomicBool::new(false));
        Repack {
            cache,
            w,
            wt,
            rows: nv,
            block_rows,
        }
    }

    /// Rows of `W` per block.
    pub(crate) fn block_rows(&self) -> usize {
        self.block_rows
    }

    /// Rows of `W`.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Packs block `k` of the new `W`: `block` holds its rows `k · block_rows()..` (all
    /// `block_rows()` of them but in the last block), final values.
    ///
    /// # Panics
    /// When block `k` was written before, or `block` is not its size.
    pub(crate) fn write(&self, k: usize, block: &[f32]) {
        assert!(
            !self.cache.written[k].swap(true, Ordering::AcqRel),
            "Repack: block {k} written twice"
        );
        for (_, writer) in self.w.iter().chain(&self.wt) {
            // SAFETY: the packings are owned by `self` (nobody else can read them until
            // `finish` installs them); block `k` is written once (claimed above), and
            // blocks are disjoint rows; `write` checks the block's shape
            unsafe { writer.write(k * self.block_rows, block) };
        }
    }

    /// Installs the packings when every block was written.
    pub(crate) fn finish(mut self) {
        if self.cache.written.iter().all(|b| b.load(Ordering::Acquire)) {
            if let Some((p, _)) = self.w.take() {
                let _ = self.cache.w.set(p);
            }
            if let Some((p, _)) = self.wt.take() {
                let _ = self.cache.wt.set(p);
            }
        }
    }
}

impl Drop for Repack<'_> {
    /// Unfinished packings become spares (their buffers reused by the next packing).
    fn drop(&mut self) {
        if let Some((p, _)) = self.w.take() {
            *self
                .cache
                .spare_w
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
        if let Some((p, _)) = self.wt.take() {
            *self
                .cache
                .spare_wt
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()) = Some(p);
        }
    }
}

/// The spare buffer in `slot` (or a new one).
pub(super) fn take_spare(slot: &Mutex<Option<Packed>>) -> Packed {
    slot.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default()
}

impl Clone for PackedWeights {
    fn clone(&self) -> Self {
        PackedWeights::default()
    }
}

impl PartialEq for PackedWeights {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for PackedWeights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PackedWeights")
    }
}
