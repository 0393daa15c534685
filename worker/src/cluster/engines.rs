//! The external engines this machine declares (`worker --engine NAME=PATH`): the allow-list of
//! programs a lease may run.
//!
//! A declared file may also be a network file of our engine (`engine export-net`, `engine
//! tune-net --out-net`, recognised by its first bytes): the engine of that name is then the
//! worker's own engine playing with that network, so that an SPRT of a candidate network is a
//! run between two declared files, pinned and checked like any engine, with no build of its
//! own.
//!
//! A lease names an engine, never a path or a command line. The worker runs the file it was
//! started with under that name and nothing else, so whoever controls the coordinator (or a
//! run config) cannot make a worker execute a program of their choosing. Each file is hashed
//! (SHA-256) once at start: the digest goes to the coordinator at registration, and a run that
//! pins a digest is refused by a worker whose file differs, rather than measuring another
//! build.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use engine::board8::net_file::{self, LoadedNet, NetFileError};
use proto::limits;
use proto::v1 as pb;
use sha2::{Digest, Sha256};
use thiserror::Error;

/// The name a lease uses for the worker's own, in-process engine; no declared engine may take it.
pub const BUILTIN: &str = "builtin";

/// Why an `--engine NAME=PATH` declaration is refused.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The argument has no `=`.
    #[error("{0:?} is not NAME=PATH (for example sf=/usr/bin/stockfish)")]
    NotNamePath(String),
    /// The name is empty or too long.
    #[error("engine name {name:?} must be 1 to {max} bytes long", max = limits::ENGINE_NAME_BYTES)]
    NameLength {
        /// The name as given.
        name: String,
    },
    /// The name has a character runs cannot refer to.
    #[error("engine name {name:?} contains {ch:?}: use only letters, digits, '.', '_' and '-'")]
    NameChar {
        /// The name as given.
        name: String,
        /// The first character refused.
        ch: char,
    },
    /// The name is the one leases use for the in-process engine.
    #[error("engine name {0:?} is reserved for the worker's own engine: pick another name")]
    Reserved(String),
    /// The same name twice.
    #[error("engine '{0}' is declared twice")]
    Duplicate(String),
    /// More engines than a registration may carry.
    #[error("{count} engines declared: a worker registers at most {max}", max = limits::ENGINES)]
    TooMany {
        /// How many were declared.
        count: usize,
    },
    /// The path is empty.
    #[error("engine '{0}' has no path (expected --engine {0}=PATH)")]
    NoPath(String),
    /// The file does not exist or cannot be read.
    #[error("engine '{name}': cannot read {path}: {source}")]
    Unreadable {
        /// The engine's name.
        name: String,
        /// The path as given.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// The path is a directory or a special file.
    #[error("engine '{name}': {path} is not a regular file")]
    NotAFile {
        /// The engine's name.
        name: String,
        /// The path as given.
        path: PathBuf,
    },
    /// A network file that cannot be used (damaged, another width, out-of-range weights).
    #[error("engine '{name}': {source}")]
    Network {
        /// The engine's name.
        name: String,
        /// Why.
        source: NetFileError,
    },
    /// The file has no executable bit.
    #[error("engine '{name}': {path} is not executable (chmod +x it)")]
    NotExecutable {
        /// The engine's name.
        name: String,
        /// The path as given.
        path: PathBuf,
    },
}

/// Why a lease's engine cannot be played on this worker.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EngineRefused {
    /// The lease names an engine this worker did not declare.
    #[error(
        "engine '{}' is not declared on this worker (start it with --engine {}=PATH)",
        .0.escape_debug(),
        .0.escape_debug()
    )]
    Undeclared(String),
    /// The run pins a build other than the declared file.
    #[error(
        "engine '{name}': the run pins sha256 {}, but this worker's file has sha256 {declared}",
        .pinned.escape_debug()
    )]
    DigestMismatch {
        /// The engine's name.
        name: String,
        /// The digest the run asks for.
        pinned: String,
        /// The digest of the declared file.
        declared: String,
    },
}

/// One `--engine NAME=PATH` argument, checked for form but not yet for the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineArg {
    /// The name runs refer to.
    pub name: String,
    /// The path as given.
    pub path: PathBuf,
}

impl FromStr for EngineArg {
    type Err = EngineError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, path) = s
            .split_once('=')
            .ok_or_else(|| EngineError::NotNamePath(s.to_string()))?;
        check_name(name)?;
        if path.is_empty() {
            return Err(EngineError::NoPath(name.to_string()));
        }
        Ok(EngineArg {
            name: name.to_string(),
            path: PathBuf::from(path),
        })
    }
}

/// Checks a declared name: the characters a run config can spell, within the API's limit, and
/// not the in-process engine's name.
fn check_name(name: &str) -> Result<(), EngineError> {
    if name.is_empty() || name.len() > limits::ENGINE_NAME_BYTES {
        return Err(EngineError::NameLength {
            name: name.to_string(),
        });
    }
    if let Some(ch) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(EngineError::NameChar {
            name: name.to_string(),
            ch,
        });
    }
    if name.eq_ignore_ascii_case(BUILTIN) {
        return Err(EngineError::Reserved(name.to_string()));
    }
    Ok(())
}

/// A declared engine: the file to run and its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredEngine {
    name: String,
    path: PathBuf,
    sha256: String,
    /// The network, when the file is a network file of our engine rather than a program.
    network: Option<LoadedNet>,
}

impl DeclaredEngine {
    /// Checks the file and hashes it. The path is made absolute so that a bare file name runs
    /// that file rather than whatever `PATH` finds under the same name.
    pub fn open(arg: &EngineArg) -> Result<Self, EngineError> {
        let unreadable = |source| EngineError::Unreadable {
            name: arg.name.clone(),
            path: arg.path.clone(),
            source,
        };
        let path = std::fs::canonicalize(&arg.path).map_err(unreadable)?;
        let meta = std::fs::metadata(&path).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(EngineError::NotAFile {
                name: arg.name.clone(),
                path: arg.path.clone(),
            });
        }
        if is_network_file(&path).map_err(unreadable)? {
            let network = net_file::load(&path).map_err(|source| EngineError::Network {
                name: arg.name.clone(),
                source,
            })?;
            // The digest of the bytes loaded, not of a second reading the file may have
            // changed under.
            return Ok(DeclaredEngine {
                name: arg.name.clone(),
                path,
                sha256: network.sha256.clone(),
                network: Some(network),
            });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o111 == 0 {
                return Err(EngineError::NotExecutable {
                    name: arg.name.clone(),
                    path: arg.path.clone(),
                });
            }
        }
        let sha256 = sha256_file(&path).map_err(unreadable)?;
        Ok(DeclaredEngine {
            name: arg.name.clone(),
            path,
            sha256,
            network: None,
        })
    }

    /// The network our engine plays with under this name, when the file is a network file.
    pub fn network(&self) -> Option<&LoadedNet> {
        self.network.as_ref()
    }

    /// The name runs refer to.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The absolute path of the file the worker runs.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SHA-256 of the file at start, lower-case hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

/// Whether the file starts as a network file of our engine does.
fn is_network_file(path: &Path) -> io::Result<bool> {
    use std::io::Read;
    let mut head = Vec::with_capacity(net_file::MAGIC.len());
    File::open(path)?
        .take(net_file::MAGIC.len() as u64)
        .read_to_end(&mut head)?;
    Ok(head == net_file::MAGIC)
}

/// SHA-256 of a file, lower-case hex, read in a stream (engines can be large).
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The engines of this worker, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Engines(BTreeMap<String, DeclaredEngine>);

impl Engines {
    /// Checks and hashes every declaration; the first bad one is the error.
    pub fn declare<'a>(args: impl IntoIterator<Item = &'a EngineArg>) -> Result<Self, EngineError> {
        let args: Vec<&EngineArg> = args.into_iter().collect();
        if args.len() > limits::ENGINES {
            return Err(EngineError::TooMany { count: args.len() });
        }
        let mut engines = BTreeMap::new();
        for arg in args {
            // `EngineArg` can be built without `from_str`, so the name is checked here too.
            check_name(&arg.name)?;
            if engines.contains_key(&arg.name) {
                return Err(EngineError::Duplicate(arg.name.clone()));
            }
            engines.insert(arg.name.clone(), DeclaredEngine::open(arg)?);
        }
        Ok(Engines(engines))
    }

    /// The declared engine a lease may use under `name`, when the run's pinned digest (empty:
    /// none) matches it.
    pub fn resolve(
        &self,
        name: &str,
        pinned_sha256: &str,
    ) -> Result<&DeclaredEngine, EngineRefused> {
        let engine = self
            .0
            .get(name)
            .ok_or_else(|| EngineRefused::Undeclared(name.to_string()))?;
        if !pinned_sha256.is_empty() && !pinned_sha256.eq_ignore_ascii_case(&engine.sha256) {
            return Err(EngineRefused::DigestMismatch {
                name: engine.name.clone(),
                pinned: pinned_sha256.to_string(),
                declared: engine.sha256.clone(),
            });
        }
        Ok(engine)
    }

    /// What the registration tells the coordinator.
    pub fn infos(&self) -> Vec<pb::EngineInfo> {
        self.0
            .values()
            .map(|e| pb::EngineInfo {
                name: e.name.clone(),
                sha256: e.sha256.clone(),
                bench_signature: 0,
                network_variant: e
                    .network
                    .as_ref()
                    .map_or_else(String::new, |n| n.variant.id().to_string()),
            })
            .collect()
    }

    /// The declared engines, by name.
    pub fn iter(&self) -> impl Iterator<Item = &DeclaredEngine> {
        self.0.values()
    }

    /// How many engines are declared.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no engine is declared (only `builtin` can be played).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An executable file with known contents.
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, body).expect("write");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        path
    }

    fn arg(s: &str) -> Result<EngineArg, EngineError> {
        s.parse()
    }

    #[test]
    fn parses_name_and_path() {
        let a = arg("sf-16.1_x=/opt/sf=1").expect("valid");
        assert_eq!(a.name, "sf-16.1_x");
        assert_eq!(a.path, PathBuf::from("/opt/sf=1"));
    }

    #[test]
    fn refuses_bad_forms_and_names() {
        assert!(matches!(arg("stockfish"), Err(EngineError::NotNamePath(s)) if s == "stockfish"));
        assert!(matches!(
            arg("=/bin/x"),
            Err(EngineError::NameLength { .. })
        ));
        let long = format!("{}=/bin/x", "a".repeat(limits::ENGINE_NAME_BYTES + 1));
        assert!(matches!(arg(&long), Err(EngineError::NameLength { .. })));
        let longest = format!("{}=/bin/x", "a".repeat(limits::ENGINE_NAME_BYTES));
        assert!(arg(&longest).is_ok());
        assert!(matches!(
            arg("s f=/bin/x"),
            Err(EngineError::NameChar { ch: ' ', .. })
        ));
        assert!(matches!(
            arg("a/b=/bin/x"),
            Err(EngineError::NameChar { ch: '/', .. })
        ));
        assert!(matches!(
            arg("é=/bin/x"),
            Err(EngineError::NameChar { ch: 'é', .. })
        ));
        assert!(matches!(
            arg("builtin=/bin/x"),
            Err(EngineError::Reserved(_))
        ));
        assert!(matches!(
            arg("Builtin=/bin/x"),
            Err(EngineError::Reserved(_))
        ));
        assert!(matches!(arg("sf="), Err(EngineError::NoPath(_))));
    }

    #[test]
    fn hashes_declared_files() {
        let dir = tempfile::tempdir().expect("dir");
        let path = script(dir.path(), "e", "abc");
        let engines = Engines::declare(&[EngineArg {
            name: "e".into(),
            path: path.clone(),
        }])
        .expect("declared");
        let e = engines.resolve("e", "").expect("declared");
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            e.sha256(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(e.path(), std::fs::canonicalize(&path).expect("exists"));
        assert_eq!(engines.infos()[0].sha256, e.sha256());
        assert_eq!(engines.infos()[0].name, "e");
    }

    /// A network file of our engine declares as our engine with that network (no executable
    /// bit needed); a damaged one is refused at start, naming the engine and the damage.
    #[test]
    fn declares_network_files_and_refuses_damaged_ones() {
        use engine::board8::net_file;
        let dir = tempfile::tempdir().expect("dir");
        let rules = engine::Rules::default_for(engine::Variant::Latte);
        let net = engine::board8::builtin_net(rules).expect("a network");
        let mut bytes = net_file::to_bytes(net, engine::Variant::Latte);
        let good = dir.path().join("good.net");
        std::fs::write(&good, &bytes).expect("write");
        let engines = Engines::declare(&[EngineArg {
            name: "good".into(),
            path: good,
        }])
        .expect("declared");
        let e = engines.resolve("good", "").expect("declared");
        assert_eq!(e.network().map(|n| n.variant), Some(engine::Variant::Latte));
        // The registration tells the coordinator the network's game, so that it offers the
        // worker runs of that game only.
        let info = &engines.infos()[0];
        assert_eq!(
            (info.name.as_str(), info.network_variant.as_str()),
            ("good", "latte")
        );
        // Pinned by the digest of the bytes loaded: the file's, as sha256sum prints it.
        assert_eq!(
            e.sha256(),
            sha256_file(&dir.path().join("good.net")).expect("readable")
        );
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        let bad = dir.path().join("bad.net");
        std::fs::write(&bad, &bytes).expect("write");
        let err = Engines::declare(&[EngineArg {
            name: "bad".into(),
            path: bad,
        }])
        .expect_err("damaged");
        assert!(
            matches!(&err, EngineError::Network { name, .. } if name == "bad")
                && err.to_string().contains("damaged"),
            "{err}"
        );
        // A program is still a program.
        let program = script(dir.path(), "p", "#!/bin/sh\n");
        let engines = Engines::declare(&[EngineArg {
            name: "p".into(),
            path: program,
        }])
        .expect("declared");
        assert!(engines
            .resolve("p", "")
            .expect("declared")
            .network()
            .is_none());
        assert_eq!(engines.infos()[0].network_variant, "");
    }

    #[test]
    fn refuses_duplicates_and_bad_files() {
        let dir = tempfile::tempdir().expect("dir");
        let path = script(dir.path(), "e", "x");
        let a = EngineArg {
            name: "e".into(),
            path: path.clone(),
        };
        assert!(matches!(
            Engines::declare(&[a.clone(), a.clone()]),
            Err(EngineError::Duplicate(n)) if n == "e"
        ));
        let missing = EngineArg {
            name: "m".into(),
            path: dir.path().join("nope"),
        };
        assert!(matches!(
            Engines::declare(&[missing]),
            Err(EngineError::Unreadable { .. })
        ));
        let directory = EngineArg {
            name: "d".into(),
            path: dir.path().to_path_buf(),
        };
        assert!(matches!(
            Engines::declare(&[directory]),
            Err(EngineError::NotAFile { .. })
        ));
        #[cfg(unix)]
        {
            let plain = dir.path().join("plain");
            std::fs::write(&plain, "x").expect("write");
            let plain = EngineArg {
                name: "p".into(),
                path: plain,
            };
            assert!(matches!(
                Engines::declare(&[plain]),
                Err(EngineError::NotExecutable { .. })
            ));
        }
        let many: Vec<EngineArg> = (0..=limits::ENGINES)
            .map(|i| EngineArg {
                name: format!("e{i}"),
                path: path.clone(),
            })
            .collect();
        assert!(matches!(
            Engines::declare(&many),
            Err(EngineError::TooMany { count }) if count == limits::ENGINES + 1
        ));
    }

    #[test]
    fn resolves_only_declared_names_and_pinned_digests() {
        let dir = tempfile::tempdir().expect("dir");
        let path = script(dir.path(), "e", "abc");
        let engines = Engines::declare(&[EngineArg {
            name: "e".into(),
            path,
        }])
        .expect("declared");
        assert_eq!(
            engines.resolve("f", ""),
            Err(EngineRefused::Undeclared("f".into()))
        );
        let digest = engines
            .resolve("e", "")
            .expect("declared")
            .sha256()
            .to_string();
        assert!(engines.resolve("e", &digest).is_ok());
        assert!(engines.resolve("e", &digest.to_uppercase()).is_ok());
        let other = "0".repeat(64);
        let err = engines.resolve("e", &other).expect_err("pinned elsewhere");
        let text = err.to_string();
        assert!(text.contains(&other) && text.contains(&digest), "{text}");
    }
}
