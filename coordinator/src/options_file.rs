//! A player's `options_file`: its engine options read from a parameters file beside the plan
//! (`name=value` lines or a JSON object, what `engine tune-weights` writes and `worker match
//! --params1` reads), so that a plan testing 98 fitted weights names one file instead of
//! copying 98 lines into `options`.
//!
//! Resolved where the plan is read (by `coordinator local` and `coordinator run create`, on the
//! user's machine): the run sent to a coordinator carries the options written out, so the
//! stored run says exactly what was played and no coordinator ever opens a path that came
//! over the network. Options written in the plan win over the file's, so one weight can be
//! varied around a fitted set.

use std::path::{Path, PathBuf};

use crate::config::ConfigError;

/// The plan key naming a player's parameters file.
pub const KEY: &str = "options_file";

/// The largest parameters file read: far above every parameter of the engine written out
/// (a few KiB), far below what a path to the wrong file (a PGN, a database) would load.
pub const MAX_BYTES: u64 = 1 << 20;

/// Replaces `options_file` in the `first` and `second` players of a run's table by the
/// file's options merged under the table's own. `dir` is the directory relative paths are
/// read from (the plan's); `at` prefixes field names in errors (`runs[2].`).
pub fn resolve(table: &mut toml::Table, dir: &Path, at: &str) -> Result<(), ConfigError> {
    for key in ["first", "second"] {
        let Some(toml::Value::Table(player)) = table.get_mut(key) else {
            continue;
        };
        let field = format!("{at}{key}.{KEY}");
        let Some(value) = player.remove(KEY) else {
            continue;
        };
        let toml::Value::String(file) = value else {
            return Err(error(&field, "must be the path of a parameters file"));
        };
        let path = dir.join(&file);
        let entries = read(&path).map_err(|message| error(&field, message))?;
        let options = player
            .entry("options".to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(options) = options else {
            return Err(error(format!("{at}{key}.options"), "must be a table"));
        };
        for (name, value) in entries {
            options.entry(name).or_insert(value);
        }
    }
    Ok(())
}

/// The directory a plan's relative paths are read from: the plan file's own.
pub fn plan_dir(plan: &Path) -> PathBuf {
    match plan.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn error(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// The file's options as TOML values (integers where they are integers: the engine's
/// parameters are; anything else stays a string for the run's check to judge), or what is
/// wrong with it.
fn read(path: &Path) -> Result<Vec<(String, toml::Value)>, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {shown}: {e}"))?
        .len();
    if size > MAX_BYTES {
        return Err(format!(
            "{shown} is {size} bytes; a parameters file is at most {MAX_BYTES}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let entries =
        worker::player::spec::parse_params_text(path, &text).map_err(|e| e.to_string())?;
    let mut out: Vec<(String, toml::Value)> = Vec::with_capacity(entries.len());
    // A set, not a scan of `out`: a 1 MiB file holds some 200,000 short lines, and checking
    // each against all before it would take minutes.
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    for engine::params_file::Entry { line, name, value } in entries {
        if !seen.insert(name.clone()) {
            let place = line.map(|l| format!(" (line {l})")).unwrap_or_default();
            return Err(format!("{shown}: {name:?} is set twice{place}"));
        }
        let value = match value.parse::<i64>() {
            Ok(n) => toml::Value::Integer(n),
            Err(_) => toml::Value::String(value),
        };
        out.push((name, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        text.parse().expect("toml")
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(tag: &str) -> Dir {
            let d = std::env::temp_dir().join(format!("options-file-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&d).expect("temp dir");
            Dir(d)
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_files_options_merge_under_the_plans_own() {
        let d = Dir::new("merge");
        std::fs::write(
            d.0.join("w.txt"),
            "# fitted\nTempo=19\nPawnValueMg = 80\nUCI_Chess960 true\n",
        )
        .expect("write");
        let mut t = table(
            "[first]\noptions_file = \"w.txt\"\n[first.options]\nTempo = 25\n[second]\nname = \"b\"\n",
        );
        resolve(&mut t, &d.0, "runs[0].").expect("resolves");
        let first = t["first"].as_table().expect("first");
        assert!(!first.contains_key(KEY));
        let o = first["options"].as_table().expect("options");
        assert_eq!(o["Tempo"].as_integer(), Some(25), "the plan's value wins");
        assert_eq!(o["PawnValueMg"].as_integer(), Some(80));
        assert_eq!(o["UCI_Chess960"].as_str(), Some("true"));
        assert!(!t["second"]
            .as_table()
            .expect("second")
            .contains_key("options"));
    }

    #[test]
    fn a_json_file_reads_too() {
        let d = Dir::new("json");
        std::fs::write(d.0.join("w.json"), "{\"Tempo\": 19}").expect("write");
        let mut t = table("[second]\noptions_file = \"w.json\"\n");
        resolve(&mut t, &d.0, "").expect("resolves");
        assert_eq!(t["second"]["options"]["Tempo"].as_integer(), Some(19));
    }

    #[test]
    fn bad_files_are_refused_naming_the_field_and_the_problem() {
        let d = Dir::new("bad");
        std::fs::write(d.0.join("twice.txt"), "Tempo=1\nTempo=2\n").expect("write");
        std::fs::write(d.0.join("junk.txt"), "Tempo\n").expect("write");
        std::fs::write(d.0.join("big.txt"), vec![b'#'; MAX_BYTES as usize + 1]).expect("write");
        let cases = [
            ("options_file = 3", "must be the path"),
            ("options_file = \"missing.txt\"", "cannot read"),
            (
                "options_file = \"twice.txt\"",
                "\"Tempo\" is set twice (line 2)",
            ),
            ("options_file = \"junk.txt\"", "expected name=value"),
            ("options_file = \"big.txt\"", "a parameters file is at most"),
            ("options_file = \"twice.txt\"\noptions = 5", "is set twice"),
        ];
        for (player, wanted) in cases {
            let mut t = table(&format!("[first]\n{player}\n"));
            let e = resolve(&mut t, &d.0, "runs[1].").expect_err(player);
            assert_eq!(e.field, "runs[1].first.options_file", "{player}");
            assert!(e.message.contains(wanted), "{player}: {}", e.message);
        }
        let mut t = table("[first]\noptions_file = \"junk.txt\"\noptions = 5\n");
        std::fs::write(d.0.join("junk.txt"), "Tempo=1\n").expect("write");
        let e = resolve(&mut t, &d.0, "").expect_err("options not a table");
        assert_eq!(e.field, "first.options");
    }

    /// A file at the size cap, every line a different name, is read whole (the check for a
    /// name set twice once compared each line with all before it: quadratic in the lines).
    #[test]
    fn a_file_of_many_names_at_the_cap_is_read() {
        let d = Dir::new("many");
        let mut text = String::new();
        let mut n = 0;
        while text.len() + 12 <= MAX_BYTES as usize {
            text.push_str(&format!("p{n:07}=1\n"));
            n += 1;
        }
        std::fs::write(d.0.join("many.txt"), &text).expect("write");
        let mut t = table("[first]\noptions_file = \"many.txt\"\n");
        resolve(&mut t, &d.0, "").expect("resolves");
        let o = t["first"]["options"].as_table().expect("options");
        assert_eq!(o.len(), n);
    }

    #[test]
    fn relative_paths_are_the_plans() {
        assert_eq!(plan_dir(Path::new("plan.toml")), PathBuf::from("."));
        assert_eq!(
            plan_dir(Path::new("examples/plan.toml")),
            PathBuf::from("examples")
        );
    }
}
