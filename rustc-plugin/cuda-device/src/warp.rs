//! Warp-level operations (all 32 lanes take part: mask 0xffffffff).
use crate::intrinsics as i;

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// Lane index within the warp (0..32).
#[inline(always)]
pub fn lane_id() -> u32 {
    i::__oxide_laneid()
}
/// Warp index within the block (linear thread index / 32).
#[inline(always)]
pub fn warp_id() -> u32 {
    let t = crate::thread::threadIdx_x()
        + crate::thread::blockDim_x()
            * (crate::thread::threadIdx_y() + crate::thread::blockDim_y() * crate::thread::threadIdx_z());
    t / 32
}

/// Values that can move between lanes.
pub trait WarpShuffle: Copy {
    /// The value of lane `lane`.
    fn shfl_idx(self, lane: u32) -> Self;
    /// The value of lane `lane_id() ^ mask`.
    fn shfl_xor(self, mask: u32) -> Self;
    /// The value of lane `lane_id() + delta` (its own past the last lane).
    fn shfl_down(self, delta: u32) -> Self;
    /// The value of lane `lane_id() - delta` (its own before lane 0).
    fn shfl_up(self, delta: u32) -> Self;
}
impl WarpShuffle for u32 {
    #[inline(always)]
    fn shfl_idx(self, l: u32) -> Self {
        i::__oxide_shfl_idx_u32(FULL_MASK, self, l)
    }
    #[inline(always)]
    fn shfl_xor(self, m: u32) -> Self {
        i::__oxide_shfl_xor_u32(FULL_MASK, self, m)
    }
    #[inline(always)]
    fn shfl_down(self, d: u32) -> Self {
        i::__oxide_shfl_down_u32(FULL_MASK, self, d)
    }
    #[inline(always)]
    fn shfl_up(self, d: u32) -> Self {
        i::__oxide_shfl_up_u32(FULL_MASK, self, d)
    }
}
impl WarpShuffle for f32 {
    #[inline(always)]
    fn shfl_idx(self, l: u32) -> Self {
        i::__oxide_shfl_idx_f32(FULL_MASK, self, l)
    }
    #[inline(always)]
    fn shfl_xor(self, m: u32) -> Self {
        i::__oxide_shfl_xor_f32(FULL_MASK, self, m)
    }
    #[inline(always)]
    fn shfl_down(self, d: u32) -> Self {
        i::__oxide_shfl_down_f32(FULL_MASK, self, d)
    }
    #[inline(always)]
    fn shfl_up(self, d: u32) -> Self {
        i::__oxide_shfl_up_f32(FULL_MASK, self, d)
    }
}
impl WarpShuffle for i32 {
    #[inline(always)]
    fn shfl_idx(self, l: u32) -> Self {
        (self as u32).shfl_idx(l) as i32
    }
    #[inline(always)]
    fn shfl_xor(self, m: u32) -> Self {
        (self as u32).shfl_xor(m) as i32
    }
    #[inline(always)]
    fn shfl_down(self, d: u32) -> Self {
        (self as u32).shfl_down(d) as i32
    }
    #[inline(always)]
    fn shfl_up(self, d: u32) -> Self {
        (self as u32).shfl_up(d) as i32
    }
}
macro_rules! wide {
    ($t:ty, $to:expr, $from:expr) => {
        impl WarpShuffle for $t {
            #[inline(always)]
            fn shfl_idx(self, l: u32) -> Self {
                split(self, $to, $from, |x| x.shfl_idx(l))
            }
            #[inline(always)]
            fn shfl_xor(self, m: u32) -> Self {
                split(self, $to, $from, |x| x.shfl_xor(m))
            }
            #[inline(always)]
            fn shfl_down(self, d: u32) -> Self {
                split(self, $to, $from, |x| x.shfl_down(d))
            }
            #[inline(always)]
            fn shfl_up(self, d: u32) -> Self {
                split(self, $to, $from, |x| x.shfl_up(d))
            }
        }
    };
}
#[inline(always)]
fn split<T>(v: T, to: fn(T) -> u64, from: fn(u64) -> T, f: impl Fn(u32) -> u32) -> T {
    let b = to(v);
    let hi = f((b >> 32) as u32) as u64;
    let lo = f(b as u32) as u64;
    from((hi << 32) | lo)
}
wide!(f64, f64::to_bits, f64::from_bits);
wide!(u64, |x| x, |x| x);
wide!(i64, |x| x as u64, |x| x as i64);

/// Value of `v` in lane `src`.
#[inline(always)]
pub fn shuffle<T: WarpShuffle>(v: T, src: u32) -> T {
    v.shfl_idx(src)
}
/// Value of `v` in lane `lane_id() ^ mask` (butterfly).
#[inline(always)]
pub fn shuffle_xor<T: WarpShuffle>(v: T, mask: u32) -> T {
    v.shfl_xor(mask)
}
/// Value of `v` in lane `lane_id() + delta` (own value past the end).
#[inline(always)]
pub fn shuffle_down<T: WarpShuffle>(v: T, delta: u32) -> T {
    v.shfl_down(delta)
}
/// Value of `v` in lane `lane_id() - delta` (own value before the start).
#[inline(always)]
pub fn shuffle_up<T: WarpShuffle>(v: T, delta: u32) -> T {
    v.shfl_up(delta)
}
/// True if `pred` holds in every lane.
#[inline(always)]
pub fn all(pred: bool) -> bool {
    i::__oxide_vote_all(FULL_MASK, pred)
}
/// True if `pred` holds in any lane.
#[inline(always)]
pub fn any(pred: bool) -> bool {
    i::__oxide_vote_any(FULL_MASK, pred)
}
/// Bit i set iff `pred` holds in lane i.
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    i::__oxide_vote_ballot(FULL_MASK, pred)
}
/// Mask of the lanes currently active.
#[inline(always)]
pub fn active_mask() -> u32 {
    i::__oxide_activemask()
}

/// Sum over the warp (every lane gets it), by butterfly shuffles.
#[inline(always)]
pub fn reduce_sum_f32(mut v: f32) -> f32 {
    let mut m = 16;
    while m > 0 {
        v += shuffle_xor(v, m);
        m >>= 1;
    }
    v
}
/// Max over the warp (every lane gets it).
#[inline(always)]
pub fn reduce_max_f32(mut v: f32) -> f32 {
    let mut m = 16;
    while m > 0 {
        v = v.max(shuffle_xor(v, m));
        m >>= 1;
    }
    v
}
/// Sum of a u32 over the warp with `redux.sync` (sm_80+).
#[inline(always)]
pub fn reduce_add_u32(v: u32) -> u32 {
    i::__oxide_redux_add(FULL_MASK, v)
}
/// Min / max of a u32 over the warp with `redux.sync` (sm_80+).
#[inline(always)]
pub fn reduce_min_u32(v: u32) -> u32 {
    i::__oxide_redux_umin(FULL_MASK, v)
}
/// The maximum of a u32 over the warp (`redux.sync`, sm_80+).
#[inline(always)]
pub fn reduce_max_u32(v: u32) -> u32 {
    i::__oxide_redux_umax(FULL_MASK, v)
}
