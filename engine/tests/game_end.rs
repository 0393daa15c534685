//! Game-end detection: one crafted game or position per way a game ends by the rules.

use engine::board8::Board;
use engine::{Color, Game, Outcome, Rules, Variant};

fn chess() -> Rules {
    Rules::default_for(Variant::Chess)
}

fn game(fen: &str) -> Game<Board> {
    Game::from_fen(chess(), fen).expect("valid FEN")
}

#[test]
fn fools_mate_is_checkmate_for_black() {
    let mut g: Game<Board> = Game::new(chess()).expect("start");
    for san in ["f3", "e5", "g4"] {
        g.play_san(san).expect("legal");
        assert_eq!(g.outcome(), None);
    }
    g.play_san("Qh4#").expect("legal");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Checkmate {
            winner: Color::Black
        })
    );
}

#[test]
fn stalemate() {
    assert_eq!(
        game("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1").outcome(),
        Some(Outcome::Stalemate)
    );
}

#[test]
fn fifty_move_rule_fires_at_the_hundredth_ply() {
    let mut g = game("8/8/4k3/8/8/3QK3/8/8 w - - 98 80");
    g.play_uci("d3d4").expect("legal");
    assert_eq!(g.outcome(), None, "99 plies");
    g.play_uci("e6e7").expect("legal");
    assert_eq!(g.outcome(), Some(Outcome::FiftyMoves));
}

#[test]
fn mate_on_the_hundredth_ply_is_mate() {
    let mut g = game("6k1/8/6K1/8/8/8/8/R7 w - - 99 80");
    g.play_uci("a1a8").expect("legal");
    assert_eq!(
        g.outcome(),
        Some(Outcome::Checkmate {
            winner: Color::White
        })
    );
}

#[test]
fn threefold_repetition_counts_the_third_occurrence() {
    let mut g: Game<Board> = Game::new(chess()).expect("start");
    let shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"];
    for mv in shuffle {
        g.play_uci(mv).expect("legal");
    }
    assert_eq!(g.repetitions(), 2);
    assert_eq!(g.outcome(), None);
    for mv in shuffle {
        g.play_uci(mv).expect("legal");
    }
    assert_eq!(g.repetitions(), 3);
    assert_eq!(g.outcome(), Some(Outcome::Threefold));
}

#[test]
fn repetition_needs_the_same_en_passant_rights() {
    // After 1.e4 no en-passant capture is possible, so the position after the knight shuffle
    // repeats it: keys hold the ep square only when a capture is legal.
    let mut g: Game<Board> = Game::new(chess()).expect("start");
    g.play_uci("e2e4").expect("legal");
    for mv in [
        "g8f6", "g1f3", "f6g8", "f3g1", "g8f6", "g1f3", "f6g8", "f3g1",
    ] {
        g.play_uci(mv).expect("legal");
    }
    assert_eq!(g.outcome(), Some(Outcome::Threefold));
}

#[test]
fn insufficient_material() {
    for fen in [
        "8/8/4k3/8/8/4K3/8/8 w - - 0 1",
        "8/8/4k3/8/8/4KN2/8/8 w - - 0 1",
        "8/8/4kb2/8/8/4K3/8/8 w - - 0 1",
    ] {
        assert_eq!(
            game(fen).outcome(),
            Some(Outcome::InsufficientMaterial),
            "{fen}"
        );
    }
    for fen in [
        "8/8/4k3/8/8/4KNN1/8/8 w - - 0 1",
        "8/8/4kn2/8/8/4KN2/8/8 w - - 0 1",
        "8/8/4k3/8/8/4KP2/8/8 w - - 0 1",
    ] {
        assert_eq!(game(fen).outcome(), None, "{fen}");
    }
}

#[test]
fn latte_optional_castling_in_san_and_coordinates() {
    let rules = Rules::parse("latte", Some("both")).expect("rules");
    let g: Game<Board> = Game::from_fen(
        rules,
        "rr2k1rr/1ppqppp1/8/8/8/8/2PPQP2/RR2K1RR w KQGBkqgb - 0 1",
    )
    .expect("valid FEN");
    let mut luft = g.clone();
    luft.play_san("O-O-L").expect("Luft castling is legal here");
    assert_eq!(
        luft.position().to_fen(),
        "rr2k1rr/1ppqppp1/8/8/8/8/2PPQPR1/RR3RK1 b kqgb - 1 1"
    );
    let mut two = g.clone();
    two.play_uci("e1c1t")
        .expect("Two Rooks castling is legal here");
    assert_eq!(
        two.position().to_fen(),
        "rr2k1rr/1ppqppp1/8/8/8/8/2PPQP2/2KRR1RR b kqgb - 1 1"
    );
}
