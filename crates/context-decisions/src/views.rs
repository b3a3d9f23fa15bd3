//! The `/decisions tools list` and `/decisions mcp list` views of a session: every tool with the
//! reason it is available (or that it is withheld), rendered by ui-text.

use crate::session::Session;
use pcd_ledger::{Basis, Boundary};
use pcd_model::{Mode, RemedyList, ToolKind};
use pcd_ui_text::{
    Availability, Boundary as ShownBoundary, Filtering, InventoryView, NotScored, ToolRow,
};

/// The reply to `/decisions tools list` or `/decisions mcp list`. Off means off: while tool
/// filtering is off it names the saved allowlists only, from the settings, and the host need not
/// (and must not) read Pi's registry for it.
pub fn list_text(session: &Session, command: pcd_ui_text::ListCommand) -> String {
    if !session.filtering_on() {
        return pcd_ui_text::list_while_off(
            command,
            &session.settings().tools,
            &session.allowlists().project,
        );
    }
    let view = inventory_view(session);
    match command {
        pcd_ui_text::ListCommand::Mcp => pcd_ui_text::mcp_list(&view),
        pcd_ui_text::ListCommand::Tools => pcd_ui_text::tools_list(&view),
    }
}

/// Pi's footer status: how many of the registered external tools are available on this branch
/// now, and the estimated tokens of the withheld ones' definitions (`tools 6/20 · ~9.8k tokens
/// withheld`); none while tool filtering is off or before the registry was read.
pub fn footer_status(session: &Session) -> Option<String> {
    if !session.filtering_on() {
        return None;
    }
    let tools = session.inventory()?;
    let mut external = 0;
    let mut available = 0;
    let mut withheld_chars = 0u64;
    for (tool, class) in tools.iter().zip(session.classes()) {
        if class.kind.is_internal() {
            continue;
        }
        external += 1;
        if session.is_allowed(&tool.name) {
            available += 1;
        } else {
            withheld_chars += tool.definition_chars as u64;
        }
    }
    Some(pcd_ui_text::tools_status(
        available,
        external,
        withheld_chars,
    ))
}

/// The view of every tool the session's snapshot holds.
pub fn inventory_view(session: &Session) -> InventoryView {
    let on = session.filtering_on();
    let mode = session.settings().tools.mode;
    let tools = session.inventory().unwrap_or_default();
    let rows = tools
        .iter()
        .zip(session.classes())
        .map(|(tool, class)| {
            let availability = if !on {
                Availability::FilteringOff
            } else {
                availability(session, mode, tool, class)
            };
            ToolRow {
                calls: session.calls(&tool.name),
                ..ToolRow::new(tool, class, availability)
            }
        })
        .collect();
    InventoryView {
        filtering: if on {
            Filtering::On(mode)
        } else {
            Filtering::Off
        },
        rows,
        active_set_changes: session.active_set_changes(),
    }
}

/// Why nothing is scored, as the settings are now: no decision model, or too few candidates (in
/// `mcp` mode, too few groups: a typical setup has a handful).
fn not_scored(session: &Session, mode: Mode) -> Availability {
    let decision = &session.settings().decision;
    Availability::NotScored(if decision.has_model() {
        NotScored::FewCandidates {
            candidates: u32::try_from(session.candidate_count()).unwrap_or(u32::MAX),
            minimum: decision.minimum_candidates_for(mode),
            mode,
        }
    } else {
        NotScored::NoModel
    })
}

/// The number a person reads for the branch's round at `index`: the rounds they did not start
/// (the baseline when filtering began, allowlist grants) are not counted.
fn user_round_number(rounds: &[pcd_ledger::RoundSummary], index: usize) -> u32 {
    let counted = rounds[..=index]
        .iter()
        .filter(|r| !matches!(r.basis, Basis::Baseline | Basis::Allowlist))
        .count();
    u32::try_from(counted.max(1)).unwrap_or(u32::MAX)
}

fn availability(
    session: &Session,
    mode: Mode,
    tool: &pcd_model::ToolInfo,
    class: &pcd_model::Classified,
) -> Availability {
    if class.kind.is_internal() {
        return Availability::Internal;
    }
    if class.kind == ToolKind::Unfiltered && mode == Mode::Mcp {
        return Availability::Unfiltered;
    }
    let lists = session.allowlists().for_scope(class.scope);
    if lists.has_tool(&tool.name) {
        return Availability::Allowlisted {
            scope: class.scope,
            list: RemedyList::Tools,
        };
    }
    if let Some(g) = &class.group {
        if lists.has_group(&g.key) {
            return Availability::Allowlisted {
                scope: class.scope,
                list: RemedyList::Groups,
            };
        }
    }
    if let Some(branch) = session.branch() {
        let group_key = class.group.as_ref().map(|g| g.key.as_str());
        let found = branch.rounds().iter().enumerate().find(|(_, r)| {
            r.new_tools.iter().any(|t| **t == tool.name)
                || group_key.is_some_and(|k| r.new_groups.iter().any(|g| &**g == k))
        });
        if let Some((i, round)) = found {
            return match round.basis {
                Basis::Unscored => not_scored(session, mode),
                Basis::Baseline => Availability::AlreadyRegistered,
                _ => Availability::Round {
                    round: user_round_number(branch.rounds(), i),
                    boundary: match round.boundary {
                        Boundary::ToolRound => ShownBoundary::ToolRound,
                        Boundary::FirstCall => ShownBoundary::FirstCall,
                        _ => ShownBoundary::Prompt,
                    },
                },
            };
        }
    }
    if session.is_allowed(&tool.name) {
        not_scored(session, mode)
    } else {
        Availability::Withheld
    }
}
