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
//! functions; `print` of intermediate values, live locals and every global;
//! the constructs of `edge.rs` (expression `for` bounds, `str` identity
//! across modules, deep recursion, compound assignment with side effects).
//!
//! Traps (division by zero, `MIN / -1`, out-of-bounds indices, null
//! dereferences, negative array lengths) appear only at sites drawn with
//! probability [`GenConfig::trap_probability`]; everything else is written
//! to be trap-free.
//!
//! When the byte source runs out, every choice falls back to its first,
//! simplest option, so generation always finishes with a small program.
//!
//! Negative generation ([`negative`]) mutates a generated program into one
//! the checker must reject, one rule of LANGUAGE.md broken per program.
//!
//! # Coverage of docs/LANGUAGE.md
//!
//! "yes" means generated programs contain the construct (most are pinned
//! by tests: `programs_cover_the_language` in `tests/gen_programs.rs`, the
//! tests of `edge.rs` and `audit_additions_appear` here); "negative" means
//! only [`negative`] produces it; "no" gives the reason.
//!
//! | construct | generated |
//! |---|---|
//! | modules, `import`, `pub`, `m::name`, cyclic imports | yes (1–3 modules; items used across modules become `pub` and imported) |
//! | module named by a keyword, duplicate module names | negative (`ModuleNamedByKeyword`) |
//! | `//` comments | yes (module headers) |
//! | nested `/* ... */` comments | yes (rarely, between statements) |
//! | integer literals: decimal, hex, binary, `_`, suffixes, wrapping values | yes |
//! | character literals and their escapes | yes |
//! | string literals with `\n \t \r \0 \\ \' \" \xHH` | yes |
//! | `i64 i32 u8 bool` values, locals, parameters, globals | yes |
//! | `str` values: literals, `str` globals, `len(s)`, `s[i]` | yes |
//! | functions returning `str`, `let r: str`, `return` of a `str` | yes (`edge.rs`) |
//! | `==`/`!=` on `str`: identity of equal literals across modules and spellings, `null` | yes (`edge.rs`) |
//! | `str` parameters | no: nothing but identity and bytes to test, covered by `str` results |
//! | structs, `pub struct`, reference fields, `null`, identity `==` | yes |
//! | `[T]` arrays: `new [T; n]`, run-time lengths, `len`, element reads and writes | yes (scalar and struct elements) |
//! | arrays of arrays, arrays of `str` | no: the generator's types have scalar or struct elements; cheap to add next |
//! | fixed global arrays `[T; N] = [...]` of scalars | yes |
//! | global arrays of `str`/structs initialized with `null` | no: globals of struct type are (null) scalars only; cheap to add next |
//! | global initializers: literals, `-`, `!`, arithmetic, `as`, `null`, string literal | yes |
//! | non-constant global initializer | negative (`NonConstGlobal`) |
//! | `extern fn` `putchar`, `abs`, `labs`, `getchar` | yes (`getchar` is -1: stdin is closed in every executor) |
//! | `extern fn exit`, other C functions | no: `exit` is the builtin; others do not run in the interpreter |
//! | extern with unsupported types | negative (`ExternParamType`) |
//! | `let`, `let mut`, declared types, shadowing | yes |
//! | `=` and every `op=` on locals, globals, fields, elements | yes |
//! | `op=` whose operand has side effects (prints, assigns the target global), on a possibly trapping element or `null` field, division by zero after the operand ran | yes (`edge.rs`) |
//! | assignment to immutable locals, parameters, `for` variables | negative (`AssignImmutable`) |
//! | evaluation order of operands, arguments, `new S {}` fields | yes (printing probes in operands and conditions) |
//! | `if`/`else if`/`else` statements and expressions, block expressions | yes |
//! | `while` with `break`/`continue` | yes (counter-guarded) |
//! | `for` with literal bounds of each integer type, `0..len(a)`, `x..(x + k)` | yes |
//! | `for` with non-literal bounds of each integer type, untyped literal or constant expression bound taking the other's type (and wrapping: `b..260`), bounds at the type's maximum, bounds with side effects | yes (`edge.rs`) |
//! | `for` bounds of a non-integer type or of two integer types | negative (`ForBound*`) |
//! | `break`/`continue` outside a loop | negative (`BreakOutsideLoop`) |
//! | `return;`, `return e;`, trailing expression | yes |
//! | calls, more arguments than registers, unit functions | yes |
//! | recursion: bounded self and mutual (across modules) | yes |
//! | recursion thousands of frames deep, self and mutual across modules | yes (`edge.rs`) |
//! | `stack overflow` trap (a million frames) | yes (at `trap_probability`) |
//! | every operator, shifts by any amount and type, casts incl. `bool as` | yes |
//! | division traps (`/ 0`, `MIN / -1`), `MIN % -1`, index and null traps, negative length | yes (at `trap_probability`) |
//! | `out of memory` trap | no: would allocate gigabytes in every executor |
//! | `write error on stdout` | no: needs a full disk or closed stdout, not a program property |
//! | builtins `print`, `print_str`, `len`, `exit` | yes (`exit` at the end of `main`) |
//! | `main` returning `i32`/`i64` | yes |
//! | generics: type, `const` (integer and `bool`), function parameters; inference; `(..)`/`{..}`/negative/character constant arguments; nested arguments (`>>`); function parameters passed on | yes |
//! | generic argument of the wrong kind, signature mismatch, instance body errors, instantiation deeper than 64 | negative |
//! | 50,000 instances, expressions 50,000 long, nesting near 256 | no: limits, not semantics; too slow for every program (nesting beyond 256 is negative: `NestedTooDeep`) |
//! | every other type error (operands, arguments, `let` types, returns, fields, casts, conditions, unit values, privacy, undefined names, array literals in functions, chained comparisons) | negative (see [`negative::Mutation`]) |

mod edge;
mod expr;
mod items;
mod model;
pub mod negative;
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

/// The first `len` bytes of the generator input of `seed` (the bytes
/// [`generate_from_seed`] generates from, when `len` is
/// [`GenConfig::seed_bytes`]): deterministic across runs and platforms. The
/// cargo-fuzz targets' seed corpus is made of these (`examples/fuzz_seeds.rs`).
pub fn seed_input(seed: u64, len: usize) -> Vec<u8> {
    rng::seed_bytes(seed, len)
}

/// Generates the program of `seed`: deterministic across runs and platforms.
pub fn generate_from_seed(seed: u64, cfg: &GenConfig) -> GeneratedProgram {
    let bytes = seed_input(seed, cfg.seed_bytes);
    let mut u = Unstructured::new(&bytes);
    generate(&mut u, cfg).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shorter seed input is a prefix of the full one, so the generator
    /// makes the same choices from it until it runs out of bytes.
    #[test]
    fn seed_input_prefixes_the_full_input() {
        let cfg = GenConfig::default();
        let full = seed_input(3, cfg.seed_bytes);
        assert_eq!(full.len(), cfg.seed_bytes);
        assert_eq!(seed_input(3, 1000), full[..1000]);
        assert_ne!(seed_input(4, 1000), full[..1000]);
        let mut u = Unstructured::new(&full);
        assert_eq!(generate(&mut u, &cfg).unwrap(), generate_from_seed(3, &cfg));
    }

    #[test]
    fn empty_input_gives_a_small_program() {
        let mut u = Unstructured::new(&[]);
        let p = generate(&mut u, &GenConfig::default()).unwrap();
        assert_eq!(p.modules[0].0, "main");
        assert!(p.modules[0].1.contains("fn main()"));
    }

    /// The cheap additions of the coverage audit keep appearing.
    #[test]
    fn audit_additions_appear() {
        let cfg = GenConfig::default();
        let texts: Vec<String> = (0..200)
            .map(|s| generate_from_seed(s, &cfg).to_text())
            .collect();
        for (needle, min) in [
            ("/* block /* nested */ comment */", 20),
            ("getchar()", 10),
            ("\\r", 20),
            ("\\0", 20),
            ("\\'", 20),
        ] {
            let n = texts.iter().filter(|t| t.contains(needle)).count();
            assert!(n >= min, "`{needle}` in {n} programs (expected ≥ {min})");
        }
        // A character literal as a `u8` constant generic argument.
        let char_arg = texts
            .iter()
            .filter(|t| t.contains(">('") || t.contains("<'"))
            .count();
        assert!(
            char_arg >= 5,
            "char constant arguments in {char_arg} programs"
        );
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
