//! Negative generation: programs the checker must reject.
//!
//! [`generate_negative`] takes the well-typed program of a seed and applies
//! one [`Mutation`] that breaks one rule of `docs/LANGUAGE.md` (each kind
//! names its rule, [`Mutation::rule`]): statements inserted between two
//! top-level statements of `main`, items appended to the root module, or an
//! extra module. The tester (`difftest::negative`) checks that the
//! front end rejects the result with a located diagnostic and does not
//! panic.
//!
//! Names the mutation introduces start with `neg_`, which the positive
//! generator never uses, so a mutation cannot clash with the program by
//! accident; the only items it relies on are the root module's `note0`
//! and `flag0` probes (always present), its structs and unit functions
//! (with fallbacks appended when there are none) and, for [`Mutation::PrivateItem`],
//! the private items of another module.
//!
//! Deterministic: the program, the kind and every choice come from the seed.

use super::rng::splitmix64;
use super::{generate_from_seed, GenConfig, GeneratedProgram};

/// One way of making a program ill-typed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mutation {
    ForBoundStr,
    ForBoundBool,
    ForBoundStruct,
    ForBoundArray,
    ForBoundNull,
    ForBoundUnitCall,
    ForBoundMixedInts,
    ForBoundInInstance,
    AssignImmutable,
    WrongArgCount,
    WrongArgType,
    BreakOutsideLoop,
    GenericArgWrongKind,
    FnArgWrongSignature,
    UndefinedName,
    ModuleNamedByKeyword,
    LetTypeMismatch,
    BinaryTypeMismatch,
    ReturnTypeMismatch,
    StructFields,
    StrWrite,
    NonConstGlobal,
    GenericTooDeep,
    InstanceBodyError,
    BuiltinArgType,
    UnitValueUsed,
    PrivateItem,
    NestedTooDeep,
    ChainedComparison,
    UnaryOperand,
    IndexNonArray,
    FieldOfNonStruct,
    InvalidCast,
    IfBranchMismatch,
    ConditionNotBool,
    ArrayLiteralInFunction,
    ExternParamType,
}

impl Mutation {
    pub const ALL: [Mutation; 37] = [
        Mutation::ForBoundStr,
        Mutation::ForBoundBool,
        Mutation::ForBoundStruct,
        Mutation::ForBoundArray,
        Mutation::ForBoundNull,
        Mutation::ForBoundUnitCall,
        Mutation::ForBoundMixedInts,
        Mutation::ForBoundInInstance,
        Mutation::AssignImmutable,
        Mutation::WrongArgCount,
        Mutation::WrongArgType,
        Mutation::BreakOutsideLoop,
        Mutation::GenericArgWrongKind,
        Mutation::FnArgWrongSignature,
        Mutation::UndefinedName,
        Mutation::ModuleNamedByKeyword,
        Mutation::LetTypeMismatch,
        Mutation::BinaryTypeMismatch,
        Mutation::ReturnTypeMismatch,
        Mutation::StructFields,
        Mutation::StrWrite,
        Mutation::NonConstGlobal,
        Mutation::GenericTooDeep,
        Mutation::InstanceBodyError,
        Mutation::BuiltinArgType,
        Mutation::UnitValueUsed,
        Mutation::PrivateItem,
        Mutation::NestedTooDeep,
        Mutation::ChainedComparison,
        Mutation::UnaryOperand,
        Mutation::IndexNonArray,
        Mutation::FieldOfNonStruct,
        Mutation::InvalidCast,
        Mutation::IfBranchMismatch,
        Mutation::ConditionNotBool,
        Mutation::ArrayLiteralInFunction,
        Mutation::ExternParamType,
    ];

    pub fn name(self) -> String {
        format!("{self:?}")
    }

    /// The rule of LANGUAGE.md the mutation breaks.
    pub fn rule(self) -> &'static str {
        match self {
            Mutation::ForBoundStr
            | Mutation::ForBoundBool
            | Mutation::ForBoundStruct
            | Mutation::ForBoundArray
            | Mutation::ForBoundNull
            | Mutation::ForBoundUnitCall => {
                "the bounds of a `for` range must be integers (not a struct or array reference, `str`, `bool`, `null` or a call without a value)"
            }
            Mutation::ForBoundMixedInts => {
                "the bounds of a `for` range must be integers of one type (an `i32` and an `i64` are an error)"
            }
            Mutation::ForBoundInInstance => {
                "`for` bounds must be integers of one type, checked per generic instance"
            }
            Mutation::AssignImmutable => {
                "assignment is allowed to mutable locals, globals, fields and elements (parameters and `for` variables are immutable)"
            }
            Mutation::WrongArgCount | Mutation::WrongArgType => {
                "a call passes one argument of the parameter's type per parameter (no implicit conversions)"
            }
            Mutation::BreakOutsideLoop => "`break` and `continue` leave or continue the innermost loop",
            Mutation::GenericArgWrongKind => {
                "a generic argument is a type for a type parameter, a constant for a `const` parameter, a function for a function parameter"
            }
            Mutation::FnArgWrongSignature => {
                "a function argument's signature must match the function parameter's exactly"
            }
            Mutation::UndefinedName => "names must be declared (locals, items, `module::name` of an imported module)",
            Mutation::ModuleNamedByKeyword => "module names must be identifiers that are not keywords",
            Mutation::LetTypeMismatch => "a `let` with a declared type needs a value of that type",
            Mutation::BinaryTypeMismatch => "binary operators need both operands of the same type (except the shift amount)",
            Mutation::ReturnTypeMismatch => "a function's result (trailing expression or `return e`) has its return type",
            Mutation::StructFields => "`new S { ... }` gives every field of `S` exactly once",
            Mutation::StrWrite => "a `str` cannot be written",
            Mutation::NonConstGlobal => "a global's initializer is a constant expression",
            Mutation::GenericTooDeep => "instantiation deeper than 64 nested levels is an error",
            Mutation::InstanceBodyError => "generic bodies are checked per instance (`max<bool>` uses `>` on `bool`)",
            Mutation::BuiltinArgType => "builtins take the documented types (`print`: integer or bool, `print_str`: str, `len`: array or str, `exit`: i32)",
            Mutation::UnitValueUsed => "the unit type has no values: a call without a value cannot be stored or printed",
            Mutation::PrivateItem => "`pub` makes an item visible to other modules",
            Mutation::NestedTooDeep => "nesting is limited to 256 levels (\"expression nested too deeply\")",
            Mutation::ChainedComparison => "comparison operators are non-associative",
            Mutation::UnaryOperand => "unary `-` applies to integers, `!` to bool and integers",
            Mutation::IndexNonArray => "`a[i]` needs an array or `str`",
            Mutation::FieldOfNonStruct => "`p.f` needs a struct with field `f`",
            Mutation::InvalidCast => "`as` converts between integer types and from bool to an integer type",
            Mutation::IfBranchMismatch => "an `if` expression's branches have the same type",
            Mutation::ConditionNotBool => "conditions of `if` and `while` are `bool` (no implicit conversions)",
            Mutation::ArrayLiteralInFunction => "array literals appear in global initializers only",
            Mutation::ExternParamType => "extern functions take and return `i64`, `i32`, `u8` or `bool`",
        }
    }

    /// Whether checking needs the files on disk (the file name is the module name).
    pub fn needs_files(self) -> bool {
        self == Mutation::ModuleNamedByKeyword
    }
}

/// A program that must be rejected.
#[derive(Clone, Debug)]
pub struct NegativeProgram {
    pub seed: u64,
    pub program: GeneratedProgram,
    pub mutation: Mutation,
    /// The offending line (module index, 1-based line) when one line is to blame.
    pub site: Option<(usize, usize)>,
    /// The inserted text, for reports.
    pub inserted: String,
}

/// The negative program of `seed`: the positive program of the same seed
/// with one mutation (chosen by the seed).
pub fn generate_negative(seed: u64, cfg: &GenConfig) -> NegativeProgram {
    let mut state = seed ^ 0x6e65_6761_7469_7665; // "negative"
    let first = (splitmix64(&mut state) % Mutation::ALL.len() as u64) as usize;
    // A kind that does not apply to this program (a private item needs two
    // modules) passes to the next.
    for k in 0..Mutation::ALL.len() {
        let mutation = Mutation::ALL[(first + k) % Mutation::ALL.len()];
        if let Some(n) = generate_negative_with(seed, cfg, mutation) {
            return n;
        }
    }
    unreachable!("most mutations apply to every program")
}

/// The positive program of `seed` with `mutation`, if it applies.
pub fn generate_negative_with(
    seed: u64,
    cfg: &GenConfig,
    mutation: Mutation,
) -> Option<NegativeProgram> {
    let program = generate_from_seed(seed, cfg);
    let mut state = seed.wrapping_mul(31).wrapping_add(mutation as u64);
    let facts = Facts::of(&program);
    let patch = patch_for(mutation, &facts, &mut state)?;
    Some(apply(seed, program, mutation, patch, &mut state))
}

/// What a mutation adds.
#[derive(Default)]
struct Patch {
    /// Statements inserted between two top-level statements of `main`.
    stmts: Vec<String>,
    /// Lines appended to the root module.
    items: Vec<String>,
    /// An extra module (name, text).
    module: Option<(String, String)>,
    /// The offending line.
    site: Site,
}

#[derive(Default, Clone, Copy)]
enum Site {
    /// Not one line (e.g. an instantiation error may be reported in the body or at the call).
    #[default]
    Anywhere,
    Stmt(usize),
    Item(usize),
}

/// What the mutations need to know about the program, read from its text.
struct Facts {
    /// Root-module structs: name and fields (name, type text).
    structs: Vec<(String, Vec<(String, String)>)>,
    /// Non-`pub` functions and globals of module `m1`, if there is one.
    private_in_m1: Option<String>,
}

impl Facts {
    fn of(program: &GeneratedProgram) -> Facts {
        let root = &program.modules[0].1;
        let structs = root
            .lines()
            .filter_map(|l| l.strip_prefix("pub ").unwrap_or(l).strip_prefix("struct "))
            .filter_map(parse_struct)
            .collect();
        // A private global (`str` globals never are public), else a private function.
        let private_in_m1 = program.modules.get(1).and_then(|(_, text)| {
            let named = |prefix: &str| {
                text.lines().find_map(|l| {
                    let rest = l.strip_prefix(prefix)?;
                    let end = rest.find(['(', ':', '<'])?;
                    Some(rest[..end].trim().to_string())
                })
            };
            named("global ").or_else(|| named("fn "))
        });
        Facts {
            structs,
            private_in_m1,
        }
    }
}

/// `S0 { a: i64, r: S1 }` → name and fields.
fn parse_struct(rest: &str) -> Option<(String, Vec<(String, String)>)> {
    let (name, body) = rest.split_once('{')?;
    let body = body.trim().strip_suffix('}')?;
    let fields = body
        .split(',')
        .filter_map(|f| {
            let (n, t) = f.split_once(':')?;
            Some((n.trim().to_string(), t.trim().to_string()))
        })
        .collect();
    Some((name.trim().to_string(), fields))
}

/// A well-typed value of the type written `ty` (`null` for references).
fn zero_of(ty: &str) -> &'static str {
    match ty {
        "i64" | "i32" | "u8" => "0",
        "bool" => "false",
        "str" => "\"\"",
        _ => "null",
    }
}

fn pick<T: Copy>(state: &mut u64, xs: &[T]) -> T {
    xs[(splitmix64(state) % xs.len() as u64) as usize]
}

/// `new S { ... }` for a root struct, or one appended for the purpose.
fn struct_value(facts: &Facts, items: &mut Vec<String>) -> (String, String) {
    let (name, fields) = match facts.structs.first() {
        Some(s) => s.clone(),
        None => {
            items.push("struct NegS { a: i64, b: bool }".into());
            (
                "NegS".to_string(),
                vec![("a".into(), "i64".into()), ("b".into(), "bool".into())],
            )
        }
    };
    let inits: Vec<String> = fields
        .iter()
        .map(|(f, t)| format!("{f}: {}", zero_of(t)))
        .collect();
    let value = format!("new {name} {{ {} }}", inits.join(", "));
    (name, value)
}

const KEYWORDS: [&str; 8] = [
    "fn", "while", "for", "struct", "let", "null", "const", "global",
];

fn patch_for(mutation: Mutation, facts: &Facts, st: &mut u64) -> Option<Patch> {
    let stmt = |s: &str| Patch {
        stmts: vec![s.to_string()],
        site: Site::Stmt(0),
        ..Patch::default()
    };
    // A statement after a valid setup statement.
    let after = |setup: &str, s: &str| Patch {
        stmts: vec![setup.to_string(), s.to_string()],
        site: Site::Stmt(1),
        ..Patch::default()
    };
    let unit_fn = "fn neg_unit() {\n    print(1);\n}";
    Some(match mutation {
        Mutation::ForBoundStr => stmt(pick(
            st,
            &["for neg_i in 0..\"abc\" { }", "for neg_i in \"abc\"..3 { }"],
        )),
        Mutation::ForBoundBool => match splitmix64(st) % 2 {
            0 => stmt("for neg_i in 0..true { }"),
            _ => after("let neg_b = (1 < 2);", "for neg_i in neg_b..4 { }"),
        },
        Mutation::ForBoundStruct => {
            let mut items = Vec::new();
            let (_, value) = struct_value(facts, &mut items);
            Patch {
                items,
                ..after(
                    &format!("let neg_s = {value};"),
                    "for neg_i in 0..neg_s { }",
                )
            }
        }
        Mutation::ForBoundArray => after(
            "let neg_a = new [i64; 3];",
            pick(
                st,
                &["for neg_i in neg_a..3 { }", "for neg_i in 0..neg_a { }"],
            ),
        ),
        Mutation::ForBoundNull => stmt(pick(
            st,
            &["for neg_i in null..5 { }", "for neg_i in 0..null { }"],
        )),
        Mutation::ForBoundUnitCall => Patch {
            items: vec![unit_fn.into()],
            ..stmt(pick(
                st,
                &[
                    "for neg_i in 0..neg_unit() { }",
                    "for neg_i in neg_unit()..2 { }",
                ],
            ))
        },
        Mutation::ForBoundMixedInts => match splitmix64(st) % 4 {
            0 => stmt("for neg_i in 0i32..5i64 { }"),
            1 => after("let neg_x: u8 = 3;", "for neg_i in neg_x..10i32 { }"),
            2 => stmt("for neg_i in (1u8 + 1u8)..note0(4) { }"),
            _ => after(
                "let neg_x: i32 = 2;",
                "for neg_i in neg_x..len(\"abcd\") { }",
            ),
        },
        Mutation::ForBoundInInstance => {
            let (item, call) = pick(
                st,
                &[
                    (
                        "fn neg_loop<T>(a: T, b: T) {\n    for neg_i in a..b { }\n}",
                        "neg_loop<bool>(true, false);",
                    ),
                    (
                        "fn neg_loop<T>(a: T, b: T) {\n    for neg_i in a..b { }\n}",
                        "neg_loop(\"a\", \"b\");",
                    ),
                    (
                        "fn neg_loop<T>(a: T, b: T) {\n    for neg_i in a..b { }\n}",
                        "neg_loop<[i64]>(null, null);",
                    ),
                    (
                        "fn neg_loop<T>(a: T) {\n    for neg_i in a..5i64 { }\n}",
                        "neg_loop<i32>(1);",
                    ),
                    (
                        "fn neg_loop<const B: bool>() {\n    for neg_i in 0..B { }\n}",
                        "neg_loop<true>();",
                    ),
                ],
            );
            Patch {
                items: vec![item.into()],
                ..stmt(call)
            }
            .anywhere()
        }
        Mutation::AssignImmutable => match splitmix64(st) % 5 {
            4 => Patch {
                items: vec!["fn neg_k<const K: i64>() {\n    K = 1;\n}".into()],
                stmts: vec!["neg_k<3>();".into()],
                site: Site::Item(1),
                ..Patch::default()
            },
            0 => after("let neg_v = 1;", "neg_v = 2;"),
            1 => after("let neg_v: u8 = 1;", "neg_v += 2;"),
            2 => stmt("for neg_i in 0..3 { neg_i = 1; }"),
            _ => Patch {
                items: vec!["fn neg_p(x: i64) {\n    x = 1;\n}".into()],
                site: Site::Item(1),
                ..Patch::default()
            },
        },
        Mutation::WrongArgCount => stmt(pick(
            st,
            &[
                "print(note0(1, 2));",
                "print(note0());",
                "print(flag0(true));",
                "print(flag0(true, 1, 2));",
            ],
        )),
        Mutation::WrongArgType => stmt(pick(
            st,
            &[
                "print(note0(true));",
                "print(flag0(1, 2));",
                "print(note0(\"abc\"));",
                "print(note0(1i32));",
                "print(flag0(false, null));",
            ],
        )),
        Mutation::BreakOutsideLoop => stmt(pick(st, &["break;", "continue;"])),
        Mutation::GenericArgWrongKind => {
            let (item, call) = pick(
                st,
                &[
                    (
                        "fn neg_k<const K: i64>(x: i64) -> i64 { x * K }",
                        "print(neg_k<bool>(1));",
                    ),
                    ("fn neg_t<T>(x: T) -> T { x }", "print(neg_t<3>(1));"),
                    (
                        "fn neg_f<op: fn(i64) -> i64>(x: i64) -> i64 { op(x) }",
                        "print(neg_f<i64>(1));",
                    ),
                    (
                        "fn neg_f<op: fn(i64) -> i64>(x: i64) -> i64 { op(x) }",
                        "print(neg_f<7>(1));",
                    ),
                    (
                        "fn neg_k<const K: i64>(x: i64) -> i64 { x * K }",
                        "print(neg_k<note0>(1));",
                    ),
                    // Only type parameters are inferred.
                    (
                        "fn neg_k<const K: i64>(x: i64) -> i64 { x * K }",
                        "print(neg_k(1));",
                    ),
                    ("fn neg_t<T>(x: T) -> T { x }", "print(neg_t<i64, i64>(1));"),
                ],
            );
            Patch {
                items: vec![item.into()],
                ..stmt(call)
            }
        }
        Mutation::FnArgWrongSignature => Patch {
            items: vec!["fn neg_f<op: fn(i64) -> i64>(x: i64) -> i64 { op(x) }".into()],
            ..stmt(pick(
                st,
                &["print(neg_f<flag0>(1));", "print(neg_f<neg_unit>(1));"],
            ))
        }
        .with_item(unit_fn),
        Mutation::UndefinedName => stmt(pick(
            st,
            &[
                "print(neg_undefined);",
                "neg_nosuch(1);",
                "print(neg_m9::note0(1));",
                "let neg_s = new NegNoSuchStruct { a: 1 };",
                "neg_nowhere = 3;",
            ],
        )),
        Mutation::ModuleNamedByKeyword => {
            let kw = pick(st, &KEYWORDS);
            Patch {
                module: Some((kw.to_string(), "pub fn neg_g() -> i64 {\n    1\n}\n".into())),
                ..Patch::default()
            }
        }
        Mutation::LetTypeMismatch => stmt(pick(
            st,
            &[
                "let neg_v: i32 = 5i64;",
                "let neg_v: bool = 1;",
                "let neg_v: u8 = \"a\";",
                "let neg_v: str = 'a';",
                "let neg_v: i64 = true;",
                "let neg_v: [i64] = new [i32; 2];",
            ],
        )),
        Mutation::BinaryTypeMismatch => stmt(pick(
            st,
            &[
                "print((1i32 + 2i64));",
                "print((1u8 < 2i32));",
                "print((true + 1));",
                "print((note0(1) * 2u8));",
                "print((\"a\" == 1));",
                "print((true && 1));",
            ],
        )),
        Mutation::ReturnTypeMismatch => Patch {
            items: vec![pick(
                st,
                &[
                    "fn neg_r() -> i64 {\n    true\n}",
                    "fn neg_r() -> bool {\n    return 1;\n}",
                    "fn neg_r() {\n    return 1;\n}",
                    "fn neg_r() -> i32 {\n    5i64\n}",
                    "fn neg_r() -> i64 {\n    return;\n}",
                ],
            )
            .to_string()],
            site: Site::Item(1),
            ..Patch::default()
        },
        Mutation::StructFields => {
            let mut items = Vec::new();
            let (name, _) = struct_value(facts, &mut items);
            let fields = facts
                .structs
                .first()
                .map(|s| s.1.clone())
                .unwrap_or_else(|| vec![("a".into(), "i64".into()), ("b".into(), "bool".into())]);
            let all: Vec<String> = fields
                .iter()
                .map(|(f, t)| format!("{f}: {}", zero_of(t)))
                .collect();
            let value = match splitmix64(st) % 3 {
                // Missing the last field.
                0 => format!("new {name} {{ {} }}", all[..all.len() - 1].join(", ")),
                // The first field twice.
                1 => format!("new {name} {{ {}, {} }}", all.join(", "), all[0]),
                // A field the struct does not have.
                _ => format!("new {name} {{ {}, neg_z: 1 }}", all.join(", ")),
            };
            Patch {
                items,
                ..stmt(&format!("let neg_s = {value};"))
            }
        }
        Mutation::StrWrite => after("let neg_s = \"abc\";", "neg_s[0] = 65u8;"),
        Mutation::NonConstGlobal => Patch {
            items: vec![pick(
                st,
                &[
                    "global neg_g: i64 = note0(1);",
                    "global neg_g: i64 = len(\"ab\");",
                    "global neg_g: [i64] = new [i64; 2];",
                    "global neg_g: i64 = hits0;",
                ],
            )
            .to_string()],
            site: Site::Item(0),
            ..Patch::default()
        },
        Mutation::GenericTooDeep => Patch {
            items: vec!["fn neg_d<const N: i64>() {\n    neg_d<(N + 1)>();\n}".into()],
            ..stmt("neg_d<0>();")
        }
        .anywhere(),
        Mutation::InstanceBodyError => Patch {
            items: vec![
                "fn neg_max<T>(a: T, b: T) -> T {\n    if a > b { a } else { b }\n}".into(),
            ],
            ..stmt(pick(
                st,
                &[
                    "print(neg_max<bool>(true, false));",
                    "let neg_v = neg_max(new [i64; 1], new [i64; 1]);",
                ],
            ))
        }
        .anywhere(),
        Mutation::BuiltinArgType => stmt(pick(
            st,
            &[
                "print(\"abc\");",
                "print_str(1);",
                "print(new [i64; 1]);",
                "print(len(5));",
                "exit(true);",
            ],
        )),
        Mutation::UnitValueUsed => Patch {
            items: vec![unit_fn.into()],
            ..stmt(pick(
                st,
                &[
                    "let neg_v = neg_unit();",
                    "print(neg_unit());",
                    "let neg_v = print(1);",
                ],
            ))
        },
        Mutation::PrivateItem => {
            let item = facts.private_in_m1.clone()?;
            stmt(&format!("let neg_v = m1::{item};"))
        }
        Mutation::NestedTooDeep => {
            let n = 300;
            stmt(&format!("print({}1{});", "(".repeat(n), ")".repeat(n)))
        }
        Mutation::ChainedComparison => stmt(pick(
            st,
            &["print((1 < 2 < 3));", "print((1 == 1 == true));"],
        )),
        Mutation::UnaryOperand => stmt(pick(
            st,
            &["print(-true);", "print(!\"abc\");", "let neg_v = -null;"],
        )),
        Mutation::IndexNonArray => after(
            "let neg_v = 5;",
            pick(st, &["print(neg_v[0]);", "neg_v[0] = 1;"]),
        ),
        Mutation::FieldOfNonStruct => match splitmix64(st) % 2 {
            0 => after("let neg_v = 5;", "print(neg_v.a);"),
            _ => {
                let mut items = Vec::new();
                let (_, value) = struct_value(facts, &mut items);
                Patch {
                    items,
                    ..after(
                        &format!("let neg_s = {value};"),
                        "print(neg_s.neg_nofield);",
                    )
                }
            }
        },
        Mutation::InvalidCast => stmt(pick(
            st,
            &[
                "print((1 as bool));",
                "print((\"a\" as i64));",
                "print((null as i64));",
                "print((new [u8; 1] as i64));",
            ],
        )),
        Mutation::IfBranchMismatch => stmt(pick(
            st,
            &[
                "let neg_v = if true { 1 } else { false };",
                "let neg_v = if true { 1i32 } else { 2i64 };",
                "print(if true { 1 } else { \"x\" });",
            ],
        )),
        Mutation::ConditionNotBool => stmt(pick(
            st,
            &[
                "if 1 { print(1); }",
                "while 0 { }",
                "if null { }",
                "while \"x\" { }",
            ],
        )),
        Mutation::ArrayLiteralInFunction => {
            stmt(pick(st, &["let neg_v = [1, 2];", "print([1][0]);"]))
        }
        Mutation::ExternParamType => Patch {
            items: vec![pick(
                st,
                &[
                    "extern fn neg_e(s: str) -> i64;",
                    "extern fn neg_e(x: i64) -> str;",
                    "extern fn neg_e(a: [i64]);",
                ],
            )
            .to_string()],
            site: Site::Item(0),
            ..Patch::default()
        },
    })
}

impl Patch {
    fn with_item(mut self, item: &str) -> Patch {
        self.items.push(item.into());
        self
    }

    fn anywhere(mut self) -> Patch {
        self.site = Site::Anywhere;
        self
    }
}

/// Applies `patch` to `program`: statements before a random top-level
/// statement of `main` (never inside a loop), items at the end of the root
/// module, an extra module last.
fn apply(
    seed: u64,
    mut program: GeneratedProgram,
    mutation: Mutation,
    patch: Patch,
    st: &mut u64,
) -> NegativeProgram {
    let root = &program.modules[0].1;
    let mut lines: Vec<String> = root.lines().map(str::to_string).collect();
    let main = lines
        .iter()
        .position(|l| l.starts_with("fn main("))
        .unwrap_or(0);
    // Top-level statements of `main` start at exactly four spaces of indentation.
    let body_end = lines[main..]
        .iter()
        .position(|l| l == "}")
        .map_or(lines.len(), |i| main + i);
    let starts: Vec<usize> = (main + 1..body_end)
        .filter(|&i| {
            let l = &lines[i];
            l.starts_with("    ") && !l.starts_with("     ") && !l[4..].starts_with('}')
        })
        .collect();
    let at = if starts.is_empty() {
        main + 1
    } else {
        pick(st, &starts)
    };
    let mut inserted = Vec::new();
    for (k, s) in patch.stmts.iter().enumerate() {
        lines.insert(at + k, format!("    {s}"));
        inserted.push(format!("    {s}"));
    }
    let item_start = lines.len() + 1;
    if !patch.items.is_empty() {
        lines.push(String::new());
    }
    for item in &patch.items {
        for l in item.lines() {
            lines.push(l.to_string());
            inserted.push(l.to_string());
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    if mutation == Mutation::PrivateItem && !text.contains("import m1;") {
        text = format!("import m1;\n{text}");
    }
    let shift = usize::from(text.starts_with("import m1;\n") && !root.contains("import m1;"));
    program.modules[0].1 = text;
    let site = match patch.site {
        Site::Anywhere => None,
        Site::Stmt(k) => Some((0, at + k + 1 + shift)),
        Site::Item(k) => Some((0, item_start + 1 + k + shift)),
    };
    if let Some((name, text)) = patch.module {
        inserted.push(format!("// ==> {name}.pare\n{text}"));
        program.modules.push((name, text));
    }
    NegativeProgram {
        seed,
        program,
        mutation,
        site,
        inserted: inserted.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn same_seed_same_negative_program() {
        let cfg = GenConfig::default();
        for seed in 0..20 {
            let (a, b) = (generate_negative(seed, &cfg), generate_negative(seed, &cfg));
            assert_eq!(a.program, b.program);
            assert_eq!((a.mutation, a.site), (b.mutation, b.site));
        }
    }

    /// The seeds spread over every kind, and a mutation changes the program.
    #[test]
    fn seeds_cover_every_mutation_kind() {
        let cfg = GenConfig::default();
        let mut kinds = BTreeSet::new();
        for seed in 0..400 {
            let n = generate_negative(seed, &cfg);
            assert_ne!(n.program, generate_from_seed(seed, &cfg), "seed {seed}");
            kinds.insert(n.mutation);
        }
        let missing: Vec<_> = Mutation::ALL
            .iter()
            .filter(|k| !kinds.contains(k))
            .collect();
        assert!(missing.is_empty(), "never chosen: {missing:?}");
    }

    /// The recorded site is the line holding the inserted offending text.
    #[test]
    fn site_points_at_the_inserted_line() {
        let cfg = GenConfig::default();
        for seed in 0..100 {
            let n = generate_negative(seed, &cfg);
            let Some((m, line)) = n.site else { continue };
            let text = n.program.modules[m].1.lines().nth(line - 1).unwrap_or("");
            assert!(
                n.inserted.lines().any(|l| l.trim() == text.trim()) && !text.trim().is_empty(),
                "seed {seed} {:?}: line {line} is `{text}`",
                n.mutation
            );
        }
    }
}
