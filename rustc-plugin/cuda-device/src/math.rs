//! Math. The float methods of Rust (`x.sqrt()`, `x.exp()`, `x.sin()`, `x.mul_add(a, b)`, ...)
//! work in kernels as they are: liboxide maps them to PTX or libdevice. These are the fast
//! approximations (PTX `.approx`) for when speed matters more than the last bits.
use crate::intrinsics as i;

/// sin(x), approximate (`sin.approx.f32`).
#[inline(always)]
pub fn fast_sin(x: f32) -> f32 {
    i::__oxide_sin_approx_f32(x)
}
/// cos(x), approximate (`cos.approx.f32`).
#[inline(always)]
pub fn fast_cos(x: f32) -> f32 {
    i::__oxide_cos_approx_f32(x)
}
/// 2^x, approximate (`ex2.approx.f32`).
#[inline(always)]
pub fn fast_exp2(x: f32) -> f32 {
    i::__oxide_exp2_approx_f32(x)
}
/// log2(x), approximate (`lg2.approx.f32`).
#[inline(always)]
pub fn fast_log2(x: f32) -> f32 {
    i::__oxide_log2_approx_f32(x)
}
/// 1/sqrt(x), approximate (`rsqrt.approx.f32`).
#[inline(always)]
pub fn fast_rsqrt(x: f32) -> f32 {
    i::__oxide_rsqrt_approx_f32(x)
}
/// 1/x, approximate (`rcp.approx.f32`).
#[inline(always)]
pub fn fast_rcp(x: f32) -> f32 {
    i::__oxide_rcp_approx_f32(x)
}
/// tanh(x), approximate (`tanh.approx.f32`).
#[inline(always)]
pub fn fast_tanh(x: f32) -> f32 {
    i::__oxide_tanh_approx_f32(x)
}
/// 1/sqrt(x).
#[inline(always)]
pub fn rsqrt(x: f32) -> f32 {
    i::__oxide_rsqrt_f32(x)
}
/// 1/sqrt(x) in double precision.
#[inline(always)]
pub fn rsqrt_f64(x: f64) -> f64 {
    i::__oxide_rsqrt_f64(x)
}
