//! `cargo oxide`: build Rust GPU kernels with the stable toolchain.
//!
//!   cargo oxide doctor                 check rustc (its LLVM major), CUDA, liboxide, the driver
//!   cargo oxide new NAME               a project that builds offline as it is
//!   cargo oxide build [--release] [--sm sm_80,sm_90a] [--lineinfo] [--module FILE.ptx [--export RUST=NAME]...] [cargo args]
//!   cargo oxide run [PACKAGE] [-- args]  build, then run (PACKAGE: a package of the workspace)
//!
//! The same executable is also, inside the build, the rustc workspace wrapper (adds bitcode
//! emission and v0 mangling) and the linker (at a program's final link it makes the PTX from
//! every crate's bitcode with liboxide, in process, and links it in as OXIDE_PTX).
mod liboxide;
mod link;
mod report;
mod targets;
mod timing;

use std::path::{Path, PathBuf};
use std::process::{exit, Command};

const OXIDE_LLVM_MAJOR: u32 = 22;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // rustc workspace wrapper: argv = [self, rustc, args...]
    if args.len() > 1 && Path::new(&args[1]).file_stem().map(|s| s == "rustc").unwrap_or(false) {
        exit(wrap_rustc(&args[1], &args[2..]));
    }
    // linker: rustc runs us with the linker's arguments
    if std::env::var_os("OXIDE_LINKER_MODE").is_some() {
        exit(link::main(&args[1..]));
    }
    // `cargo oxide ...` arrives as [self, "oxide", ...]
    let mut rest: Vec<String> = args[1..].to_vec();
    if rest.first().map(|s| s == "oxide").unwrap_or(false) {
        rest.remove(0);
    }
    let cmd = rest.first().cloned().unwrap_or_default();
    let tail = if rest.is_empty() { vec![] } else { rest[1..].to_vec() };
    let code = match cmd.as_str() {
        "doctor" => doctor(),
        "new" => new_project(&tail),
        "build" => build(&tail, false),
        "run" => build(&tail, true),
        "-V" | "--version" => {
            println!("cargo-oxide {}", env!("CARGO_PKG_VERSION"));
            0
        }
        _ => {
            eprintln!("usage: cargo oxide <doctor | new NAME | build [--release] [--sm SM[,SM...]] [--lineinfo] [--module FILE.ptx [--export NAME=NEW]...] | run [PACKAGE] [-- args]>\n(cargo oxide build --help: the options)");
            if cmd.is_empty() || cmd == "help" || cmd == "--help" {
                0
            } else {
                2
            }
        }
    };
    exit(code);
}

/// The rustc wrapper: keep cargo's arguments, add bitcode emission and v0 mangling.
fn wrap_rustc(rustc: &str, args: &[String]) -> i32 {
    if args.len() == 1 && args[0] == "-vV" {
        return probe_toolchain(rustc);
    }
    let mut out: Vec<String> = Vec::with_capacity(args.len() + 3);
    let mut relines = false;
    let is_info = args.iter().any(|a| a == "-vV" || a == "--version" || a.starts_with("--print"));
    let mut saw_emit = false;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if !is_info && a.starts_with("--emit=") && a.contains("link") {
            saw_emit = true;
            out.push(format!("{},llvm-bc", a));
        } else if !is_info && a == "--emit" && i + 1 < args.len() && args[i + 1].contains("link") {
            saw_emit = true;
            out.push(a.clone());
            out.push(format!("{},llvm-bc", args[i + 1]));
            i += 1;
        } else {
            out.push(a.clone());
        }
        i += 1;
    }
    if saw_emit && !out.iter().any(|a| a.contains("symbol-mangling-version")) {
        out.push("-Csymbol-mangling-version=v0".into());
    }
    if saw_emit {
        out = without_lto(out);
    }
    if let Some(units) = codegen_units(args).filter(|_| saw_emit) {
        out.push(units);
    }
    if saw_emit {
        // Keep the host optimiser from duplicating blocks that hold barriers or warp operations
        // into divergent branches (jump threading does that to unrolled reduction loops); the
        // GPU pipeline then sees the structured control flow the source has.
        out.push("-Cllvm-args=-jump-threading-threshold=0".into());
        // SimplifyCFG threads branches through small blocks too: it copied the reduction's last
        // barrier into both arms of the `if t == 0` after it (one copy in divergent code).
        // The option bounds only that threading (blocks of at most this size are copied).
        out.push("-Cllvm-args=-simplifycfg-max-small-block-size=0".into());
        // Line tables in the bitcode: liboxide's refusals name the user's file:line from them,
        // and --lineinfo turns them into the PTX's .loc. A profile that asks for debug info
        // keeps what it asked for. A program's own crate, what a warm rebuild compiles again,
        // goes without: they cost a quarter of its release compile, and only a refusal reads
        // them (the kernel key leaves them out), so the linker compiles the crate again with
        // them when it has one to show (link.rs, `relined`).
        if !args.iter().any(|a| a.contains("debuginfo=") || a == "-g") {
            relines = lines_later(args);
            if !relines {
                out.push("-Cdebuginfo=line-tables-only".into());
            }
            // the program itself stays as the profile made it, without debug info (its
            // dependencies' line tables stay out of it, and its link does not write them)
            if !args.iter().any(|a| a.contains("strip=")) {
                out.push("-Cstrip=debuginfo".into());
            }
        }
    }
    let stages = timing::on().then(timing::Stages::new);
    let mut cmd = Command::new(rustc);
    cmd.args(&out);
    if relines {
        cmd.env(
            link::RELINES_ENV,
            std::iter::once(rustc).chain(out.iter().map(String::as_str)).collect::<Vec<_>>().join("\x1f"),
        );
    }
    if stages.is_none() {
        // nothing to do after rustc: it takes this process's place (no second process waiting)
        let e = std::os::unix::process::CommandExt::exec(&mut cmd);
        eprintln!("cargo-oxide: could not run {}: {}", rustc, e);
        return 1;
    }
    let status = cmd.status();
    if let Some(mut st) = stages {
        st.mark("rustc");
        let name = args.iter().position(|a| a == "--crate-name").and_then(|i| args.get(i + 1));
        st.write(&format!("rustc {}", name.map(String::as_str).unwrap_or("?")));
    }
    match status {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("cargo-oxide: could not run {}: {}", rustc, e);
            1
        }
    }
}

/// cargo's `rustc -vV`, answered with the toolchain check: cargo asks once per toolchain (it
/// keeps the answer in the target folder's .rustc_info.json, keyed by rustc and this wrapper), so
/// a toolchain whose bitcode liboxide cannot read is refused before anything compiles, and a
/// warm build runs no `rustc -vV` of its own (through rustup's proxy, 15 ms of CPU and 40 ms).
fn probe_toolchain(rustc: &str) -> i32 {
    let o = match Command::new(rustc).arg("-vV").stderr(std::process::Stdio::inherit()).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("cargo-oxide: could not run {}: {}", rustc, e);
            return 1;
        }
    };
    let _ = std::io::Write::write_all(&mut std::io::stdout(), &o.stdout);
    if !o.status.success() {
        return o.status.code().unwrap_or(1);
    }
    match check_llvm(llvm_major_of(&String::from_utf8_lossy(&o.stdout))) {
        Ok(()) => 0,
        Err(e) => {
            // shown by `cargo oxide` in place of cargo's block with rustc's output
            report::write("error", "toolchain", &format!("cargo oxide: {}", e));
            eprintln!("error: cargo oxide: {}", e);
            1
        }
    }
}

/// The arguments without a profile's LTO (`-C lto` for the program, `-C linker-plugin-lto` for
/// its dependencies): LTO links the crates into one object before the linker sees them, so the
/// linker would find no crates, and so no bitcode, on its command line, and the program would
/// carry no PTX. The GPU code is compiled whole by liboxide anyway.
fn without_lto(args: Vec<String>) -> Vec<String> {
    let is_lto = |a: &str| a == "lto" || a.starts_with("lto=") || a.starts_with("linker-plugin-lto");
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "-C" && it.peek().is_some_and(|v| is_lto(v)) {
            it.next();
        } else if !a.strip_prefix("-C").is_some_and(is_lto) {
            out.push(a);
        }
    }
    out
}

/// Whether this compile may leave out the line tables for the linker to ask for again: a
/// program's crate (linked by this wrapper), not compiled incrementally (a second compile must
/// not touch the incremental state) and without --lineinfo (which puts them in the PTX).
fn lines_later(args: &[String]) -> bool {
    program_crate(args) && std::env::var_os("OXIDE_LINEINFO").is_none()
}

/// A program's own crate, compiled without incremental compilation (release): what a warm
/// rebuild compiles again in full.
fn program_crate(args: &[String]) -> bool {
    args.windows(2).any(|w| w[0] == "--crate-type" && w[1] == "bin") && !args.iter().any(|a| a.contains("incremental="))
}

/// The codegen units to ask for (the last -C wins), if not the profile's. Asked for bitcode,
/// rustc compiles a crate as one unit unless told a number, and a program's crate in one unit
/// optimises on one core: it gets the profile's number, or one per core up to rustc's default
/// of 16 (rustc's own default merges the small units it would make, which a number given
/// does not: on two cores 2 units compiled vecadd faster than 16), each a bitcode file
/// `<crate>-<hash>.<unit>.rcgu.bc` beside its object, which the linker reads (link.rs,
/// `bitcode_files`). Any other crate is one unit: the linker reads a library's bitcode as the
/// one file `<crate>-<hash>.bc` (and a dependency compiles once, not at each rebuild).
fn codegen_units(args: &[String]) -> Option<String> {
    let given: Vec<&str> =
        args.iter().filter_map(|a| a.trim_start_matches("-C").strip_prefix("codegen-units=")).collect();
    if program_crate(args) {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        given.is_empty().then(|| format!("-Ccodegen-units={}", cores.min(16)))
    } else {
        given.iter().any(|n| *n != "1").then(|| "-Ccodegen-units=1".into())
    }
}

fn rustc_llvm_major() -> Option<(String, u32)> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let o = Command::new(rustc).arg("-vV").output().ok()?;
    llvm_major_of(&String::from_utf8_lossy(&o.stdout))
}

/// The toolchain and its LLVM major, from what `rustc -vV` printed.
fn llvm_major_of(s: &str) -> Option<(String, u32)> {
    let release = s.lines().find(|l| l.starts_with("release:"))?.trim_start_matches("release:").trim().to_string();
    let llvm =
        s.lines().find(|l| l.starts_with("LLVM version:"))?.trim_start_matches("LLVM version:").trim().to_string();
    let major = llvm.split('.').next()?.parse().ok()?;
    Some((format!("rustc {} (LLVM {})", release, llvm), major))
}

fn check_toolchain() -> Result<(), String> {
    check_llvm(rustc_llvm_major())
}

fn check_llvm(found: Option<(String, u32)>) -> Result<(), String> {
    match found {
        None => Err("rustc not found on PATH (install Rust with rustup: stable)".into()),
        Some((desc, major)) if major > OXIDE_LLVM_MAJOR => Err(format!(
            "{} is newer than liboxide's LLVM {}: its bitcode cannot be read. Fix: use a toolchain whose LLVM \
             major is <= {} (`rustup default 1.95.0`), or build oxide against a newer LLVM (llvm-{}-dev)",
            desc, OXIDE_LLVM_MAJOR, OXIDE_LLVM_MAJOR, major
        )),
        Some(_) => Ok(()),
    }
}

fn doctor() -> i32 {
    let mut bad = 0;
    let mut line = |ok: bool, what: &str, detail: String| {
        println!("[{}] {:<12} {}", if ok { " ok " } else { "FAIL" }, what, detail);
        if !ok {
            bad += 1;
        }
    };
    match rustc_llvm_major() {
        Some((d, m)) => {
            line(m <= OXIDE_LLVM_MAJOR, "rust", if m <= OXIDE_LLVM_MAJOR { d } else { check_toolchain().unwrap_err() })
        }
        None => line(false, "rust", "rustc not found (install with rustup, stable channel)".into()),
    }
    match liboxide::find() {
        Some(p) => match liboxide::Lib::open(&p) {
            Ok(l) => {
                line(true, "liboxide", format!("{} (version {}, LLVM {})", p.display(), l.version(), OXIDE_LLVM_MAJOR))
            }
            Err(e) => line(false, "liboxide", e),
        },
        None => line(
            false,
            "liboxide",
            "not found: build oxide (cmake -S . -B build && cmake --build build) or set OXIDE_LIB".into(),
        ),
    }
    let cuda = std::env::var("CUDA_HOME").unwrap_or_else(|_| "/usr/local/cuda".into());
    let ptxas = Path::new(&cuda).join("bin/ptxas");
    line(
        ptxas.exists(),
        "cuda",
        if ptxas.exists() {
            format!("{} (ptxas for checking PTX)", cuda)
        } else {
            format!("no ptxas in {}/bin (optional: used to check PTX)", cuda)
        },
    );
    let libdev = Path::new(&cuda).join("nvvm/libdevice/libdevice.10.bc");
    line(libdev.exists(), "libdevice", libdev.display().to_string());
    let driver =
        ["/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"]
            .iter()
            .find(|p| Path::new(p).exists());
    println!(
        "[{}] {:<12} {}",
        if driver.is_some() { " ok " } else { "note" },
        "driver",
        driver
            .map(|d| d.to_string())
            .unwrap_or_else(|| "libcuda.so.1 not found: programs build here and run on a machine with a GPU".into())
    );
    let reg = Path::new("/usr/share/cargo/registry/syn-1.0.107");
    line(
        reg.exists(),
        "crates",
        if reg.exists() {
            "Debian's syn/quote/proc-macro2 in /usr/share/cargo/registry".into()
        } else {
            "apt-get install librust-syn-dev librust-quote-dev librust-proc-macro2-dev".into()
        },
    );
    if bad == 0 {
        println!("cargo oxide is ready");
        0
    } else {
        1
    }
}

fn oxide_root() -> PathBuf {
    if let Ok(r) = std::env::var("OXIDE_ROOT") {
        return r.into();
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

fn new_project(args: &[String]) -> i32 {
    let Some(name) = args.first() else {
        eprintln!("usage: cargo oxide new NAME");
        return 2;
    };
    let dir = PathBuf::from(name);
    if dir.exists() {
        eprintln!("cargo oxide new: {} already exists", dir.display());
        return 1;
    }
    let root = oxide_root();
    let crate_name = dir.file_name().unwrap().to_string_lossy().replace('-', "_");
    let plugin = root.join("rustc-plugin");
    let files = [
        ("Cargo.toml".to_string(), format!(
            "[package]\nname = \"{n}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\ncuda-device = {{ path = \"{p}/cuda-device\" }}\ncuda-core = {{ path = \"{p}/cuda-core\" }}\ncuda-async = {{ path = \"{p}/cuda-async\" }}\n\n[workspace]\n",
            n = crate_name, p = plugin.display())),
        (".cargo/config.toml".to_string(), "[source.crates-io]\nreplace-with = \"debian\"\n\n[source.debian]\ndirectory = \"/usr/share/cargo/registry\"\n\n[net]\noffline = true\n".to_string()),
        (".gitignore".to_string(), "/target\n".to_string()),
        ("src/main.rs".to_string(), include_str!("template_main.rs").to_string()),
    ];
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        if let Err(e) = std::fs::write(&p, text) {
            eprintln!("cargo oxide new: {}: {}", p.display(), e);
            return 1;
        }
    }
    println!("created {} (build and run: cd {} && cargo oxide run)", dir.display(), dir.display());
    0
}

const BUILD_HELP: &str = "\
Build a Rust program with its GPU kernels compiled to PTX inside it (run: build, then run it)

Usage: cargo oxide build [OPTIONS] [CARGO OPTIONS]...
       cargo oxide run [PACKAGE] [OPTIONS] [CARGO OPTIONS]... [-- PROGRAM ARGUMENTS]...

Options:
      --sm <TARGETS>       the GPU targets of the PTX, comma-separated: sm_80, sm_86, sm_89,
                           sm_90, sm_90a, sm_100a (default sm_80,sm_90a, or the package's
                           [package.metadata.oxide] sm list); more than one makes a PTX bundle,
                           from which loading picks the device's; checked before cargo starts
      --lineinfo           line tables in the PTX (.file/.loc, no other debug info): ncu's source
                           view and compute-sanitizer's reports show the Rust file:line
      --module <FILE.ptx>  also write the program's PTX, with its manifest, to FILE.ptx for C, C++
                           and Python callers (name the program with -p PACKAGE or --bin NAME)
      --export <NAME=NEW>  with --module: the kernel the manifest names NAME (e.g. vecadd, or
                           `map<f32, app::main::{closure#0}>`) is called NEW there; repeatable
  -h, --help               print this text

Every other option goes to cargo (--release, -p PACKAGE, --bin NAME, --features ...).
The PTX is also kept at target/<profile>/oxide/<program>.ptx (a bundle: <program>.ptx-bundle,
each target's PTX as <program>.<target>.ptx and the newest as <program>.ptx), and <program>.log
there says how it was made; a line `PTX <program>: ...` reports the PTX step and its time.
";

/// The options `cargo oxide build` and `run` take for themselves; the rest goes to cargo.
#[derive(Default)]
struct BuildArgs {
    cargo_args: Vec<String>,
    sm: Option<String>,
    lineinfo: bool,
    module_out: Option<String>,
    exports: Vec<String>,
    package: Option<String>,
    after_dashdash: Vec<String>,
    help: bool,
}

fn parse_build_args(args: &[String], run: bool) -> Result<BuildArgs, String> {
    let mut b = BuildArgs::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        // `--opt VALUE` and `--opt=VALUE`
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i).filter(|v| !v.starts_with("--")).cloned().ok_or_else(|| format!("{} needs {}", name, what))
        };
        match name {
            "-h" | "--help" => b.help = true,
            "--sm" => b.sm = Some(value("a target, e.g. --sm sm_90a or --sm sm_80,sm_90a")?),
            "--lineinfo" => b.lineinfo = true,
            "--module" => {
                let p = PathBuf::from(value("a file, e.g. --module kernels.ptx")?);
                let abs = if p.is_absolute() { p } else { std::env::current_dir().unwrap().join(p) };
                b.module_out = Some(abs.display().to_string());
            }
            "--export" => {
                let e = value("NAME=NEW")?;
                if !e.contains('=') {
                    return Err(format!("--export {}: write NAME=NEW (the manifest's name, then the new one)", e));
                }
                b.exports.push(e);
            }
            "--" => {
                b.after_dashdash = args[i + 1..].to_vec();
                break;
            }
            s if run
                && b.package.is_none()
                && !s.starts_with('-')
                && b.cargo_args.last().map(|p| !p.starts_with('-') || p == "--release").unwrap_or(true) =>
            {
                b.package = Some(s.to_string());
            }
            _ => b.cargo_args.push(a.clone()),
        }
        i += 1;
    }
    if !b.exports.is_empty() && b.module_out.is_none() {
        return Err("--export names kernels in the --module file: add --module FILE.ptx".into());
    }
    Ok(b)
}

/// `--sm` (one target or a list) checked before cargo runs, since the targets are part of every
/// unit's hash and a bad one would first rebuild every dependency; a near miss (`90a`,
/// `compute_80`) is named.
fn check_sm(list: &str) -> Result<Vec<String>, String> {
    for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if targets::KNOWN.contains(&t) {
            continue;
        }
        let near = targets::KNOWN
            .iter()
            .find(|k| k.trim_start_matches("sm_") == t.trim_start_matches("sm_").trim_start_matches("compute_"));
        return Err(format!(
            "--sm {}: not a target oxide compiles for{}; use one or more of {}, comma-separated",
            t,
            near.map(|k| format!(" (did you mean {}?)", k)).unwrap_or_default(),
            targets::KNOWN.join(", ")
        ));
    }
    targets::parse(list)
}

fn build(args: &[String], run: bool) -> i32 {
    let started = timing::wall();
    let b = match parse_build_args(args, run) {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "error: cargo oxide {}: {}\n\nFor the options: cargo oxide {} --help",
                if run { "run" } else { "build" },
                e,
                if run { "run" } else { "build" }
            );
            return 2;
        }
    };
    if b.help {
        print!("{}", BUILD_HELP);
        return 0;
    }
    let sm = b.sm.clone().unwrap_or_else(|| targets::DEFAULT.into());
    if let Err(e) = check_sm(&sm) {
        eprintln!("error: cargo oxide: {}", e);
        return 2;
    }
    let Some(lib) = liboxide::find() else {
        eprintln!("cargo oxide: liboxide.so not found: build oxide with CMake (cmake -S . -B build && cmake --build build) or set OXIDE_LIB");
        return 1;
    };
    let me = std::env::current_exe().unwrap();
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.arg(if run { "run" } else { "build" });
    if let Some(e) = &b.package {
        c.arg("-p").arg(e);
    }
    c.args(&b.cargo_args);
    if run && !b.after_dashdash.is_empty() {
        c.arg("--").args(&b.after_dashdash);
    }
    // RUSTC_WRAPPER (every crate: the oxide crates are path dependencies outside the user's
    // workspace) adds bitcode emission; the mangling flag in RUSTFLAGS changes every unit's hash,
    // so crates built without bitcode by a plain `cargo build` are never reused here.
    let mut rustflags = std::env::var("RUSTFLAGS").unwrap_or_default();
    if !rustflags.contains("symbol-mangling-version") {
        rustflags = format!("{} -Csymbol-mangling-version=v0", rustflags).trim().to_string();
    }
    // the device options in the unit hash too: changing --sm or --lineinfo relinks (new PTX).
    // Without --sm each package's own list applies, so that build hashes as "package", never as
    // an explicit list (an explicit --sm equal to the default list must still relink a package
    // whose Cargo.toml names other targets)
    let sm_key = b.sm.clone().unwrap_or_else(|| "package".into());
    rustflags = format!("{} --cfg oxide_sm=\"{}\"", rustflags, sm_key);
    // and the compiler itself: a rebuilt or upgraded liboxide makes other PTX of the same Rust,
    // which cargo would otherwise call Fresh and keep
    rustflags = format!("{} --cfg oxide_lib=\"{}\"", rustflags, liboxide::identity(&lib));
    if b.lineinfo {
        rustflags.push_str(" --cfg oxide_lineinfo");
        c.env("OXIDE_LINEINFO", "1");
    }
    if b.sm.is_some() {
        c.env("OXIDE_SM", &sm);
    }
    let mut report = report::Report::new();
    c.env("RUSTC_WRAPPER", &me)
        .env("RUSTFLAGS", rustflags)
        .env("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER", &me)
        .env("OXIDE_LINKER_MODE", "1")
        .env("OXIDE_LIB", &lib)
        .env(report::ENV, report.dir())
        .stderr(std::process::Stdio::piped());
    if report.color() && std::env::var_os("CARGO_TERM_COLOR").is_none() {
        c.env("CARGO_TERM_COLOR", "always");
    }
    let mut child = match c.spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("cargo oxide: could not run cargo: {}", e);
            return 1;
        }
    };
    if let Some(err) = child.stderr.take() {
        report.relay(err, &me.to_string_lossy());
    }
    let code = match child.wait() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("cargo oxide: could not wait for cargo: {}", e);
            1
        }
    };
    if timing::on() {
        eprint!("{}", timing::timeline(report.dir(), started, timing::wall()));
    }
    if code != 0 || b.module_out.is_none() {
        return code;
    }
    write_module(&b.cargo_args, b.package, b.module_out.as_deref().unwrap(), &b.exports)
}

/// `--module OUT`: the PTX the linker kept for the program, with the export names applied.
fn write_module(cargo_args: &[String], package: Option<String>, out: &str, exports: &[String]) -> i32 {
    let release = cargo_args.iter().any(|a| a == "--release" || a == "-r");
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| find_target_dir());
    let dir = target.join(if release { "release" } else { "debug" }).join("oxide");
    let want = cargo_args
        .iter()
        .position(|a| a == "-p" || a == "--package" || a == "--bin")
        .and_then(|i| cargo_args.get(i + 1))
        .cloned()
        .or(package);
    let ptx = match want {
        Some(p) => dir.join(format!("{}.ptx", p.replace('-', "_"))),
        None => {
            let all: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map(|r| {
                    r.flatten()
                        .map(|e| e.path())
                        .filter(|p| p.extension().map(|e| e == "ptx").unwrap_or(false))
                        // not a bundle's per-target copies (<program>.<target>.ptx)
                        .filter(|p| p.file_stem().map(|s| !s.to_string_lossy().contains('.')).unwrap_or(false))
                        .collect()
                })
                .unwrap_or_default();
            if all.len() != 1 {
                eprintln!("cargo oxide: --module needs one program: name it with -p PACKAGE or --bin NAME");
                return 2;
            }
            all[0].clone()
        }
    };
    // what the program itself carries (one PTX, or the bundle of several targets): cargo keeps
    // one program per set of targets and may not relink, so the copies beside it can be another's
    let stem = ptx.file_stem().unwrap().to_string_lossy().to_string();
    let carried =
        [stem.clone(), stem.replace('_', "-")].iter().find_map(|n| link::carried_text(&dir.parent().unwrap().join(n)));
    let text = match carried.map(Ok).unwrap_or_else(|| std::fs::read_to_string(&ptx)).or_else(|_| {
        std::fs::read_to_string(
            dir.join(format!("{}.ptx", ptx.file_stem().unwrap().to_string_lossy().replace('_', "-"))),
        )
    }) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cargo oxide: {}: {}", ptx.display(), e);
            return 1;
        }
    };
    match std::fs::write(out, targets::map_parts(&text, |p| link::export_names(p, exports))) {
        Ok(()) => {
            let parts = targets::unbundle(&text).map(|p| p.len()).unwrap_or(1);
            println!(
                "wrote {} ({} kernels, {} target{})",
                out,
                text.matches(".entry ").count() / parts,
                parts,
                if parts > 1 { "s" } else { "" }
            );
            0
        }
        Err(e) => {
            eprintln!("cargo oxide: {}: {}", out, e);
            1
        }
    }
}

/// The cargo target folder: ./target of the nearest folder with a Cargo.lock or workspace.
fn find_target_dir() -> PathBuf {
    let mut d = std::env::current_dir().unwrap();
    let start = d.clone();
    loop {
        if d.join("Cargo.lock").exists() {
            return d.join("target");
        }
        if !d.pop() {
            return start.join("target");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn build_options_are_taken_and_the_rest_goes_to_cargo() {
        let b = parse_build_args(&args("--release --sm=sm_80 --lineinfo -p app --module k.ptx --export a=b"), false)
            .unwrap();
        assert_eq!(b.sm.as_deref(), Some("sm_80"));
        assert!(b.lineinfo && !b.help);
        assert_eq!(b.cargo_args, args("--release -p app"));
        assert!(b.module_out.unwrap().ends_with("/k.ptx"));
        assert_eq!(b.exports, args("a=b"));
        let r = parse_build_args(&args("app --release -- 1 2"), true).unwrap();
        assert_eq!((r.package.as_deref(), r.after_dashdash), (Some("app"), args("1 2")));
        assert!(parse_build_args(&args("-h"), false).unwrap().help);
    }

    #[test]
    fn bad_build_options_say_what_to_write() {
        let e = |s: &str| parse_build_args(&args(s), false).err().unwrap();
        assert!(e("--sm").contains("--sm needs a target"), "{}", e("--sm"));
        assert!(e("--sm --release").contains("--sm needs a target"));
        assert!(e("--module k.ptx --export ab").contains("NAME=NEW"));
        assert!(e("--export a=b").contains("add --module"));
    }

    #[test]
    fn the_toolchain_check_reads_rustc_vv() {
        let vv = |llvm: &str| {
            format!("rustc 1.95.0 (5980 2026-04-14)\nbinary: rustc\nrelease: 1.95.0\nLLVM version: {}\n", llvm)
        };
        assert_eq!(llvm_major_of(&vv("22.1.2")), Some(("rustc 1.95.0 (LLVM 22.1.2)".into(), 22)));
        assert!(check_llvm(llvm_major_of(&vv("22.1.2"))).is_ok());
        let e = check_llvm(llvm_major_of(&vv("23.0.0"))).unwrap_err();
        assert!(e.contains("newer than liboxide's LLVM 22") && e.contains("rustup default"), "{}", e);
        assert!(check_llvm(llvm_major_of("no version here")).unwrap_err().contains("rustc not found"));
    }

    #[test]
    fn a_programs_crate_is_compiled_in_units_and_a_library_in_one() {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(16);
        let bin = args("--crate-name app --crate-type bin -C opt-level=3");
        assert_eq!(codegen_units(&bin), Some(format!("-Ccodegen-units={}", cores)));
        // the profile's number stands (plain cargo compiles it so too)
        assert_eq!(codegen_units(&args("--crate-type bin -C codegen-units=4")), None);
        // incremental (dev): one unit, rustc's choice when asked for bitcode
        assert_eq!(codegen_units(&args("--crate-type bin -C incremental=/t/i")), None);
        assert_eq!(
            codegen_units(&args("--crate-type bin -C incremental=/t/i -C codegen-units=256")),
            Some("-Ccodegen-units=1".into())
        );
        assert_eq!(codegen_units(&args("--crate-type lib -C codegen-units=4")), Some("-Ccodegen-units=1".into()));
        assert_eq!(codegen_units(&args("--crate-type lib -Ccodegen-units=1")), None);
        assert_eq!(codegen_units(&args("--crate-type lib")), None);
    }

    #[test]
    fn a_profiles_lto_is_left_out() {
        assert_eq!(
            without_lto(args("--crate-type bin -C lto -C opt-level=3 -Clto=fat -C linker-plugin-lto -Copt-level=3")),
            args("--crate-type bin -C opt-level=3 -Copt-level=3")
        );
        assert_eq!(without_lto(args("-C embed-bitcode=no -C")), args("-C embed-bitcode=no -C"));
    }

    #[test]
    fn only_a_programs_crate_leaves_its_line_tables_for_later() {
        assert!(lines_later(&args("--crate-name app --crate-type bin -C opt-level=3")));
        assert!(!lines_later(&args("--crate-name core --crate-type lib -C opt-level=3")));
        assert!(!lines_later(&args("--crate-name app --crate-type bin -C incremental=/t/inc")));
    }

    #[test]
    fn sm_is_checked_against_the_targets() {
        for t in targets::KNOWN {
            assert_eq!(check_sm(t).unwrap(), [*t]);
        }
        assert_eq!(check_sm(targets::DEFAULT).unwrap(), ["sm_80", "sm_90a"]);
        assert_eq!(check_sm("sm_90a, sm_86,sm_90a").unwrap(), ["sm_90a", "sm_86"]);
        let e = check_sm("sm_91").unwrap_err();
        assert!(e.contains("--sm sm_91: not a target") && e.contains("sm_90a, sm_100a"), "{}", e);
        assert!(check_sm("90a").unwrap_err().contains("did you mean sm_90a?"));
        assert!(check_sm("sm_80,compute_80")
            .unwrap_err()
            .contains("--sm compute_80: not a target oxide compiles for (did you mean sm_80?)"));
        assert!(check_sm(" , ").unwrap_err().contains("--sm needs a target"));
        let b = parse_build_args(&args("--sm sm_80,sm_90a -p app"), false).unwrap();
        assert_eq!((b.sm.as_deref(), b.cargo_args), (Some("sm_80,sm_90a"), args("-p app")));
    }
}
