//! What the linker step tells the user. rustc runs the linker with its output captured and shows
//! it only when the link fails, after the whole linker command line, so the linker (link.rs)
//! writes its summary and its refusals as files in a folder `cargo oxide` names
//! ($OXIDE_REPORT_DIR), and `cargo oxide` reads cargo's stderr: it prints a refusal in rustc's
//! layout in place of rustc's "linking with ... failed" block, and each program's PTX line just
//! before cargo's "Finished".
use std::collections::HashSet;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};

pub const ENV: &str = "OXIDE_REPORT_DIR";

/// Files the linker writes into the report folder: `<program>.done` holds the PTX line,
/// `<program>.error` a refusal.
pub fn write(kind: &str, program: &str, text: &str) {
    if let Ok(dir) = std::env::var(ENV) {
        let _ = std::fs::write(Path::new(&dir).join(format!("{}.{}", program, kind)), text);
    }
}

pub struct Report {
    dir: PathBuf,
    shown: HashSet<PathBuf>,
    color: bool,
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\x1b' && it.peek() == Some(&'[') {
            for d in it.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl Report {
    pub fn new() -> Report {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("cargo-oxide-{}-{}", std::process::id(), nanos));
        let _ = std::fs::create_dir_all(&dir);
        Report { dir, shown: HashSet::new(), color: std::io::stderr().is_terminal() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether cargo should color its output: it writes to a pipe now, and would not.
    pub fn color(&self) -> bool {
        self.color
    }

    fn unshown(&mut self, ext: &str) -> Vec<(String, String)> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map(|r| r.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
            .unwrap_or_default();
        files.sort();
        let mut out = Vec::new();
        for f in files {
            if self.shown.insert(f.clone()) {
                let prog = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                out.push((prog, std::fs::read_to_string(&f).unwrap_or_default()));
            }
        }
        out
    }

    fn paint(&self, code: &str, s: &str) -> String {
        if self.color {
            format!("\x1b[{}m{}\x1b[0m", code, s)
        } else {
            s.to_string()
        }
    }

    fn print_done(&mut self, err: &mut impl Write) {
        for (_, text) in self.unshown("done") {
            let _ = writeln!(err, "{} {}", self.paint("1;32", &format!("{:>12}", "PTX")), text.trim_end());
        }
    }

    fn print_errors(&mut self, err: &mut impl Write) {
        for (_, text) in self.unshown("error") {
            let mut lines = text.trim_end().lines();
            let head = lines.next().unwrap_or_default();
            let _ = writeln!(err, "{}{}", self.paint("1;31", "error"), self.paint("1", &format!(": {}", head)));
            for l in lines {
                match l.strip_prefix("  --> ") {
                    Some(at) => {
                        let _ = writeln!(err, "  {} {}", self.paint("1;34", "-->"), at);
                    }
                    None => {
                        let _ = writeln!(err, "{}", l);
                    }
                }
            }
        }
    }

    /// Copies cargo's stderr to ours, with rustc's block about the failed link (our own
    /// executable as the linker) replaced by the linker's refusal, cargo's about a refused
    /// toolchain by the refusal, and the PTX lines before "Finished".
    pub fn relay(&mut self, from: impl Read, me: &str) {
        let mut err = std::io::stderr().lock();
        // rustc's block about the failed link, held back until its end: shown as it is when the
        // linker left no refusal (the real linker failed, on host code)
        let mut held: Option<Vec<u8>> = None;
        // cargo's block about a failed `rustc -vV` (the toolchain check, main.rs) runs to the end
        let mut held_to_end = false;
        let mut reader = BufReader::new(from);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = String::from_utf8_lossy(&buf);
            let plain = strip_ansi(&line);
            if let Some(block) = held.as_mut() {
                block.extend_from_slice(&buf);
                if plain.trim().is_empty() && !held_to_end {
                    let block = held.take().unwrap();
                    self.end_block(&block, &mut err);
                }
                continue;
            }
            if plain.starts_with("error: linking with `") && plain.contains(me) {
                held = Some(buf.clone());
                continue;
            }
            if plain.starts_with("error: process didn't exit successfully: `")
                && plain.contains(me)
                && plain.contains(" -vV`")
            {
                held = Some(buf.clone());
                held_to_end = true;
                continue;
            }
            if plain.trim_start().starts_with("Finished ") {
                self.print_done(&mut err);
            }
            let _ = err.write_all(&buf);
            let _ = err.flush();
        }
        if let Some(block) = held {
            self.end_block(&block, &mut err);
        }
        self.print_errors(&mut err);
    }

    /// The refusals the linker wrote in place of rustc's block, or the block when there are none.
    fn end_block(&mut self, block: &[u8], err: &mut impl Write) {
        let before = self.shown.len();
        self.print_errors(err);
        if self.shown.len() == before {
            let _ = err.write_all(block);
        }
    }
}

impl Drop for Report {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
