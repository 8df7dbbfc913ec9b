//! The linker wrapper. At the final link of a program that uses cuda-device, every crate's
//! bitcode exists (the rustc wrapper asked for it): find the units that belong to this link from
//! the object and rlib names on the command line, compile them to PTX with liboxide, and link an
//! object that defines OXIDE_PTX / OXIDE_PTX_LEN (section .oxide_ptx) into the program.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn real_linker() -> String {
    std::env::var("OXIDE_REAL_LINKER").unwrap_or_else(|_| "cc".into())
}

fn run_linker(args: &[String]) -> i32 {
    match Command::new(real_linker()).args(args).status() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("cargo-oxide linker: could not run {}: {}", real_linker(), e);
            1
        }
    }
}

/// `<dir>/<crate>-<hash>.bc` for an object `<crate>-<hash>.<cgu>.rcgu.o` or an rlib
/// `lib<crate>-<hash>.rlib` (rustc writes one bitcode file per crate next to its outputs, when
/// the crate is one codegen unit).
fn bitcode_for(arg: &str) -> Option<PathBuf> {
    let p = Path::new(arg);
    let file = p.file_name()?.to_string_lossy().to_string();
    let dir = p.parent()?;
    if file.ends_with(".rcgu.o") {
        let stem = file.split('.').next()?;
        return Some(dir.join(format!("{}.bc", stem)));
    }
    if file.ends_with(".rlib") && file.starts_with("lib") && !arg.contains("/lib/rustlib/") {
        let stem = file.trim_start_matches("lib").trim_end_matches(".rlib");
        return Some(dir.join(format!("{}.bc", stem)));
    }
    None
}

/// The bitcode files of the link's objects and rlibs. A crate of several codegen units (a
/// program's, main.rs `codegen_units`) has a bitcode file per unit, `<object without .o>.bc`,
/// and its objects on the line name them: those, not what else is in the folder (an earlier
/// build's units). rustc's own objects (the allocator shim: no `-cgu.` in the name) have none.
fn bitcode_files(flat: &[String]) -> Vec<(PathBuf, &String)> {
    let is_unit = |a: &str| a.ends_with(".rcgu.o") && a.contains("-cgu.");
    let units_of = |stem: &PathBuf| flat.iter().filter(|a| is_unit(a) && bitcode_for(a).as_ref() == Some(stem)).count();
    let mut files = Vec::new();
    for a in flat {
        let Some(bc) = bitcode_for(a) else { continue };
        if is_unit(a) && units_of(&bc) > 1 {
            files.push((PathBuf::from(format!("{}.bc", a.trim_end_matches(".o"))), a));
        } else if !(a.ends_with(".rcgu.o") && units_of(&bc) > 1) {
            files.push((bc, a));
        }
    }
    files
}

/// The linker's arguments with the @response files rustc may use for long command lines expanded.
fn expand_response_files(args: &[String]) -> Vec<String> {
    let mut flat: Vec<String> = Vec::new();
    for a in args {
        if let Some(f) = a.strip_prefix('@') {
            if let Ok(t) = std::fs::read_to_string(f) {
                flat.extend(t.lines().map(|l| l.trim_matches('"').replace("\\\\", "\\")));
                continue;
            }
        }
        flat.push(a.clone());
    }
    flat
}

/// Assembles the object that carries the PTX file into the program (`OXIDE_PTX`, `OXIDE_PTX_LEN`).
/// `reuse`: the PTX file was not rewritten, so an object assembled from the same text is current
/// (assembling runs the C compiler: a process a warm rebuild need not pay for).
fn ptx_object(ptx_dir: &Path, prog: &str, ptx_file: &Path, ptx_len: usize, reuse: bool) -> Result<PathBuf, String> {
    let asm = ptx_dir.join(format!("{}.oxide_ptx.s", prog));
    let obj = ptx_dir.join(format!("{}.oxide_ptx.o", prog));
    let text = format!(
        ".section .oxide_ptx,\"a\",@progbits\n.globl OXIDE_PTX\n.type OXIDE_PTX,@object\nOXIDE_PTX:\n.incbin \"{}\"\n.byte 0\n.size OXIDE_PTX, . - OXIDE_PTX\n\
         .section .rodata.oxide_ptx_len,\"a\",@progbits\n.balign 8\n.globl OXIDE_PTX_LEN\n.type OXIDE_PTX_LEN,@object\nOXIDE_PTX_LEN:\n.quad {}\n.size OXIDE_PTX_LEN, 8\n\
         .section .note.GNU-stack,\"\",@progbits\n",
        ptx_file.display(), ptx_len);
    if reuse && obj.exists() && std::fs::read_to_string(&asm).is_ok_and(|t| t == text) {
        return Ok(obj);
    }
    let _ = std::fs::remove_file(&obj); // an object is there only when assembled from this text
    std::fs::write(&asm, text).map_err(|e| format!("{}: {}", asm.display(), e))?;
    match Command::new(real_linker()).arg("-c").arg(&asm).arg("-o").arg(&obj).status() {
        Ok(s) if s.success() => Ok(obj),
        _ => Err(format!("could not assemble {}", asm.display())),
    }
}

/// Where one program's PTX and its cache entry live: target/<profile>/oxide/<program>.ptx.
struct Program {
    out_name: String,
    prog: String,
    ptx_dir: PathBuf,
    ptx_file: PathBuf,
    key_file: PathBuf,
}

impl Program {
    fn of(out: &str, sm: &str) -> Program {
        let out_path = PathBuf::from(out);
        let out_name = out_path.file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
        let deps = out_path.parent().unwrap_or(Path::new("."));
        let prog = out_name.rsplit_once('-').map(|(a, _)| a.to_string()).unwrap_or(out_name.clone());
        let profile_dir = if deps.file_name().map(|f| f == "deps" || f == "examples").unwrap_or(false) {
            deps.parent().unwrap()
        } else {
            deps
        };
        let ptx_dir = profile_dir.join("oxide");
        let _ = std::fs::create_dir_all(&ptx_dir);
        let ptx_file = crate::targets::embedded_file(&ptx_dir, &prog, sm);
        // one cache entry per kind of build (one target, a bundle): cargo keeps both programs
        let key_file = PathBuf::from(format!("{}.key", ptx_file.display()));
        Program { out_name, prog, ptx_dir, ptx_file, key_file }
    }
}

/// The bitcode of the crates on the link line, one unit per crate or per codegen unit.
fn read_units(flat: &[String]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut units: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (bc, a) in bitcode_files(flat) {
        if !seen.insert(bc.clone()) {
            continue;
        }
        match std::fs::read(&bc) {
            Ok(d) => units.push((bc.file_name().unwrap().to_string_lossy().to_string(), d)),
            Err(_) => {
                if a.ends_with(".rcgu.o") || a.contains("cuda_device") {
                    return Err(format!(
                        "no bitcode {} for {} (was it built by `cargo oxide build`? try `cargo clean`)",
                        bc.display(),
                        a
                    ));
                }
            }
        }
    }
    Ok(units)
}

/// The standard library's rlibs of the link whose embedded bitcode kernels may need (the
/// host-only ones left out).
fn std_rlibs(flat: &[String]) -> Vec<&String> {
    flat.iter()
        .filter(|a| a.contains("/lib/rustlib/") && a.ends_with(".rlib"))
        .filter(|a| {
            let krate = rlib_crate(a);
            !matches!(
                krate.as_str(),
                "std" | "test" | "proc_macro" | "panic_unwind" | "unwind" | "std_detect" | "getopts"
            )
        })
        .collect()
}

/// `core` for `.../libcore-<hash>.rlib`.
fn rlib_crate(rlib: &str) -> String {
    let file = Path::new(rlib).file_name().unwrap().to_string_lossy().to_string();
    file.trim_start_matches("lib").split('-').next().unwrap_or("").to_string()
}

/// The PTX cache's entry as the key file holds it: the units' key, the line naming the PTX text
/// it was written with, the kernel key.
#[derive(Default)]
struct Entry {
    quick: String,
    text: String,
    key: String,
}

impl Entry {
    fn read(key_file: &Path) -> Entry {
        let stored = std::fs::read_to_string(key_file).unwrap_or_default();
        let mut lines = stored.splitn(3, '\n');
        let mut next = || lines.next().unwrap_or("").to_string();
        Entry { quick: next(), text: next(), key: next() }
    }
}

/// The real link of a likely cache hit, started with the entry's object while liboxide computes
/// the kernel key (the two take about as long, on a warm build with two cores). Dropping it waits
/// for the linker, so that a miss's relink, or a refusal, never races it.
struct EarlyLink(Option<std::process::Child>);

impl EarlyLink {
    fn start(args: &[String], p: &Program, old_ptx: &str) -> EarlyLink {
        let Ok(obj) = ptx_object(&p.ptx_dir, &p.prog, &p.ptx_file, old_ptx.len(), true) else {
            return EarlyLink(None);
        };
        EarlyLink(Command::new(real_linker()).args(args).arg(&obj).spawn().ok())
    }

    /// The linker's exit status, once it is done (None: none was started).
    fn finish(mut self) -> Option<i32> {
        let child = self.0.take()?;
        Some(wait_linker(child))
    }
}

impl Drop for EarlyLink {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            wait_linker(c);
        }
    }
}

fn wait_linker(mut c: std::process::Child) -> i32 {
    c.wait().ok().and_then(|s| s.code()).unwrap_or(1)
}

/// The PTX for the targets, compiled from the units with the standard library's core offered as
/// a library unit: liboxide takes from it only the functions the kernels call that the crates'
/// bitcode lacks (dev builds share generic instances such as copy_from_slice::<u8> with the
/// precompiled core instead of compiling their own), and parses only the units whose functions
/// the kernels turn out to need. A refusal of a crate compiled without line tables is made again
/// from the crate compiled with them, so that it names the user's line.
fn compile_ptx(
    lib: &crate::liboxide::Lib,
    units: &mut Vec<(String, Vec<u8>)>,
    std_rlibs: &[&String],
    sm: &str,
    lineinfo: bool,
) -> Result<String, String> {
    for a in std_rlibs {
        if let Some(bc) = rlib_bitcode(Path::new(a)) {
            units.push((format!("library:{}", rlib_crate(a)), bc));
        }
    }
    match crate::targets::compile(lib, units, sm, lineinfo) {
        Err(_) if relined(units) => crate::targets::compile(lib, units, sm, lineinfo),
        r => r,
    }
}

/// Set by the rustc wrapper (main.rs) for a program's crate it compiled without line tables:
/// rustc and its arguments, separated by \x1f. The linker runs in that compile's environment and
/// folder, so the same command compiles the crate again.
pub const RELINES_ENV: &str = "OXIDE_RELINES";

/// The wrapper's rustc command (RELINES_ENV) as a compile of the crate's bitcode alone, with line
/// tables, into `dir`.
fn relines_command(cmd: &str, dir: &Path) -> (String, Vec<String>) {
    let mut parts = cmd.split('\x1f');
    let rustc = parts.next().unwrap_or("rustc").to_string();
    let mut args: Vec<String> = Vec::new();
    while let Some(a) = parts.next() {
        if a.starts_with("--emit=") || a.starts_with("--out-dir=") {
            continue;
        }
        if a == "--emit" || a == "--out-dir" || a == "-o" {
            parts.next();
            continue;
        }
        args.push(a.to_string());
    }
    args.extend(["--emit=llvm-bc", "-Cdebuginfo=line-tables-only", "--out-dir"].map(String::from));
    args.push(dir.display().to_string());
    (rustc, args)
}

/// The crate of this link compiled again with line tables, into a folder of its own and to
/// bitcode only (nothing of the build's is touched): its bitcode replaces the unit of the same
/// name. false when there is nothing to replace or the compile fails.
fn relined(units: &mut [(String, Vec<u8>)]) -> bool {
    let Ok(cmd) = std::env::var(RELINES_ENV) else {
        return false;
    };
    let dir = std::env::temp_dir().join(format!("cargo-oxide-lines-{}", std::process::id()));
    let (rustc, args) = relines_command(&cmd, &dir);
    let ok = std::fs::create_dir_all(&dir).is_ok()
        && Command::new(&rustc)
            .args(&args)
            .env_remove(RELINES_ENV)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
    let mut replaced = false;
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let (true, Some(u)) = (ok, units.iter_mut().find(|u| u.0 == name)) {
            if let Ok(d) = std::fs::read(e.path()) {
                u.1 = d;
                replaced = true;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    replaced
}

pub fn main(args: &[String]) -> i32 {
    let flat = expand_response_files(args);
    let out = flat.iter().position(|a| a == "-o").and_then(|i| flat.get(i + 1)).cloned().unwrap_or_default();
    let out_name = Path::new(&out).file_name().map(|s| s.to_string_lossy().to_string()).unwrap_or_default();
    let uses_oxide = flat
        .iter()
        .any(|a| Path::new(a).file_name().map(|f| f.to_string_lossy().starts_with("libcuda_device-")).unwrap_or(false));
    let shared = flat.iter().any(|a| a == "-shared");
    if !uses_oxide || shared || out_name.starts_with("build_script_") {
        return run_linker(args);
    }
    let t0 = Instant::now();
    let mut st = crate::timing::Stages::new();
    let mut units = match read_units(&flat) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("cargo-oxide linker: {}", e);
            return 1;
        }
    };
    let sm = crate::targets::chosen();
    let p = Program::of(&out, &sm);
    let lineinfo = std::env::var("OXIDE_LINEINFO").is_ok();
    let lib_path = match std::env::var("OXIDE_LIB") {
        Ok(path) => PathBuf::from(path),
        Err(_) => match crate::liboxide::find() {
            Some(path) => path,
            None => {
                eprintln!("cargo-oxide linker: liboxide.so not found (set OXIDE_LIB)");
                return 1;
            }
        },
    };
    let std_rlibs = std_rlibs(&flat);
    let fail = |e: String| {
        // cargo oxide shows the report file in place of rustc's linker block
        crate::report::write("error", &p.prog, &e);
        eprintln!("error: oxide could not compile the kernels of {} for the GPU:\n  {}", p.out_name, e);
        1
    };
    // The same kernels, toolchain, liboxide and options give the same PTX. Two keys, in the key
    // file's first line and the rest: the units' bytes as at the last link (a touched file, a
    // relink with nothing new: liboxide is not even opened), then what the kernels are
    // (liboxide's kernel key, which reads only the units that define kernels and hashes what
    // their kernels reach): an edit to host-only code reuses the PTX.
    // The key file's second line names the PTX text it was written with: <program>.ptx is also
    // the copy a bundle's link writes of its newest target, which a one-target entry must not
    // take for its own.
    let targets = match crate::targets::parse(&sm) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    st.mark("read_bitcode");
    let quick = quick_key(&units, &std_rlibs, &lib_path, &sm, lineinfo);
    let stored = Entry::read(&p.key_file);
    let old_ptx = std::fs::read_to_string(&p.ptx_file).ok().filter(|t| text_line(t) == stored.text);
    st.mark("unit_key");
    let mut early = EarlyLink(None);
    let mut lib = None;
    let key;
    let cached = if old_ptx.is_some() && stored.quick == quick {
        key = stored.key.clone();
        old_ptx
    } else {
        if let Some(old) = &old_ptx {
            early = EarlyLink::start(args, &p, old);
            st.mark("early_link_started");
        }
        let l = match crate::liboxide::Lib::open(&lib_path) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("cargo-oxide linker: {}", e);
                return 1;
            }
        };
        st.mark("open_liboxide");
        // what the kernels are does not depend on the target (liboxide's key names the target
        // it is asked for): one kernel key, with the whole list beside it
        key = match l.kernel_key(&units, &targets[0], lineinfo) {
            Ok(k) => cache_key(&k, &targets, &std_rlibs),
            Err(e) => return fail(e),
        };
        st.mark("kernel_key");
        lib = Some(l);
        if key == stored.key {
            old_ptx
        } else {
            None
        }
    };
    let cache_hit = cached.is_some();
    let ptx = match cached {
        Some(t) => t,
        None => {
            let lib = lib.take().expect("opened for the kernel key");
            match compile_ptx(&lib, &mut units, &std_rlibs, &sm, lineinfo) {
                Ok(t) => t,
                Err(e) => return fail(e),
            }
        }
    };
    let t_compile = t0.elapsed();
    if !cache_hit {
        st.mark("compile_ptx");
        if let Err(e) = std::fs::write(&p.ptx_file, &ptx) {
            eprintln!("cargo-oxide linker: {}: {}", p.ptx_file.display(), e);
            return 1;
        }
    }
    // a bundle's copies (rewritten on a reuse too: a one-target build of the same program in
    // between wrote its own <program>.ptx)
    if let Err(e) = crate::targets::write_copies(&p.ptx_dir, &p.prog, &ptx) {
        eprintln!("cargo-oxide linker: the PTX copies in {}: {}", p.ptx_dir.display(), e);
        return 1;
    }
    let text = text_line(&ptx);
    if stored.quick != quick || stored.text != text || stored.key != key {
        let _ = std::fs::write(&p.key_file, format!("{}\n{}\n{}", quick, text, key));
    }
    write_summary(&p, &units, &ptx, &sm, &targets, t_compile.as_secs_f64(), cache_hit);
    st.mark("write_files");
    // a miss relinks (after the early link, which used the old PTX, is done)
    let rc = match (early.finish(), cache_hit) {
        (Some(rc), true) => rc,
        _ => {
            let obj = match ptx_object(&p.ptx_dir, &p.prog, &p.ptx_file, ptx.len(), cache_hit) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("cargo-oxide linker: {}", e);
                    return 1;
                }
            };
            st.mark("ptx_object");
            let mut full: Vec<String> = args.to_vec();
            full.push(obj.display().to_string());
            run_linker(&full)
        }
    };
    st.mark("real_linker");
    st.write(&format!("link {}", p.prog));
    rc
}

/// `<program>.log` beside the PTX (rustc hides a successful linker's output) and the PTX line
/// `cargo oxide` prints.
fn write_summary(
    p: &Program,
    units: &[(String, Vec<u8>)],
    ptx: &str,
    sm: &str,
    targets: &[String],
    secs: f64,
    cache_hit: bool,
) {
    let _ = std::fs::write(
        p.ptx_dir.join(format!("{}.log", p.prog)),
        format!(
            "{} bitcode units ({} crates, {} standard-library offered) -> {} bytes of PTX for {} in {:.3} s{}\n",
            units.len(),
            // a crate of several codegen units has a unit per codegen unit, `<crate>-<hash>.<cgu>.rcgu.bc`
            units
                .iter()
                .filter(|u| !u.0.starts_with("library:"))
                .map(|u| u.0.split('.').next().unwrap_or(""))
                .collect::<std::collections::HashSet<_>>()
                .len(),
            units.iter().filter(|u| u.0.starts_with("library:")).count(),
            ptx.len(),
            sm,
            secs,
            if cache_hit { " (unchanged: reused)" } else { "" }
        ),
    );
    let kernels = ptx.matches(".entry ").count() / targets.len();
    crate::report::write(
        "done",
        &p.prog,
        &format!(
            "{}: {} kernel{} for {} {}",
            p.prog,
            kernels,
            if kernels == 1 { "" } else { "s" },
            targets.join(","),
            if cache_hit { "(kernels unchanged: PTX reused)".to_string() } else { format!("in {:.2} s", secs) }
        ),
    );
}

/// `--module` output: the PTX, with manifest names replaced as `--export FROM=TO` asks (FROM:
/// a kernel's name as the manifest gives it, e.g. `vecadd` or `map<f32, app::main::{closure#0}>`).
pub fn export_names(ptx: &str, exports: &[String]) -> String {
    let mut out = ptx.to_string();
    for pair in exports {
        if let Some((from, to)) = pair.split_once('=') {
            let from_json = format!("\"name\":\"{}\"", from.replace('"', "\\\""));
            let to_json = format!("\"name\":\"{}\"", to);
            if !out.contains(&from_json) {
                eprintln!("cargo oxide: --export {}: no kernel named {} in the module", pair, from);
            }
            out = out.replacen(&from_json, &to_json, 1);
        }
    }
    out
}

/// The PTX cache's key, as text: liboxide's kernel key (what the kernels are, with liboxide's
/// identity and the options), the standard-library rlibs offered (by path and size: rustc names
/// each rlib by a hash of the crate, so a new toolchain has new paths) and this program's version
/// and size. Text, compared whole: no hash function of this program's own that could differ
/// between the Rust releases it is built with.
fn cache_key(kernel_key: &str, targets: &[String], std_rlibs: &[&String]) -> String {
    let mut k = format!("oxide-ptx-cache 3\nkernels {}\ntargets {}\n", kernel_key, targets.join(","));
    for r in std_rlibs {
        k.push_str(&format!("std {} {}\n", r, std::fs::metadata(r.as_str()).map(|m| m.len()).unwrap_or(0)));
    }
    let me = std::env::current_exe().ok().and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len()).unwrap_or(0);
    k.push_str(&format!("cargo-oxide {} {}\n", env!("CARGO_PKG_VERSION"), me));
    k
}

/// The key file's line for the PTX (or bundle) text of the entry.
fn text_line(text: &str) -> String {
    format!("text {} {:016x}", text.len(), fnv1a(0xcbf29ce484222325, text.as_bytes()))
}

/// FNV-1a (64 bits): a fixed, published function, so a key written by one build of cargo-oxide
/// means the same to any other (std's DefaultHasher may change between Rust releases).
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x100000001b3);
    }
    h
}

/// The first-level key: the crates' units byte for byte, the standard-library rlibs, liboxide
/// (its path, size and modification time: only to notice a rebuilt liboxide, as liboxide's own
/// module cache does; the kernel key names liboxide's build the same way), this program and
/// the device options. A miss only means asking liboxide for the kernel key.
fn quick_key(units: &[(String, Vec<u8>)], std_rlibs: &[&String], lib: &Path, sm: &str, lineinfo: bool) -> String {
    let mut h = 0xcbf29ce484222325u64;
    for (name, data) in units {
        h = fnv1a(h, format!("unit {} {}\n", name, data.len()).as_bytes());
        h = fnv1a(h, data);
    }
    let m = std::fs::metadata(lib).ok();
    let stamp = m.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    h = fnv1a(
        h,
        format!(
            "{}\nliboxide {} {} {}\nsm {} lineinfo {}\n",
            cache_key("", &[], std_rlibs),
            lib.display(),
            m.map(|m| m.len()).unwrap_or(0),
            stamp.map(|d| d.as_nanos()).unwrap_or(0),
            sm,
            lineinfo
        )
        .as_bytes(),
    );
    format!("units {:016x}", h)
}

/// The LLVM bitcode embedded in an rlib's object (section .llvmbc), as the standard library ships.
fn rlib_bitcode(rlib: &Path) -> Option<Vec<u8>> {
    let data = std::fs::read(rlib).ok()?;
    if !data.starts_with(b"!<arch>\n") {
        return None;
    }
    let mut off = 8;
    while off + 60 <= data.len() {
        let hdr = &data[off..off + 60];
        let name = String::from_utf8_lossy(&hdr[0..16]).trim().to_string();
        let size: usize = String::from_utf8_lossy(&hdr[48..58]).trim().parse().ok()?;
        let body = &data[off + 60..(off + 60 + size).min(data.len())];
        if name.ends_with(".o/") || name.ends_with(".o") || name.starts_with('/') {
            if let Some(bc) = elf_section(body, ".llvmbc") {
                if bc.len() > 4 {
                    return Some(bc.to_vec());
                }
            }
        }
        off += 60 + size + (size & 1);
    }
    None
}

/// The bytes of section `want` of a 64-bit little-endian ELF file.
pub fn elf_section<'a>(e: &'a [u8], want: &str) -> Option<&'a [u8]> {
    if e.len() < 64 || &e[0..4] != b"\x7fELF" || e[4] != 2 {
        return None;
    }
    let rd = |o: usize, n: usize| -> Option<u64> {
        let b = e.get(o..o + n)?;
        Some(b.iter().rev().fold(0u64, |a, &x| (a << 8) | x as u64))
    };
    let shoff = rd(40, 8)? as usize;
    let shentsize = rd(58, 2)? as usize;
    let shnum = rd(60, 2)? as usize;
    let shstrndx = rd(62, 2)? as usize;
    let sh = |i: usize| shoff + i * shentsize;
    let stroff = rd(sh(shstrndx) + 24, 8)? as usize;
    for i in 0..shnum {
        let name_off = rd(sh(i), 4)? as usize;
        let name = e.get(stroff + name_off..)?;
        let end = name.iter().position(|&c| c == 0)?;
        if &name[..end] == want.as_bytes() {
            let o = rd(sh(i) + 24, 8)? as usize;
            let n = rd(sh(i) + 32, 8)? as usize;
            return e.get(o..o + n);
        }
    }
    None
}

/// The PTX (or bundle) a program built by `cargo oxide build` carries: its `.oxide_ptx` section,
/// without the NUL that ends it.
pub fn carried_text(program: &Path) -> Option<String> {
    let elf = std::fs::read(program).ok()?;
    let sec = elf_section(&elf, ".oxide_ptx")?;
    let end = sec.iter().position(|&c| c == 0).unwrap_or(sec.len());
    String::from_utf8(sec[..end].to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_compiles_the_crate_again_to_bitcode_with_lines_elsewhere() {
        let cmd = [
            "/tc/rustc",
            "--crate-name",
            "app",
            "--emit=dep-info,link,llvm-bc",
            "--out-dir",
            "/t/deps",
            "-C",
            "opt-level=3",
            "--emit",
            "link",
            "-o",
            "x",
        ]
        .join("\x1f");
        let (rustc, args) = relines_command(&cmd, Path::new("/tmp/l"));
        assert_eq!(rustc, "/tc/rustc");
        assert_eq!(
            args,
            [
                "--crate-name",
                "app",
                "-C",
                "opt-level=3",
                "--emit=llvm-bc",
                "-Cdebuginfo=line-tables-only",
                "--out-dir",
                "/tmp/l"
            ]
        );
    }

    #[test]
    fn units_are_found_beside_objects_and_rlibs() {
        assert_eq!(bitcode_for("/t/deps/app-1234.app.abc-cgu.0.rcgu.o"), Some(PathBuf::from("/t/deps/app-1234.bc")));
        assert_eq!(bitcode_for("/t/deps/libcuda_core-99.rlib"), Some(PathBuf::from("/t/deps/cuda_core-99.bc")));
        assert_eq!(bitcode_for("/r/lib/rustlib/x86_64/lib/libcore-1.rlib"), None);
        assert_eq!(rlib_crate("/r/lib/rustlib/x86_64/lib/libcore-1a2b.rlib"), "core");
    }

    #[test]
    fn a_crate_of_several_codegen_units_is_read_unit_by_unit() {
        let line: Vec<String> = [
            "/t/deps/app-1.app.h-cgu.0.rcgu.o",
            "/t/deps/app-1.app.h-cgu.1.rcgu.o",
            "/t/deps/app-1.0mn0e3dd7k3k3n444mn.rcgu.o",
            "/t/deps/libcuda_device-9.rlib",
        ]
        .map(String::from)
        .to_vec();
        let files: Vec<PathBuf> = bitcode_files(&line).into_iter().map(|f| f.0).collect();
        assert_eq!(
            files,
            ["/t/deps/app-1.app.h-cgu.0.rcgu.bc", "/t/deps/app-1.app.h-cgu.1.rcgu.bc", "/t/deps/cuda_device-9.bc"]
                .map(PathBuf::from)
        );
        // one unit: rustc's copy, <crate>-<hash>.bc (the allocator shim maps to it too)
        let single = [line[0].clone(), line[2].clone()];
        let one = bitcode_files(&single);
        assert!(one.iter().all(|f| f.0 == Path::new("/t/deps/app-1.bc")), "{:?}", one);
    }
}
