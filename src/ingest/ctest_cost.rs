//! `Testing/Temporary/CTestCostData.txt`: what each test cost when ctest last
//! ran it in this build tree, for `--shard` to balance the shards by time.
//!
//! CTest writes one line per test, `NAME RUNS AVERAGE_SECONDS`, then a line
//! `---` and the names of the tests that failed last (ignored here). Names
//! hold no spaces in this file (CTest replaces none: a name with a space is
//! written as is, so the last two fields are taken from the right). A file
//! that cannot be read, or a line that does not parse, leaves shards to the
//! name hash: costs only balance, they never decide what runs.

use crate::fasthash::FastMap;

/// The average cost of each test, in seconds.
#[derive(Debug, Default, Clone)]
pub struct Costs {
    /// Where they were read from (for the message that says so).
    pub path: String,
    /// Test name → its average run time, in seconds.
    pub seconds: FastMap<String, f64>,
}

/// The file CTest keeps in `build_dir`.
pub fn path_in(build_dir: &str) -> String {
    format!("{build_dir}/Testing/Temporary/CTestCostData.txt")
}

/// Parses the cost file's text; `None` when no line before `---` parses.
pub fn parse(path: &str, text: &str) -> Option<Costs> {
    let mut seconds = FastMap::default();
    for line in text.lines() {
        let line = line.trim_end();
        if line == "---" {
            break;
        }
        let mut fields = line.rsplitn(3, ' ');
        let (Some(avg), Some(runs), Some(name)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let (Ok(avg), Ok(_)) = (avg.parse::<f64>(), runs.parse::<u64>()) else {
            continue;
        };
        if name.is_empty() || !avg.is_finite() || avg < 0.0 {
            continue;
        }
        seconds.insert(name.to_owned(), avg);
    }
    (!seconds.is_empty()).then(|| Costs {
        path: path.to_owned(),
        seconds,
    })
}

/// Reads the cost file of `build_dir`, if there is a usable one.
pub fn read(build_dir: &str) -> Option<Costs> {
    let path = path_in(build_dir);
    let bytes = super::read_capped(&path, 64 << 20).ok()?;
    parse(&path, &String::from_utf8_lossy(&bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_names_runs_and_averages_up_to_the_failed_list() {
        let c = super::parse(
            "c",
            "core.add 3 0.25\nslow one 1 12.5\nbad line\nneg 1 -1\n---\ncore.add\n",
        )
        .unwrap();
        assert_eq!(c.seconds.len(), 2);
        assert_eq!(c.seconds["core.add"], 0.25);
        assert_eq!(c.seconds["slow one"], 12.5);
        assert!(super::parse("c", "---\nx 1 2\n").is_none());
    }
}
