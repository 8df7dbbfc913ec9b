//! Links liboxide's runtime library (no LLVM in it) statically into the host program.
//! It is found in $OXIDE_RUNTIME_LIB_DIR, else in the oxide checkout's CMake build folders,
//! else in the usual library folders (an installed oxide).
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=OXIDE_RUNTIME_LIB_DIR");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap();
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(d) = std::env::var("OXIDE_RUNTIME_LIB_DIR") {
        dirs.push(d.into());
    }
    for b in ["build", "build-release"] {
        dirs.push(root.join(b));
    }
    if let Ok(rd) = std::fs::read_dir(&root) {
        let mut more: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().map(|n| n.to_string_lossy().starts_with("build")).unwrap_or(false))
            .collect();
        more.sort();
        dirs.extend(more);
    }
    dirs.extend(["/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu"].iter().map(PathBuf::from));
    let found = dirs.iter().find(|d| d.join("liboxide_runtime.a").exists());
    match found {
        Some(d) => {
            println!("cargo:rerun-if-changed={}", d.join("liboxide_runtime.a").display());
            println!("cargo:rustc-link-search=native={}", d.display());
            println!("cargo:rustc-link-lib=static=oxide_runtime");
            println!("cargo:rustc-link-lib=dylib=dl");
            println!("cargo:rustc-link-lib=dylib=pthread");
        }
        None => {
            for d in &dirs {
                println!("cargo:rerun-if-changed={}", d.join("liboxide_runtime.a").display());
            }
            println!("cargo:warning=liboxide_runtime.a not found (build oxide with CMake, or set OXIDE_RUNTIME_LIB_DIR); looked in {:?}", dirs);
            println!("cargo:rustc-link-lib=dylib=oxide_runtime");
        }
    }
}
