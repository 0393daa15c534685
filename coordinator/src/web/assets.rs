//! The stylesheet and script, compiled into the binary: the dashboard loads nothing from
//! another host and works without network access.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

/// The stylesheet.
pub(super) const CSS: &str = include_str!("assets/dashboard.css");
/// The script.
pub(super) const JS: &str = include_str!("assets/dashboard.js");

/// `GET /assets/{file}`.
pub(super) async fn serve(Path(file): Path<String>) -> Response {
    let (kind, body) = match file.as_str() {
        "dashboard.css" => ("text/css; charset=utf-8", CSS),
        "dashboard.js" => ("text/javascript; charset=utf-8", JS),
        _ => return (StatusCode::NOT_FOUND, "no such asset").into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=300"),
        ],
        body,
    )
        .into_response()
}
