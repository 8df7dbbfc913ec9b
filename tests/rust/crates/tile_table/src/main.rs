//! A loop whose steps read a table at a data-dependent index: tile kernels reach memory only
//! through their tensors, so the table cannot be read. Refused: "reads or writes memory".
include!("../../refused_tile_kernel.rs");

static STEPS: [i32; 8] = [16, 32, 16, 48, 16, 32, 16, 64];

refused_tile_kernel! { |x, y, n| {
    let mut acc = Tile::<f32, 16, 16>::zeros();
    let mut k = 0;
    while k < x.shape(1) {
        acc = acc + Tile::<f32, 16, 16>::load(&x, [0, k]);
        k += super::STEPS[((k + n) & 7) as usize];
    }
    y.store([0, 0], acc);
} }
