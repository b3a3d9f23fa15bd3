//! Resident memory of the loaded model: the process's resident set (Linux `VmRSS`, and the peak
//! `VmHWM`) before loading, after loading, and after embedding a prompt at the bound (`MAX_TOKENS`).
//!
//! `cargo run --release -p pcd-embed --example memory -- MODEL_DIR`

#![allow(clippy::print_stdout)] // a measuring tool: it prints its figures

fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_owned() + " kB")
        .unwrap_or_else(|| "?".into())
}

fn main() {
    let dir = std::env::args().nth(1).expect("MODEL_DIR");
    println!("before loading: VmRSS {}", status("VmRSS"));
    let start = std::time::Instant::now();
    let model = pcd_embed::MiniLm::load(std::path::Path::new(&dir)).expect("the model loads");
    let loaded = start.elapsed();
    println!(
        "after loading ({loaded:.2?}): VmRSS {}, peak VmHWM {}",
        status("VmRSS"),
        status("VmHWM")
    );
    let long =
        "please look at the failing deploy and tell me why the health check times out ".repeat(30);
    model.embed(&long).expect("it embeds");
    println!(
        "after embedding a prompt at the bound: VmRSS {}, peak VmHWM {}",
        status("VmRSS"),
        status("VmHWM")
    );
}
