//! What the host feeds a [`Session`](super::Session) and what it answers: the start, boundary and
//! tool-call events, what was read from disk, the effects to carry out and the decision jobs.

use super::*;

/// Why Pi started (or restarted) the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartReason {
    /// A new process.
    Startup,
    /// `/reload`.
    Reload,
    /// `/new`.
    New,
    /// `/resume`.
    Resume,
    /// `/fork`.
    Fork,
}

/// The settings file as the host could read it.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingsRead {
    /// Absent (defaults) or read (bad fields already fell back to their defaults).
    Read(Settings),
    /// The file exists but could not be read: the branch keeps what it has, nothing is added.
    Unreadable,
}

/// The branch as the host could read it (`sessionManager.getBranch()`, root first).
#[derive(Debug, Clone, PartialEq)]
pub enum BranchRead {
    /// Every entry of the branch, root to leaf.
    Entries(Vec<Value>),
    /// The branch could not be read: only internal and allowlisted tools pass, nothing is
    /// written, granted or reconciled.
    Unreadable,
}

/// Pi's tool registry as the host could read it (`getAllTools()`).
#[derive(Debug, Clone, PartialEq)]
pub enum InventoryRead {
    /// The tools (rejected entries already dropped: they stay unknown, so they are blocked).
    Tools(Vec<ToolInfo>),
    /// `getAllTools()` threw: the last snapshot stays in force; with none, every call is blocked.
    Unreadable,
}

/// What starts a session.
#[derive(Debug, Clone, PartialEq)]
pub struct StartEvent {
    /// Why.
    pub reason: StartReason,
    /// A short token unique to this process and session, used in round ids (`[A-Za-z0-9]`).
    pub nonce: String,
    /// The global settings.
    pub settings: SettingsRead,
    /// The project allowlist file.
    pub project: ProjectRead,
    /// Built-in MCP server origins captured at session start from the `mcp.json` files, with the
    /// user's approval (raw server name and file scope); empty without approval.
    pub mcp_origins: Vec<(String, Scope)>,
    /// The branch.
    pub branch: BranchRead,
}

/// What kind of boundary this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundaryKind {
    /// A run is starting (`before_agent_start`). `text` is the user's prompt, or queued steering
    /// or follow-up text; `None` for a run started by a custom message, which never supplies a
    /// prompt to pick from.
    Prompt {
        /// The user text.
        text: Option<String>,
    },
    /// A tool round completed.
    ToolRound,
    /// The session's own start, or a branch move (`/tree`), after [`Session::branch_moved`].
    Reconcile,
}

/// A boundary: the moment to decide, record and re-apply the restriction.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryEvent {
    /// Which boundary.
    pub kind: BoundaryKind,
    /// Pi's registry now.
    pub inventory: InventoryRead,
    /// Pi's active tool names now (`getActiveTools()`), in Pi's order.
    pub active: Vec<String>,
}

/// Something the host must do, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// `pi.setActiveTools(names)`.
    SetActiveTools(Vec<String>),
    /// `pi.appendEntry("context-decisions-tools", data)`.
    AppendEntry(Value),
    /// The hidden names-only availability notice, as a `before_agent_start` message with
    /// `display: false`.
    Notice(String),
    /// A warning for the person (bounded, names and codes only).
    Warn(String),
    /// Ask the decision model (HTTP, or one of Pi's models) every request of this job, show the
    /// progress row (`Deciding Context`) until it settles, and hand the answers to
    /// [`Session::decided`].
    Decide(DecisionJob),
    /// `pi.appendEntry("context-decisions-scorer", data)`: which scorer decided the round just
    /// recorded (`{"v":1,"round":ID,"scorer":NAME}`), right after its entries. Not a ledger
    /// entry: nothing folds it and it grants nothing.
    RecordScorer(Value),
    /// Score this round with the semantic signal off the event loop (the working row shows
    /// meanwhile) and hand the fused scores, or why there are none, to
    /// [`Session::semantic_decided`]. As JSON it is a `decide` effect with `"semantic": true`
    /// and no requests (the texts stay in the host).
    Embed(super::SemanticJob),
}

/// Decision requests the host answers with a model outside the Session. Each request is one
/// chat exchange: `instructions` as the system message, the request as the user message (a JSON
/// document of names, labels and bounded descriptions: data, never instructions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionJob {
    /// The job, for [`Session::decided`].
    pub id: u64,
    /// The system message.
    pub instructions: &'static str,
    /// The user messages, one per request, in order.
    pub requests: Vec<String>,
}

/// What an idle-time relevance ranking ([`Session::ranking`]) gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Ranking {
    /// Scores at once (the embedded scorer), one per candidate that could be formed.
    Scores(Vec<(CandidateKey, f64)>),
    /// A job for a model outside the Session; its answers go to [`Session::ranking_decided`].
    Job(DecisionJob),
    /// No decision model is selected, or there is no prompt to rank against: keep the order.
    Unavailable,
}

/// What became of one request of a [`DecisionJob`].
pub type Answer = Result<String, ModelError>;

/// The verdict on one `tool_call`, with what to do first.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// `None` to let the call through; `Some(reason)` to block it with that reason.
    pub block: Option<String>,
    /// Effects to carry out (a lazily scored tool's round).
    pub effects: Vec<Effect>,
    /// The tool is not in the session's snapshot of the registry (it registered since the last
    /// boundary): read `getAllTools()` and ask again with [`Session::tool_call_with`]. Until then
    /// the verdict is a block (unknown tools are blocked).
    pub refresh_and_retry: bool,
    /// Nobody has scored the tool yet and the decision model answers outside the Session: obtain
    /// the job's answers, hand them to [`Session::decided`], and ask again. Parallel calls to the
    /// same tool get the same job.
    pub pending: Option<DecisionJob>,
}

/// A tool call as the gate needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallEvent {
    /// The tool's name.
    pub tool: String,
    /// A resource tool's `server` argument: `None` absent or null, `Some(Ok(text))` a string,
    /// `Some(Err(()))` any other JSON value.
    pub server: Option<Result<String, ()>>,
}

impl ToolCallEvent {
    /// The call as Pi reports it in `tool_call`: the tool's name and its `input`, of which only a
    /// resource tool's `server` argument is read (absent or null, a string, or anything else).
    pub fn from_input(tool: &str, input: Option<&Value>) -> ToolCallEvent {
        let server = match input.and_then(|i| i.get("server")) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Ok(s.clone())),
            Some(_) => Some(Err(())),
        };
        ToolCallEvent {
            tool: tool.to_owned(),
            server,
        }
    }
}

impl Effect {
    /// The effect as the JSON the Pi extension carries out:
    /// `{"type":"setActiveTools","names":[…]}`, `{"type":"appendEntry","customType":…,"data":…}`,
    /// `{"type":"notice","text":…}`, `{"type":"warn","text":…}`,
    /// `{"type":"decide","job":…,"instructions":…,"requests":[…]}`.
    pub fn to_json(&self) -> Value {
        match self {
            Effect::SetActiveTools(names) => {
                serde_json::json!({"type": "setActiveTools", "names": names})
            }
            Effect::AppendEntry(data) => serde_json::json!({
                "type": "appendEntry",
                "customType": pcd_ledger::CUSTOM_TYPE,
                "data": data,
            }),
            Effect::RecordScorer(data) => serde_json::json!({
                "type": "appendEntry",
                "customType": pcd_ledger::SCORER_CUSTOM_TYPE,
                "data": data,
            }),
            Effect::Notice(text) => serde_json::json!({"type": "notice", "text": text}),
            Effect::Warn(text) => serde_json::json!({"type": "warn", "text": text}),
            Effect::Decide(job) => serde_json::json!({
                "type": "decide",
                "job": job.id,
                "instructions": job.instructions,
                "requests": job.requests,
            }),
            Effect::Embed(job) => serde_json::json!({
                "type": "decide",
                "job": job.id,
                "semantic": true,
                "instructions": "",
                "requests": [],
            }),
        }
    }
}

/// Effects as one JSON array.
pub fn effects_json(effects: &[Effect]) -> Value {
    Value::Array(effects.iter().map(Effect::to_json).collect())
}
