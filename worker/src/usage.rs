//! How each player of a match spent its clock and searched: seconds, depth and nodes a move,
//! over whole games and over each side's opening moves.
//!
//! An engine author tuning time management asks "does my engine use its clock?": against
//! Stockfish at 10+0.1 this project's engine thought 0.32 s a move over the opening where
//! Stockfish took 0.84, and games ended by adjudication with its clock unspent. The PGN's move
//! comments hold the answer, but reading it meant a script; the match report now prints it.
//! Sums only, so a match of any length keeps a few integers per player.

use crate::record::{GameRecord, MoveRecord, PairResult};

/// The moves of each side counted as its opening (the first ten: where the clock is richest and
/// an engine's time management decides most).
pub const OPENING_MOVES: usize = 10;

/// One player's sums over its moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Moves played.
    pub moves: u64,
    /// Thinking time over them, in milliseconds.
    pub time_ms: u64,
    /// Moves among each game's first [`OPENING_MOVES`] of this player.
    pub opening_moves: u64,
    /// Thinking time over those.
    pub opening_time_ms: u64,
    /// Moves that reported a depth, and its sum.
    pub depth_moves: u64,
    /// Sum of the reported depths.
    pub depth: u64,
    /// Nodes reported, over the moves that reported any.
    pub nodes: u64,
    /// Thinking time of the moves that reported nodes (what nodes per second divides by).
    pub nodes_time_ms: u64,
}

impl Usage {
    fn add(&mut self, m: &MoveRecord, opening: bool) {
        self.moves += 1;
        self.time_ms += m.time_ms;
        if opening {
            self.opening_moves += 1;
            self.opening_time_ms += m.time_ms;
        }
        if let Some(d) = m.depth {
            self.depth_moves += 1;
            self.depth += u64::from(d);
        }
        if let Some(n) = m.nodes {
            self.nodes += n;
            self.nodes_time_ms += m.time_ms;
        }
    }

    /// Mean seconds a move over all moves and over the opening's, mean depth, nodes per
    /// second: each `None` where nothing was counted.
    pub fn means(&self) -> Means {
        let per = |sum: u64, n: u64| (n > 0).then(|| sum as f64 / n as f64);
        Means {
            seconds: per(self.time_ms, self.moves).map(|ms| ms / 1000.0),
            opening_seconds: per(self.opening_time_ms, self.opening_moves).map(|ms| ms / 1000.0),
            depth: per(self.depth, self.depth_moves),
            nps: per(self.nodes * 1000, self.nodes_time_ms),
        }
    }
}

/// A player's means (see [`Usage::means`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Means {
    /// Seconds a move.
    pub seconds: Option<f64>,
    /// Seconds a move over its first [`OPENING_MOVES`] moves of each game.
    pub opening_seconds: Option<f64>,
    /// Depth a move.
    pub depth: Option<f64>,
    /// Nodes a second.
    pub nps: Option<f64>,
}

/// Adds a pair's moves to the two players' sums: the first player has White in the pair's
/// first game and Black in its second.
pub fn add_pair(usage: &mut [Usage; 2], pair: &PairResult) {
    for (game, first_is_white) in pair.games.iter().zip([true, false]) {
        add_game(usage, game, first_is_white);
    }
}

fn add_game(usage: &mut [Usage; 2], game: &GameRecord, first_is_white: bool) {
    // The side to move in the start position plays the first recorded move.
    let white_starts = game.start_fen.split_whitespace().nth(1) != Some("b");
    for (i, m) in game.moves.iter().enumerate() {
        let white_moved = (i % 2 == 0) == white_starts;
        let player = usize::from(white_moved != first_is_white);
        usage[player].add(m, i / 2 < OPENING_MOVES);
    }
}

/// The report's lines: one per player, aligned by name.
pub fn report(usage: &[Usage; 2], names: [&str; 2]) -> String {
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0);
    let mut out = format!("Per move (over each side's first {OPENING_MOVES} moves in brackets):\n");
    for (u, name) in usage.iter().zip(names) {
        let m = u.means();
        let show = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
        out.push_str(&format!(
            "  {name:<width$}  {} s ({} s)  depth {}  nps {}\n",
            show(m.seconds, &|s| format!("{s:.3}")),
            show(m.opening_seconds, &|s| format!("{s:.3}")),
            show(m.depth, &|d| format!("{d:.1}")),
            show(m.nps, &|n| format!("{:.2} M", n / 1e6)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{GameResult, Termination};

    fn mv(time_ms: u64, depth: Option<u32>, nodes: Option<u64>) -> MoveRecord {
        MoveRecord {
            uci: "a2a3".into(),
            san: "a3".into(),
            score: None,
            depth,
            nodes,
            time_ms,
        }
    }

    fn game(start_fen: &str, moves: Vec<MoveRecord>) -> GameRecord {
        GameRecord {
            white: "w".into(),
            black: "b".into(),
            start_fen: start_fen.into(),
            result: GameResult::Draw,
            termination: Termination::Stalemate,
            plies: moves.len() as u32,
            moves,
            castlings: Vec::new(),
            milestones: Vec::new(),
        }
    }

    const WHITE_TO_MOVE: &str = "4k3/8/8/8/8/8/8/4K3 w - - 0 1";
    const BLACK_TO_MOVE: &str = "4k3/8/8/8/8/8/8/4K3 b - - 0 1";

    /// The first player's moves are White's in the first game and Black's in the second,
    /// whoever moves first from the opening; the second player's are the rest.
    #[test]
    fn moves_go_to_the_player_who_made_them() {
        // First player: 100 ms a move, depth 10, 1,000 nodes; second: 300 ms, depth 20, none.
        let first = || mv(100, Some(10), Some(1000));
        let second = || mv(300, Some(20), None);
        let pair = PairResult {
            pair_index: 0,
            seed: 1,
            variant: "chess".into(),
            ruleset: "normal".into(),
            opening_fen: WHITE_TO_MOVE.into(),
            games: [
                game(WHITE_TO_MOVE, vec![first(), second(), first()]),
                // Black (the first player here) moves first from this start.
                game(BLACK_TO_MOVE, vec![first(), second(), first(), second()]),
            ],
            pgn: None,
        };
        let mut usage = [Usage::default(); 2];
        add_pair(&mut usage, &pair);
        assert_eq!((usage[0].moves, usage[1].moves), (4, 3));
        let (a, b) = (usage[0].means(), usage[1].means());
        assert_eq!((a.seconds, b.seconds), (Some(0.1), Some(0.3)));
        assert_eq!((a.depth, b.depth), (Some(10.0), Some(20.0)));
        assert_eq!((a.nps, b.nps), (Some(10_000.0), None), "no nodes, no rate");
        let text = report(&usage, ["mine", "theirs"]);
        assert!(
            text.contains("mine    0.100 s (0.100 s)  depth 10.0  nps 0.01 M"),
            "{text}"
        );
        assert!(
            text.contains("theirs  0.300 s (0.300 s)  depth 20.0  nps -"),
            "{text}"
        );
    }

    /// Only each side's first ten moves of a game count as its opening.
    #[test]
    fn the_opening_is_each_sides_first_ten_moves() {
        // 30 plies: White's moves are 1 s for its first ten, then 0 s; Black's always 0 s.
        let moves: Vec<MoveRecord> = (0..30)
            .map(|i| mv(if i % 2 == 0 && i < 20 { 1000 } else { 0 }, None, None))
            .collect();
        let mut usage = [Usage::default(); 2];
        add_game(&mut usage, &game(WHITE_TO_MOVE, moves), true);
        let m = usage[0].means();
        assert_eq!(usage[0].opening_moves, 10);
        assert_eq!(m.opening_seconds, Some(1.0));
        assert_eq!(m.seconds, Some(10.0 / 15.0));
        assert_eq!(usage[1].opening_time_ms, 0);
        assert_eq!(m.depth, None);
        assert!(report(&usage, ["a", "b"]).contains("depth -  nps -"));
    }
}
