//! Bearer-token authentication as a tonic interceptor.
//!
//! Tokens are stored hashed (SHA-256). The interceptor looks the hash up (in a cache, then in
//! the database through its own read connection, so tokens added with `coordinator token add`
//! while the server runs work at once), checks the role the service needs, and puts the
//! caller's [`Principal`] into the request extensions for the handler.

use crate::error::CoreError;
use crate::store::{self, Principal, Role};
use rusqlite::Connection;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tonic::{Request, Status};

/// Token lookups shared by the interceptors.
#[derive(Clone)]
pub struct TokenBook {
    conn: Arc<Mutex<Connection>>,
    cache: Arc<Mutex<HashMap<String, Principal>>>,
}

impl std::fmt::Debug for TokenBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenBook")
    }
}

impl TokenBook {
    /// Open a read connection to the database (which must exist and be migrated).
    pub fn open(path: &Path) -> Result<Self, CoreError> {
        let conn = store::open(path)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            cache: Arc::new(Mutex::new(HashMap::new())),
        })
    }

    /// Who holds `token`, if anyone.
    pub fn lookup(&self, token: &str) -> Result<Option<Principal>, CoreError> {
        let hash = store::hash_token(token);
        if let Some(p) = self.cache.lock().map_err(poisoned)?.get(&hash) {
            return Ok(Some(p.clone()));
        }
        let found = {
            let conn = self.conn.lock().map_err(poisoned)?;
            store::find_token(&conn, token)?
        };
        if let Some(p) = &found {
            self.cache.lock().map_err(poisoned)?.insert(hash, p.clone());
        }
        Ok(found)
    }

    /// An interceptor admitting only tokens of `role`.
    pub fn interceptor(
        &self,
        role: Role,
    ) -> impl FnMut(Request<()>) -> Result<Request<()>, Status> + Clone {
        let book = self.clone();
        move |mut req: Request<()>| {
            let principal = book.check(&req, role).map_err(Status::from)?;
            req.extensions_mut().insert(principal);
            Ok(req)
        }
    }

    fn check(&self, req: &Request<()>, role: Role) -> Result<Principal, CoreError> {
        let header = req
            .metadata()
            .get("authorization")
            .ok_or_else(|| CoreError::Unauthenticated("missing bearer token".into()))?;
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                CoreError::Unauthenticated(
                    "malformed authorization header (expected 'Bearer <token>')".into(),
                )
            })?;
        let principal = self
            .lookup(token)?
            .ok_or_else(|| CoreError::Unauthenticated("unknown token".into()))?;
        if principal.role != role {
            return Err(CoreError::PermissionDenied(format!(
                "a {} token cannot call the {} service",
                principal.role.as_str(),
                role.as_str()
            )));
        }
        Ok(principal)
    }
}

fn poisoned<T>(_: std::sync::PoisonError<T>) -> CoreError {
    CoreError::Internal("token cache lock poisoned".into())
}

/// The caller of a request (set by the interceptor).
pub fn principal<T>(req: &Request<T>) -> Result<Principal, Status> {
    req.extensions()
        .get::<Principal>()
        .cloned()
        .ok_or_else(|| Status::unauthenticated("no caller identity"))
}
