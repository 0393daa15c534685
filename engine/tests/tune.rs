//! `engine tune-squares` and `engine tune-weights` end to end: what `--epochs 0` measures is
//! what a fit starts from; fitted weights come out as a parameters file the engine takes.

use std::path::PathBuf;
use std::process::Command;

fn engine(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(args)
        .output()
        .expect("engine runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The number that follows `word` in `text`.
fn number_after(text: &str, word: &str) -> f64 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"))
        + word.len();
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number after {word:?} in {text}"))
}

/// Quiet positions where the side with the better-placed pieces tends to win, so the
/// engine's table and no table predict them differently.
fn positions() -> String {
    positions_of(&[
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        "4k3/8/8/3N4/8/8/8/N3K3 w - - 0 1",
        "n3k3/8/8/8/3n4/8/8/4K3 w - - 0 1",
        "4k3/pp3ppp/8/8/8/8/PPP2PPP/4K3 w - - 0 1",
    ])
}

/// 1,500 `FEN [result]` lines cycling through `fens`, the results spread over each.
fn positions_of(fens: &[&str]) -> String {
    let mut text = String::new();
    for i in 0..1500 {
        let fen = fens[i % fens.len()];
        let result = ["1.0", "0.5", "0.0"][(i / fens.len() + i % 3) % 3];
        text.push_str(&format!("{fen} [{result}]\n"));
    }
    text
}

/// A temporary folder of this test's own (`tag`) holding [`positions`] as `positions.txt`.
fn folder_with_positions(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("engine-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("positions.txt");
    std::fs::write(&file, positions()).expect("write");
    (dir, file)
}

#[test]
fn epochs_zero_prints_the_loss_a_fit_starts_from_and_writes_nothing() {
    let (dir, file) = folder_with_positions("tune-zero");
    let file = file.to_str().expect("utf8");

    let (ok, table, err) = engine(&["tune-squares", "--positions", file, "--epochs", "0"]);
    assert!(ok, "{err}");
    assert!(table.contains("with the engine's table"), "{table}");
    assert!(table.contains("nothing fitted"), "{table}");
    let (ok, none, err) = engine(&[
        "tune-squares",
        "--positions",
        file,
        "--epochs",
        "0",
        "--from-zero",
    ]);
    assert!(ok, "{err}");
    assert!(none.contains("without a table"), "{none}");
    // Chess's table is not all zero: it scores these positions otherwise than no table.
    assert_ne!(
        number_after(&table, "train"),
        number_after(&none, "train"),
        "{table}\n{none}"
    );

    // One epoch of a real fit reports the same starting losses.
    let (ok, fit, err) = engine(&["tune-squares", "--positions", file, "--epochs", "1"]);
    assert!(ok, "{err}");
    assert_eq!(
        number_after(&fit, "loss from"),
        number_after(&table, "train"),
        "{fit}\n{table}"
    );
    assert_eq!(
        number_after(&fit, "(held out:"),
        number_after(&table, "held out"),
        "{fit}\n{table}"
    );

    // Nothing is fitted, so there is nothing to write: refused, not a copy of the table.
    let out = dir.join("table.rs");
    let (ok, _, err) = engine(&[
        "tune-squares",
        "--positions",
        file,
        "--epochs",
        "0",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert!(!ok);
    assert!(err.contains("--epochs 0"), "{err}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tune_weights_writes_the_weights_it_moved_as_a_parameters_file() {
    let (dir, file) = folder_with_positions("tune-weights");
    let out = dir.join("weights.txt");
    let (ok, stdout, err) = engine(&[
        "tune-weights",
        "--positions",
        file.to_str().expect("utf8"),
        "--rounds",
        "1",
        "--epochs",
        "50",
        "--exclude",
        "Tempo",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert!(ok, "{err}");
    let before = number_after(&stdout, "held out");
    let after = number_after(
        &stdout[stdout.find("round 1").expect("a round")..],
        "held out",
    );
    assert!(after <= before, "{stdout}");
    // The search's weights are never read by a static evaluation: reported, not moved.
    let unseen = stdout
        .lines()
        .find(|l| l.contains("left alone:"))
        .unwrap_or_else(|| panic!("no unseen weights reported: {stdout}"));
    assert!(unseen.contains("AspirationWindow"), "{unseen}");
    let text = std::fs::read_to_string(&out).expect("written");
    let mut params = engine::params::Params::default();
    let mut moved = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.split_once('=').expect("name=value");
        assert_ne!(name, "Tempo", "excluded");
        assert!(!name.starts_with("Aspiration"), "{name}");
        params
            .set_text(name, value)
            .expect("a declared weight within its range");
        moved += 1;
    }
    assert!(moved > 0, "{text}");
    assert_ne!(params, engine::params::Params::default());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn both_fits_start_from_a_parameters_file() {
    let (dir, file) = folder_with_positions("tune-params");
    let file = file.to_str().expect("utf8");
    let start = dir.join("start.txt");
    // Pieces worth far less than the defaults say: these positions then read otherwise.
    std::fs::write(&start, "KnightValueMg=200\nKnightValueEg=200\nTempo=40\n").expect("write");
    let start = start.to_str().expect("utf8");

    let (ok, defaults, err) = engine(&["tune-squares", "--positions", file, "--epochs", "0"]);
    assert!(ok, "{err}");
    let (ok, around, err) = engine(&[
        "tune-squares",
        "--positions",
        file,
        "--epochs",
        "0",
        "--params",
        start,
    ]);
    assert!(ok, "{err}");
    assert_ne!(
        number_after(&defaults, "train"),
        number_after(&around, "train"),
        "the table is measured around the file's weights\n{defaults}\n{around}"
    );

    // The weights' fit starts there, and writes the whole set: Tempo, excluded from the fit,
    // keeps the file's value, so the output alone reproduces the fitted evaluation.
    let out = dir.join("weights.txt");
    let (ok, fitted, err) = engine(&[
        "tune-weights",
        "--positions",
        file,
        "--rounds",
        "1",
        "--epochs",
        "20",
        "--exclude",
        "Tempo",
        "--params",
        start,
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert!(ok, "{err}");
    let (ok, plain, err) = engine(&[
        "tune-weights",
        "--positions",
        file,
        "--rounds",
        "1",
        "--epochs",
        "1",
    ]);
    assert!(ok, "{err}");
    assert_ne!(
        number_after(&fitted, "loss train"),
        number_after(&plain, "loss train"),
        "{fitted}\n{plain}"
    );
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(text.contains(&format!("from {start}")), "{text}");
    assert!(text.lines().any(|l| l == "Tempo=40"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn tune_net_writes_the_network_the_engine_includes() {
    let (dir, file) = folder_with_positions("tune-net");
    let file = file.to_str().expect("utf8");
    let out = dir.join("chess_net.rs");
    let out = out.to_str().expect("utf8");
    let (ok, stdout, err) = engine(&[
        "tune-net",
        "--positions",
        file,
        "--epochs",
        "2",
        "--hidden",
        "16",
        "--out",
        out,
        "--source",
        "a test",
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("the evaluation alone: train"), "{stdout}");
    assert!(stdout.contains(": 1500 positions of"), "{stdout}");
    assert!(
        stdout.contains("in fixed point as the engine reads it"),
        "{stdout}"
    );
    let written = std::fs::read_to_string(out).expect("the network was written");
    assert!(
        written.starts_with("// Fitted by `engine tune-net` on"),
        "{written}"
    );
    assert!(written.contains("// Positions: a test."), "{written}");
    assert!(written.contains(", 16 units a view, epoch "), "{written}");
    // The file declares its width, which the engine's build takes, and holds one row of 16
    // weights per input (two sides, six roles, 64 squares) and 16 output weights a view.
    assert!(
        written
            .lines()
            .any(|l| l == "pub(crate) const CHESS_NET_HIDDEN: usize = 16;"),
        "{written}"
    );
    let rows: Vec<&str> = written
        .lines()
        .filter(|l| l.starts_with("        ["))
        .collect();
    assert_eq!(rows.len(), 2 * 6 * 64);
    // The integers of a line.
    let numbers = |line: &str| {
        line.split(|c: char| c != '-' && !c.is_ascii_digit())
            .filter(|t| t.parse::<i32>().is_ok())
            .count()
    };
    assert!(rows.iter().all(|r| numbers(r) == 16), "{rows:?}");
    let output = written
        .lines()
        .find(|l| l.starts_with("    output: [["))
        .expect("the output weights");
    assert_eq!(numbers(output), 2 * 16, "{output}");

    // Epochs 0 measure the evaluation and write nothing; an unwritable --out is named.
    let (ok, stdout, err) = engine(&["tune-net", "--positions", file, "--epochs", "0"]);
    assert!(ok, "{err}");
    assert!(stdout.contains("the evaluation alone"), "{stdout}");
    let (ok, _, err) = engine(&[
        "tune-net",
        "--positions",
        file,
        "--epochs",
        "0",
        "--out",
        out,
    ]);
    assert!(!ok);
    assert!(err.contains("--epochs 0"), "{err}");
    let (ok, _, err) = engine(&[
        "tune-net",
        "--positions",
        file,
        "--epochs",
        "1",
        "--out",
        "/nonexistent/dir/net.rs",
    ]);
    assert!(!ok);
    assert!(
        err.contains("cannot write /nonexistent/dir/net.rs"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Latte's network is fitted like chess's, on Latte's positions evaluated under Latte's rules,
/// and written under Latte's name (`LATTE_NET` in `tables/latte_net.rs`), so that the file
/// can sit beside chess's without either overwriting the other's static.
#[test]
fn tune_net_fits_and_names_lattes_network() {
    let dir = std::env::temp_dir().join(format!("engine-tune-net-latte-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let text = positions_of(&[
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1",
        "4k3/8/8/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQ - 0 1",
        "rrnqknrr/nbbppbbn/ppp2ppp/8/8/8/8/4K3 w kq - 0 1",
    ]);
    let file = dir.join("positions.txt");
    std::fs::write(&file, text).expect("write");
    let out = dir.join("latte_net.rs");
    let (file, out) = (file.to_str().expect("utf8"), out.to_str().expect("utf8"));
    let (ok, stdout, err) = engine(&[
        "tune-net",
        "--variant",
        "latte",
        "--positions",
        file,
        "--epochs",
        "1",
        "--hidden",
        "8",
        "--out",
        out,
    ]);
    assert!(ok, "{err}");
    assert!(stdout.contains("1500 quiet positions read"), "{stdout}");
    let written = std::fs::read_to_string(out).expect("the network was written");
    assert!(
        written.contains("quiet positions of latte/normal"),
        "{written}"
    );
    assert!(
        written
            .lines()
            .any(|l| l == "pub(crate) const LATTE_NET_HIDDEN: usize = 8;"),
        "{written}"
    );
    assert!(
        written
            .lines()
            .any(|l| l == "static LATTE_NET: Net = Net {"),
        "{written}"
    );
    assert!(!written.contains("CHESS_NET"), "{written}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--out-net` writes the fitted network as a file the engine loads (`EvalFile`): at the
/// build's width it loads as a Latte network; at another it is refused naming both widths.
#[test]
fn tune_net_writes_a_network_file_the_engine_loads() {
    use engine::board8::net::HIDDEN;
    use engine::board8::net_file::{self, NetFileError};
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("positions.txt");
    std::fs::write(
        &file,
        positions_of(&[
            "rrnqknrr/nbbppbbn/ppp2ppp/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQkq - 0 1",
            "4k3/8/8/8/8/PPP2PPP/NBBPPBBN/RRNQKNRR w KQ - 0 1",
            "rrnqknrr/nbbppbbn/ppp2ppp/8/8/8/8/4K3 w kq - 0 1",
        ]),
    )
    .expect("write");
    let other_width = if HIDDEN == 8 { 16 } else { 8 };
    for hidden in [HIDDEN, other_width] {
        let out = dir.path().join(format!("latte-{hidden}.net"));
        let (ok, stdout, err) = engine(&[
            "tune-net",
            "--variant",
            "latte",
            "--positions",
            file.to_str().expect("utf8"),
            "--epochs",
            "1",
            "--hidden",
            &hidden.to_string(),
            "--out-net",
            out.to_str().expect("utf8"),
        ]);
        assert!(ok, "{err}");
        assert!(stdout.contains("network file written to"), "{stdout}");
        match net_file::load(&out) {
            Ok(loaded) => {
                assert_eq!(hidden, HIDDEN);
                assert_eq!(loaded.variant, engine::Variant::Latte);
            }
            Err(NetFileError::Width { hidden: h, .. }) => {
                assert_eq!((h, hidden), (other_width, other_width));
                assert!(
                    stdout.contains("note: this build reads networks of"),
                    "{stdout}"
                );
            }
            Err(e) => panic!("{hidden} units: {e}"),
        }
    }
}

/// `import-net` of a built-in network's file writes the shipped source of it (its code, the
/// header aside): a network file that wins its SPRT becomes the built-in one in one command.
/// `export-net --output-scale` multiplies the output alone.
#[test]
fn import_net_writes_the_source_a_file_came_from() {
    use engine::board8::net_file;
    let dir = tempfile::tempdir().expect("temp dir");
    let code = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| !l.starts_with("//"))
            .map(String::from)
            .collect()
    };
    for (variant, shipped) in [
        ("chess", include_str!("../src/board8/tables/chess_net.rs")),
        ("latte", include_str!("../src/board8/tables/latte_net.rs")),
    ] {
        let (file, source) = (
            dir.path().join(format!("{variant}.net")),
            dir.path().join(format!("{variant}_net.rs")),
        );
        let (file, source) = (file.to_str().expect("utf8"), source.to_str().expect("utf8"));
        let (ok, _, err) = engine(&["export-net", "--variant", variant, "--out", file]);
        assert!(ok, "{err}");
        let (ok, stdout, err) = engine(&["import-net", file, "--out", source]);
        assert!(ok, "{err}");
        assert!(stdout.contains("built in at the next build"), "{stdout}");
        let written = std::fs::read_to_string(source).expect("written");
        assert!(
            written.starts_with("// Imported by `engine import-net`"),
            "{written}"
        );
        assert_eq!(code(&written), code(shipped), "{variant}");
    }

    let scaled = dir.path().join("scaled.net");
    let (ok, _, err) = engine(&[
        "export-net",
        "--variant",
        "latte",
        "--output-scale",
        "1.5",
        "--out",
        scaled.to_str().expect("utf8"),
    ]);
    assert!(ok, "{err}");
    let net = net_file::load(&scaled).expect("loads");
    let builtin = engine::board8::builtin_net(engine::Rules::default_for(engine::Variant::Latte))
        .expect("a network");
    let (n, b) = (net.net.net(), builtin);
    assert_eq!(n.input, b.input);
    assert_eq!(n.bias, b.bias);
    for (s, o) in n.output.iter().flatten().zip(b.output.iter().flatten()) {
        assert_eq!(f64::from(*s), (f64::from(*o) * 1.5).round());
    }
}

/// `export-net` writes the built-in network: loading the file gives that very network.
#[test]
fn export_net_writes_the_built_in_network() {
    use engine::board8::net_file;
    let dir = tempfile::tempdir().expect("temp dir");
    for variant in [engine::Variant::Chess, engine::Variant::Latte] {
        let out = dir.path().join(format!("{variant}.net"));
        let (ok, stdout, err) = engine(&[
            "export-net",
            "--variant",
            variant.id(),
            "--out",
            out.to_str().expect("utf8"),
        ]);
        assert!(ok, "{err}");
        assert!(stdout.contains("written to"), "{stdout}");
        let loaded = net_file::load(&out).expect("loads");
        assert_eq!(loaded.variant, variant);
        let builtin = engine::board8::builtin_net(engine::Rules::default_for(variant))
            .expect("a built-in network");
        assert!(std::ptr::eq(loaded.net.net(), builtin));
    }
}
