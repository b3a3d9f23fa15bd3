//! The HTTP decision model: any OpenAI-compatible `/v1/chat/completions` endpoint.
//!
//! `https` endpoints (OpenRouter and the like) go through `ureq` with rustls and no redirects;
//! plain `http` is only spoken to a loopback address (a local llama.cpp or Ollama), over a `std`
//! socket that also honours cancellation mid-read, so the prompt and the API key never cross a
//! network in clear text. Every call has one deadline (connect, write and read together); the
//! answer is read with a size bound and parsed strictly. The API key is sent in the
//! `Authorization` header and nowhere else: it is not in any error, and `Debug` redacts it.

use pcd_model::{DecisionProvider, DecisionSettings};
use pcd_picker::request::{Cancellation, DecisionModel, DecisionRequest, ModelError, INSTRUCTIONS};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The largest HTTP response read.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Why an HTTP scorer cannot be configured. No URL, model name or key is echoed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpScorerError {
    /// The base URL is not `https://host[:port][/path]` or `http://host[:port][/path]`.
    #[error(
        "{}",
        pcd_ui_text::endpoint_error(pcd_ui_text::EndpointProblem::BadUrl)
    )]
    BadUrl,
    /// Plain `http` to a host that is not loopback.
    #[error(
        "{}",
        pcd_ui_text::endpoint_error(pcd_ui_text::EndpointProblem::NotLoopback)
    )]
    NotLoopback,
    /// No model named.
    #[error(
        "{}",
        pcd_ui_text::endpoint_error(pcd_ui_text::EndpointProblem::NoModel)
    )]
    NoModel,
}

enum Endpoint {
    /// Plain http to a loopback socket.
    Loopback {
        address: SocketAddr,
        host_header: String,
    },
    /// `https://authority`.
    Tls { origin: String },
}

/// A configured endpoint.
pub struct HttpScorer {
    endpoint: Endpoint,
    path: String,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
}

impl std::fmt::Debug for HttpScorer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let origin = match &self.endpoint {
            Endpoint::Loopback { address, .. } => address.to_string(),
            Endpoint::Tls { origin } => origin.clone(),
        };
        f.debug_struct("HttpScorer")
            .field("endpoint", &origin)
            .field("path", &self.path)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl HttpScorer {
    /// Checks the configuration: `base_url` like `https://openrouter.ai/api/v1`,
    /// `http://127.0.0.1:8080` or `http://localhost:11434/v1` (`/v1/chat/completions`, or
    /// `/chat/completions` after `/v1`, is appended).
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        timeout: Duration,
    ) -> Result<HttpScorer, HttpScorerError> {
        if model.trim().is_empty() {
            return Err(HttpScorerError::NoModel);
        }
        let lower = base_url.to_ascii_lowercase();
        let (tls, rest) = if lower.starts_with("https://") {
            (true, &base_url[8..])
        } else if lower.starts_with("http://") {
            (false, &base_url[7..])
        } else {
            return Err(HttpScorerError::BadUrl);
        };
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let bad_char =
            |c: char| c == '@' || c.is_whitespace() || c.is_control() || c == '?' || c == '#';
        if authority.is_empty() || authority.contains(bad_char) || path.contains(bad_char) {
            return Err(HttpScorerError::BadUrl);
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (h, p) = v6.split_once(']').ok_or(HttpScorerError::BadUrl)?;
                (h, p.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let port: u16 = match port {
            Some(p) => p.parse().map_err(|_| HttpScorerError::BadUrl)?,
            None if tls => 443,
            None => 80,
        };
        if host.is_empty() {
            return Err(HttpScorerError::BadUrl);
        }
        let path = path.trim_end_matches('/');
        let path = if path.ends_with("/v1") {
            format!("{path}/chat/completions")
        } else {
            format!("{path}/v1/chat/completions")
        };
        if tls {
            return Ok(HttpScorer {
                endpoint: Endpoint::Tls {
                    origin: format!("https://{authority}"),
                },
                path,
                model: model.to_owned(),
                api_key,
                timeout,
            });
        }
        let loopback = host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        if !loopback {
            return Err(HttpScorerError::NotLoopback);
        }
        let address = (
            if host.eq_ignore_ascii_case("localhost") {
                "127.0.0.1"
            } else {
                host
            },
            port,
        )
            .to_socket_addrs()
            .map_err(|_| HttpScorerError::BadUrl)?
            .next()
            .ok_or(HttpScorerError::BadUrl)?;
        Ok(HttpScorer {
            endpoint: Endpoint::Loopback {
                address,
                host_header: authority.to_owned(),
            },
            path,
            model: model.to_owned(),
            api_key,
            timeout,
        })
    }

    /// From the `decision.*` settings: `baseUrl`, `model`, `timeoutMs`, and the key read from the
    /// environment variable named by `apiKeyEnv` through `env` (so tests and hosts choose where
    /// variables come from). `None` when the settings select no usable HTTP model.
    pub fn from_settings(
        decision: &DecisionSettings,
        env: impl Fn(&str) -> Option<String>,
    ) -> Option<Result<HttpScorer, HttpScorerError>> {
        if decision.provider != DecisionProvider::Http || !decision.has_model() {
            return None;
        }
        let key = decision
            .api_key_env
            .as_deref()
            .and_then(&env)
            .filter(|k| !k.is_empty());
        Some(HttpScorer::new(
            decision.base_url.as_deref().unwrap_or_default(),
            decision.model.as_deref().unwrap_or_default(),
            key,
            Duration::from_millis(decision.timeout_ms),
        ))
    }

    fn exchange(
        &self,
        body: &str,
        round_deadline: Instant,
        cancel: &Cancellation,
    ) -> Result<(u16, Vec<u8>), ModelError> {
        let deadline = round_deadline.min(Instant::now() + self.timeout);
        match &self.endpoint {
            Endpoint::Loopback {
                address,
                host_header,
            } => self.exchange_plain(address, host_header, body, deadline, cancel),
            Endpoint::Tls { origin } => self.exchange_tls(origin, body, deadline, cancel),
        }
    }

    fn exchange_tls(
        &self,
        origin: &str,
        body: &str,
        deadline: Instant,
        cancel: &Cancellation,
    ) -> Result<(u16, Vec<u8>), ModelError> {
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let left = deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(ModelError::TimedOut)?;
        // No redirects: the key must never follow a redirect to another host.
        let agent = ureq::AgentBuilder::new().timeout(left).redirects(0).build();
        let mut request = agent
            .post(&format!("{origin}{}", self.path))
            .set("Content-Type", "application/json")
            .set("Accept", "application/json");
        if let Some(key) = &self.api_key {
            request = request.set("Authorization", &format!("Bearer {key}"));
        }
        // ureq's errors can name the URL; none of them is passed on.
        let response = match request.send_string(body) {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(_) if Instant::now() >= deadline => return Err(ModelError::TimedOut),
            Err(_) => return Err(ModelError::Unavailable),
        };
        if cancel.is_cancelled() {
            return Err(ModelError::Cancelled);
        }
        let status = response.status();
        let mut bytes = Vec::new();
        response
            .into_reader()
            .take(MAX_RESPONSE_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|_| {
                if Instant::now() >= deadline {
                    ModelError::TimedOut
                } else {
                    ModelError::Unavailable
                }
            })?;
        if bytes.len() > MAX_RESPONSE_BYTES {
            return Err(ModelError::Unavailable);
        }
        Ok((status, bytes))
    }

    fn exchange_plain(
        &self,
        address: &SocketAddr,
        host_header: &str,
        body: &str,
        deadline: Instant,
        cancel: &Cancellation,
    ) -> Result<(u16, Vec<u8>), ModelError> {
        // Reads wait in short slices so a cancellation is seen within one slice.
        let slice = Duration::from_millis(50);
        let left = || {
            if cancel.is_cancelled() {
                return Err(ModelError::Cancelled);
            }
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or(ModelError::TimedOut)
        };
        let mut stream = TcpStream::connect_timeout(address, left()?).map_err(|e| {
            if e.kind() == std::io::ErrorKind::TimedOut {
                ModelError::TimedOut
            } else {
                ModelError::Unavailable
            }
        })?;
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nConnection: close\r\nContent-Length: {}\r\n",
            self.path,
            host_header,
            body.len()
        );
        if let Some(key) = &self.api_key {
            head.push_str("Authorization: Bearer ");
            head.push_str(key);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        stream
            .set_write_timeout(Some(left()?))
            .map_err(|_| ModelError::Unavailable)?;
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body.as_bytes()))
            .map_err(|_| ModelError::Unavailable)?;
        let mut response = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            stream
                .set_read_timeout(Some(left()?.min(slice)))
                .map_err(|_| ModelError::Unavailable)?;
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    response.extend_from_slice(&buf[..n]);
                    if response.len() > MAX_RESPONSE_BYTES {
                        return Err(ModelError::Unavailable);
                    }
                    if let Some(done) = complete(&response, false) {
                        return done;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return Err(ModelError::Unavailable),
            }
        }
        complete(&response, true).unwrap_or(Err(ModelError::Unavailable))
    }
}

/// The status and body once `response` holds a whole HTTP response (by `Content-Length`,
/// chunked encoding, or, at the end of the stream, everything after the headers); `None` while
/// more is needed. A response cut short at the end of the stream is an error.
fn complete(response: &[u8], eof: bool) -> Option<Result<(u16, Vec<u8>), ModelError>> {
    let end = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&response[..end]).ok();
    let Some(head) = head else {
        return Some(Err(ModelError::Unavailable));
    };
    let mut lines = head.split("\r\n");
    let status: Option<u16> = lines
        .next()
        .filter(|l| l.starts_with("HTTP/1."))
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok());
    let Some(status) = status else {
        return Some(Err(ModelError::Unavailable));
    };
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    let body = &response[end + 4..];
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return match dechunk(body) {
            Some(b) => Some(Ok((status, b))),
            None if eof => Some(Err(ModelError::Unavailable)),
            None => None,
        };
    }
    match header("content-length").map(|v| v.parse::<usize>()) {
        Some(Ok(n)) if body.len() >= n => Some(Ok((status, body[..n].to_vec()))),
        Some(Err(_)) => Some(Err(ModelError::Unavailable)),
        _ if !eof => None,
        Some(Ok(_)) => Some(Err(ModelError::Unavailable)),
        None => Some(Ok((status, body.to_vec()))),
    }
}

fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if body.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

impl HttpScorer {
    /// Answers a decision job: `requests` are the job's request bodies
    /// ([`crate::session::DecisionJob::requests`]), asked at most `concurrency` at a time, all
    /// before `deadline`. One answer per request, in order, for
    /// [`crate::session::Session::decided`]; a request that fails, times out or panics is
    /// answered with its [`ModelError`], never left out.
    pub fn answer_job(
        &self,
        requests: &[String],
        concurrency: usize,
        deadline: Instant,
    ) -> Vec<Result<String, ModelError>> {
        let cancel = Cancellation::default();
        let mut out = Vec::with_capacity(requests.len());
        for wave in requests.chunks(concurrency.max(1)) {
            let answered: Vec<Result<String, ModelError>> = std::thread::scope(|s| {
                let handles: Vec<_> = wave
                    .iter()
                    .map(|body| {
                        let request = DecisionRequest {
                            prompt: String::new(),
                            ids: Vec::new(),
                            body: body.clone(),
                        };
                        let cancel = &cancel;
                        s.spawn(move || self.answer(&request, deadline, cancel))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or(Err(ModelError::Unavailable)))
                    .collect()
            });
            out.extend(answered);
        }
        out
    }
}

impl DecisionModel for HttpScorer {
    fn answer(
        &self,
        request: &DecisionRequest,
        deadline: Instant,
        cancel: &Cancellation,
    ) -> Result<String, ModelError> {
        let payload = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": request.body},
            ],
        })
        .to_string();
        let (status, body) = self.exchange(&payload, deadline, cancel)?;
        match status {
            200 => {}
            401 | 403 | 404 => return Err(ModelError::Configuration),
            _ => return Err(ModelError::Unavailable),
        }
        // Strict: a JSON object whose first choice has a string message content. The content
        // itself is checked per candidate by `parse_answer`.
        let value: Value = serde_json::from_slice(&body).map_err(|_| ModelError::Unavailable)?;
        value
            .get("choices")
            .and_then(|c| c.get(0))
            .and_then(|c| c.get("message"))
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(ModelError::Unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pcd_picker::candidates::Candidate;
    use pcd_picker::request::{build_requests, parse_answer};
    use std::net::TcpListener;
    use std::sync::mpsc;
    use std::thread;

    const KEY: &str = "sk-test-SECRET-KEY-123";

    fn request() -> DecisionRequest {
        let c: Vec<Candidate> = (0..2)
            .map(|i| Candidate::tool(&format!("t{i}"), &format!("tool {i}"), i))
            .collect();
        build_requests("find it", &c, 50).remove(0)
    }

    /// A one-shot server on 127.0.0.1 that waits `delay`, then writes `response` (or nothing,
    /// holding the connection open, when `None`). Sends back what it received.
    fn serve(delay: Duration, response: Option<String>) -> (u16, mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            conn.set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = conn.read(&mut buf) {
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text[..end]
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    if got.len() >= end + 4 + len {
                        break;
                    }
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&got).into_owned());
            thread::sleep(delay);
            match response {
                Some(r) => {
                    let _ = conn.write_all(r.as_bytes());
                }
                None => thread::sleep(Duration::from_secs(3)),
            }
        });
        (port, rx)
    }

    fn ok(content: &str) -> String {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
            .to_string();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    fn scorer(port: u16, timeout_ms: u64) -> HttpScorer {
        HttpScorer::new(
            &format!("http://127.0.0.1:{port}/v1"),
            "local-model",
            Some(KEY.to_owned()),
            Duration::from_millis(timeout_ms),
        )
        .unwrap()
    }

    #[test]
    fn a_good_answer_is_parsed_and_checked_per_candidate() {
        let (port, rx) = serve(
            Duration::ZERO,
            Some(ok(
                r#"{"scores":[{"id":"c1","score":0.8},{"id":"c2","score":2}]}"#,
            )),
        );
        let r = request();
        let text = scorer(port, 2000)
            .answer(&r, far(), &Cancellation::default())
            .unwrap();
        assert_eq!(parse_answer(&r, &text).unwrap(), vec![(0, 0.8)]);
        let sent = rx.recv().unwrap();
        assert!(sent.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"));
        assert!(sent.contains(&format!("Authorization: Bearer {KEY}\r\n")));
        assert!(sent.contains("\"model\":\"local-model\""));
    }

    #[test]
    fn a_chunked_answer_is_read() {
        let body = json!({"choices": [{"message": {"content": "{\"scores\":[]}"}}]}).to_string();
        let (a, b) = body.split_at(10);
        let response = format!(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\n\r\n",
            a.len(),
            b.len()
        );
        let (port, _rx) = serve(Duration::ZERO, Some(response));
        assert_eq!(
            scorer(port, 2000)
                .answer(&request(), far(), &Cancellation::default())
                .unwrap(),
            "{\"scores\":[]}"
        );
    }

    #[test]
    fn a_late_answer_times_out() {
        let (port, _rx) = serve(Duration::from_millis(800), Some(ok("{}")));
        let start = Instant::now();
        assert_eq!(
            scorer(port, 300).answer(&request(), far(), &Cancellation::default()),
            Err(ModelError::TimedOut)
        );
        assert!(start.elapsed() < Duration::from_millis(750));
    }

    #[test]
    fn no_answer_at_all_times_out_and_a_closed_port_fails() {
        let (port, _rx) = serve(Duration::ZERO, None);
        assert_eq!(
            scorer(port, 300).answer(&request(), far(), &Cancellation::default()),
            Err(ModelError::TimedOut)
        );
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert_eq!(
            scorer(closed, 300).answer(&request(), far(), &Cancellation::default()),
            Err(ModelError::Unavailable)
        );
    }

    #[test]
    fn malformed_answers_fail_strictly() {
        for response in [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".to_owned(),
            ok_raw(r#"{"choices": []}"#),
            ok_raw(r#"{"choices": [{"message": {"content": 7}}]}"#),
            "garbage\r\n\r\n".to_owned(),
            "HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n".to_owned(),
        ] {
            let (port, _rx) = serve(Duration::ZERO, Some(response.clone()));
            assert_eq!(
                scorer(port, 2000).answer(&request(), far(), &Cancellation::default()),
                Err(ModelError::Unavailable),
                "{response}"
            );
        }
        let (port, _rx) = serve(
            Duration::ZERO,
            Some("HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n".into()),
        );
        assert_eq!(
            scorer(port, 2000).answer(&request(), far(), &Cancellation::default()),
            Err(ModelError::Configuration)
        );
    }

    fn ok_raw(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    #[test]
    fn the_round_deadline_and_cancellation_stop_a_request() {
        let (port, _rx) = serve(Duration::ZERO, None);
        let start = Instant::now();
        let deadline = Instant::now() + Duration::from_millis(200);
        let s = scorer(port, 10_000);
        assert_eq!(
            s.answer(&request(), deadline, &Cancellation::default()),
            Err(ModelError::TimedOut)
        );
        assert!(start.elapsed() < Duration::from_millis(1500));
        let (port, _rx) = serve(Duration::ZERO, None);
        let cancel = Cancellation::default();
        let c = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            c.cancel();
        });
        let start = Instant::now();
        assert_eq!(
            scorer(port, 10_000).answer(&request(), far(), &cancel),
            Err(ModelError::Cancelled)
        );
        assert!(start.elapsed() < Duration::from_millis(1500));
    }

    #[test]
    fn https_to_a_server_that_does_not_speak_tls_fails_closed() {
        let (port, _rx) = serve(Duration::ZERO, Some(ok("{}")));
        let s = HttpScorer::new(
            &format!("https://127.0.0.1:{port}/v1"),
            "m",
            Some(KEY.to_owned()),
            Duration::from_secs(2),
        )
        .unwrap();
        assert_eq!(
            s.answer(&request(), far(), &Cancellation::default()),
            Err(ModelError::Unavailable)
        );
    }

    #[test]
    fn settings_name_the_endpoint_and_the_key_variable() {
        let mut d = DecisionSettings {
            provider: DecisionProvider::Http,
            base_url: Some("http://127.0.0.1:8080/v1".into()),
            model: Some("qwen".into()),
            api_key_env: Some("MY_KEY".into()),
            ..DecisionSettings::default()
        };
        let env = |name: &str| (name == "MY_KEY").then(|| KEY.to_owned());
        let s = HttpScorer::from_settings(&d, env).unwrap().unwrap();
        assert_eq!(s.api_key.as_deref(), Some(KEY));
        assert_eq!(s.model, "qwen");
        assert_eq!(s.timeout, Duration::from_millis(d.timeout_ms));
        d.provider = DecisionProvider::Embedded;
        assert!(HttpScorer::from_settings(&d, env).is_none());
        d.provider = DecisionProvider::Http;
        d.model = None;
        assert!(
            HttpScorer::from_settings(&d, env).is_none(),
            "no model: nothing is scored"
        );
    }

    #[test]
    fn only_loopback_http_is_accepted_and_nothing_secret_is_echoed() {
        let t = Duration::from_secs(1);
        let key = || Some(KEY.to_owned());
        let remote = HttpScorer::new("https://openrouter.ai/api/v1", "m", key(), t).unwrap();
        assert_eq!(remote.path, "/api/v1/chat/completions");
        assert!(!format!("{remote:?}").contains(KEY));
        assert_eq!(
            HttpScorer::new("https://", "m", key(), t).unwrap_err(),
            HttpScorerError::BadUrl
        );
        assert_eq!(
            HttpScorer::new("http://example.com/v1", "m", key(), t).unwrap_err(),
            HttpScorerError::NotLoopback
        );
        assert_eq!(
            HttpScorer::new("http://10.0.0.1:8080", "m", key(), t).unwrap_err(),
            HttpScorerError::NotLoopback
        );
        assert_eq!(
            HttpScorer::new("http://user:pw@127.0.0.1", "m", key(), t).unwrap_err(),
            HttpScorerError::BadUrl
        );
        assert_eq!(
            HttpScorer::new("ftp://127.0.0.1", "m", key(), t).unwrap_err(),
            HttpScorerError::BadUrl
        );
        assert_eq!(
            HttpScorer::new("http://127.0.0.1", " ", key(), t).unwrap_err(),
            HttpScorerError::NoModel
        );
        let s = HttpScorer::new("http://localhost:11434", "m", key(), t).unwrap();
        assert_eq!(s.path, "/v1/chat/completions");
        assert!(HttpScorer::new("http://[::1]:8080/v1", "m", key(), t).is_ok());
        assert!(!format!("{s:?}").contains(KEY));
        for e in [HttpScorerError::BadUrl, HttpScorerError::NotLoopback] {
            assert!(!e.to_string().contains(KEY));
        }
    }
}
