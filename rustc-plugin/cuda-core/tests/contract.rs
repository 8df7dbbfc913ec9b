//! `#[launch_contract]` through `#[cuda_module]`: the prepared-launch API's types (checked by
//! compiling), the contract the descriptor carries, and `prepare_NAME` / the runtime's refusals
//! against tests/gpu/mock's fake driver (or a GPU), on hand-written PTX whose manifest carries the
//! same contract.
use cuda_core::{
    CudaContext, CudaStream, DeviceBuffer, KernelContract, LaunchConfig, LaunchConfig1D, LaunchConfig2D,
    LaunchContract, PreparedLaunch,
};
use cuda_device::{cuda_module, kernel, thread, DisjointSlice};

#[cuda_module]
mod kernels {
    use super::*;

    #[kernel]
    #[launch_bounds(256)]
    #[launch_contract(domain = 1, block = (256, 1, 1), dynamic_shared = 1024, dynamic_shared_alignment = 128)]
    pub fn scale(a: f32, x: &[f32], mut y: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = y.get_mut(idx) {
            *o = a * x[i];
        }
    }

    #[launch_contract(domain = 2, dynamic_shared_range = (0, 4096), min_compute_capability = (8, 0))]
    #[kernel]
    pub fn fill2d(width: u32, out: *mut u32) {
        let t = thread::index_2d();
        unsafe { *out.add(t.y() * width as usize + t.x()) = t.x() as u32 };
    }

    #[kernel]
    #[launch_contract(domain = 1, block = (128, 1, 1))]
    pub fn map<T: Copy, F: Fn(T) -> T + Copy>(f: F, input: &[T], mut out: DisjointSlice<T>) {
        let idx = thread::index_1d();
        let i = idx.get();
        if let Some(o) = out.get_mut(idx) {
            *o = f(input[i]);
        }
    }

    #[kernel]
    pub fn plain(out: *mut u32) {
        unsafe { *out = 1 };
    }
}

#[test]
fn contract_kernels_take_prepared_launches() {
    type Prepare = fn(&kernels::Module, LaunchConfig1D) -> cuda_core::Result<PreparedLaunch<kernels::contract::scale>>;
    let _: Prepare = kernels::Module::prepare_scale;
    type Launch = for<'a, 'b, 'c> fn(
        &'a kernels::Module,
        &'b CudaStream,
        &'c PreparedLaunch<kernels::contract::scale>,
        f32,
        &'a DeviceBuffer<f32>,
        &'a mut DeviceBuffer<f32>,
    ) -> cuda_core::Result<()>;
    let _: Launch = kernels::Module::scale;
    type Unchecked = for<'a, 'b> unsafe fn(
        &'a kernels::Module,
        &'b CudaStream,
        LaunchConfig,
        f32,
        &'a DeviceBuffer<f32>,
        &'a mut DeviceBuffer<f32>,
    ) -> cuda_core::Result<()>;
    let _: Unchecked = kernels::Module::scale_unchecked;
    type Prepare2 =
        fn(&kernels::Module, LaunchConfig2D) -> cuda_core::Result<PreparedLaunch<kernels::contract::fill2d>>;
    let _: Prepare2 = kernels::Module::prepare_fill2d;
    let _ = kernels::Module::fill2d;
    // a generic kernel's prepared launch serves every instance
    type PrepareMap = fn(&kernels::Module, LaunchConfig1D) -> cuda_core::Result<PreparedLaunch<kernels::contract::map>>;
    let _: PrepareMap = kernels::Module::prepare_map;
    fn launch_map<F: Fn(f32) -> f32 + Copy + 'static>(
        m: &kernels::Module,
        s: &CudaStream,
        p: &PreparedLaunch<kernels::contract::map>,
        f: F,
        x: &DeviceBuffer<f32>,
        y: &mut DeviceBuffer<f32>,
    ) -> cuda_core::Result<()> {
        m.map::<f32, F>(s, p, f, x, y)
    }
    let _ = launch_map::<fn(f32) -> f32>;
    // a kernel without a contract keeps the plain API
    type Plain = for<'a, 'b> fn(
        &'a kernels::Module,
        &'b CudaStream,
        LaunchConfig,
        &'a mut DeviceBuffer<u32>,
    ) -> cuda_core::Result<()>;
    let _: Plain = kernels::Module::plain;
}

#[test]
fn the_contract_reaches_the_descriptor_and_the_brand() {
    let want = LaunchContract {
        domain: 1,
        block: Some((256, 1, 1)),
        dynamic_shared: Some((1024, 1024)),
        dynamic_shared_alignment: Some(128),
        min_compute_capability: None,
    };
    assert_eq!(<kernels::contract::scale as KernelContract>::CONTRACT, want);
    assert_eq!(<kernels::contract::scale as KernelContract>::NAME, "scale");
    let raw = want.raw();
    assert_eq!(
        (raw.fields, raw.block, raw.smem_min, raw.smem_max, raw.smem_align),
        (1 | 2 | 4 | 8, [256, 1, 1], 1024, 1024, 128)
    );
    let f = <kernels::contract::fill2d as KernelContract>::CONTRACT.raw();
    assert_eq!((f.fields, f.domain, f.smem_max, f.min_cc), (1 | 4 | 16, 2, 4096, [8, 0]));
}

#[test]
fn configs_have_their_dimensions() {
    use cuda_core::LaunchShape;
    let c = LaunchConfig1D::for_num_elems(1000, 256, 64).launch_config();
    assert_eq!((c.grid_dim, c.block_dim, c.shared_mem_bytes), ((4, 1, 1), (256, 1, 1), 64));
    let c = LaunchConfig2D::new((3, 5), (16, 8), 0).launch_config();
    assert_eq!((c.grid_dim, c.block_dim), ((3, 5, 1), (16, 8, 1)));
    let c = cuda_core::LaunchConfig3D::new((1, 2, 3), (4, 5, 6), 7).launch_config();
    assert_eq!((c.grid_dim, c.block_dim, c.shared_mem_bytes), ((1, 2, 3), (4, 5, 6), 7));
}

/// The kernels' PTX as liboxide would write it for the fake driver: entries with their PTX
/// parameters, and a manifest carrying the contracts.
const PTX: &str = concat!(
    "// oxide.manifest.v1 {\"oxide\":\"0.1.0\",\"target\":\"sm_90a\",\"kernels\":[",
    "{\"name\":\"scale\",\"entry\":\"scale\",\"params\":[{\"name\":\"a\",\"kind\":\"scalar\",\"type\":\"f32\"},",
    "{\"name\":\"x\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":false},{\"name\":\"y\",\"kind\":\"slice\",\"elem\":\"f32\",\"mut\":true}],",
    "\"launch_bounds\":[256,0],\"cluster\":[1,1,1],\"dyn_smem\":1024,",
    "\"contract\":{\"domain\":1,\"block\":[256,1,1],\"dynamic_shared\":[1024,1024],\"dynamic_shared_alignment\":128}}]}\n",
    ".version 8.0\n.target sm_90a\n.address_size 64\n",
    ".visible .entry scale(.param .f32 a, .param .u64 x, .param .u64 xl, .param .u64 y, .param .u64 yl) .reqntid 256, 1, 1\n{\n  ret;\n}\n",
);

/// A context on the fake driver of the oxide build (tests/gpu/mock), where there is one.
fn context() -> Option<CudaContext> {
    let mock = concat!(env!("CARGO_MANIFEST_DIR"), "/../../build/tests/gpu/mock/libcuda.so.1");
    if std::env::var_os("OXIDE_CUDA_DRIVER").is_none() && std::path::Path::new(mock).exists() {
        std::env::set_var("OXIDE_CUDA_DRIVER", mock);
    }
    match CudaContext::new(0) {
        Ok(c) => Some(c),
        Err(e) => {
            println!("skipped: no GPU and no fake driver ({e})");
            None
        }
    }
}

#[test]
fn prepare_checks_once_and_the_runtime_refuses_what_breaks_the_contract() {
    let Some(ctx) = context() else { return };
    let m = kernels::load_ptx(&ctx, PTX.as_bytes()).unwrap();
    let stream = ctx.default_stream();
    let n = 1000;
    let x = DeviceBuffer::from_host(&stream, &vec![1.5f32; n]).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, n).unwrap();

    let ok = m.prepare_scale(LaunchConfig1D::for_num_elems(n as u32, 256, 1024)).unwrap();
    assert_eq!(ok.config().block_dim, (256, 1, 1));
    m.scale(&stream, &ok, 2.0, &x, &mut y).unwrap();
    stream.synchronize().unwrap();

    for (cfg, field) in [
        (LaunchConfig1D::new(4, 128, 1024), "block = (256, 1, 1)"),
        (LaunchConfig1D::new(4, 256, 512), "dynamic_shared = 1024"),
        (LaunchConfig1D::new(0, 256, 1024), "grid 0x1x1"),
    ] {
        let e = m.prepare_scale(cfg).unwrap_err();
        assert!(e.message.contains("launch scale") && e.message.contains(field), "{cfg:?}: {e}");
    }
    // the unchecked launch skips prepare, not the runtime's check of the manifest's contract
    let bad = LaunchConfig::new((4, 1, 1), (128, 1, 1), 1024);
    let e = unsafe { m.scale_unchecked(&stream, bad, 2.0, &x, &mut y) }.unwrap_err();
    assert!(e.message.contains("block 128x1x1 breaks the launch contract's block = (256, 1, 1)"), "{e}");
    let two_d = LaunchConfig::new((4, 2, 1), (256, 1, 1), 1024);
    let e = unsafe { m.scale_unchecked(&stream, two_d, 2.0, &x, &mut y) }.unwrap_err();
    assert!(e.message.contains("grid 4x2x1 breaks the launch contract's domain = 1"), "{e}");
    unsafe { m.scale_unchecked(&stream, ok.config(), 2.0, &x, &mut y) }.unwrap();
}

#[test]
fn a_contract_newer_than_the_device_is_refused() {
    let Some(ctx) = context() else { return };
    let m = kernels::load_ptx(&ctx, PTX.as_bytes()).unwrap();
    let (major, _) = ctx.compute_capability().unwrap();
    let e = m.prepare_fill2d(LaunchConfig2D::new((2, 2), (16, 16), 8192)).unwrap_err();
    assert!(e.message.contains("8192 bytes") && e.message.contains("dynamic_shared_range = (0, 4096)"), "{e}");
    let newer = LaunchContract {
        min_compute_capability: Some((major as u32 + 1, 0)),
        ..<kernels::contract::fill2d as KernelContract>::CONTRACT
    };
    let cfg = LaunchConfig::new((2, 2, 1), (16, 16, 1), 0);
    let e = newer.check(m.raw(), "fill2d", &cfg).unwrap_err();
    assert!(e.message.contains("min_compute_capability") && e.message.contains(&format!("({}, 0)", major + 1)), "{e}");
    newer.check(m.raw(), "fill2d", &LaunchConfig { shared_mem_bytes: 0, ..cfg }).unwrap_err();
    <kernels::contract::fill2d as KernelContract>::CONTRACT.check(m.raw(), "fill2d", &cfg).unwrap();
}
