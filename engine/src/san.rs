//! Standard algebraic notation, written and read against a position's legal moves, for every
//! geometry: `Nbd2`, `exd6`, `e8=Q`, `Sxa1`, and the castling names of RULES.md
//! (`O-O`, `O-O-O`, `O-O-L`, `O-O-O-L`, `O-O-R`, `O-O-O-R`, `O-O-3`, `O-O-O-3`).

use crate::error::MoveError;
use crate::position::{MoveInfo, Position, SquareName};
use crate::types::Role;

/// SAN of a legal move of `pos`, with `+` or `#` when it checks or mates.
pub fn to_san<P: Position>(pos: &P, mv: P::Move) -> String {
    let mut san = san_without_suffix(pos, mv);
    let mut after = pos.clone();
    after.make_move(mv);
    if after.in_check() {
        san.push(if after.legal_move_list().is_empty() {
            '#'
        } else {
            '+'
        });
    }
    san
}

fn square_name<S: SquareName>(s: S) -> String {
    s.to_string()
}

/// SAN without the check suffix.
pub fn san_without_suffix<P: Position>(pos: &P, mv: P::Move) -> String {
    let info = pos.move_info(mv);
    if let Some(castle) = info.castle {
        return castle.san().to_string();
    }
    let mut san = String::with_capacity(8);
    if info.role == Role::Pawn {
        if info.capture.is_some() {
            san.push(file_char(info.from.file()));
            san.push('x');
        }
    } else {
        san.push(info.role.upper_char());
        let rivals: Vec<MoveInfo<P::Square>> = pos
            .legal_move_list()
            .into_iter()
            .map(|m| pos.move_info(m))
            .filter(|o| {
                o.role == info.role && o.to == info.to && o.from != info.from && o.castle.is_none()
            })
            .collect();
        if !rivals.is_empty() {
            let same_file = rivals.iter().any(|o| o.from.file() == info.from.file());
            let same_rank = rivals.iter().any(|o| o.from.rank() == info.from.rank());
            if !same_file {
                san.push(file_char(info.from.file()));
            } else if !same_rank {
                san.push(rank_char(info.from.rank()));
            } else {
                san.push_str(&square_name(info.from));
            }
        }
        if info.capture.is_some() {
            san.push('x');
        }
    }
    san.push_str(&square_name(info.to));
    if let Some(p) = info.promotion {
        san.push('=');
        san.push(p.upper_char());
    }
    san
}

fn file_char(f: u8) -> char {
    (b'a' + f) as char
}

fn rank_char(r: u8) -> char {
    (b'1' + r) as char
}

/// The parts of a non-castling SAN.
struct SanParts {
    role: Role,
    from_file: Option<u8>,
    from_rank: Option<u8>,
    to_file: u8,
    to_rank: u8,
    promotion: Option<Role>,
}

fn parse_parts(s: &str) -> Option<SanParts> {
    let mut chars: Vec<char> = s
        .chars()
        .filter(|&c| !matches!(c, 'x' | ':' | '-'))
        .collect();
    let role = match chars.first() {
        Some(&c) if "NBRQKS".contains(c) => {
            chars.remove(0);
            Role::from_char(c)?
        }
        _ => Role::Pawn,
    };
    let mut promotion = None;
    if let Some(eq) = chars.iter().position(|&c| c == '=') {
        if eq + 2 != chars.len() {
            return None;
        }
        promotion =
            Some(Role::from_char(chars[eq + 1]).filter(|_| chars[eq + 1].is_ascii_uppercase())?);
        chars.truncate(eq);
    } else if role == Role::Pawn && chars.last().is_some_and(|c| "NBRQS".contains(*c)) {
        promotion = chars.pop().and_then(Role::from_char);
    }
    if chars.len() < 2 || chars.len() > 4 {
        return None;
    }
    let to = chars.split_off(chars.len() - 2);
    let (to_file, to_rank) = (file_index(to[0])?, rank_index(to[1])?);
    let (mut from_file, mut from_rank) = (None, None);
    for c in chars {
        if let Some(f) = file_index(c).filter(|_| from_file.is_none() && from_rank.is_none()) {
            from_file = Some(f);
        } else if let Some(r) = rank_index(c).filter(|_| from_rank.is_none()) {
            from_rank = Some(r);
        } else {
            return None;
        }
    }
    Some(SanParts {
        role,
        from_file,
        from_rank,
        to_file,
        to_rank,
        promotion,
    })
}

fn file_index(c: char) -> Option<u8> {
    ('a'..='j').contains(&c).then(|| c as u8 - b'a')
}

fn rank_index(c: char) -> Option<u8> {
    ('1'..='8').contains(&c).then(|| c as u8 - b'1')
}

/// Finds the legal move written `text` in SAN. Accepts `0-0` for `O-O`, a missing `=` before
/// a promotion piece, and any check, mate or annotation suffix.
pub fn parse_san<P: Position>(pos: &P, text: &str) -> Result<P::Move, MoveError> {
    let trimmed = text.trim().trim_end_matches(['+', '#', '!', '?']);
    let moves = pos.legal_move_list();
    let illegal = || MoveError::Illegal {
        mv: text.trim().to_string(),
        fen: pos.to_fen(),
    };
    if trimmed.starts_with(['O', '0']) {
        let name = trimmed.replace('0', "O");
        let castles = [
            "O-O", "O-O-O", "O-O-L", "O-O-O-L", "O-O-R", "O-O-O-R", "O-O-3", "O-O-O-3",
        ];
        if !castles.contains(&name.as_str()) {
            return Err(MoveError::UnparsableSan(text.to_string()));
        }
        return moves
            .into_iter()
            .find(|&m| pos.move_info(m).castle.is_some_and(|c| c.san() == name))
            .ok_or_else(illegal);
    }
    let parts = parse_parts(trimmed).ok_or_else(|| MoveError::UnparsableSan(text.to_string()))?;
    let mut found = moves.into_iter().filter(|&m| {
        let i = pos.move_info(m);
        i.castle.is_none()
            && i.role == parts.role
            && i.to.file() == parts.to_file
            && i.to.rank() == parts.to_rank
            && i.promotion == parts.promotion
            && parts.from_file.is_none_or(|f| i.from.file() == f)
            && parts.from_rank.is_none_or(|r| i.from.rank() == r)
    });
    let first = found.next().ok_or_else(illegal)?;
    if found.next().is_some() {
        return Err(MoveError::Ambiguous {
            mv: text.trim().to_string(),
            fen: pos.to_fen(),
        });
    }
    Ok(first)
}
