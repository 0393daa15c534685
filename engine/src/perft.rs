//! Perft: counting the leaves of the legal move tree, the contract for the rules.
//!
//! The last ply is counted in bulk (the length of the legal move list), as Stockfish's
//! `go perft` does, so the benchmark compares like with like.

use crate::position::{MoveList, Position};

/// The number of leaf positions exactly `depth` plies below `pos`.
pub fn perft<P: Position>(pos: &mut P, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut moves = MoveList::new();
    pos.legal_moves(&mut moves);
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut nodes = 0;
    for &mv in &moves {
        let undo = pos.make_move(mv);
        nodes += perft(pos, depth - 1);
        pos.unmake_move(mv, undo);
    }
    nodes
}

/// Perft split by root move: each legal move in coordinate notation with the perft of
/// `depth - 1` after it, sorted by move text.
pub fn divide<P: Position>(pos: &mut P, depth: u32) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    if depth == 0 {
        return out;
    }
    for mv in pos.legal_move_list() {
        let name = pos.move_info(mv).uci();
        let undo = pos.make_move(mv);
        let n = perft(pos, depth - 1);
        pos.unmake_move(mv, undo);
        out.push((name, n));
    }
    out.sort();
    out
}
