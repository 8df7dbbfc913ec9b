// A small real rustc unit for the bitcode import's reliability tests (test_bitcode.c mutates it).
// Regenerate: rustc --edition 2021 --crate-type=lib --crate-name unit --emit=llvm-bc=unit.bc \
//   -C opt-level=1 -C symbol-mangling-version=v0 -C debuginfo=1 unit.rs

pub struct Params {
    pub scale: f32,
    pub bias: f32,
}

pub fn saxpy(p: &Params, x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] = p.scale * x[i] + y[i] + p.bias;
    }
}

pub fn histogram(data: &[u8], bins: &mut [u32; 16]) {
    for &d in data {
        bins[(d >> 4) as usize] += 1;
    }
}

pub fn reduce<T: Copy + core::ops::Add<Output = T>>(xs: &[T], zero: T) -> T {
    xs.iter().fold(zero, |a, &b| a + b)
}

pub fn reduce_f64(xs: &[f64]) -> f64 {
    reduce(xs, 0.0)
}

pub fn checked(a: u32, b: u32) -> Option<u32> {
    a.checked_mul(b).map(|v| v / b.max(1))
}

static TABLE: [u16; 8] = [1, 2, 3, 5, 8, 13, 21, 34];

pub fn lookup(i: usize) -> u16 {
    TABLE[i % 8] ^ (i as u16)
}
