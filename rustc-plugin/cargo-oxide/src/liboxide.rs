//! liboxide, opened at run time (dlopen) so that cargo-oxide builds without it and finds the
//! library of the checkout or the installed prefix. The functions and their types are those
//! oxide-sys declares.
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::path::{Path, PathBuf};

extern "C" {
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *const c_char;
}
const RTLD_NOW: c_int = 2;
const RTLD_LOCAL: c_int = 0;

/// Where liboxide.so is: $OXIDE_LIB, next to this executable (installed), the checkout's builds.
pub fn find() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("OXIDE_LIB") {
        let p = PathBuf::from(p);
        if p.exists() {
            return Some(p);
        }
    }
    let mut cands: Vec<PathBuf> = Vec::new();
    if let Ok(exe) = std::env::current_exe() {
        if let Some(bin) = exe.parent() {
            cands.push(bin.join("../lib/liboxide.so"));
            cands.push(bin.join("../lib/x86_64-linux-gnu/liboxide.so"));
        }
    }
    let root = super::oxide_root();
    for b in ["build", "build-release"] {
        cands.push(root.join(b).join("liboxide.so"));
    }
    if let Ok(rd) = std::fs::read_dir(&root) {
        let mut more: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().map(|n| n.to_string_lossy().starts_with("build")).unwrap_or(false))
            .map(|p| p.join("liboxide.so"))
            .collect();
        more.sort();
        cands.extend(more);
    }
    cands.extend(["/usr/local/lib/liboxide.so", "/usr/lib/liboxide.so"].iter().map(PathBuf::from));
    cands.into_iter().find(|p| p.exists())
}

/// liboxide opened with `dlopen`; the functions are looked up by name when used.
pub struct Lib {
    h: *mut c_void,
}

/// The function `$name` of oxide-sys's list, looked up in the opened library (the declaration
/// there gives its type). Returns an error from the enclosing function when it is missing.
macro_rules! sym {
    ($self:ident, $name:ident) => {{
        let c = CString::new(stringify!($name)).unwrap();
        // (also used inside unsafe blocks)
        #[allow(unused_unsafe)]
        let p = unsafe { dlsym($self.h, c.as_ptr()) };
        if p.is_null() {
            return Err(format!("liboxide has no {}", stringify!($name)));
        }
        #[allow(unused_unsafe)]
        let f = unsafe { std::mem::transmute::<*mut c_void, oxide_sys::fn_types::$name>(p) };
        f
    }};
}

impl Lib {
    /// Open the library at `p`.
    pub fn open(p: &Path) -> Result<Lib, String> {
        let c = CString::new(p.to_string_lossy().as_bytes()).unwrap();
        let h = unsafe { dlopen(c.as_ptr(), RTLD_NOW | RTLD_LOCAL) };
        if h.is_null() {
            let e = unsafe { CStr::from_ptr(dlerror()) }.to_string_lossy().into_owned();
            return Err(format!("cannot load {}: {}", p.display(), e));
        }
        Ok(Lib { h })
    }

    fn string(&self, f: unsafe extern "C" fn() -> *const c_char) -> String {
        unsafe { CStr::from_ptr(f()) }.to_string_lossy().into_owned()
    }

    fn version_str(&self) -> Result<String, String> {
        Ok(self.string(sym!(self, oxide_version)))
    }

    /// The library's version, or why it cannot be read.
    pub fn version(&self) -> String {
        self.version_str().unwrap_or_else(|e| e)
    }

    fn last_error_str(&self) -> Result<String, String> {
        Ok(self.string(sym!(self, oxide_last_error)))
    }

    fn last_error(&self) -> String {
        self.last_error_str().unwrap_or_else(|e| e)
    }

    /// Compile bitcode units to PTX (with manifest).
    pub fn compile(&self, units: &[(String, Vec<u8>)], sm: &str, lineinfo: bool) -> Result<String, String> {
        let ctx_create = sym!(self, oxide_context_create);
        let ctx_destroy = sym!(self, oxide_context_destroy);
        let mod_create = sym!(self, oxide_module_create);
        let import = sym!(self, oxide_module_import_bitcode);
        let opts_create = sym!(self, oxide_options_create);
        let opts_destroy = sym!(self, oxide_options_destroy);
        let set_target = sym!(self, oxide_options_set_target);
        let set_line = sym!(self, oxide_options_set_line_info);
        let compile = sym!(self, oxide_module_compile);
        // SAFETY: each call passes what include/oxide.h asks for: out-pointers to locals,
        // NUL-terminated strings that outlive the call, and handles this function created.
        unsafe {
            let mut ctx = std::ptr::null_mut();
            if ctx_create(&mut ctx) != 0 {
                return Err(self.last_error());
            }
            let result = (|| {
                let mut m = std::ptr::null_mut();
                let name = CString::new("rust").unwrap();
                if mod_create(ctx, name.as_ptr(), &mut m) != 0 {
                    return Err(self.last_error());
                }
                for (n, data) in units {
                    let cn = CString::new(n.as_str()).unwrap();
                    if import(m, data.as_ptr() as *const c_void, data.len(), cn.as_ptr()) != 0 {
                        return Err(self.last_error());
                    }
                }
                let mut o = std::ptr::null_mut();
                if opts_create(&mut o) != 0 {
                    return Err(self.last_error());
                }
                let csm = CString::new(sm).unwrap();
                let r = (|| {
                    if set_target(o, csm.as_ptr()) != 0 || set_line(o, lineinfo as c_int) != 0 {
                        return Err(self.last_error());
                    }
                    let mut ptx: *const c_char = std::ptr::null();
                    let mut len = 0usize;
                    if compile(m, o, &mut ptx, &mut len) != 0 {
                        return Err(self.last_error());
                    }
                    let bytes = std::slice::from_raw_parts(ptx as *const u8, len);
                    if let Ok(path) = std::env::var("OXIDE_DUMP_LLVM") {
                        let get_ir = sym!(self, oxide_module_get_llvm_ir);
                        let mut ir: *const c_char = std::ptr::null();
                        if get_ir(m, &mut ir) == 0 && !ir.is_null() {
                            let _ = std::fs::write(path, CStr::from_ptr(ir).to_bytes());
                        }
                    }
                    Ok(String::from_utf8_lossy(bytes).into_owned())
                })();
                opts_destroy(o);
                r
            })();
            ctx_destroy(ctx);
            result
        }
    }
}
