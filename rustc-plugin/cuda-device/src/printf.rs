//! `gpu_printf!("x = %d, y = %f\n", x, y)`: CUDA's device printf (C format).
//! Arguments are packed as vprintf expects: each aligned to its size, f32 promoted to f64.

/// The packed arguments of one `gpu_printf!` call (at most 256 bytes; more are dropped).
#[repr(C, align(8))]
pub struct ArgBuf {
    data: [u8; 256],
    len: usize,
}

impl ArgBuf {
    /// No arguments yet.
    #[inline(always)]
    pub fn new() -> Self {
        ArgBuf { data: [0; 256], len: 0 }
    }
    /// The buffer vprintf reads.
    #[inline(always)]
    pub fn as_ptr(&self) -> *const u8 {
        self.data.as_ptr()
    }
    #[inline(always)]
    fn put<const N: usize>(&mut self, b: [u8; N]) {
        let off = (self.len + N - 1) & !(N - 1);
        if off + N <= self.data.len() {
            // a plain loop: copy_from_slice would call a generic instance that dev builds share
            // with the precompiled core library (no bitcode for the GPU)
            let mut k = 0;
            while k < N {
                self.data[off + k] = b[k];
                k += 1;
            }
            self.len = off + N;
        }
    }
}

impl Default for ArgBuf {
    fn default() -> Self {
        Self::new()
    }
}

/// A value `gpu_printf!` can print: integers, floats, pointers.
pub trait PrintfArg {
    /// Append the value as vprintf expects it.
    fn push(self, buf: &mut ArgBuf);
}
macro_rules! arg4 { ($($t:ty),*) => { $(impl PrintfArg for $t { #[inline(always)] fn push(self, b: &mut ArgBuf) { b.put(self.to_ne_bytes()) } })* } }
arg4!(i32, u32, i64, u64, f64);
impl PrintfArg for f32 {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as f64).to_ne_bytes())
    }
}
impl PrintfArg for usize {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as u64).to_ne_bytes())
    }
}
impl PrintfArg for isize {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as i64).to_ne_bytes())
    }
}
impl PrintfArg for bool {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as i32).to_ne_bytes())
    }
}
impl<T> PrintfArg for *const T {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as usize as u64).to_ne_bytes())
    }
}
impl<T> PrintfArg for *mut T {
    #[inline(always)]
    fn push(self, b: &mut ArgBuf) {
        b.put((self as usize as u64).to_ne_bytes())
    }
}

/// Device printf with a C format string. Integers: %d/%u (32-bit), %ld/%lu (64-bit, usize);
/// floats: %f; pointers: %p.
#[macro_export]
macro_rules! gpu_printf {
    ($fmt:literal $(, $arg:expr)* $(,)?) => {{
        #[allow(unused_mut)]
        let mut __oxide_buf = $crate::printf::ArgBuf::new();
        $( $crate::printf::PrintfArg::push($arg, &mut __oxide_buf); )*
        $crate::intrinsics::__oxide_vprintf(concat!($fmt, "\0").as_ptr(), __oxide_buf.as_ptr());
    }};
}
