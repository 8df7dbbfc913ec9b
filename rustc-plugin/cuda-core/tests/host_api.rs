//! Host API without a GPU: configuration, parameter layout, errors when there is no driver.
use cuda_core::{CudaContext, LaunchConfig, ParamBuffer};

#[test]
fn launch_config_for_num_elems() {
    let c = LaunchConfig::for_num_elems(1000);
    assert_eq!(c.grid_dim, (4, 1, 1));
    assert_eq!(c.block_dim, (256, 1, 1));
    assert_eq!(c.shared_mem_bytes, 0);
    assert_eq!(LaunchConfig::for_num_elems(0).grid_dim.0, 1);
    assert_eq!(LaunchConfig::for_num_elems(256).grid_dim.0, 1);
    assert_eq!(LaunchConfig::for_num_elems(257).grid_dim.0, 2);
}

#[test]
fn no_gpu_is_a_clear_error() {
    match CudaContext::new(0) {
        Ok(_) => {} // a machine with a GPU
        Err(e) => {
            assert!(e.is_no_gpu(), "{e:?}");
            let s = format!("{e}");
            assert!(s.contains("OXIDE_ERROR_NO_"), "{s}");
        }
    }
}

#[test]
fn new_or_skip_gives_a_context_exactly_when_new_does() {
    assert_eq!(CudaContext::new_or_skip(0).is_some(), CudaContext::new(0).is_ok());
}

#[test]
fn program_without_cargo_oxide_has_no_ptx() {
    assert!(cuda_core::embedded_ptx().is_empty());
}

#[test]
fn param_buffer_keeps_values() {
    let mut p = ParamBuffer::new();
    p.push_value(&7u32);
    p.push_value(&0x1122_3344_5566_7788u64);
    p.push_bytes_of(&(1.5f32, 2u8));
    let _ = p.clone();
}
