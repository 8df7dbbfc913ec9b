//! Binaries for more than one GPU: `--sm` takes a list (default sm_80 and sm_90a), a program
//! carries one PTX per target in a PTX bundle, and loading picks the best for the device
//! (liboxide's `oxide_ptx_bundle_select`: the exact arch-specific target, else the newest the
//! device runs, JIT-compiled by the driver). A package can limit its own list in its
//! Cargo.toml (`[package.metadata.oxide] sm = ["sm_90a"]`), e.g. when its kernels use sm_90a-only
//! operations, which liboxide refuses for the other targets naming the operation.
use std::path::{Path, PathBuf};

/// What a build without `--sm` (and without the package's own list) targets.
pub const DEFAULT: &str = "sm_80,sm_90a";
/// The targets liboxide compiles for.
pub const KNOWN: &[&str] = &["sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100a"];
/// The bundle's header (runtime/bundle.c reads it).
const BUNDLE: &str = "// oxide.ptx-bundle.v1 ";

/// `sm_80,sm_90a` (commas, spaces allowed) as a list without repeats; an unknown target is an
/// error naming it and the known ones.
pub fn parse(list: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for t in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if !KNOWN.contains(&t) {
            return Err(format!(
                "--sm {t}: not a target oxide compiles for (one or more of {}, comma-separated)",
                KNOWN.join(", ")
            ));
        }
        if !out.iter().any(|o| o == t) {
            out.push(t.to_string());
        }
    }
    if out.is_empty() {
        return Err(format!("--sm needs a target: one or more of {}, comma-separated", KNOWN.join(", ")));
    }
    Ok(out)
}

/// `[package.metadata.oxide] sm = "sm_90a"` or `sm = ["sm_90a", ...]` in the Cargo.toml text.
fn package_list(toml: &str) -> Option<String> {
    let mut inside = false;
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[package.metadata.oxide]";
            continue;
        }
        if let (true, Some(v)) = (inside, line.strip_prefix("sm").map(str::trim_start)) {
            if let Some(v) = v.strip_prefix('=') {
                let v = v.split('#').next().unwrap_or("");
                let names: Vec<&str> = v
                    .split(|c: char| c == ',' || c == '[' || c == ']' || c == '"' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .collect();
                return Some(names.join(","));
            }
        }
    }
    None
}

/// The targets of this link: `--sm` (OXIDE_SM), else the package's Cargo.toml list (cargo gives
/// rustc, and so this linker, CARGO_MANIFEST_DIR), else the default.
pub fn chosen() -> String {
    if let Ok(s) = std::env::var("OXIDE_SM") {
        return s;
    }
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("Cargo.toml"));
    manifest
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| package_list(&t))
        .unwrap_or_else(|| DEFAULT.into())
}

/// The text a program carries for these parts: the PTX itself for one target, a bundle for more.
pub fn bundle(parts: &[(String, String)]) -> String {
    if parts.len() == 1 {
        return parts[0].1.clone();
    }
    let mut out = BUNDLE.to_string();
    out.push_str(&parts.iter().map(|(t, p)| format!("{t}:{}", p.len())).collect::<Vec<_>>().join(" "));
    out.push('\n');
    for (_, p) in parts {
        out.push_str(p);
    }
    out
}

/// A bundle's parts (target, PTX); `None` for plain PTX or a malformed bundle.
pub fn unbundle(text: &str) -> Option<Vec<(String, String)>> {
    let rest = text.strip_prefix(BUNDLE)?;
    let (head, mut body) = rest.split_once('\n')?;
    let mut parts = Vec::new();
    for entry in head.split_whitespace() {
        let (t, n) = entry.split_once(':')?;
        let n: usize = n.parse().ok()?;
        if n > body.len() || !body.is_char_boundary(n) {
            return None;
        }
        parts.push((t.to_string(), body[..n].to_string()));
        body = &body[n..];
    }
    Some(parts)
}

/// liboxide shared by the threads of one link.
struct Shared<'a>(&'a crate::liboxide::Lib);
// SAFETY: each compile makes its own liboxide context, module and options, which liboxide allows
// from several threads at once (tests/unit/test_compile_threads.c); the library handle is only
// read (dlsym), and the last error is per thread.
unsafe impl Sync for Shared<'_> {}

/// The PTX for each target of `list`, compiled by liboxide from the same units, the targets at
/// once (so that two targets take about the time of one on two cores). A refusal is the first
/// target's that fails, in liboxide's layout (the kernel, the call chain, the user's line); one
/// only some targets make (an operation the others lack) names the target.
pub fn compile(
    lib: &crate::liboxide::Lib,
    units: &[(String, Vec<u8>)],
    list: &str,
    lineinfo: bool,
) -> Result<String, String> {
    let targets = parse(list)?;
    let shared = Shared(lib);
    let results: Vec<Result<String, String>> = std::thread::scope(|s| {
        let shared = &shared;
        let one = move |t: &str| -> Result<String, String> {
            let session = shared.0.session(t, lineinfo)?;
            session.import(units)?;
            session.compile()
        };
        let jobs: Vec<_> = targets.iter().map(|t| s.spawn(move || one(t))).collect();
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|_| Err("liboxide's compile panicked".into()))).collect()
    });
    let mut parts = Vec::new();
    for (t, r) in targets.into_iter().zip(results) {
        parts.push((t, r?));
    }
    Ok(bundle(&parts))
}

/// The file the program's PTX is kept in (and carried from): `<program>.ptx` for one target,
/// `<program>.ptx-bundle` for more, so that every `.ptx` file is PTX that ptxas reads.
pub fn embedded_file(dir: &Path, prog: &str, list: &str) -> PathBuf {
    let many = parse(list).map(|l| l.len() > 1).unwrap_or(false);
    dir.join(if many { format!("{prog}.ptx-bundle") } else { format!("{prog}.ptx") })
}

/// Beside a bundle, each target's PTX as `<program>.<target>.ptx` and the newest target's as
/// `<program>.ptx` (what one reads or hands to ptxas). A one-target link leaves a bundle in
/// place: it is the bundle build's cache entry (cargo keeps that program too, and --module reads
/// what the program carries).
pub fn write_copies(dir: &Path, prog: &str, text: &str) -> std::io::Result<()> {
    let Some(parts) = unbundle(text) else {
        return Ok(());
    };
    for (t, p) in &parts {
        std::fs::write(dir.join(format!("{prog}.{t}.ptx")), p)?;
    }
    let rank = |t: &str| {
        let n: u32 = t.trim_start_matches("sm_").trim_end_matches(|c: char| c.is_alphabetic()).parse().unwrap_or(0);
        n * 2 + t.ends_with('a') as u32
    };
    if let Some((_, p)) = parts.iter().max_by_key(|(t, _)| rank(t)) {
        std::fs::write(dir.join(format!("{prog}.ptx")), p)?;
    }
    Ok(())
}

/// `f` applied to each PTX of a bundle (or to plain PTX), the bundle made again.
pub fn map_parts(text: &str, f: impl Fn(&str) -> String) -> String {
    match unbundle(text) {
        Some(parts) => bundle(&parts.into_iter().map(|(t, p)| (t, f(&p))).collect::<Vec<_>>()),
        None => f(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_unknown_targets_are_named() {
        assert_eq!(parse("sm_80,sm_90a").unwrap(), ["sm_80", "sm_90a"]);
        assert_eq!(parse(" sm_90a , sm_90a,sm_86").unwrap(), ["sm_90a", "sm_86"]);
        assert_eq!(parse(DEFAULT).unwrap(), ["sm_80", "sm_90a"]);
        let e = parse("sm_80,sm_91").unwrap_err();
        assert!(e.contains("--sm sm_91: not a target") && e.contains("sm_100a"), "{e}");
        assert!(parse(",").unwrap_err().contains("needs a target"));
    }

    #[test]
    fn a_package_limits_its_own_list() {
        let toml = "[package]\nname = \"g\"\nsm = \"no\"\n\n[package.metadata.oxide]\nsm = [\"sm_90a\"] # wgmma\n[dependencies]\n";
        assert_eq!(package_list(toml).as_deref(), Some("sm_90a"));
        assert_eq!(package_list("[package.metadata.oxide]\nsm = \"sm_80, sm_90\"\n").as_deref(), Some("sm_80,sm_90"));
        assert_eq!(package_list("[package]\nname = \"x\"\n"), None);
    }

    #[test]
    fn bundles_round_trip() {
        let parts = vec![
            ("sm_80".to_string(), "// a\n.target sm_80\n".to_string()),
            ("sm_90a".to_string(), "// é\n.target sm_90a\n".to_string()),
        ];
        let b = bundle(&parts);
        let head = format!("// oxide.ptx-bundle.v1 sm_80:{} sm_90a:{}\n", parts[0].1.len(), parts[1].1.len());
        assert!(b.starts_with(&head) && b.len() == head.len() + parts[0].1.len() + parts[1].1.len(), "{b}");
        assert_eq!(unbundle(&b).unwrap(), parts);
        assert_eq!(bundle(&parts[..1]), parts[0].1);
        assert!(unbundle(&parts[0].1).is_none());
        assert!(unbundle("// oxide.ptx-bundle.v1 sm_80:999\nshort").is_none());
        let m = map_parts(&b, |p| p.replace(".target", ".TARGET"));
        let back = unbundle(&m).unwrap();
        assert!(back.iter().all(|(_, p)| p.contains(".TARGET")) && back[1].0 == "sm_90a");
    }
}
