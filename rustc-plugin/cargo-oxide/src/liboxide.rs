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
/// The library file's size and modification time (ns since the epoch): what changes when it is
/// rebuilt or replaced, cheap to read on every build.
pub fn identity(lib: &std::path::Path) -> String {
    let Ok(m) = std::fs::metadata(lib) else {
        return "unknown".into();
    };
    let t = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!("{}.{}", m.len(), t.map_or(0, |d| d.as_nanos()))
}

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

    /// What the kernels of these bitcode units are, for `sm` and line info
    /// (oxide_bitcode_kernel_key): the same after an edit to host-only code. Only the units
    /// that define kernels are read.
    pub fn kernel_key(&self, units: &[(String, Vec<u8>)], sm: &str, lineinfo: bool) -> Result<String, String> {
        let opts_create = sym!(self, oxide_options_create);
        let opts_destroy = sym!(self, oxide_options_destroy);
        let set_target = sym!(self, oxide_options_set_target);
        let set_line = sym!(self, oxide_options_set_line_info);
        let key_fn = sym!(self, oxide_bitcode_kernel_key);
        let names: Vec<CString> = units.iter().map(|(n, _)| CString::new(n.as_str()).unwrap()).collect();
        let refs: Vec<oxide_sys::oxide_bitcode_ref> = units
            .iter()
            .zip(&names)
            .map(|((_, d), n)| oxide_sys::oxide_bitcode_ref {
                name: n.as_ptr(),
                data: d.as_ptr() as *const c_void,
                size: d.len(),
            })
            .collect();
        let csm = CString::new(sm).map_err(|_| "--sm: not a target name".to_string())?;
        let mut key = [0 as c_char; 65];
        // SAFETY: refs point into units and names, which outlive the call; key has 65 bytes.
        unsafe {
            let mut o = std::ptr::null_mut();
            if opts_create(&mut o) != 0 {
                return Err(self.last_error());
            }
            let ok = set_target(o, csm.as_ptr()) == 0
                && set_line(o, lineinfo as c_int) == 0
                && key_fn(refs.as_ptr(), refs.len(), o, key.as_mut_ptr()) == 0;
            opts_destroy(o);
            if !ok {
                return Err(self.last_error());
            }
            Ok(CStr::from_ptr(key.as_ptr()).to_string_lossy().into_owned())
        }
    }

    /// A compile of bitcode units for `sm`: import units, then compile.
    pub fn session(&self, sm: &str, lineinfo: bool) -> Result<Session<'_>, String> {
        let ctx_create = sym!(self, oxide_context_create);
        let mod_create = sym!(self, oxide_module_create);
        let opts_create = sym!(self, oxide_options_create);
        let set_target = sym!(self, oxide_options_set_target);
        let set_line = sym!(self, oxide_options_set_line_info);
        let mut s = Session { lib: self, ctx: std::ptr::null_mut(), m: std::ptr::null_mut(), o: std::ptr::null_mut() };
        let name = CString::new("rust").unwrap();
        let csm = CString::new(sm).map_err(|_| "--sm: not a target name".to_string())?;
        // SAFETY: out-pointers to the session's fields, NUL-terminated strings that outlive the
        // calls; what was created is destroyed by the session's Drop.
        unsafe {
            if ctx_create(&mut s.ctx) != 0
                || mod_create(s.ctx, name.as_ptr(), &mut s.m) != 0
                || opts_create(&mut s.o) != 0
                || set_target(s.o, csm.as_ptr()) != 0
                || set_line(s.o, lineinfo as c_int) != 0
            {
                return Err(self.last_error());
            }
        }
        Ok(s)
    }
}

/// One compile (a context, its module and the options), destroyed on drop.
pub struct Session<'a> {
    lib: &'a Lib,
    ctx: *mut oxide_sys::oxide_context,
    m: *mut oxide_sys::oxide_module,
    o: *mut oxide_sys::oxide_options,
}

impl Session<'_> {
    /// Import bitcode units (name, bytes).
    pub fn import(&self, units: &[(String, Vec<u8>)]) -> Result<(), String> {
        let lib = self.lib;
        let import = sym!(lib, oxide_module_import_bitcode);
        for (n, data) in units {
            let cn = CString::new(n.as_str()).unwrap();
            // SAFETY: the module is live; data and the name outlive the call (it copies both).
            if unsafe { import(self.m, data.as_ptr() as *const c_void, data.len(), cn.as_ptr()) } != 0 {
                return Err(lib.last_error());
            }
        }
        Ok(())
    }

    /// Compile everything imported to PTX (with manifest).
    pub fn compile(&self) -> Result<String, String> {
        let lib = self.lib;
        let compile = sym!(lib, oxide_module_compile);
        let mut ptx: *const c_char = std::ptr::null();
        let mut len = 0usize;
        // SAFETY: live handles; the PTX lives as long as the module, and is copied out here.
        unsafe {
            if compile(self.m, self.o, &mut ptx, &mut len) != 0 {
                return Err(lib.last_error());
            }
            let bytes = std::slice::from_raw_parts(ptx as *const u8, len);
            if let Ok(path) = std::env::var("OXIDE_DUMP_LLVM") {
                let get_ir = sym!(lib, oxide_module_get_llvm_ir);
                let mut ir: *const c_char = std::ptr::null();
                if get_ir(self.m, &mut ir) == 0 && !ir.is_null() {
                    let _ = std::fs::write(path, CStr::from_ptr(ir).to_bytes());
                }
            }
            Ok(String::from_utf8_lossy(bytes).into_owned())
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let lib = self.lib;
        let destroy =
            (|| -> Result<_, String> { Ok((sym!(lib, oxide_options_destroy), sym!(lib, oxide_context_destroy))) })();
        if let Ok((opts_destroy, ctx_destroy)) = destroy {
            // SAFETY: handles this session created (NULL is ignored); the module dies with ctx.
            unsafe {
                opts_destroy(self.o);
                ctx_destroy(self.ctx);
            }
        }
    }
}
