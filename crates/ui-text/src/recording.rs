//! What a person is told about a session recording (`PI_CONTEXT_DECISIONS_RECORD`) and about
//! checking a replay of one (`context-decisions simulate --check`).

use crate::display::display_safe;
use crate::words::fit;

/// The problem [`recording_failed`] names when another process is recording to the same file.
pub const RECORDING_IN_USE: &str = "another Pi process is recording to that file";

/// The recording file could not be created. `problem` is the kind of I/O error (`permission
/// denied`); the path is not repeated.
pub fn recording_failed(problem: &str) -> String {
    format!(
        "pi-context-decisions could not create the session recording named by \
         PI_CONTEXT_DECISIONS_RECORD ({}), so this session is not recorded.",
        fit(&display_safe(problem), 60)
    )
}

/// Writing the recording failed part-way; the session goes on unrecorded.
pub fn recording_stopped() -> String {
    "pi-context-decisions stopped recording this session: the recording file could not be \
     written. What was recorded so far still replays."
        .to_owned()
}

/// `simulate --check`: how the replay compared with the effects the recording expects.
/// `differing` lists the indexes of the events whose replay differs; `checked` counts the events
/// that carried expected effects.
pub fn replay_check(checked: usize, differing: &[usize]) -> String {
    if checked == 0 {
        return "Nothing to check: no event of the script expects anything (a recording's events \
                carry `expect`), so the replay was not compared.\n"
            .to_owned();
    }
    if differing.is_empty() {
        return format!(
            "The replay matches the recording: {checked} event{} checked.\n",
            if checked == 1 { "" } else { "s" }
        );
    }
    let shown: Vec<String> = differing.iter().take(20).map(usize::to_string).collect();
    let more = if differing.len() > shown.len() {
        format!(" and {} more", differing.len() - shown.len())
    } else {
        String::new()
    };
    format!(
        "The replay differs from the recording at {} of {checked} checked events: event {}{more}.\n",
        differing.len(),
        shown.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_to_check_is_said_not_passed() {
        assert!(replay_check(0, &[]).starts_with("Nothing to check"));
    }

    #[test]
    fn check_sentences() {
        assert_eq!(
            replay_check(3, &[]),
            "The replay matches the recording: 3 events checked.\n"
        );
        assert_eq!(
            replay_check(1, &[0]),
            "The replay differs from the recording at 1 of 1 checked events: event 0.\n"
        );
        let many: Vec<usize> = (0..25).collect();
        assert!(replay_check(30, &many).ends_with("19 and 5 more.\n"));
        let failed = recording_failed("permission denied\u{1b}[2J");
        assert!(failed.contains("(permission denied"));
        assert!(!failed.contains('\u{1b}'));
    }
}
