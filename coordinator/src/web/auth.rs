//! Who may read and who may act. Reading is open unless the coordinator was started with
//! `--http-read-token`; then any live token reads (as a bearer token, or as the password of
//! HTTP basic authentication so a browser can ask for it). Acting (pause, resume, stop,
//! exclude) needs an admin token in an `Authorization: Bearer` header, never from basic
//! authentication: a browser attaches basic credentials to cross-site form posts by itself,
//! but never a bearer header, so a forged cross-site request cannot carry it. Requests whose
//! `Origin` or `Sec-Fetch-Site` says they come from another site are refused as well.

use super::WebState;
use crate::store::Role;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No usable credentials for reading: the answer asks the browser for them.
    Unauthenticated(&'static str),
    /// No usable admin token for an action. No basic-authentication challenge: a browser
    /// would answer it with a login dialog, and actions never take basic credentials.
    NoAdminToken(&'static str),
    /// Credentials, but not enough.
    Forbidden(&'static str),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Unauthenticated(why) => (
                StatusCode::UNAUTHORIZED,
                [(
                    header::WWW_AUTHENTICATE,
                    "Basic realm=\"cluster\", charset=\"UTF-8\"",
                )],
                why,
            )
                .into_response(),
            Refusal::NoAdminToken(why) => (StatusCode::UNAUTHORIZED, why).into_response(),
            Refusal::Forbidden(why) => (StatusCode::FORBIDDEN, why).into_response(),
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    crate::auth::bearer_token(v)
}

fn basic_password(headers: &HeaderMap) -> Option<String> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = v.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(rest.trim())
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    Some(text.split_once(':')?.1.to_string())
}

/// May this request read?
pub(super) fn may_read(state: &WebState, headers: &HeaderMap) -> Result<(), Refusal> {
    if !state.config.read_requires_token {
        return Ok(());
    }
    let token = bearer(headers)
        .map(str::to_string)
        .or_else(|| basic_password(headers))
        .ok_or(Refusal::Unauthenticated(
            "a token is needed to read this dashboard",
        ))?;
    match state.tokens.lookup(&token) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(Refusal::Unauthenticated("unknown or revoked token")),
        Err(_) => Err(Refusal::Forbidden("token store unavailable")),
    }
}

/// Is this request from another site? Browsers send `Sec-Fetch-Site` and `Origin` on
/// cross-site requests; scripts and curl send neither, and are let through on their token.
fn cross_site(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        if !matches!(site, "same-origin" | "none") {
            return true;
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) {
        let host = headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let origin_host = origin
            .split_once("://")
            .map_or(origin, |(_, rest)| rest)
            .trim_end_matches('/');
        return origin == "null" || !origin_host.eq_ignore_ascii_case(host);
    }
    false
}

/// May this request act as an admin?
pub(super) fn may_act(state: &WebState, headers: &HeaderMap) -> Result<String, Refusal> {
    if cross_site(headers) {
        return Err(Refusal::Forbidden(
            "cross-site request refused (actions must come from this dashboard or a script)",
        ));
    }
    let token = bearer(headers).ok_or(Refusal::NoAdminToken(
        "an admin token is needed: send it as `Authorization: Bearer TOKEN`",
    ))?;
    match state.tokens.lookup(token) {
        Ok(Some(p)) if p.role == Role::Admin => Ok(p.name),
        Ok(Some(_)) => Err(Refusal::Forbidden("this token is not an admin token")),
        Ok(None) => Err(Refusal::NoAdminToken("unknown or revoked token")),
        Err(_) => Err(Refusal::Forbidden("token store unavailable")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(*k, v);
            }
        }
        h
    }

    #[test]
    fn cross_site_requests_are_recognised() {
        assert!(!cross_site(&headers(&[])));
        assert!(!cross_site(&headers(&[
            ("host", "a:1"),
            ("origin", "http://a:1")
        ])));
        assert!(cross_site(&headers(&[
            ("host", "a:1"),
            ("origin", "http://evil.example")
        ])));
        assert!(cross_site(&headers(&[("host", "a:1"), ("origin", "null")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "cross-site")])));
        assert!(cross_site(&headers(&[("sec-fetch-site", "same-site")])));
        assert!(!cross_site(&headers(&[("sec-fetch-site", "same-origin")])));
    }

    #[test]
    fn basic_and_bearer_credentials_are_read() {
        let b = base64::engine::general_purpose::STANDARD.encode("me:s3cret");
        assert_eq!(
            basic_password(&headers(&[("authorization", &format!("Basic {b}"))])).as_deref(),
            Some("s3cret")
        );
        assert_eq!(
            basic_password(&headers(&[("authorization", "Basic !!")])),
            None
        );
        assert_eq!(
            bearer(&headers(&[("authorization", "Bearer abc")])),
            Some("abc")
        );
        assert_eq!(
            bearer(&headers(&[("authorization", &format!("Basic {b}"))])),
            None
        );
    }
}
