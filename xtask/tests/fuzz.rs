//! `cargo xtask fuzz` where it cannot fuzz, run as a person would: a machine without a nightly
//! toolchain (here, without rustup on the `PATH` at all) is told so and passes, and a wrong
//! argument is a usage error.

use std::process::Command;

fn xtask(args: &[&str]) -> (i32, String) {
    let empty = std::env::temp_dir().join(format!("xtask-fuzz-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("PATH", &empty)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&empty);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn without_a_nightly_toolchain_it_says_so_and_passes() {
    let (code, stderr) = xtask(&["fuzz", "--seconds", "5"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("no nightly toolchain is installed")
            && stderr.contains("nothing was fuzzed"),
        "{stderr}"
    );
}

#[test]
fn a_wrong_argument_is_a_usage_error() {
    for args in [&["fuzz", "--seconds", "0"][..], &["fuzz", "--minutes"]] {
        let (code, stderr) = xtask(args);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.starts_with(pcd_ui_text::FUZZ_USAGE), "{stderr}");
    }
}
