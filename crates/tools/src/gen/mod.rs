//! Random generator of valid, terminating Pare programs: the input side of
//! parec's differential-testing oracle.
//!
//! [`generate`] draws every decision from an [`arbitrary::Unstructured`]
//! (so a fuzzer can steer it); [`generate_from_seed`] feeds it bytes from a
//! seeded PRNG (so CI runs are reproducible). The same bytes (or seed) and
//! configuration always give the same program text.
//!
//! The generator is typed, not a grammar fuzzer: it tracks scopes, types,
//! array lengths and nullness while writing, so every program it produces
//! parses and type-checks per `docs/LANGUAGE.md`. It also keeps programs
//! cheap to run:
//! - the call graph is acyclic except for designated recursion bounded by a
//!   small depth parameter;
//! - loops have small constant trip counts or are guarded by a counter that
//!   strictly increases to a small bound;
//! - every statement and call is charged to a per-function cost budget at
//!   the multiplicity of its enclosing loops, so the total work (and output)
//!   stays small.
//!
//! Content: 1–3 modules (`import`, `pub`, `m::f`); functions over `i64`,
//! `i32`, `u8`, `bool`, arrays and structs (some with more parameters than
//! argument registers); every operator, including wrapping constants, shifts
//! by arbitrary amounts and casts; `&&`/`||` with printing operands; nested
//! `if`/`else` and block expressions; bounded `for`/`while` loops with
//! `break`/`continue`; heap and global arrays; structs with reference fields
//! and null references; bounded self and mutual recursion; generic templates
//! (`scale<const K>`, `gate<const B: bool>`, `apply<op: fn(i64) -> i64>`,
//! `fold<op>`, `pick<T>` over scalars, arrays and structs, `mix<T>` over
//! integers, `chain<K>` and `relay<op>` instantiating other templates), each
//! instantiated 2–5 times from `main`; statement shapes repeated across
//! functions; `print` of intermediate values, live locals and every global.
//!
//! Traps (division by zero, `MIN / -1`, out-of-bounds indices, null
//! dereferences, negative array lengths) appear only at sites drawn with
//! probability [`GenConfig::trap_probability`]; everything else is written
//! to be trap-free.
//!
//! When the byte source runs out, every choice falls back to its first,
//! simplest option, so generation always finishes with a small program.

mod expr;
mod items;
mod model;
mod rng;
mod scope;
mod stmt;

use std::io;
use std::path::{Path, PathBuf};

use arbitrary::Unstructured;

/// Kinds of program content the generator may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// Generic functions (type, constant and function parameters) and their instances.
    pub generics: bool,
    pub structs: bool,
    /// Heap arrays (`new [T; n]`) and fixed global arrays.
    pub arrays: bool,
    /// Scalar and array globals besides the per-module hit counters.
    pub globals: bool,
    /// Bounded self and mutual recursion.
    pub recursion: bool,
    /// `extern fn` calls the reference interpreter implements (`labs`, `abs`, `putchar`).
    pub externs: bool,
    /// String literals, `str` globals, `print_str`.
    pub strings: bool,
    /// Statement shapes repeated across functions.
    pub shapes: bool,
    /// Calls that print or bump a counter in `&&`/`||` operands and conditions.
    pub side_effects: bool,
    /// Up to [`GenConfig::max_modules`] modules instead of one.
    pub multi_module: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            generics: true,
            structs: true,
            arrays: true,
            globals: true,
            recursion: true,
            externs: true,
            strings: true,
            shapes: true,
            side_effects: true,
            multi_module: true,
        }
    }
}

/// Generator knobs. The defaults give programs of at most ~300 lines that
/// interpret in a few milliseconds.
#[derive(Clone, Debug)]
pub struct GenConfig {
    /// Number of ordinary functions besides `main`, probes, templates and recursion (clamped to 1..=12).
    pub min_functions: usize,
    pub max_functions: usize,
    /// Modules, root included (1..=3).
    pub max_modules: usize,
    pub max_stmts_per_block: usize,
    /// Statements per function body (nested ones included).
    pub max_fn_stmts: usize,
    /// Nesting of blocks inside a function (`if`, loops, blocks).
    pub max_nest: usize,
    pub max_expr_depth: u32,
    /// Largest trip count of one loop (≤ 20 keeps programs fast).
    pub max_loop_trip: i64,
    /// Largest product of the trip counts of nested loops.
    pub max_loop_mult: u64,
    /// Largest depth argument of a recursive call (≤ 10).
    pub max_rec_depth: i64,
    pub max_array_len: usize,
    /// Estimated work (statements executed, callees included) per call of a function.
    pub fn_cost_budget: u64,
    /// Estimated work of `main`'s own statements.
    pub main_cost_budget: u64,
    /// Rough bound on the total number of lines.
    pub max_lines: usize,
    /// Probability that a potentially trapping site (divisor, index, field
    /// read, array length) is written to trap.
    pub trap_probability: f64,
    /// Probability that an integer literal is a boundary or wrapping value.
    pub special_literal_probability: f64,
    pub features: Features,
    /// Bytes of PRNG output [`generate_from_seed`] provides.
    pub seed_bytes: usize,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            min_functions: 3,
            max_functions: 9,
            max_modules: 3,
            max_stmts_per_block: 4,
            max_fn_stmts: 14,
            max_nest: 3,
            max_expr_depth: 3,
            max_loop_trip: 12,
            max_loop_mult: 150,
            max_rec_depth: 10,
            max_array_len: 8,
            fn_cost_budget: 1200,
            main_cost_budget: 6000,
            max_lines: 300,
            trap_probability: 0.002,
            special_literal_probability: 0.08,
            features: Features::default(),
            seed_bytes: 1 << 16,
        }
    }
}

/// A generated program: its modules' names and source text, root (`main`) first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GeneratedProgram {
    pub modules: Vec<(String, String)>,
}

impl GeneratedProgram {
    /// Writes every module to `dir/NAME.pare` (creating `dir`); returns the
    /// paths, root first.
    pub fn write_to_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut paths = Vec::new();
        for (name, text) in &self.modules {
            let path = dir.join(format!("{name}.pare"));
            std::fs::write(&path, text)?;
            paths.push(path);
        }
        Ok(paths)
    }

    /// Total number of source lines.
    pub fn line_count(&self) -> usize {
        self.modules.iter().map(|(_, t)| t.lines().count()).sum()
    }

    /// All modules concatenated with `// ==> NAME.pare` headers (for reports).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for (name, text) in &self.modules {
            s += &format!("// ==> {name}.pare\n{text}\n");
        }
        s
    }
}

/// Lets a fuzz target take a program directly (`fuzz_target!(|p: GeneratedProgram| ...)`);
/// uses the default configuration.
impl<'a> arbitrary::Arbitrary<'a> for GeneratedProgram {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        generate(u, &GenConfig::default())
    }
}

/// Generates a program from the bytes of `u`. Never fails for lack of data:
/// an exhausted `u` yields small default choices.
pub fn generate(u: &mut Unstructured, cfg: &GenConfig) -> arbitrary::Result<GeneratedProgram> {
    let generator = model::Gen::new(rng::Rng::new(u), cfg);
    Ok(generator.program())
}

/// Generates the program of `seed`: deterministic across runs and platforms.
pub fn generate_from_seed(seed: u64, cfg: &GenConfig) -> GeneratedProgram {
    let bytes = rng::seed_bytes(seed, cfg.seed_bytes);
    let mut u = Unstructured::new(&bytes);
    generate(&mut u, cfg).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_gives_a_small_program() {
        let mut u = Unstructured::new(&[]);
        let p = generate(&mut u, &GenConfig::default()).unwrap();
        assert_eq!(p.modules[0].0, "main");
        assert!(p.modules[0].1.contains("fn main()"));
    }

    #[test]
    fn same_seed_same_text() {
        let cfg = GenConfig::default();
        for seed in 0..20 {
            assert_eq!(
                generate_from_seed(seed, &cfg),
                generate_from_seed(seed, &cfg)
            );
        }
    }
}
