//! Source-level tests of the reference interpreter: parse and check Pare
//! programs given as text, run them, and compare output and exit.

use pare_frontend::check_texts;
use pare_frontend::interp::{run_with_big_stack, Exit};
use pare_frontend::tir::TrapKind;

/// Parses, checks and runs modules given as (name, text); the first is the root.
fn run_modules(mods: &[(&str, &str)]) -> (Exit, String) {
    let program = check_texts(mods).unwrap_or_else(|errors| panic!("unexpected errors:\n{errors}"));
    let mut out = Vec::new();
    let exit = run_with_big_stack(&program, &mut out);
    (exit, String::from_utf8_lossy(&out).into_owned())
}

fn run_src(src: &str) -> (Exit, String) {
    run_modules(&[("main", src)])
}

/// Asserts that `src` runs to status 0 printing `expected`.
#[track_caller]
fn assert_output(src: &str, expected: &str) {
    assert_eq!(run_src(src), (Exit::Status(0), expected.to_string()));
}

#[track_caller]
fn assert_trap(src: &str, kind: TrapKind, expected_output: &str) {
    assert_eq!(
        run_src(src),
        (Exit::Trap(kind), expected_output.to_string())
    );
}

#[test]
fn reference_example_with_modules() {
    let main = r#"
import util;

extern fn putchar(c: i32) -> i32;

pub struct Point { x: i64, y: i64 }

global counter: i64 = 0;
global primes: [i64; 5] = [2, 3, 5, 7, 11];

fn main() {
    let p = new Point { x: 3, y: 4 };
    counter = counter + util::square(p.x);
    print(counter);          // 9
    print(primes[4] + len(primes));
    putchar(65);
    putchar(10);
    print_str("done\n");
}
"#;
    let util = "pub fn square(x: i64) -> i64 { x * x }";
    assert_eq!(
        run_modules(&[("main", main), ("util", util)]),
        (Exit::Status(0), "9\n16\nA\ndone\n".to_string())
    );
}

#[test]
fn reference_generics_example() {
    assert_output(
        r#"
fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
fn scale<const K: i64>(x: i64) -> i64 { x * K }
fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 {
    let mut s = 0;
    for i in 0..len(xs) { s = s + f(xs[i]); }
    s
}
fn main() {
    let a = new [i64; 3];
    a[1] = 5;
    print(sum_by<scale<3>>(a));
    print(max(2, 7));
    print(max<i32>(-3, -9));
    print(max<u8>(200, 100));
    print(scale<-2>(21));
}
"#,
        "15\n7\n-3\n200\n-42\n",
    );
}

#[test]
fn integer_semantics() {
    assert_output(
        r#"
fn main() {
    let big: i64 = 9223372036854775807;
    print(big + 1);
    let m: i32 = 2147483647;
    print(m + 1);
    let b: u8 = 250;
    print(b + 10);
    print(-7 / 2);
    print(-7 % 2);
    print(7 % -2);
    print(-9223372036854775808 % -1);
    print(1 << 65);
    print(3 << -1);
    print(-16 >> 2);
    print(255u8 >> 4);
    print(128u8 << 1);
    let x: i32 = -1;
    print(x >> 40);
    print(200u8 / 3u8);
    print(200u8 > 100u8);
    print(-1 < 0);
    print(!0);
    print(!0u8);
    print(!true);
    print(300 as u8);
    print(-1 as u8);
    print((-1 as i32) as i64);
    print(255u8 as i32);
    print(true as i64);
    print(4294967295 as i32);
    print(0xff + 0b1010 + 1_000);
    print('a');
    print(-9223372036854775808);
}
"#,
        "-9223372036854775808\n-2147483648\n4\n-3\n-1\n1\n0\n2\n-9223372036854775808\n-4\n15\n0\n-1\n66\ntrue\ntrue\n-1\n255\nfalse\n44\n255\n-1\n255\n1\n-1\n1265\n97\n-9223372036854775808\n",
    );
}

#[test]
fn division_traps() {
    assert_trap(
        "fn main() { let z = 0; print(1); print(5 / z); }",
        TrapKind::DivisionByZero,
        "1\n",
    );
    assert_trap(
        "fn main() { let z: u8 = 0; print(5u8 % z); }",
        TrapKind::DivisionByZero,
        "",
    );
    assert_trap(
        "fn main() { let m = -9223372036854775808; let d = -1; print(m / d); }",
        TrapKind::DivisionOverflow,
        "",
    );
    assert_trap(
        "fn main() { let m: i32 = -2147483648; let d: i32 = -1; print(m / d); }",
        TrapKind::DivisionOverflow,
        "",
    );
    assert_output(
        "fn main() { let m: i32 = -2147483648; let d: i32 = -1; print(m % d); }",
        "0\n",
    );
}

#[test]
fn heap_traps() {
    assert_trap(
        "fn main() { let a = new [i64; 2]; print(a[2]); }",
        TrapKind::IndexOutOfBounds,
        "",
    );
    assert_trap(
        "fn main() { let a = new [u8; 2]; a[-1] = 1u8; }",
        TrapKind::IndexOutOfBounds,
        "",
    );
    assert_trap(
        "fn main() { let a: [i64] = null; print(len(a)); }",
        TrapKind::NullDereference,
        "",
    );
    assert_trap(
        "struct P { x: i64 } fn main() { let p: P = null; print(p.x); }",
        TrapKind::NullDereference,
        "",
    );
    assert_trap(
        "fn main() { let n = -1; let a = new [i64; n]; }",
        TrapKind::NegativeLength,
        "",
    );
    assert_trap(
        "fn main() { let a = new [i64; 4611686018427387904]; print(len(a)); }",
        TrapKind::OutOfMemory,
        "",
    );
    assert_trap(
        "fn main() { let s = \"ab\"; print(s[2]); }",
        TrapKind::IndexOutOfBounds,
        "",
    );
}

#[test]
fn assignment_evaluation_order() {
    assert_trap(
        r#"
fn t(x: i64) -> i64 { print(x); x }
fn arr() -> [i64] { print(1); null }
fn main() { arr()[t(2)] = t(3); }
"#,
        TrapKind::NullDereference,
        "1\n2\n3\n",
    );
    assert_trap(
        r#"
struct P { x: i64 }
fn t(x: i64) -> i64 { print(x); x }
fn p() -> P { print(1); null }
fn main() { p().x = t(2); }
"#,
        TrapKind::NullDereference,
        "1\n2\n",
    );
}

#[test]
fn compound_assignment_evaluates_place_once() {
    assert_output(
        r#"
global calls: i64 = 0;
fn idx(i: i64) -> i64 { calls += 1; i }
fn main() {
    let a = new [i64; 3];
    a[idx(1)] += 5;
    a[idx(1)] *= 3;
    a[idx(2)] -= 1;
    let mut x: u8 = 250;
    x += 10;
    x <<= 1;
    x >>= 1;
    print(a[1]);
    print(a[2]);
    print(calls);
    print(x);
}
"#,
        "15\n-1\n3\n4\n",
    );
}

#[test]
fn short_circuit_and_loops() {
    assert_output(
        r#"
fn t(b: bool, x: i64) -> bool { print(x); b }
fn main() {
    if t(false, 1) && t(true, 2) { print(100); }
    if t(true, 3) || t(true, 4) { print(200); }
    let mut i = 0;
    while true {
        i += 1;
        if i == 2 { continue; }
        if i > 4 { break; }
        print(i);
    }
    for j in 0..6 {
        if j % 2 == 0 { continue; }
        print(j);
    }
    for k in 5..2 { print(k); }
    let mut n: u8 = 0;
    for b in 250u8..255u8 { n += 1; }
    print(n);
}
"#,
        "1\n3\n200\n1\n3\n4\n1\n3\n5\n5\n",
    );
}

#[test]
fn structs_arrays_and_identity() {
    assert_output(
        r#"
struct Node { value: i64, next: Node }
struct Flags { a: bool, b: u8, c: i32 }
fn push(head: Node, v: i64) -> Node { new Node { next: head, value: v } }
fn main() {
    let mut list: Node = null;
    for i in 0..5 { list = push(list, i); }
    let mut sum = 0;
    let mut n = list;
    while n != null { sum = sum * 10 + n.value; n = n.next; }
    print(sum);
    let f = new Flags { a: true, b: 7u8, c: -3 };
    f.c = f.c * 2;
    print(f.a);
    print(f.b);
    print(f.c);
    let g = f;
    print(g == f);
    print(new Flags { a: false, b: 0u8, c: 0 } == f);
    let bools = new [bool; 2];
    print(bools[1]);
    let nodes = new [Node; 2];
    print(nodes[0] == null);
    let grid = new [[i32]; 2];
    grid[0] = new [i32; 3];
    grid[0][2] = -5;
    print(grid[0][2]);
    print(grid[1] == null);
}
"#,
        "43210\ntrue\n7\n-6\ntrue\nfalse\nfalse\ntrue\n-5\ntrue\n",
    );
}

#[test]
fn strings_and_globals() {
    assert_output(
        r#"
global greeting: str = "hi\n";
global table: [i32; 3] = [10, -20, 30];
global limit: i64 = 3 * 4 + 1;
global flag: bool = !false;
fn main() {
    print_str(greeting);
    print(len(greeting));
    print(greeting[0]);
    let mut s = 0;
    for i in 0..len(table) { s = s + table[i] as i64; }
    print(s);
    table[1] = 5;
    print(table[1]);
    print(limit);
    print(flag);
    let w = "tab\there\\\"q\"\x41\n";
    print_str(w);
}
"#,
        "hi\n3\n104\n20\n5\n13\ntrue\ntab\there\\\"q\"A\n",
    );
}

#[test]
fn recursion_and_exit_status() {
    assert_output(
        r#"
fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }
fn even(n: i64) -> bool { if n == 0 { true } else { odd(n - 1) } }
fn odd(n: i64) -> bool { if n == 0 { false } else { even(n - 1) } }
fn main() { print(fib(20)); print(even(10001)); }
"#,
        "6765\nfalse\n",
    );
    assert_eq!(
        run_src("fn main() -> i32 { 300 }"),
        (Exit::Status(44), String::new())
    );
    assert_eq!(
        run_src("fn main() -> i64 { return -1; }"),
        (Exit::Status(255), String::new())
    );
    assert_eq!(
        run_src("fn main() { print(1); exit(257); print(2); }"),
        (Exit::Status(1), "1\n".to_string())
    );
    assert_eq!(
        run_src("fn f(n: i64) -> i64 { f(n + 1) + 1 } fn main() { print(f(0)); }"),
        (Exit::Trap(TrapKind::StackOverflow), String::new())
    );
}

#[test]
fn deep_but_bounded_recursion() {
    assert_output(
        "fn d(n: i64) -> i64 { if n == 0 { 0 } else { d(n - 1) + 1 } } fn main() { print(d(50000)); }",
        "50000\n",
    );
}

#[test]
fn externs() {
    assert_eq!(
        run_src(
            r#"
extern fn putchar(c: i32) -> i32;
extern fn getchar() -> i32;
extern fn abs(x: i32) -> i32;
extern fn labs(x: i64) -> i64;
extern fn exit(code: i32);
fn main() {
    putchar(111);
    putchar(107);
    putchar(10);
    print(getchar());
    print(abs(-4));
    print(labs(-40000000000));
    exit(3);
    print(0);
}
"#
        ),
        (Exit::Status(3), "ok\n-1\n4\n40000000000\n".to_string())
    );
    assert_eq!(
        run_src("extern fn puts(s: i64) -> i32; fn main() { print(1); puts(0); }"),
        (
            Exit::Error("extern function `puts` is not available in the interpreter".to_string()),
            "1\n".to_string()
        )
    );
}

#[test]
fn blocks_shadowing_and_if_expressions() {
    assert_output(
        r#"
fn sign(x: i64) -> i64 { if x < 0 { -1 } else if x == 0 { 0 } else { 1 } }
fn main() {
    let x = 1;
    let x = x + 1;
    let y = { let z = x * 10; z + 1 };
    print(y);
    print(sign(-5) + sign(0) * 10 + sign(9) * 100);
}
"#,
        "21\n99\n",
    );
}

#[test]
fn generics_across_modules() {
    let main = r#"
import util;
fn apply<f: fn(i64) -> i64>(x: i64) -> i64 { f(x) }
fn twice<f: fn(i64) -> i64>(x: i64) -> i64 { f(f(x)) }
fn add_next<const N: i64>(x: i64) -> i64 { util::scale<(N + 1)>(x) }
fn pick<const B: bool>(a: i64, b: i64) -> i64 { if B { a } else { b } }
fn first<T>(xs: [T]) -> T { xs[0] }
fn main() {
    let p = new util::Point { x: 2, y: -3 };
    print(util::manhattan(p));
    print(apply<util::scale<5>>(4));
    print(twice<util::scale<-3>>(2));
    print(add_next<4>(1));
    print(pick<true>(1, 2) * 10 + pick<false>(1, 2));
    let bs = new [u8; 1];
    bs[0] = 'z';
    print(first(bs));
    let ps = new [util::Point; 1];
    print(first(ps) == null);
}
"#;
    let util = r#"
pub struct Point { x: i64, y: i64 }
fn abs(v: i64) -> i64 { if v < 0 { -v } else { v } }
pub fn manhattan(p: Point) -> i64 { abs(p.x) + abs(p.y) }
pub fn scale<const K: i64>(x: i64) -> i64 { x * K }
"#;
    assert_eq!(
        run_modules(&[("main", main), ("util", util)]),
        (Exit::Status(0), "5\n20\n18\n5\n12\n122\ntrue\n".to_string())
    );
}

#[test]
fn byte_processing() {
    assert_output(
        r#"
fn checksum(s: str) -> u8 {
    let mut h: u8 = 0;
    for i in 0..len(s) { h = (h << 1 | h >> 7) ^ s[i]; }
    h
}
fn main() {
    let s = "Hello, world!\n";
    print(checksum(s));
    let upper = new [u8; len(s)];
    for i in 0..len(s) {
        let c = s[i];
        if c >= 'a' && c <= 'z' { upper[i] = c - 32u8; } else { upper[i] = c; }
    }
    let mut n = 0;
    for i in 0..len(upper) { if upper[i] == 'L' { n += 1; } }
    print(n);
    let mut w: i32 = 1;
    for i in 0..40 { w = w * 3; }
    print(w);
}
"#,
        &format!(
            "{}\n3\n{}\n",
            {
                let mut h: u8 = 0;
                for &c in b"Hello, world!\n" {
                    h = h.rotate_left(1) ^ c;
                }
                h
            },
            3i32.wrapping_pow(40)
        ),
    );
}
