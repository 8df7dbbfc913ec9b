//! `OXIDE_TIME=1 cargo oxide build ...`: where a build's time goes, on stderr at its end. The
//! rustc wrapper and the linker run inside cargo, whose output of a successful link rustc
//! hides, so each writes its stages as a `.time` file in the report folder (report.rs), with
//! wall-clock times, and `cargo oxide` prints them against its own start.
use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub const ENV: &str = "OXIDE_TIME";

pub fn on() -> bool {
    std::env::var_os(ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

fn now_s() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}

/// The stages of one process, each measured from the end of the one before.
pub struct Stages {
    start_wall: f64,
    last: Instant,
    marks: Vec<(String, f64)>,
}

impl Stages {
    pub fn new() -> Stages {
        Stages { start_wall: now_s(), last: Instant::now(), marks: Vec::new() }
    }

    /// Ends the stage `name` now.
    pub fn mark(&mut self, name: &str) {
        let now = Instant::now();
        self.marks.push((name.to_string(), (now - self.last).as_secs_f64()));
        self.last = now;
    }

    /// Writes `<who>.time` into the report folder (one line: start, end, then `name=seconds`
    /// per stage), when OXIDE_TIME is on.
    pub fn write(&self, who: &str) {
        let Some(dir) = std::env::var_os(crate::report::ENV).filter(|_| on()) else {
            return;
        };
        let stages: Vec<String> = self.marks.iter().map(|(n, s)| format!("{}={:.4}", n, s)).collect();
        let line = format!("{:.4} {:.4} {}\n", self.start_wall, now_s(), stages.join(" "));
        // the pid keeps two runs of the same crate (a lib and its test) apart
        let _ = std::fs::write(Path::new(&dir).join(format!("{}.{}.time", who, std::process::id())), line);
    }
}

/// The timeline of a build, from the `.time` files in `dir`, against `start` (the wall-clock
/// second `cargo oxide` started): one line per process, in the order they started.
pub fn timeline(dir: &Path, start: f64, end: f64) -> String {
    let mut rows: Vec<(f64, f64, String, String)> = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "time") {
            continue;
        }
        let who = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let who = who.rsplit_once('.').map(|(w, _)| w.to_string()).unwrap_or(who);
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let mut f = text.split_whitespace();
        let (Some(a), Some(b)) = (f.next().and_then(|s| s.parse().ok()), f.next().and_then(|s| s.parse().ok())) else {
            continue;
        };
        let stages: Vec<String> = f.map(|s| s.replace('=', " ")).collect();
        rows.push((a, b, who, stages.join(", ")));
    }
    rows.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut out = format!("oxide time (seconds from the start of `cargo oxide`; {}):\n", ENV);
    for (a, b, who, stages) in rows {
        out.push_str(&format!("  {:7.3} {:7.3} {:>7.3}  {:<24} {}\n", a - start, b - start, b - a, who, stages));
    }
    out.push_str(&format!("  {:7.3} {:7.3} {:>7.3}  {}\n", 0.0, end - start, end - start, "cargo oxide (all)"));
    out
}

/// The wall-clock second now, for `timeline`'s start and end.
pub fn wall() -> f64 {
    now_s()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_timeline_lists_each_process_in_the_order_it_started() {
        let dir = std::env::temp_dir().join(format!("oxide-timing-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("link app.7.time"), "100.30 100.40 kernel_key=0.0100 real_linker=0.0200\n").unwrap();
        std::fs::write(dir.join("rustc app.5.time"), "100.05 100.41 rustc=0.3600\n").unwrap();
        std::fs::write(dir.join("app.done"), "not a time file").unwrap();
        let t = timeline(&dir, 100.0, 100.5);
        std::fs::remove_dir_all(&dir).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{}", t);
        assert!(
            lines[1].contains("0.050") && lines[1].contains("rustc app") && lines[1].contains("rustc 0.3600"),
            "{}",
            t
        );
        assert!(lines[2].contains("link app") && lines[2].contains("kernel_key 0.0100, real_linker 0.0200"), "{}", t);
        assert!(lines[3].contains("0.500") && lines[3].contains("cargo oxide (all)"), "{}", t);
    }
}
