//! Robustness of the lexer and parser on arbitrary input.
//!
//! Deterministic (xorshift PRNG with fixed seeds): random bytes made valid
//! UTF-8, random soups of Pare tokens, and truncated or byte-flipped versions
//! of a valid program are fed to `lex` and `parse_module`. Each must return
//! without panicking, and every span it reports (diagnostics and tokens) must
//! lie within the text, on character boundaries.

use pare_frontend::lexer::{lex, TokenKind};
use pare_frontend::parser::parse_module;
use pare_frontend::source::{Diagnostics, FileId, Span};

/// xorshift64*: small, fast, and the same sequence on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const SAMPLE: &str = r#"import util;

extern fn putchar(c: i32) -> i32;

pub struct Point { x: i64, y: i64 }

global counter: i64 = 0;
global primes: [i64; 5] = [2, 3, 5, 7, 11];
global name: str = "pare\n\x41";

fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
fn scale<const K: i64>(x: i64) -> i64 { x * K }
fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 {
    let mut s = 0;
    for i in 0..len(xs) { s = s + f(xs[i]); }
    s
}

/* a /* nested */ comment */
pub fn main() -> i32 {
    let p = new Point { x: 3, y: 4 };
    counter = counter + util::square(p.x);
    let a = new [i64; 3];
    a[1] = 0x_ff + 0b1010 + 1_000u8 as i64;
    a[2] <<= 2;
    print(sum_by<scale<3>>(a));
    print(sum_by<util::scale<(K + 1)>>(a) >= -9223372036854775808);
    print(max<i32>(2, 7) as i64);
    let c = 'x';
    while counter < 10 && !(counter == 3) { counter += 1; if counter % 2 == 0 { continue; } }
    if p == null { return 1; } else if p.x != 3 { exit(2); } else { print_str("done\n"); }
    0
}
"#;

const SOUP: &[&str] = &[
    "fn",
    "pub",
    "extern",
    "struct",
    "global",
    "import",
    "let",
    "mut",
    "if",
    "else",
    "while",
    "for",
    "in",
    "break",
    "continue",
    "return",
    "new",
    "as",
    "true",
    "false",
    "null",
    "const",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "->",
    "=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    "<<=",
    ">>=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "|",
    "^",
    "<<",
    ">>",
    "!",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "x",
    "f",
    "main",
    "i64",
    "u8",
    "str",
    "T",
    "util",
    "0",
    "42",
    "0xff",
    "7u8",
    "'a'",
    "\"s\"",
    "\"",
    "'",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "@",
    "é",
    "99999999999999999999",
    "1abc",
];

/// Lexes and parses `text`, checking that every reported span is in range.
fn check(text: &str) {
    let file = FileId(3);
    let mut diags = Diagnostics::default();
    let tokens = lex(file, text, &mut diags);
    assert!(
        matches!(tokens.last().map(|t| &t.kind), Some(TokenKind::Eof)),
        "no Eof for {text:?}"
    );
    for token in &tokens {
        check_span(text, token.span, "token");
    }
    let mut diags = Diagnostics::default();
    let module = parse_module("fuzz", file, text, &mut diags);
    assert_eq!(module.file, file);
    for diag in &diags.list {
        check_span(text, diag.span, &diag.message);
        for (span, label) in &diag.secondary {
            check_span(text, *span, label);
        }
    }
}

fn check_span(text: &str, span: Span, what: &str) {
    let (start, end) = (span.start as usize, span.end as usize);
    assert_eq!(span.file, FileId(3), "{what}: wrong file in {text:?}");
    assert!(
        start <= end && end <= text.len(),
        "{what}: span {start}..{end} out of range in {text:?}"
    );
    assert!(
        text.is_char_boundary(start) && text.is_char_boundary(end),
        "{what}: span {start}..{end} splits a character in {text:?}"
    );
}

#[test]
fn sample_program_parses_cleanly() {
    let mut diags = Diagnostics::default();
    let module = parse_module("sample", FileId(3), SAMPLE, &mut diags);
    assert!(diags.list.is_empty(), "{:?}", diags.list);
    assert_eq!(module.items.len(), 10);
}

#[test]
fn random_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..4000 {
        let len = rng.below(200);
        // Bias towards ASCII so that tokens, not just unknown characters, appear.
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(4) == 0 {
                    rng.next() as u8
                } else {
                    (rng.below(95) + 32) as u8
                }
            })
            .collect();
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn token_soup() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..4000 {
        let count = rng.below(120);
        let mut text = String::new();
        for _ in 0..count {
            text.push_str(rng.pick(SOUP));
            if rng.below(3) == 0 {
                text.push(' ');
            }
        }
        check(&text);
    }
}

#[test]
fn mutated_sample() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    let sample = SAMPLE.as_bytes();
    for round in 0..4000 {
        let mut bytes = sample.to_vec();
        match round % 4 {
            0 => bytes.truncate(rng.below(sample.len() + 1)),
            1 => {
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(bytes.len());
                    bytes[at] = rng.next() as u8;
                }
            }
            2 => {
                // Delete a random range.
                let at = rng.below(bytes.len());
                let len = rng.below(40).min(bytes.len() - at);
                bytes.drain(at..at + len);
            }
            _ => {
                // Insert a token from the soup.
                let at = rng.below(bytes.len());
                let token = rng.pick(SOUP).as_bytes().to_vec();
                bytes.splice(at..at, token);
            }
        }
        check(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn pathological_nesting() {
    for piece in [
        "(",
        "{",
        "[",
        "-",
        "!",
        "if x {",
        "f<",
        "g<(",
        "new [",
        "x + ",
        "a.",
        "1 as i64 as ",
    ] {
        for count in [255, 256, 257, 5000] {
            check(&format!("fn f() {{ let x = {}1; }}", piece.repeat(count)));
            check(&format!("global g: i64 = {};", piece.repeat(count)));
        }
    }
}

#[test]
fn parsing_time_is_linear() {
    // 2,000 functions of varied statements: must parse in well under a second per MB.
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!(
            "fn f{i}<T, const K: i64>(a: [T], n: i64) -> i64 {{ let mut s = 0; for j in 0..n {{ if j < K && a[j] > {i} {{ s += g<T, (K + 1)>(a, j) as i64; }} else {{ s = s - 1; }} }} s }}\n"
        ));
    }
    let start = std::time::Instant::now();
    let mut diags = Diagnostics::default();
    let module = parse_module("big", FileId(3), &text, &mut diags);
    println!("parsed {} bytes in {:?}", text.len(), start.elapsed());
    assert!(diags.list.is_empty());
    assert_eq!(module.items.len(), 2000);
    assert!(
        start.elapsed().as_secs() < 10,
        "parsing {} bytes took {:?}",
        text.len(),
        start.elapsed()
    );
}

/// Every `filetests/frontend/syntax_*.pare` program is malformed: it must
/// produce at least one error (their exact output is snapshot-tested
/// elsewhere). With `--nocapture` this prints the rendered diagnostics.
#[test]
fn syntax_filetests_report_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../filetests/frontend");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("syntax_") && name.ends_with(".pare")
        })
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("readable test file");
        let mut sources = pare_frontend::source::SourceMap::new();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_string();
        let file = sources.add(name.clone(), text.clone());
        let mut diags = Diagnostics::default();
        parse_module("test", file, &text, &mut diags);
        println!("==== {name}\n{}", diags.render(&sources));
        assert!(diags.has_errors(), "{name}: no error reported");
    }
}
