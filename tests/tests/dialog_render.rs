//! The `/decisions` dialog drawn through the extension's own component code
//! (`extension/dialog.ts`) with the pi-tui of a real Pi (1.3.0 and 1.6.0), against a fixed theme,
//! by `tests/dialog/render.mjs`: every screen at 60, 80 and 120 columns is snapshotted, every
//! line fits its width in terminal cells (CJK and emoji included), the cursor row and the values
//! take the theme's colours, the key hints are never cut, and the model picker and the
//! threshold's input write the settings file.

use pcd_tests::{addon, install, repo, temp_dir};
use serde_json::Value;
use std::process::Command;

fn render(version: &str) -> (Value, std::path::PathBuf) {
    let dir = temp_dir(&format!("dialog-{version}"));
    let agent = dir.join("agent");
    let cwd = dir.join("project");
    std::fs::create_dir_all(agent.join("pi-context-decisions")).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let settings = agent.join("pi-context-decisions/settings.json");
    std::fs::write(
        &settings,
        r#"{"decision": {"provider": "pi", "model": "云/模型🙂"}}"#,
    )
    .unwrap();
    let pi = install(version);
    let out = Command::new(install("node"))
        .arg(repo().join("tests/dialog/render.mjs"))
        .arg(&pi)
        .arg(addon())
        .arg(&agent)
        .arg(&cwd)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (serde_json::from_slice(&out.stdout).unwrap(), settings)
}

fn lines(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect()
}

fn check(version: &str) {
    let (out, settings) = render(version);
    let names = [
        "tools",
        "advanced",
        "advanced-model",
        "model-picker",
        "threshold-input",
        "threshold-refused",
        "editor",
    ];
    for name in names {
        for width in [60usize, 80, 120] {
            let screen = &out[format!("{name}@{width}")];
            let plain = lines(&screen["plain"]);
            // Every line within the width, in terminal cells as pi-tui measures them.
            for (line, cells) in plain.iter().zip(screen["widths"].as_array().unwrap()) {
                assert!(
                    cells.as_u64().unwrap() as usize <= width,
                    "{version} {name}@{width}: {line:?}"
                );
            }
            // The key hints are wrapped, never cut.
            assert!(
                !plain
                    .iter()
                    .any(|l| l.trim_end().ends_with('…') && l.contains(" · ")),
                "{version} {name}@{width}: {plain:#?}"
            );
            // One snapshot for both versions: the same component code draws the same screen.
            insta::assert_snapshot!(format!("{name}_{width}"), plain.join("\n"));
        }
    }
    // Pi's settings look: the cursor glyph and the row under it in the accent colour, the other
    // values muted (dimmed), the hints' keys dim.
    let styled = lines(&out["advanced-model@80"]["styled"]);
    let cursor = styled.iter().find(|l| l.contains("Model ")).unwrap();
    assert!(
        cursor.starts_with("\x1b[36m→ \x1b[0m\x1b[36mModel"),
        "{cursor:?}"
    );
    assert!(cursor.contains("\x1b[36m云/模型🙂"), "{cursor:?}");
    let other = styled.iter().find(|l| l.contains("Base URL")).unwrap();
    assert!(other.contains("\x1b[90m(not set)"), "{other:?}");
    let hints = styled.last().unwrap();
    assert!(
        hints.contains("\x1b[2mup/down\x1b[0m\x1b[90m move"),
        "{hints:?}"
    );
    // CJK and emoji align: the values start in the same column on every row.
    let plain = lines(&out["advanced-model@80"]["plain"]);
    let column = |line: &str, value: &str| {
        let at = line.find(value).unwrap();
        line[..at].chars().count()
    };
    assert_eq!(
        column(plain[3], "云/模型🙂"),
        column(plain[4], "(not set)"),
        "{plain:#?}"
    );
    let picker = lines(&out["model-picker@60"]["plain"]);
    assert!(
        picker.iter().any(|l| l.starts_with("→ 云/模型🙂")),
        "the saved model is preselected: {picker:#?}"
    );
    // A refused threshold says why in one line of ui-text's words (wrapped to the width).
    let refused = lines(&out["threshold-refused@120"]["plain"]);
    assert!(
        refused
            .iter()
            .any(|l| l.contains("`0.6251` is not a threshold")),
        "{refused:#?}"
    );
    // The writes: the model chosen in the picker, then 0.613 typed into the input.
    let writes = &out["writes"];
    assert!(
        lines(&writes["afterModel"])
            .iter()
            .any(|l| l.starts_with("→ Model") && l.contains("local/tiny")),
        "{writes:#?}"
    );
    assert!(
        lines(&writes["afterThreshold"])
            .iter()
            .any(|l| l.starts_with("→ Threshold") && l.contains("0.613")),
        "{writes:#?}"
    );
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    assert_eq!(saved["decision"]["model"], "local/tiny");
    assert_eq!(saved["decision"]["threshold"], 0.613);
}

#[test]
fn the_dialog_draws_with_pi_1_6_0_components() {
    check("1.6.0");
}

#[test]
fn the_dialog_draws_with_pi_1_3_0_components() {
    check("1.3.0");
}
