//! The verdict for one call.

use crate::branch::BranchIndex;
use crate::lazy::{LazyScores, LazyStatus};
use crate::registry::{Grants, RegGroup, RegTool, Registry};
use pcd_model::{BlockCode, BlockKind, GroupKey, Mode, Remedy, RemedyList, ToolKind};

/// A resource tool's `server` argument, as found in the call's input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerArg<'a> {
    /// Absent or `null`.
    Absent,
    /// A value that is not a string (Pi's tool would throw).
    NotString,
    /// A string, untrimmed.
    Str(&'a str),
}

/// One `tool_call`, reduced to what the gate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call<'a> {
    /// The called tool's name.
    pub tool: &'a str,
    /// The `server` argument (only read for the MCP resource tools).
    pub server: ServerArg<'a>,
}

impl<'a> Call<'a> {
    /// A call to `tool` with no `server` argument.
    pub fn tool(tool: &'a str) -> Call<'a> {
        Call {
            tool,
            server: ServerArg::Absent,
        }
    }

    /// A resource-tool call naming `server`.
    pub fn resource(tool: &'a str, server: ServerArg<'a>) -> Call<'a> {
        Call { tool, server }
    }
}

/// What a lazy score request is for: the tool in `tools` mode, its group in `mcp` mode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Candidate {
    /// A tool, by name.
    Tool(String),
    /// A group, by canonical key.
    Group(GroupKey),
}

impl Candidate {
    /// The candidate's text: the tool name or the canonical key.
    pub fn as_str(&self) -> &str {
        match self {
            Candidate::Tool(name) => name,
            Candidate::Group(key) => key.as_str(),
        }
    }
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Let the call through.
    Allow,
    /// Block it; the code says why and what would allow it.
    Block(BlockCode),
    /// Nobody has scored this candidate yet: the host starts (or joins) one score request through
    /// [`LazyScores::begin`], awaits it, and asks again.
    Pending(Candidate),
}

/// Everything a verdict reads. Each unreadable source has its rule:
/// - `registry: None` (Pi's registry unreadable and no earlier snapshot): every call is blocked.
///   A stale snapshot is passed as `Some`: verified internal tools pass, known external tools
///   follow the ledger and allowlists, anything unknown is blocked.
/// - `branch: None` (the session branch unreadable): only internal and allowlisted tools pass,
///   and nothing is scored or granted.
/// - `can_grant: false` (settings unreadable, or the branch unreadable): the branch's ledger is
///   still enforced but nothing new is added, so a tool nobody considered is blocked.
/// - A failed project allowlist read is handled before, by [`crate::ProjectListCache`].
#[derive(Clone, Copy)]
pub struct GateContext<'a> {
    /// Whether tool filtering is on for this branch. Off: every call is allowed, nothing is read.
    pub enabled: bool,
    /// `tools` or `mcp` (group) mode.
    pub mode: Mode,
    /// The registry snapshot, current or last known.
    pub registry: Option<&'a Registry>,
    /// The allowlists' grants over that snapshot.
    pub grants: &'a Grants,
    /// The branch's ledger state, indexed over `registry` (it must be built from the same
    /// registry snapshot).
    pub branch: Option<&'a BranchIndex>,
    /// Whether a decision model is selected and there are enough candidates to score. When
    /// false, a tool nobody has considered stays available (it is recorded at the next boundary).
    pub scoring: bool,
    /// Whether anything may be added now (false when settings or the branch are unreadable).
    pub can_grant: bool,
    /// Lazy score requests in flight or failed.
    pub lazy: &'a LazyScores,
}

impl<'a> GateContext<'a> {
    /// Filtering on, with a readable registry, grants and lazy scores; the branch is unset
    /// (unreadable) until the caller sets it; scoring and granting allowed.
    pub fn enabled(
        mode: Mode,
        registry: &'a Registry,
        grants: &'a Grants,
        lazy: &'a LazyScores,
    ) -> GateContext<'a> {
        GateContext {
            enabled: true,
            mode,
            registry: Some(registry),
            grants,
            branch: None,
            scoring: true,
            can_grant: true,
            lazy,
        }
    }
}

fn block(
    kind: BlockKind,
    tool: &str,
    server: Option<&GroupKey>,
    remedy: Option<Remedy>,
) -> Verdict {
    Verdict::Block(BlockCode {
        kind,
        tool: tool.to_owned(),
        server: server.cloned(),
        remedy,
    })
}

/// The verdict for one call. The allow path does no heap allocation.
pub fn decide(ctx: &GateContext<'_>, call: &Call<'_>) -> Verdict {
    if !ctx.enabled {
        return Verdict::Allow;
    }
    let Some(registry) = ctx.registry else {
        return block(BlockKind::RegistryUnavailable, call.tool, None, None);
    };
    let Some(&ti) = registry.index.get(call.tool) else {
        return block(BlockKind::UnknownTool, call.tool, None, None);
    };
    let tool = &registry.tools[ti as usize];
    match tool.kind {
        ToolKind::Internal => return Verdict::Allow,
        ToolKind::McpResource => return route_resource(ctx, registry, call),
        _ => {}
    }
    let grants = ctx.grants;
    let group = tool.group.map(|gi| (gi, &registry.groups[gi as usize]));
    let allowlisted = grants
        .tool_pinned
        .get(ti as usize)
        .copied()
        .unwrap_or(false)
        || group.is_some_and(|(gi, _)| {
            grants.group_pinned_in(gi, tool.scope)
                || (ctx.mode == Mode::Mcp && grants.group_promoted[gi as usize])
        });
    if !tool.recordable && !allowlisted {
        // No entry can record deciding it, so nothing but an allowlist entry allows it (fail
        // closed); it is neither granted nor withheld, only its calls are blocked.
        return unrecordable(call, tool, group.map(|(_, g)| g));
    }
    if allowlisted || (tool.kind == ToolKind::Unfiltered && ctx.mode == Mode::Mcp) {
        return Verdict::Allow;
    }
    // The entry that would allow the call: in `mcp` mode its group's key; otherwise its name,
    // unless the name cannot be saved as a tool entry (over 128 characters: the spec's bounds),
    // where only a pin of its group can allow it (or nothing, without a pinnable group).
    let remedy = || {
        let nameable = pcd_model::parse_tool_entry(call.tool).is_ok();
        let group_remedy = group
            .filter(|_| ctx.mode == Mode::Mcp || !nameable)
            .filter(|(_, g)| g.pinnable())
            .and_then(|(_, g)| {
                g.scope.single().map(|scope| Remedy {
                    list: RemedyList::Groups,
                    entry: g.key.as_str().to_owned(),
                    scope,
                })
            });
        group_remedy.or_else(|| {
            nameable.then(|| Remedy {
                list: RemedyList::Tools,
                entry: call.tool.to_owned(),
                scope: tool.scope,
            })
        })
    };
    let Some(branch) = ctx.branch else {
        return block(BlockKind::BranchUnreadable, call.tool, None, remedy());
    };
    if branch.tool_available(ti) || group.is_some_and(|(gi, _)| branch.group_available(gi)) {
        return Verdict::Allow;
    }
    let considered = match (ctx.mode, group) {
        (Mode::Mcp, Some((gi, _))) => branch.group_considered(gi),
        _ => branch.tool_considered(ti),
    };
    if considered || !ctx.can_grant {
        return block(BlockKind::NotAvailable, call.tool, None, remedy());
    }
    if !ctx.scoring {
        return Verdict::Allow;
    }
    let candidate = match (ctx.mode, group) {
        (Mode::Mcp, Some((_, g))) => Candidate::Group(g.key.clone()),
        _ => Candidate::Tool(call.tool.to_owned()),
    };
    match ctx.lazy.status(candidate.as_str()) {
        Some(LazyStatus::Failed) => block(BlockKind::ScoringFailed, call.tool, None, remedy()),
        _ => Verdict::Pending(candidate),
    }
}

/// The block for a tool whose name the ledger cannot record, with the allowlist entry that would
/// allow it: its group's key, or its name when that is a valid entry.
fn unrecordable(call: &Call<'_>, tool: &RegTool, group: Option<&RegGroup>) -> Verdict {
    let remedy = group
        .filter(|g| g.pinnable())
        .and_then(|g| {
            g.scope.single().map(|scope| Remedy {
                list: RemedyList::Groups,
                entry: g.key.as_str().to_owned(),
                scope,
            })
        })
        .or_else(|| {
            pcd_model::parse_tool_entry(call.tool).ok().map(|_| Remedy {
                list: RemedyList::Tools,
                entry: call.tool.to_owned(),
                scope: tool.scope,
            })
        });
    block(BlockKind::Unrecordable, call.tool, None, remedy)
}

/// The MCP resource tools are internal but routed by their `server` argument, matched as Pi
/// matches it (trimmed; the raw configured name or a namespace alias).
///
/// The argument is the model's own input and may hold anything, a pasted secret included, so no
/// part of it leaves this function: a server that matches is named by its canonical key (from
/// the inventory, the configs, the allowlists or the branch), and one that matches none is
/// refused with [`BlockKind::ResourceServerUnknown`], which names nothing.
fn route_resource(ctx: &GateContext<'_>, registry: &Registry, call: &Call<'_>) -> Verdict {
    let server = match call.server {
        ServerArg::NotString => {
            return block(BlockKind::ResourceServerNotString, call.tool, None, None)
        }
        ServerArg::Absent => None,
        ServerArg::Str(s) => Some(s.trim()).filter(|s| !s.is_empty()),
    };
    let Some(server) = server else {
        return block(BlockKind::ResourceWithoutServer, call.tool, None, None);
    };
    let grants = ctx.grants;
    // Without a known raw name (Pi 1.1, configs not read) the argument is folded into a key; that
    // key counts only when something other than the call knows it.
    let known = |key: &GroupKey| {
        registry.group_index.contains_key(key)
            || registry.server_scopes.contains_key(key)
            || grants.unregistered.contains(key)
            || ctx
                .branch
                .is_some_and(|b| b.available_keys.contains(key.as_str()))
    };
    let Some(key) = registry
        .server_key(server)
        .filter(|key| registry.names_server(server) || known(key))
    else {
        return block(BlockKind::ResourceServerUnknown, call.tool, None, None);
    };
    let group = registry
        .group_index
        .get(&key)
        .map(|&gi| (gi, &registry.groups[gi as usize]));
    let scope = registry.key_scope(&key);
    let allowlisted = match group {
        Some((gi, g)) => {
            scope.is_some_and(|s| grants.group_pinned_in(gi, s))
                || (ctx.mode == Mode::Mcp && grants.group_promoted[gi as usize])
                || g.members.iter().any(|&m| grants.tool_pinned[m as usize])
        }
        None => grants.unregistered.contains(&key),
    };
    if allowlisted {
        return Verdict::Allow;
    }
    let remedy = scope
        .filter(|_| {
            key.mcp_server_part()
                .is_some_and(|s| s.len() <= pcd_model::MAX_GROUP_NAME_CHARS)
        })
        .map(|scope| Remedy {
            list: RemedyList::Groups,
            entry: key.as_str().to_owned(),
            scope,
        });
    let Some(branch) = ctx.branch else {
        return block(BlockKind::BranchUnreadable, call.tool, Some(&key), remedy);
    };
    // A server is available when its group is, or (in `tools` mode, where tools are decided one
    // by one) when any of its tools is: a relevance decision that gave the model a server's
    // tools makes its resources relevant too.
    let available = branch.available_keys.contains(key.as_str())
        || group.is_some_and(|(_, g)| g.members.iter().any(|&m| branch.tool_available(m)));
    if available {
        return Verdict::Allow;
    }
    // With nothing scored (no decision model, or fewer candidates than the minimum) a server
    // that no round has considered yet stays available, as its tools do until the next boundary
    // records them: resource routing follows availability.
    if !ctx.scoring && ctx.can_grant {
        if let Some((gi, g)) = group {
            let unconsidered = match ctx.mode {
                Mode::Mcp => !branch.group_considered(gi),
                Mode::Tools => g.members.iter().any(|&m| !branch.tool_considered(m)),
            };
            if unconsidered {
                return Verdict::Allow;
            }
        }
    }
    block(
        BlockKind::ResourceServerNotAvailable,
        call.tool,
        Some(&key),
        remedy,
    )
}
