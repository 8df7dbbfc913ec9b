// Compiles kernels.cu to PTX with nvcc -O3 -arch=sm_90a (the peer's best settings).
fn main() {
    println!("cargo:rerun-if-changed=kernels.cu");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("nvcc_kernels.ptx");
    let nvcc = std::env::var("NVCC").unwrap_or_else(|_| "/usr/local/cuda/bin/nvcc".into());
    let st =
        std::process::Command::new(&nvcc).args(["-O3", "-arch=sm_90a", "-ptx", "kernels.cu", "-o"]).arg(&out).status();
    match st {
        Ok(s) if s.success() => {}
        _ => panic!("{} -O3 -arch=sm_90a -ptx kernels.cu failed (set NVCC)", nvcc),
    }
}
