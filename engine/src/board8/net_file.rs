//! Network files: a network of the 8x8 board's evaluation ([`Net`]) on disk, so that the
//! engine can play with one it was not built with (the UCI option `EvalFile`, a worker's
//! `net=FILE`) and a candidate network is an SPRT between two files rather than two builds.
//!
//! The layout (little-endian throughout):
//!
//! | bytes | what |
//! |---|---|
//! | 8 | [`MAGIC`], `vc-net-1`: the format and its version |
//! | 8 | the variant's id (`chess`, `latte`), padded with zero bytes |
//! | 4 | hidden units a view |
//! | 4 | inputs a view ([`INPUTS`]) |
//! | 2 each | input weights, input by input, each input's units in order |
//! | 2 each | hidden biases |
//! | 4 each | output weights: the side to move's units, then the other's |
//! | 4 | output bias |
//! | 32 | SHA-256 of everything before it |
//!
//! A file is read whole (at most [`MAX_FILE_BYTES`]) and checked before anything of it is
//! used: its length, its digest, that its width is the one this build's boards keep sums of,
//! and that every weight is within the limits the fit clamps to, which are what keep the
//! board's 16-bit sums and the output's 32-bit sum from overflowing.
//!
//! A loaded network lives as long as the process: boards hold a plain reference to it (as they
//! do to the built-in ones), so a search pays nothing for the choice. Loading the same
//! contents again hands back the same network; at most [`MAX_LOADED`] distinct ones are kept.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;

use sha2::{Digest, Sha256};
use thiserror::Error;

use super::net::{Net, HIDDEN, INPUTS, MAX_INPUT, MAX_OUTPUT, MAX_OUTPUT_BIAS};
use crate::variant::{Rules, Variant};

/// The first bytes of every network file: the format and its version.
pub const MAGIC: [u8; 8] = *b"vc-net-1";
/// Bytes of the variant's id field.
const VARIANT_BYTES: usize = 8;
const _: () = {
    let mut i = 0;
    while i < Variant::ALL.len() {
        assert!(Variant::ALL[i].id().len() <= VARIANT_BYTES);
        i += 1;
    }
};
/// Bytes before the weights.
const HEADER_BYTES: usize = MAGIC.len() + VARIANT_BYTES + 4 + 4;
/// Bytes of the digest that ends the file.
const DIGEST_BYTES: usize = 32;
/// The largest file the reader takes: a network of the widest width `engine tune-net` fits.
pub const MAX_FILE_BYTES: usize = file_bytes(256);
/// Distinct networks one process keeps loaded.
pub const MAX_LOADED: usize = 32;

/// The length of a file holding a network of `hidden` units a view.
pub const fn file_bytes(hidden: usize) -> usize {
    HEADER_BYTES + INPUTS * hidden * 2 + hidden * 2 + 2 * hidden * 4 + 4 + DIGEST_BYTES
}

/// Why a network file was refused.
#[derive(Debug, Error)]
pub enum NetFileError {
    /// The file could not be read.
    #[error("cannot read network file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file could not be written.
    #[error("cannot write network file {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Longer than any network file.
    #[error("{path} is larger than any network file ({MAX_FILE_BYTES} bytes at most)")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// Not a network file, or one of another version.
    #[error("{path} is not a network file of this engine (it does not start with \"vc-net-1\")")]
    Magic {
        /// The file.
        path: String,
    },
    /// The variant field names no 8x8 game.
    #[error(
        "{path} is a network for {variant:?}, which is not a game of the 8x8 board (chess, latte)"
    )]
    Variant {
        /// The file.
        path: String,
        /// The field's text.
        variant: String,
    },
    /// A width this build does not keep sums of.
    #[error(
        "{path} has {hidden} hidden units a view; this engine is built for {HIDDEN} \
         (a network of another width is built in: engine tune-net --hidden N --out)"
    )]
    Width {
        /// The file.
        path: String,
        /// The file's width.
        hidden: usize,
    },
    /// Another count of inputs than the board's.
    #[error("{path} has {inputs} inputs a view; the 8x8 board's networks have {INPUTS}")]
    Inputs {
        /// The file.
        path: String,
        /// The file's count.
        inputs: usize,
    },
    /// Shorter or longer than its header says.
    #[error("{path} is {found} bytes long; a network of its width is {expected}")]
    Length {
        /// The file.
        path: String,
        /// Its length.
        found: usize,
        /// The length its header implies.
        expected: usize,
    },
    /// The contents do not match the digest (a damaged or edited file).
    #[error("{path} is damaged: its contents do not match the SHA-256 digest it ends with")]
    Digest {
        /// The file.
        path: String,
    },
    /// A weight beyond the limits that keep the engine's sums from overflowing.
    #[error("{path}: {what} {index} is {value}, beyond the limit of {limit} in magnitude")]
    OutOfRange {
        /// The file.
        path: String,
        /// Which kind of weight.
        what: &'static str,
        /// Its index within its kind.
        index: usize,
        /// Its value.
        value: i64,
        /// The limit.
        limit: i64,
    },
    /// Too many distinct networks loaded in this process.
    #[error(
        "{MAX_LOADED} distinct networks are loaded already; restart the engine to load others"
    )]
    TooMany,
    /// A network for another game than the one being played.
    #[error(
        "the network {name} of {path} is for {network}; it cannot evaluate {playing} positions"
    )]
    OtherVariant {
        /// The network's name.
        name: String,
        /// The file it was read from.
        path: String,
        /// The network's variant.
        network: Variant,
        /// The rules being played.
        playing: Rules,
    },
    /// A game whose board has no network.
    #[error(
        "{0} has no evaluation network (only the 8x8 board's games, chess and Latte, read one)"
    )]
    NoNetwork(Rules),
}

/// A network the boards can read, compared by identity: loading equal contents twice gives the
/// same one, so equal networks are the same reference.
#[derive(Clone, Copy)]
pub struct NetRef(&'static Net);

impl NetRef {
    /// The built-in network of `variant`, if it has one.
    pub(crate) const fn builtin(net: &'static Net) -> NetRef {
        NetRef(net)
    }

    /// The network.
    #[inline(always)]
    pub fn net(self) -> &'static Net {
        self.0
    }
}

impl PartialEq for NetRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for NetRef {}

impl fmt::Debug for NetRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NetRef({:p})", self.0)
    }
}

/// A network read from a file: which game it is for and what it is called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedNet {
    /// The game it evaluates.
    pub variant: Variant,
    /// The network.
    pub net: NetRef,
    /// The SHA-256 of the file's bytes as they were read, lower-case hex (what `sha256sum`
    /// prints): what a run pins a declared network file to, computed from the very bytes
    /// loaded rather than from a second reading of the file.
    pub sha256: String,
    /// The file it was read from, as given.
    pub path: String,
}

impl LoadedNet {
    /// The network's name: the first 12 hex digits of its file's SHA-256, as Stockfish names
    /// its networks, the same whatever the file is called.
    pub fn name(&self) -> &str {
        &self.sha256[..12]
    }

    /// The network for positions under `rules`: refused when it is another game's.
    pub fn for_rules(&self, rules: Rules) -> Result<NetRef, NetFileError> {
        if rules.variant() == self.variant {
            Ok(self.net)
        } else {
            Err(NetFileError::OtherVariant {
                name: self.name().to_string(),
                path: self.path.clone(),
                network: self.variant,
                playing: rules,
            })
        }
    }
}

/// The bytes of the file holding `net` for `variant` (a network of any width: a build of
/// another width refuses it by name).
pub fn to_bytes<const H: usize>(net: &Net<H>, variant: Variant) -> Vec<u8> {
    let mut out = Vec::with_capacity(file_bytes(H));
    out.extend_from_slice(&MAGIC);
    let mut id = [0u8; VARIANT_BYTES];
    let text = variant.id().as_bytes();
    id[..text.len()].copy_from_slice(text);
    out.extend_from_slice(&id);
    out.extend_from_slice(&(H as u32).to_le_bytes());
    out.extend_from_slice(&(INPUTS as u32).to_le_bytes());
    for row in &net.input {
        row.iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    }
    net.bias
        .iter()
        .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    for view in &net.output {
        view.iter()
            .for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
    }
    out.extend_from_slice(&net.output_bias.to_le_bytes());
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

/// Writes `bytes` ([`to_bytes`]) to `path`.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), NetFileError> {
    std::fs::write(path, bytes).map_err(|source| NetFileError::Write {
        path: path.display().to_string(),
        source,
    })
}

/// Reads and checks the network file at `path` and hands back its network, loaded for the
/// rest of the process (or the built-in one, when the file holds exactly that).
pub fn load(path: &Path) -> Result<LoadedNet, NetFileError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|source| NetFileError::Read {
        path: name.clone(),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| NetFileError::Read {
            path: name.clone(),
            source,
        })?;
    if bytes.len() > MAX_FILE_BYTES {
        return Err(NetFileError::TooLarge { path: name });
    }
    let (variant, net) = parse(&bytes, &name)?;
    let sha256: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(LoadedNet {
        variant,
        net: intern(net)?,
        sha256,
        path: name,
    })
}

/// The variant and network `bytes` (the contents of the file `path`) hold, checked.
pub fn parse(bytes: &[u8], path: &str) -> Result<(Variant, Box<Net>), NetFileError> {
    let path = || path.to_string();
    if bytes.len() < HEADER_BYTES || bytes[..MAGIC.len()] != MAGIC {
        return Err(NetFileError::Magic { path: path() });
    }
    let mut r = Reader { bytes, at: 0 };
    r.take(MAGIC.len());
    let id = r.take(VARIANT_BYTES);
    let text: String = id
        .iter()
        .take_while(|&&b| b != 0)
        .map(|&b| char::from(b))
        .collect();
    let variant = text
        .parse::<Variant>()
        .ok()
        .filter(|v| super::can_have_net(Rules::default_for(*v)))
        .ok_or_else(|| NetFileError::Variant {
            path: path(),
            variant: text.clone(),
        })?;
    let hidden = r.u32() as usize;
    let inputs = r.u32() as usize;
    if hidden != HIDDEN {
        return Err(NetFileError::Width {
            path: path(),
            hidden,
        });
    }
    if inputs != INPUTS {
        return Err(NetFileError::Inputs {
            path: path(),
            inputs,
        });
    }
    let expected = file_bytes(HIDDEN);
    if bytes.len() != expected {
        return Err(NetFileError::Length {
            path: path(),
            found: bytes.len(),
            expected,
        });
    }
    let (body, digest) = bytes.split_at(expected - DIGEST_BYTES);
    if Sha256::digest(body).as_slice() != digest {
        return Err(NetFileError::Digest { path: path() });
    }
    let check = |what: &'static str, index: usize, value: i64, limit: i32| {
        if value.abs() > i64::from(limit) {
            Err(NetFileError::OutOfRange {
                path: path(),
                what,
                index,
                value,
                limit: limit.into(),
            })
        } else {
            Ok(())
        }
    };
    let mut net = Box::new(Net {
        input: [[0; HIDDEN]; INPUTS],
        bias: [0; HIDDEN],
        output: [[0; HIDDEN]; 2],
        output_bias: 0,
    });
    for (i, w) in net.input.iter_mut().flatten().enumerate() {
        *w = r.i16();
        check("input weight", i, (*w).into(), MAX_INPUT)?;
    }
    for (i, w) in net.bias.iter_mut().enumerate() {
        *w = r.i16();
        check("hidden bias", i, (*w).into(), MAX_INPUT)?;
    }
    for (i, w) in net.output.iter_mut().flatten().enumerate() {
        *w = r.i32();
        check("output weight", i, (*w).into(), MAX_OUTPUT)?;
    }
    net.output_bias = r.i32();
    check("output bias", 0, net.output_bias.into(), MAX_OUTPUT_BIAS)?;
    Ok((variant, net))
}

/// Reads the fields of a file whose length has been checked.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let out = &self.bytes[self.at..self.at + n];
        self.at += n;
        out
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N));
        out
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.array())
    }

    fn i16(&mut self) -> i16 {
        i16::from_le_bytes(self.array())
    }
}

/// The networks loaded so far, each kept for the rest of the process.
static LOADED: Mutex<Vec<&'static Net>> = Mutex::new(Vec::new());

/// The loaded network equal to `net`: a built-in one, one loaded before, or `net` itself, now
/// kept for the rest of the process.
fn intern(net: Box<Net>) -> Result<NetRef, NetFileError> {
    if let Some(builtin) = super::tables::builtin_nets().find(|b| *b.net() == *net) {
        return Ok(builtin);
    }
    // A poisoned lock only means another thread panicked while holding it: the list itself is
    // whole (a push is the only change), so it is still good to read.
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&same) = loaded.iter().find(|&&n| *n == *net) {
        return Ok(NetRef(same));
    }
    if loaded.len() >= MAX_LOADED {
        return Err(NetFileError::TooMany);
    }
    let kept: &'static Net = Box::leak(net);
    loaded.push(kept);
    Ok(NetRef(kept))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chess() -> &'static Net {
        super::super::tables::net(Rules::default_for(Variant::Chess))
            .expect("chess has a network")
            .net()
    }

    fn parse_err(bytes: &[u8]) -> NetFileError {
        match parse(bytes, "x.net") {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        }
    }

    /// Re-digests a file edited in place, so that a test reaches the check after the digest.
    fn redigest(bytes: &mut [u8]) {
        let n = bytes.len() - DIGEST_BYTES;
        let digest = Sha256::digest(&bytes[..n]);
        bytes[n..].copy_from_slice(&digest);
    }

    #[test]
    fn a_written_network_reads_back_equal() {
        let bytes = to_bytes(chess(), Variant::Latte);
        assert_eq!(bytes.len(), file_bytes(HIDDEN));
        let (variant, net) = parse(&bytes, "x.net").expect("valid");
        assert_eq!(variant, Variant::Latte);
        assert!(*net == *chess());
    }

    #[test]
    fn files_that_are_not_networks_are_refused_by_name() {
        assert!(matches!(parse_err(b"hello"), NetFileError::Magic { .. }));
        let mut bytes = to_bytes(chess(), Variant::Chess);
        bytes[7] = b'2';
        assert!(matches!(parse_err(&bytes), NetFileError::Magic { .. }));
    }

    #[test]
    fn a_damaged_file_is_refused() {
        let mut bytes = to_bytes(chess(), Variant::Chess);
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        let e = parse_err(&bytes);
        assert!(matches!(e, NetFileError::Digest { .. }), "{e}");
        assert!(e.to_string().contains("damaged"), "{e}");
    }

    #[test]
    fn a_short_or_long_file_is_refused_with_both_lengths() {
        let bytes = to_bytes(chess(), Variant::Chess);
        let e = parse_err(&bytes[..bytes.len() - 1]);
        assert!(
            matches!(e, NetFileError::Length { found, expected, .. } if found + 1 == expected),
            "{e}"
        );
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(parse_err(&longer), NetFileError::Length { .. }));
    }

    #[test]
    fn another_width_or_input_count_is_refused() {
        let mut bytes = to_bytes(chess(), Variant::Chess);
        bytes[16..20].copy_from_slice(&128u32.to_le_bytes());
        let e = parse_err(&bytes);
        assert!(matches!(e, NetFileError::Width { hidden: 128, .. }), "{e}");
        assert!(e.to_string().contains("--hidden"), "{e}");
        let mut bytes = to_bytes(chess(), Variant::Chess);
        bytes[20..24].copy_from_slice(&700u32.to_le_bytes());
        assert!(matches!(
            parse_err(&bytes),
            NetFileError::Inputs { inputs: 700, .. }
        ));
    }

    #[test]
    fn secutor_and_unknown_variants_are_refused() {
        for id in [&b"secutor\0"[..], b"shogi\0\0\0"] {
            let mut bytes = to_bytes(chess(), Variant::Chess);
            bytes[8..16].copy_from_slice(id);
            redigest(&mut bytes);
            let e = parse_err(&bytes);
            assert!(matches!(e, NetFileError::Variant { .. }), "{e}");
        }
    }

    /// Weights beyond the fit's clamps would overflow the board's 16-bit sums or the output's
    /// 32-bit one: each kind is checked, after the digest (a file can be made so on purpose).
    #[test]
    fn weights_beyond_the_limits_are_refused() {
        let first_output = HEADER_BYTES + INPUTS * HIDDEN * 2 + HIDDEN * 2;
        let cases: [(usize, &[u8], &str); 4] = [
            (HEADER_BYTES, &i16::MAX.to_le_bytes(), "input weight"),
            (
                HEADER_BYTES + INPUTS * HIDDEN * 2,
                &(-600i16).to_le_bytes(),
                "hidden bias",
            ),
            (
                first_output,
                &(MAX_OUTPUT + 1).to_le_bytes(),
                "output weight",
            ),
            (
                first_output + 2 * HIDDEN * 4,
                &i32::MIN.to_le_bytes(),
                "output bias",
            ),
        ];
        for (at, value, what) in cases {
            let mut bytes = to_bytes(chess(), Variant::Chess);
            bytes[at..at + value.len()].copy_from_slice(value);
            redigest(&mut bytes);
            let e = parse_err(&bytes);
            assert!(
                matches!(e, NetFileError::OutOfRange { what: w, index: 0, .. } if w == what),
                "{what}: {e}"
            );
        }
    }

    #[test]
    fn loading_equal_contents_gives_the_same_network() {
        let dir = tempfile::tempdir().expect("temp dir");
        let builtin = dir.path().join("chess.net");
        write(&builtin, &to_bytes(chess(), Variant::Chess)).expect("written");
        let loaded = load(&builtin).expect("loads");
        assert_eq!(loaded.variant, Variant::Chess);
        assert!(
            super::super::tables::builtin_nets().any(|b| b == loaded.net),
            "the built-in network's own contents give the built-in network"
        );
        let mut changed = chess().clone();
        changed.output_bias += 16 * super::super::net::QA;
        let (a, b) = (dir.path().join("a.net"), dir.path().join("b.net"));
        let bytes = to_bytes(&changed, Variant::Chess);
        write(&a, &bytes).expect("written");
        write(&b, &bytes).expect("written");
        let (a, b) = (load(&a).expect("loads"), load(&b).expect("loads"));
        assert_eq!(a.net, b.net);
        assert_eq!(a.sha256, b.sha256);
        assert_ne!(a.net, loaded.net);
        assert_ne!(a.name(), loaded.name());
    }

    #[test]
    fn a_missing_or_oversized_file_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("none.net");
        let e = load(&missing).expect_err("missing");
        assert!(
            matches!(e, NetFileError::Read { .. }) && e.to_string().contains("none.net"),
            "{e}"
        );
        let big = dir.path().join("big.net");
        std::fs::write(&big, vec![0u8; MAX_FILE_BYTES + 1]).expect("written");
        assert!(matches!(
            load(&big).expect_err("too big"),
            NetFileError::TooLarge { .. }
        ));
    }

    #[test]
    fn a_network_serves_its_own_game_only() {
        let loaded = LoadedNet {
            variant: Variant::Latte,
            net: NetRef(chess()),
            sha256: "abc0123456789".into(),
            path: "a.net".into(),
        };
        assert!(loaded.for_rules(Rules::default_for(Variant::Latte)).is_ok());
        let e = loaded
            .for_rules(Rules::default_for(Variant::Chess))
            .expect_err("another game");
        assert!(e.to_string().contains("latte"), "{e}");
    }
}
