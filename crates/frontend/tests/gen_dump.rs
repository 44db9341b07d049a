//! `GEN_SEED=N cargo test -p pare-frontend --test gen_dump -- --nocapture`
//! prints the program of seed N (for inspecting the generator).

use pare_frontend::gen::{generate_from_seed, GenConfig};

#[test]
fn dump_seed_from_env() {
    let Ok(seed) = std::env::var("GEN_SEED") else {
        return;
    };
    let Ok(seed) = seed.parse::<u64>() else {
        return;
    };
    let p = generate_from_seed(seed, &GenConfig::default());
    println!("{}", p.to_text());
    if let Ok(dir) = std::env::var("GEN_DIR") {
        p.write_to_dir(std::path::Path::new(&dir)).expect("write");
    }
}
