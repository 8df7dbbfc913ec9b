//! Thread-block clusters (sm_90): ranks, cluster barrier, distributed shared memory.
use crate::intrinsics as i;

/// This block's rank in its cluster.
#[inline(always)]
pub fn block_rank() -> u32 {
    i::__oxide_cluster_ctarank()
}
/// Number of blocks in the cluster.
#[inline(always)]
pub fn cluster_size() -> u32 {
    i::__oxide_cluster_nctarank()
}
/// Cluster index (x) in the grid.
#[inline(always)]
pub fn cluster_idx_x() -> u32 {
    i::__oxide_clusterid_x()
}
/// Barrier over every thread of every block of the cluster.
#[inline(always)]
pub fn cluster_sync() {
    i::__oxide_cluster_sync()
}
/// The same shared-memory variable in block `rank` of this cluster (DSMEM).
#[inline(always)]
pub fn map_shared_rank<T>(p: *const T, rank: u32) -> *mut T {
    i::__oxide_cluster_map_shared(p as *mut u8, rank) as *mut T
}
