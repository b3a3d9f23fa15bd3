//! The HTTP decision model against real loopback servers, through the `Session`, answered the
//! way the addon answers decision jobs (`HttpScorer::answer_job`).
//!
//! - Faults: a model that refuses the connection, never answers, answers after the deadline,
//!   trickles its answer past the deadline, resets the connection or cuts its answer short
//!   adds nothing: no entry, the branch state, every verdict and the active set stay as they
//!   were, and the person is told. Each late answer would have granted everything, so a
//!   deadline that did not hold would show.
//! - Privacy: a server records every byte the scorer sends for an inventory and a branch with
//!   planted secrets (schemas, annotations, namespace instructions, paths, assistant text, tool
//!   arguments and results, an older prompt, and the user's text beyond the bound); none of them
//!   is sent, and the API key is sent only in the `Authorization` header.

use context_decisions::http_scorer::HttpScorer;
use context_decisions::session::{
    BoundaryEvent, BoundaryKind, BranchRead, DecisionJob, Effect, InventoryRead, Session,
    SettingsRead, StartEvent, StartReason,
};
use pcd_gate::ProjectRead;
use pcd_ledger::CUSTOM_TYPE;
use pcd_model::{Cadence, DecisionProvider, Mode, Settings, ToolInfo};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const KEY: &str = "sk-or-v1-PLANTED-KEY-91c2";
const KEY_ENV: &str = "PCD_TEST_DECISION_KEY";

/// What the server does with a connection.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Behaviour {
    /// Answers every candidate of the request with this score.
    Answer(f64),
    /// Answers 0.95 for the candidates that mention charts, 0 for the others.
    Charts,
    /// Reads the request and never answers; keeps the connection until the client leaves.
    Silent,
    /// Reads the request, waits until the client has given up (it closed its side), then
    /// answers with a score of 1 for everything.
    AfterTheClientLeft,
    /// Sends the head of an answer granting everything at once, then its body one byte every
    /// 20 ms (seconds in all): each read returns something, only the whole exchange is late.
    Trickle,
    /// Reads part of the request and closes with the rest unread: the kernel resets the
    /// connection.
    Reset,
    /// Reads the request, sends half of an answer granting everything, and closes.
    CutShort,
}

/// A loopback model server: its behaviour can change between requests; every request it
/// received is kept, bytes as sent.
struct Server {
    port: u16,
    behaviour: Arc<Mutex<Behaviour>>,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Server {
    fn start(behaviour: Behaviour) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let behaviour = Arc::new(Mutex::new(behaviour));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (b, s) = (behaviour.clone(), seen.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (b, s) = (b.clone(), s.clone());
                std::thread::spawn(move || handle(conn, *b.lock().unwrap(), &s));
            }
        });
        Server {
            port,
            behaviour,
            seen,
        }
    }

    fn set(&self, behaviour: Behaviour) {
        *self.behaviour.lock().unwrap() = behaviour;
    }

    fn requests(&self) -> Vec<Vec<u8>> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one whole HTTP request (head and `Content-Length` body).
fn read_request(conn: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + len {
                return got;
            }
        }
    }
}

/// The answer a model gives to `request` (the scorer's HTTP request): `score` for every
/// candidate of its user message (`None`: 0.95 for the ones that mention charts, 0 otherwise).
fn answer_body(request: &[u8], score: Option<f64>) -> String {
    let end = request.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let payload: Value = serde_json::from_slice(&request[end + 4..]).unwrap();
    let user: Value =
        serde_json::from_str(payload["messages"][1]["content"].as_str().unwrap()).unwrap();
    let scores: Vec<Value> = user["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let charts = if c.to_string().contains("chart") {
                0.95
            } else {
                0.0
            };
            json!({"id": c["id"], "score": score.unwrap_or(charts)})
        })
        .collect();
    let content = json!({ "scores": scores }).to_string();
    json!({"choices": [{"message": {"role": "assistant", "content": content}}]}).to_string()
}

fn head(body_len: usize) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {body_len}\r\n\r\n"
    )
}

/// Waits until the client closes its side of the connection.
fn until_the_client_leaves(conn: &mut TcpStream) {
    let mut buf = [0u8; 64];
    while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
}

fn handle(mut conn: TcpStream, behaviour: Behaviour, seen: &Mutex<Vec<Vec<u8>>>) {
    if behaviour == Behaviour::Reset {
        let mut first = [0u8; 16];
        let _ = conn.read_exact(&mut first);
        seen.lock().unwrap().push(first.to_vec());
        return; // dropped with unread bytes: a reset
    }
    let request = read_request(&mut conn);
    seen.lock().unwrap().push(request.clone());
    match behaviour {
        Behaviour::Answer(_) | Behaviour::Charts => {
            let score = match behaviour {
                Behaviour::Answer(score) => Some(score),
                _ => None,
            };
            let body = answer_body(&request, score);
            let _ = conn.write_all(format!("{}{body}", head(body.len())).as_bytes());
        }
        Behaviour::Silent => until_the_client_leaves(&mut conn),
        Behaviour::AfterTheClientLeft => {
            until_the_client_leaves(&mut conn);
            let body = answer_body(&request, Some(1.0));
            let _ = conn.write_all(format!("{}{body}", head(body.len())).as_bytes());
        }
        Behaviour::Trickle => {
            let body = answer_body(&request, Some(1.0));
            let _ = conn.write_all(head(body.len()).as_bytes());
            for byte in body.as_bytes() {
                std::thread::sleep(Duration::from_millis(20));
                if conn.write_all(&[*byte]).is_err() {
                    return;
                }
            }
        }
        Behaviour::CutShort => {
            let body = answer_body(&request, Some(1.0));
            let half = &body[..body.len() / 2];
            let _ = conn.write_all(format!("{}{half}", head(body.len())).as_bytes());
        }
        Behaviour::Reset => unreachable!(),
    }
}

fn example() -> Vec<ToolInfo> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/inventory.json");
    context_decisions::inventory::read_inventory_file(&path)
        .unwrap()
        .tools
}

fn http_settings(port: u16, mode: Mode, timeout_ms: u64) -> Settings {
    let mut s = Settings::default();
    s.tools.enabled = true;
    s.tools.mode = mode;
    s.tools.cadence = Cadence::Prompt;
    s.decision.provider = DecisionProvider::Http;
    s.decision.model = Some("decider".into());
    s.decision.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    s.decision.api_key_env = Some(KEY_ENV.into());
    s.decision.timeout_ms = timeout_ms;
    s
}

/// A host that carries out the effects and answers decision jobs with the HTTP model of the
/// settings, as the addon does.
struct Host {
    session: Session,
    branch: Vec<Value>,
    tools: Vec<ToolInfo>,
    active: Vec<String>,
}

impl Host {
    fn start(settings: Settings, branch: Vec<Value>, tools: Vec<ToolInfo>) -> Host {
        let (session, _) = Session::start(StartEvent {
            reason: StartReason::Startup,
            nonce: "h1".into(),
            settings: SettingsRead::Read(settings),
            project: ProjectRead::Absent,
            mcp_origins: vec![],
            branch: BranchRead::Entries(branch.clone()),
        });
        let active = tools
            .iter()
            .filter(|t| t.exposure.is_declared())
            .map(|t| t.name.clone())
            .collect();
        Host {
            session,
            branch,
            tools,
            active,
        }
    }

    fn push(&mut self, mut entry: Value) {
        entry["id"] = json!(format!("{:08x}", self.branch.len() + 1));
        entry["parentId"] = self.branch.last().map_or(Value::Null, |e| e["id"].clone());
        self.branch.push(entry);
    }

    fn apply(&mut self, effects: &[Effect]) {
        for e in effects {
            match e {
                Effect::AppendEntry(data) => {
                    self.push(json!({"type": "custom", "customType": CUSTOM_TYPE, "data": data}))
                }
                Effect::SetActiveTools(names) => self.active = names.clone(),
                _ => {}
            }
        }
    }

    /// A prompt: the boundary, then each decision job answered over HTTP. Returns the answers
    /// and the effects of the decisions.
    fn prompt(&mut self, text: &str) -> (Vec<context_decisions::session::Answer>, Vec<Effect>) {
        let effects = self.session.boundary(BoundaryEvent {
            kind: BoundaryKind::Prompt {
                text: Some(text.into()),
            },
            inventory: InventoryRead::Tools(self.tools.clone()),
            active: self.active.clone(),
        });
        self.apply(&effects);
        let jobs: Vec<DecisionJob> = effects
            .iter()
            .filter_map(|e| match e {
                Effect::Decide(job) => Some(job.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(jobs.len(), 1, "{effects:?}");
        let decision = self.session.settings().decision.clone();
        let scorer =
            HttpScorer::from_settings(&decision, |name| (name == KEY_ENV).then(|| KEY.to_owned()))
                .unwrap()
                .unwrap();
        let deadline = Instant::now() + Duration::from_millis(decision.timeout_ms);
        let answers = scorer.answer_job(&jobs[0].requests, decision.concurrency as usize, deadline);
        let effects = self
            .session
            .decided(jobs[0].id, answers.clone(), &self.active.clone());
        self.apply(&effects);
        self.push(json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}));
        (answers, effects)
    }

    /// What the host enforces: the branch state, every tool's verdict, the active set.
    fn snapshot(&mut self) -> (Option<pcd_ledger::BranchState>, Vec<bool>, Vec<String>) {
        let verdicts = self
            .tools
            .iter()
            .map(|t| self.session.is_allowed(&t.name))
            .collect();
        (
            self.session.branch().cloned(),
            verdicts,
            self.active.clone(),
        )
    }
}

/// Every kind of unreachable or slow model, after a round that committed: each adds nothing,
/// and the state is the old one.
#[test]
fn an_unreachable_or_slow_model_adds_nothing_and_the_state_stays_the_old_one() {
    let server = Server::start(Behaviour::Answer(0.0));
    let mut host = Host::start(
        http_settings(server.port, Mode::Tools, 400),
        vec![],
        example(),
    );
    // A round that commits: the model answers (nothing relevant), so the branch has a ledger.
    let (answers, effects) = host.prompt("Search the incidents of the checkout service");
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert!(effects.iter().any(|e| matches!(e, Effect::AppendEntry(_))));
    assert!(!host.session.is_allowed("bar_chart"));

    let refused = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    use context_decisions::session::ModelError;
    // A model that answers nothing in time timed out (its own code); one that fails at once did
    // not answer.
    let cases = [
        ("refused", None, ModelError::Unavailable),
        ("silent", Some(Behaviour::Silent), ModelError::TimedOut),
        (
            "after the client left",
            Some(Behaviour::AfterTheClientLeft),
            ModelError::TimedOut,
        ),
        ("trickle", Some(Behaviour::Trickle), ModelError::TimedOut),
        ("reset", Some(Behaviour::Reset), ModelError::Unavailable),
        (
            "cut short",
            Some(Behaviour::CutShort),
            ModelError::Unavailable,
        ),
    ];
    for (name, behaviour, expected) in cases {
        match behaviour {
            Some(b) => server.set(b),
            None => host.session.settings_changed(
                SettingsRead::Read(http_settings(refused, Mode::Tools, 400)),
                ProjectRead::Absent,
            ),
        }
        let before = host.snapshot();
        let entries = host.branch.len();
        let (answers, effects) = host.prompt("Render a bar chart of this CSV");
        assert!(
            answers.iter().all(|a| *a == Err(expected)),
            "{name}: {answers:?}"
        );
        let code = match expected {
            ModelError::TimedOut => "(reason: `timed-out`)",
            _ => "(reason: `model-failed`)",
        };
        assert!(
            effects
                .iter()
                .any(|e| matches!(e, Effect::Warn(w) if w.ends_with(code))),
            "{name}: {effects:?}"
        );
        assert!(
            effects.iter().all(|e| !matches!(e, Effect::AppendEntry(_))),
            "{name}: {effects:?}"
        );
        assert!(
            effects.iter().any(|e| matches!(e, Effect::Warn(_))),
            "{name}: the person is told"
        );
        assert_eq!(
            host.branch.len(),
            entries + 1,
            "{name}: only the user message"
        );
        assert_eq!(host.snapshot(), before, "{name}: the old state");
        assert!(!host.session.is_allowed("bar_chart"), "{name}");
        let (state, findings) = pcd_ledger::fold(&host.branch);
        assert!(findings.is_empty(), "{name}");
        let live = host.session.branch().unwrap();
        let sorted = |s: &pcd_ledger::BranchState| {
            let mut v: Vec<String> = s
                .available_tools()
                .chain(s.available_groups())
                .map(str::to_owned)
                .collect();
            v.sort();
            v
        };
        assert_eq!(
            sorted(&state),
            sorted(live),
            "{name}: the branch says the same"
        );
        if behaviour.is_none() {
            host.session.settings_changed(
                SettingsRead::Read(http_settings(server.port, Mode::Tools, 400)),
                ProjectRead::Absent,
            );
        }
    }

    // The same model answering in time again: the round commits.
    server.set(Behaviour::Charts);
    let (answers, effects) = host.prompt("Render a bar chart of this CSV");
    assert!(answers.iter().all(Result::is_ok), "{answers:?}");
    assert!(effects.iter().any(|e| matches!(e, Effect::AppendEntry(_))));
    assert!(host.session.is_allowed("bar_chart"));
}

const PLANTED: [&str; 9] = [
    "PLANTED-SCHEMA-1f0e",
    "PLANTED-ANNOTATION-2b7c",
    "PLANTED-INSTRUCTIONS-3d9a",
    "PLANTED-PATH-4e21",
    "PLANTED-BASEDIR-5c3f",
    "PLANTED-ASSISTANT-6a8b",
    "PLANTED-ARGUMENT-7d4e",
    "PLANTED-RESULT-8f1a",
    "PLANTED-OLD-PROMPT-9e6d",
];
const PLANTED_BEYOND_BOUND: &str = "PLANTED-BEYOND-THE-BOUND-0c5b";

/// An inventory whose every field but name and description holds a secret, in `tools` and
/// `mcp` mode: an MCP server's tools with a namespace, and an extension's tool.
fn planted_inventory() -> Vec<ToolInfo> {
    let [schema, annotation, instructions, path, base_dir, ..] = PLANTED;
    let raw = json!([
        {
            "name": "mcp__probe__search_incidents",
            "description": "Search the incidents of a service",
            "parameters": {"type": "object", "properties": {"token": {"type": "string", "default": schema, "description": schema, "enum": [schema]}}},
            "annotations": {"title": annotation, "hint": annotation},
            "namespace": {"name": "mcp__probe", "instructions": instructions, "description": "Incident records"},
            "sourceInfo": {"path": format!("/home/u/{path}/mcp.ts"), "source": "builtin:mcp", "scope": "user", "baseDir": format!("/{base_dir}")}
        },
        {
            "name": "incident_notes",
            "description": "Write notes about incidents",
            "parameters": {"type": "object", "properties": {"x": {"const": schema}}},
            "annotations": {"title": annotation},
            "sourceInfo": {"path": format!("/home/u/{path}/notes.ts"), "source": "auto", "scope": "project", "baseDir": format!("/{base_dir}/ext")}
        }
    ]);
    let mut tools = example();
    tools.extend(pcd_model::parse_inventory(&raw.to_string()).unwrap().tools);
    tools
}

/// What the branch gets after the first prompt: assistant text, a tool call's arguments and
/// its result, each holding a secret.
fn planted_turn(host: &mut Host) {
    let [.., assistant, argument, result, _] = PLANTED;
    host.push(
        json!({"type": "message", "message": {"role": "assistant", "content": [
            {"type": "text", "text": format!("Sure. {assistant}")},
            {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": argument}}
        ]}}),
    );
    host.push(json!({"type": "message", "message": {"role": "toolResult", "toolCallId": "call_1", "toolName": "read", "content": [{"type": "text", "text": result}]}}));
}

/// Every byte the HTTP scorer sends, in both modes, for planted secrets everywhere a secret can
/// be (the inventory, the branch the Session reads after `/reload`, an older prompt, and the
/// user's text beyond the bound): none is sent, but the older prompt in its own round; the API
/// key is sent once per request, in the `Authorization` header, and never in the body.
#[test]
fn the_http_model_is_sent_no_planted_secret_and_the_key_only_in_its_header() {
    for mode in [Mode::Tools, Mode::Mcp] {
        let server = Server::start(Behaviour::Answer(0.0));
        let settings = http_settings(server.port, mode, 10_000);
        let mut host = Host::start(settings.clone(), vec![], planted_inventory());
        let old_prompt = PLANTED[8];
        let (answers, _) = host.prompt(&format!("Earlier: {old_prompt} find the incidents"));
        assert!(answers.iter().all(Result::is_ok), "{mode:?}: {answers:?}");
        planted_turn(&mut host);
        // `/reload`: the Session reads the branch with the secrets.
        let mut host = Host::start(settings, host.branch, planted_inventory());
        let first_round = server.requests().len();
        server.set(Behaviour::Answer(0.9));
        // The user's text: a secret, then more than the bound (2,000 characters) of text.
        let prompt = format!(
            "{PLANTED_BEYOND_BOUND} {} Search the incidents of the checkout service",
            "and then some more words about the task ".repeat(60)
        );
        let (answers, effects) = host.prompt(&prompt);
        assert!(answers.iter().all(Result::is_ok), "{mode:?}: {answers:?}");
        assert!(effects.iter().any(|e| matches!(e, Effect::AppendEntry(_))));
        let requests = server.requests();
        assert!(!requests.is_empty(), "{mode:?}");
        let mut saw_probe = false;
        assert!(requests.len() > first_round, "{mode:?}");
        for (i, request) in requests.iter().enumerate() {
            let text = String::from_utf8(request.clone()).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            for secret in PLANTED.iter().chain([&PLANTED_BEYOND_BOUND]) {
                // The old prompt was the latest text of the first round: sent then, and only
                // then.
                let then = *secret == old_prompt && i < first_round;
                assert_eq!(
                    text.contains(secret),
                    then,
                    "{mode:?}: {secret}, request {i}"
                );
            }
            assert!(!body.contains(KEY), "{mode:?}: the key is in the body");
            let key_lines: Vec<&str> = head.lines().filter(|l| l.contains(KEY)).collect();
            assert_eq!(
                key_lines,
                [format!("Authorization: Bearer {KEY}")],
                "{mode:?}"
            );
            assert!(
                !body.contains("/home/") && !body.contains("mcp.ts"),
                "{mode:?}"
            );
            // The request is the real one: the latest text (its end) and the candidates.
            assert!(
                body.contains("checkout service") || i < first_round,
                "{mode:?}"
            );
            saw_probe |= body.contains("mcp__probe");
        }
        assert!(saw_probe, "{mode:?}: the planted tools were candidates");
        // And nothing secret in any effect or entry either.
        let entries: Vec<&Value> = host
            .branch
            .iter()
            .filter(|e| e["customType"] == CUSTOM_TYPE)
            .collect();
        let all = format!("{effects:?}{entries:?}");
        for secret in PLANTED.iter().chain([&PLANTED_BEYOND_BOUND, &KEY]) {
            assert!(
                !all.contains(secret),
                "{mode:?}: {secret} in an effect or entry"
            );
        }
    }
}
