//! Pi's per-server validation (`validateMcpServerConfig`), reimplemented for the accept/reject
//! decision only: the reader needs to know whether Pi keeps an entry, never why in words.
//!
//! Pi 1.0 to 1.4 check the fields in one order and 1.5+ in another (validation moved to
//! `@earendil-works/pi-mcp`), but every field failure is the same `invalid_server` code, so only
//! the accepted set matters; it is the same in every version except that 1.6 also accepts
//! `oauth.clientRegistration: "auto"`.

use crate::json::{JsString, Object, Value};
use crate::version::PiVersion;
use url::Url;

/// Why Pi refuses a server entry, as a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The name breaks `/^[A-Za-z0-9_-]+$/`.
    InvalidName,
    /// The entry is not a non-null, non-array object.
    NotObject,
    /// A field fails Pi's checks, or the entry defines neither a stdio nor an HTTP server.
    InvalidServer,
}

const EXPOSURES: [&str; 4] = ["codemode", "deferred", "direct", "hidden"];
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Pi's server-name rule: ASCII letters, digits, `_` and `-`, at least one, no maximum.
pub(crate) fn is_valid_name(name: &[u8]) -> bool {
    !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// Whether Pi's `validateMcpServerConfig(name, raw)` accepts the entry.
pub(crate) fn validate(name: &JsString, raw: &Value, version: PiVersion) -> Result<(), Refusal> {
    if !is_valid_name(name.as_bytes()) {
        return Err(Refusal::InvalidName);
    }
    let Some(entry) = raw.as_object() else {
        return Err(Refusal::NotObject);
    };
    check_fields(entry, version).ok_or(Refusal::InvalidServer)
}

/// `Some(())` when valid. Written as a chain of checks, in Pi 1.3's order for readability.
fn check_fields(entry: &Object, version: PiVersion) -> Option<()> {
    if let Some(exposure) = entry.get("exposure") {
        is_exposure(exposure).then_some(())?;
    }
    if let Some(tool_exposure) = entry.get("toolExposure") {
        let map = tool_exposure.as_object()?;
        map.entries().all(|(_, v)| is_exposure(v)).then_some(())?;
    }
    if let Some(enabled) = entry.get("enabled") {
        matches!(enabled, Value::Bool(_)).then_some(())?;
    }
    if let Some(description) = entry.get("description") {
        matches!(description, Value::String(_)).then_some(())?;
    }
    if let Some(timeout) = entry.get("timeout") {
        // `1e400` parses to infinity, which is > 0 and accepted, as in JavaScript.
        matches!(timeout, Value::Number(n) if *n > 0.0).then_some(())?;
    }
    let ty = entry.get("type");
    if ty.is_some_and(|t| t.is_str("sse")) {
        return None;
    }
    let ty_is = |allowed: &[&str]| match ty {
        None => true,
        Some(t) => allowed.iter().any(|a| t.is_str(a)),
    };
    if let Some(Value::String(url)) = entry.get("url") {
        if ty_is(&["http", "streamable-http"]) {
            return check_http(entry, url, version);
        }
    }
    if let Some(Value::String(_)) = entry.get("command") {
        if ty_is(&["stdio"]) {
            return check_stdio(entry);
        }
    }
    None
}

/// An exposure value after Pi resolves the `codemode-deferred` alias.
fn is_exposure(value: &Value) -> bool {
    value.is_str("codemode-deferred") || EXPOSURES.iter().any(|e| value.is_str(e))
}

fn is_string_record(value: &Value) -> bool {
    value
        .as_object()
        .is_some_and(|o| o.entries().all(|(_, v)| matches!(v, Value::String(_))))
}

/// WHATWG URL parsing, as `URL.canParse` and `new URL` do.
fn parse_url(s: &JsString) -> Option<Url> {
    Url::parse(&s.to_lossy()).ok()
}

/// `URL.prototype.hostname`: the host as serialized (IPv6 in brackets), empty when there is none.
fn hostname(url: &Url) -> &str {
    url.host_str().unwrap_or("")
}

fn is_loopback_host(url: &Url) -> bool {
    LOOPBACK_HOSTS.contains(&hostname(url))
}

/// What the HTTP branch needs to know about a server's `url`: whether it is `https:`, and
/// whether its host is a loopback name. `None` when it is not an `http:`/`https:` URL.
fn server_url(url: &JsString) -> Option<(bool, bool)> {
    if let Some(facts) = simple_http_url(url.as_bytes()) {
        return Some(facts);
    }
    let parsed = parse_url(url)?;
    let https = match parsed.scheme() {
        "https" => true,
        "http" => false,
        _ => return None,
    };
    Some((https, is_loopback_host(&parsed)))
}

/// A fast path for the common shape `http(s)://host[:port][/path]` where the WHATWG parser is
/// certain to accept the URL and keep the host as written: lowercase ASCII letters, digits and
/// inner `-` in non-empty labels, no IDNA (`xn--`) label, a last label that is not a number (so
/// no IPv4 parsing), a port of at most 65535, and a path of unreserved characters and `/` only.
/// Anything else goes to the full parser.
fn simple_http_url(url: &[u8]) -> Option<(bool, bool)> {
    let (https, rest) = if let Some(rest) = url.strip_prefix(b"https://") {
        (true, rest)
    } else {
        (false, url.strip_prefix(b"http://")?)
    };
    let host_end = rest
        .iter()
        .position(|&b| b == b':' || b == b'/')
        .unwrap_or(rest.len());
    let (host, mut tail) = rest.split_at(host_end);
    let mut last = &b""[..];
    for label in host.split(|&b| b == b'.') {
        let ok = !label.is_empty()
            && label
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && label.first() != Some(&b'-')
            && label.last() != Some(&b'-')
            && !label.starts_with(b"xn--");
        if !ok {
            return None;
        }
        last = label;
    }
    let numeric = last.iter().all(u8::is_ascii_digit)
        || (last.starts_with(b"0x") && last[2..].iter().all(u8::is_ascii_hexdigit));
    if numeric {
        return None;
    }
    if let Some(port_and_path) = tail.strip_prefix(b":") {
        let digits = port_and_path
            .iter()
            .position(|&b| !b.is_ascii_digit())
            .unwrap_or(port_and_path.len());
        let port = std::str::from_utf8(&port_and_path[..digits]).ok()?;
        if port.is_empty() || port.len() > 5 || port.parse::<u32>().ok()? > 65535 {
            return None;
        }
        tail = &port_and_path[digits..];
    }
    let path_ok = tail.is_empty()
        || (tail[0] == b'/'
            && tail
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'~')));
    path_ok.then_some((https, host == b"localhost"))
}

fn check_http(entry: &Object, url: &JsString, version: PiVersion) -> Option<()> {
    let (https, loopback) = server_url(url)?;
    if let Some(headers) = entry.get("headers") {
        is_string_record(headers).then_some(())?;
    }
    if let Some(oauth) = entry.get("oauth") {
        check_oauth(oauth, version)?;
    }
    if let Some(auth) = entry.get("auth") {
        let provider = auth.as_object()?.get("provider")?.as_js_str()?;
        (!provider.is_empty()).then_some(())?;
        (https || loopback).then_some(())?;
    }
    Some(())
}

fn check_stdio(entry: &Object) -> Option<()> {
    if let Some(args) = entry.get("args") {
        match args {
            Value::Array(items) => items
                .iter()
                .all(|a| matches!(a, Value::String(_)))
                .then_some(())?,
            _ => return None,
        }
    }
    if let Some(env) = entry.get("env") {
        is_string_record(env).then_some(())?;
    }
    if let Some(cwd) = entry.get("cwd") {
        matches!(cwd, Value::String(_)).then_some(())?;
    }
    Some(())
}

/// Pi's `isLoopbackRedirectUri`: an `http:` URL on a loopback host with no query or fragment
/// (an empty `?` or `#` counts as none, as `URL.search`/`URL.hash` report them).
fn loopback_redirect(value: &JsString) -> Option<Url> {
    let url = parse_url(value)?;
    let ok = url.scheme() == "http"
        && is_loopback_host(&url)
        && url.query().is_none_or(str::is_empty)
        && url.fragment().is_none_or(str::is_empty);
    ok.then_some(url)
}

fn check_oauth(value: &Value, version: PiVersion) -> Option<()> {
    let oauth = value.as_object()?;
    let is_string_or_absent =
        |key: &str| oauth.get(key).is_none_or(|v| matches!(v, Value::String(_)));
    is_string_or_absent("clientId").then_some(())?;
    is_string_or_absent("clientSecret").then_some(())?;
    let port = match oauth.get("callbackPort") {
        None => None,
        Some(Value::Number(n)) if n.fract() == 0.0 && (1.0..=65535.0).contains(n) => Some(*n),
        Some(_) => return None,
    };
    let mut callback = None;
    if let Some(cb) = oauth.get("callbackUrl") {
        let url = loopback_redirect(cb.as_js_str()?)?;
        if let (Some(url_port), Some(port)) = (url.port(), port) {
            (f64::from(url_port) == port).then_some(())?;
        }
        callback = Some(url);
    }
    is_string_or_absent("scope").then_some(())?;
    if let Some(name) = oauth.get("clientName") {
        let name = name.as_js_str()?;
        (!is_js_blank(name)).then_some(())?;
    }
    if let Some(registration) = oauth.get("clientRegistration") {
        let plain = registration.is_str("dcr")
            || (version.accepts_auto_client_registration() && registration.is_str("auto"));
        if !plain {
            registration.is_str("cimd").then_some(())?;
            (!oauth.contains_key("clientId") && !oauth.contains_key("clientName")).then_some(())?;
            if let Some(cb) = &callback {
                (hostname(cb) != "[::1]" && cb.path() == "/callback").then_some(())?;
            }
        }
    }
    if let Some(metadata) = oauth.get("authServerMetadataUrl") {
        let url = parse_url(metadata.as_js_str()?)?;
        (url.scheme() == "https" || (url.scheme() == "http" && is_loopback_host(&url)))
            .then_some(())?;
    }
    Some(())
}

/// Whether `String.prototype.trim()` would leave nothing: JavaScript's white space and line
/// terminators, which differ from Rust's `char::is_whitespace` (U+FEFF yes, U+0085 no).
fn is_js_blank(s: &JsString) -> bool {
    s.to_lossy().chars().all(|c| {
        matches!(
            c,
            '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

    fn ok(entry: &str) -> bool {
        ok_in(entry, PiVersion::NEWEST)
    }

    fn ok_in(entry: &str, version: PiVersion) -> bool {
        let name = match parse("\"ok\"").unwrap() {
            Value::String(s) => s,
            _ => unreachable!(),
        };
        validate(&name, &parse(entry).unwrap(), version).is_ok()
    }

    #[test]
    fn names() {
        for good in ["a", "A-b_9", &"s".repeat(200), "__proto__", "constructor"] {
            assert!(is_valid_name(good.as_bytes()), "{good}");
        }
        for bad in ["", "bad.name", "with space", "ünï", "a/b", "a\n"] {
            assert!(!is_valid_name(bad.as_bytes()), "{bad:?}");
        }
    }

    #[test]
    fn shapes() {
        assert!(ok(r#"{"command":"x"}"#));
        assert!(ok(r#"{"url":"https://e.example/mcp"}"#));
        assert!(
            ok(r#"{"url":"https://e.example","command":"x"}"#),
            "url wins, no type"
        );
        assert!(ok(r#"{"type":"stdio","command":"x"}"#));
        assert!(ok(r#"{"type":"streamable-http","url":"http://e.example"}"#));
        assert!(!ok(r#"{"type":"http","command":"x"}"#));
        assert!(!ok(r#"{"type":"sse","url":"https://e.example"}"#));
        assert!(!ok(r#"{"type":"bogus","url":"https://e.example"}"#));
        assert!(
            !ok(r#"{"url":"ftp://e.example","command":"x"}"#),
            "no fallback to command"
        );
        assert!(!ok(r#"{"url":"not a url"}"#));
        assert!(!ok(r#"{}"#));
        assert!(!ok(r#"{"command":null}"#));
        assert!(!ok(r#"{"command":1}"#));
        let name = JsString::default();
        assert_eq!(
            validate(&name, &parse("{}").unwrap(), PiVersion::NEWEST),
            Err(Refusal::InvalidName)
        );
    }

    #[test]
    fn common_fields() {
        assert!(ok(r#"{"command":"x","exposure":"codemode-deferred"}"#));
        assert!(!ok(r#"{"command":"x","exposure":"bogus"}"#));
        assert!(ok(
            r#"{"command":"x","toolExposure":{"get_*":"direct","b":"codemode-deferred"}}"#
        ));
        assert!(!ok(r#"{"command":"x","toolExposure":{"a":"nope"}}"#));
        assert!(!ok(r#"{"command":"x","toolExposure":[]}"#));
        assert!(!ok(r#"{"command":"x","enabled":"yes"}"#));
        assert!(!ok(r#"{"command":"x","description":1}"#));
        assert!(ok(r#"{"command":"x","timeout":1e400}"#));
        assert!(!ok(r#"{"command":"x","timeout":0}"#));
        assert!(!ok(r#"{"command":"x","timeout":"5"}"#));
        assert!(ok(r#"{"command":"x","unknown":{"kept":"ignored"}}"#));
    }

    #[test]
    fn stdio_fields() {
        assert!(ok(
            r#"{"command":"x","args":["a"],"env":{"K":"v"},"cwd":"/"}"#
        ));
        assert!(!ok(r#"{"command":"x","args":"a"}"#));
        assert!(!ok(r#"{"command":"x","args":[1]}"#));
        assert!(!ok(r#"{"command":"x","env":{"K":1}}"#));
        assert!(!ok(r#"{"command":"x","cwd":1}"#));
    }

    #[test]
    fn http_fields() {
        assert!(ok(r#"{"url":"https://e.example","headers":{"A":"b"}}"#));
        assert!(!ok(r#"{"url":"https://e.example","headers":{"A":1}}"#));
        assert!(ok(r#"{"url":"https://e.example","auth":{"provider":"p"}}"#));
        assert!(ok(
            r#"{"url":"http://localhost:3000","auth":{"provider":"p"}}"#
        ));
        assert!(ok(r#"{"url":"http://[::1]/","auth":{"provider":"p"}}"#));
        assert!(!ok(r#"{"url":"http://e.example","auth":{"provider":"p"}}"#));
        assert!(!ok(r#"{"url":"https://e.example","auth":{"provider":""}}"#));
        assert!(!ok(r#"{"url":"https://e.example","auth":"p"}"#));
    }

    #[test]
    fn oauth_fields() {
        let with = |oauth: &str| format!(r#"{{"url":"https://e.example","oauth":{oauth}}}"#);
        assert!(ok(&with(
            r#"{"clientId":"a","clientSecret":"b","scope":"s"}"#
        )));
        assert!(!ok(&with(r#"[]"#)));
        assert!(!ok(&with(r#"{"clientId":1}"#)));
        assert!(ok(&with(r#"{"callbackPort":8080}"#)));
        assert!(ok(&with(r#"{"callbackPort":8080.0}"#)));
        assert!(!ok(&with(r#"{"callbackPort":0}"#)));
        assert!(!ok(&with(r#"{"callbackPort":65536}"#)));
        assert!(!ok(&with(r#"{"callbackPort":1.5}"#)));
        assert!(ok(&with(
            r#"{"callbackUrl":"http://localhost:8080/cb","callbackPort":8080}"#
        )));
        assert!(!ok(&with(
            r#"{"callbackUrl":"http://localhost:8080/cb","callbackPort":9090}"#
        )));
        assert!(ok(&with(r#"{"callbackUrl":"http://127.0.0.1/cb?"}"#)));
        assert!(!ok(&with(r#"{"callbackUrl":"http://127.0.0.1/cb?a=1"}"#)));
        assert!(!ok(&with(r#"{"callbackUrl":"http://127.0.0.1/cb#x"}"#)));
        assert!(!ok(&with(r#"{"callbackUrl":"https://localhost/cb"}"#)));
        assert!(!ok(&with(r#"{"callbackUrl":"http://e.example/cb"}"#)));
        assert!(ok(&with(r#"{"clientName":"n"}"#)));
        assert!(!ok(&with(r#"{"clientName":" \ufeff\u3000"}"#)));
        assert!(
            ok(&with(r#"{"clientName":"\u0085"}"#)),
            "U+0085 is not JavaScript white space"
        );
        assert!(ok(&with(r#"{"clientRegistration":"dcr"}"#)));
        assert!(ok(&with(r#"{"clientRegistration":"cimd"}"#)));
        assert!(ok(&with(
            r#"{"clientRegistration":"cimd","callbackUrl":"http://localhost:1/callback"}"#
        )));
        assert!(!ok(&with(
            r#"{"clientRegistration":"cimd","callbackUrl":"http://[::1]:1/callback"}"#
        )));
        assert!(!ok(&with(
            r#"{"clientRegistration":"cimd","callbackUrl":"http://localhost:1/cb"}"#
        )));
        assert!(!ok(&with(
            r#"{"clientRegistration":"cimd","clientId":"x"}"#
        )));
        assert!(!ok(&with(r#"{"clientRegistration":"other"}"#)));
        assert!(ok(&with(
            r#"{"authServerMetadataUrl":"https://a.example/.well-known"}"#
        )));
        assert!(ok(&with(
            r#"{"authServerMetadataUrl":"http://localhost/x"}"#
        )));
        assert!(!ok(&with(
            r#"{"authServerMetadataUrl":"http://a.example/x"}"#
        )));
    }

    #[test]
    fn the_url_fast_path_agrees_with_the_full_parser() {
        let cases = [
            "https://h.example/mcp",
            "http://localhost:3000/mcp",
            "https://a-b.c-d.example:443/x/y_z~",
            "http://localhost",
            "https://x.example:65535",
            "https://x.example:65536",
            "https://x.example:",
            "https://1.2.3.4/x",
            "http://127.0.0.1:8/x",
            "https://h.0x7f/x",
            "https://h.12/x",
            "https://xn--nxasmq6b.example/",
            "https://xn--a.example/",
            "https://-a.example/",
            "https://a-.example/",
            "https://a..b/",
            "https://A.example/",
            "https://h.example/a%20b",
            "https://h.example/?q",
            "https://h.example#f",
            "https://h.example/a b",
            "http:/h.example",
            "ftp://h.example",
            "https://",
            "https://h.example.",
        ];
        for case in cases {
            let full = Url::parse(case).ok().and_then(|u| {
                let https = match u.scheme() {
                    "https" => true,
                    "http" => false,
                    _ => return None,
                };
                Some((https, is_loopback_host(&u)))
            });
            if let Some(fast) = simple_http_url(case.as_bytes()) {
                assert_eq!(Some(fast), full, "{case}");
            }
        }
        assert!(simple_http_url(b"https://h.example/mcp").is_some());
        assert!(simple_http_url(b"http://localhost:3000/mcp").is_some());
        assert!(simple_http_url(b"https://h.0x7f/x").is_none());
        assert!(simple_http_url(b"https://xn--a.example/").is_none());
    }

    #[test]
    fn auto_client_registration_is_new_in_1_6() {
        let entry = r#"{"url":"https://e.example","oauth":{"clientRegistration":"auto"}}"#;
        assert!(ok_in(entry, PiVersion::parse("1.6.0").unwrap()));
        assert!(!ok_in(entry, PiVersion::parse("1.5.2").unwrap()));
        assert!(!ok_in(entry, PiVersion::parse("1.3.0").unwrap()));
    }
}
