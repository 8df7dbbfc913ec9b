//! Several devices on the tests' fake driver (tests/gpu/mock) pretending to be two GPUs: a module
//! on each, a kernel on device 1, its result copied to device 0 after device 1's event, peer
//! access and its refusals. Checked against the same arithmetic on the CPU with random inputs.
mod common;
use cuda_core::{copy_peer_async, CudaContext, DeviceBuffer, LaunchConfig, Module};

fn random(n: usize, seed: u64) -> Vec<f32> {
    common::randoms(n, seed, false)
}

/// y += a * x on `m`'s device (the fake driver's saxpy).
fn saxpy(m: &Module, s: &cuda_core::CudaStream, a: f32, x: &DeviceBuffer<f32>, y: &mut DeviceBuffer<f32>) {
    let p = common::saxpy_params(a, x, y);
    unsafe { m.launch_raw("saxpy", s, &LaunchConfig::for_num_elems(y.len() as u32), &p) }.unwrap();
}

#[test]
fn two_devices() {
    // Before the runtime's first call, which reads the device count once.
    std::env::set_var("OXIDE_MOCK_DEVICES", "2");
    let Some(d0) = common::ctx() else { return };
    let d1 = CudaContext::new(1).unwrap();
    assert_eq!((d0.ordinal(), d1.ordinal(), CudaContext::device_count()), (0, 1, 2));
    let err = CudaContext::new(2).err().unwrap();
    assert!(err.is_no_gpu() && err.message.contains("no device 2"), "{err}");
    let (m0, m1) = (common::module(&d0), common::module(&d1));
    let (s0, s1) = (d0.new_stream().unwrap(), d1.new_stream().unwrap());

    let n = 2000;
    let (x, y, z) = (random(n, 1), random(n, 2), random(n, 3));
    let dx = DeviceBuffer::from_host(&s1, &x).unwrap();
    let mut dy = DeviceBuffer::from_host(&s1, &y).unwrap();
    saxpy(&m1, &s1, 2.0, &dx, &mut dy); // on device 1: y = 2x + y
    let done = d1.new_event().unwrap();
    s1.record(&done).unwrap();
    s0.wait_event(&done).unwrap(); // device 0's stream waits for device 1's event
    let mut moved = DeviceBuffer::<f32>::zeroed(&s0, n).unwrap();
    copy_peer_async(&s0, &mut moved, &d0, &dy, &d1).unwrap();
    let mut dz = DeviceBuffer::from_host(&s0, &z).unwrap();
    saxpy(&m0, &s0, 3.0, &moved, &mut dz); // on device 0: z = 3 (2x + y) + z
    let got = dz.to_host_vec(&s0).unwrap();
    let want: Vec<f32> = (0..n).map(|i| 3.0 * (2.0 * x[i] + y[i]) + z[i]).collect();
    assert!(got.iter().zip(&want).all(|(g, w)| (g - w).abs() <= 1e-5 * w.abs()), "device 1's result on device 0");

    // The devices swapped: the runtime checks where each pointer lives.
    let err = copy_peer_async(&s0, &mut moved, &d1, &dy, &d1).unwrap_err();
    assert!(err.message.contains("is memory of device 0"), "{err}");
    let err = d0.enable_peer_access(&d0).unwrap_err();
    assert!(err.message.contains("both device 0"), "{err}");
    assert!(!d0.can_access_peer(&d0).unwrap() && d0.can_access_peer(&d1).unwrap());
    assert!(!d0.peer_access_enabled(&d1).unwrap());
    d0.enable_peer_access(&d1).unwrap();
    assert!(d0.peer_access_enabled(&d1).unwrap() && !d1.peer_access_enabled(&d0).unwrap());
}
