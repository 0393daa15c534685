//! Bearer-token authentication as a tonic interceptor.
//!
//! Tokens are stored hashed (SHA-256). The interceptor looks the hash up in the database, on
//! every call, through its own read connection: a token added or revoked with `coordinator
//! token add | revoke` while the server runs counts from the next call (an indexed lookup of
//! a few microseconds; a cache would keep a revoked token alive). It checks the role the
//! service needs and puts the caller's [`Principal`] into the request extensions.

use crate::error::CoreError;
use crate::store::{self, Principal, Role};
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tonic::{Request, Status};

/// Token lookups shared by the interceptors.
#[derive(Clone)]
pub struct TokenBook {
    conn: Arc<Mutex<Connection>>,
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
        })
    }

    /// Who holds `token`, if anyone (revoked tokens are no one).
    pub fn lookup(&self, token: &str) -> Result<Option<Principal>, CoreError> {
        let conn = self.conn.lock().map_err(poisoned)?;
        Ok(store::find_token(&conn, token)?)
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
        let token = header.to_str().ok().and_then(bearer_token).ok_or_else(|| {
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

/// The token of an `Authorization` value: the scheme is case-insensitive (RFC 9110).
pub fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, rest) = value.trim_start().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim();
    (!token.is_empty() && token.len() <= 256).then_some(token)
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

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_scheme_is_case_insensitive() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer abc"), Some("abc"));
        assert_eq!(bearer_token("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token("Bearerabc"), None);
    }
}
