//! End-to-end tests of the lowering: Pare source is checked, lowered with
//! `lower_program`, linked with `runtime_module` in one JIT module, and `main`
//! runs in a forked child; stdout, stderr and the exit status are compared.

#[path = "lower_support.rs"]
mod support;

use support::{run_src, Outcome};

#[track_caller]
fn expect(src: &str, stdout: &str, status: i32) {
    let out = run_src(&[("main", src)]);
    assert_eq!(
        out,
        Outcome {
            status,
            stdout: stdout.to_string(),
            stderr: String::new()
        },
        "program:\n{src}"
    );
}

#[track_caller]
fn expect_trap(src: &str, stdout: &str, message: &str) {
    let out = run_src(&[("main", src)]);
    let stderr = format!("trap: {message}\n");
    assert_eq!(
        out,
        Outcome {
            status: 101,
            stdout: stdout.to_string(),
            stderr
        },
        "program:\n{src}"
    );
}

#[test]
fn prints_integers_and_bools() {
    expect(
        "fn main() { print(0); print(42); print(-7); print(-9223372036854775808); \
         print(9223372036854775807); print(true); print(false); print(255u8); \
         print(-2147483648i32); print_str(\"done\\n\"); }",
        "0\n42\n-7\n-9223372036854775808\n9223372036854775807\ntrue\nfalse\n255\n-2147483648\ndone\n",
        0,
    );
}

#[test]
fn arithmetic_wraps_and_divides_toward_zero() {
    expect(
        "fn div(a: i64, b: i64) -> i64 { a / b }
         fn rem(a: i64, b: i64) -> i64 { a % b }
         fn div32(a: i32, b: i32) -> i32 { a / b }
         fn rem32(a: i32, b: i32) -> i32 { a % b }
         fn main() {
             print(div(7, 2)); print(div(-7, 2)); print(rem(-7, 2)); print(rem(7, -2));
             print(rem(-9223372036854775808, -1)); print(rem32(-2147483648, -1));
             print(div32(-7, 2)); print(-7 / 2); print(-7 % 2); print(7 % -1);
             print(9223372036854775807 + 1); print(2147483647i32 + 1i32);
             print(200u8 + 100u8); print(250u8 / 7u8); print(250u8 % 7u8);
             print(3 * -4); print(0 - 5);
         }",
        "3\n-3\n-1\n1\n0\n0\n-3\n-3\n-1\n0\n-9223372036854775808\n-2147483648\n44\n35\n5\n-12\n-5\n",
        0,
    );
}

#[test]
fn shifts_mask_the_amount() {
    expect(
        "fn shl(x: i64, n: i64) -> i64 { x << n }
         fn main() {
             print(shl(1, 65)); print(shl(1, -1)); print(-16 >> 2); print(240u8 >> 4);
             print(1i32 << 33); print(128u8 << 1); print(1 << 3u8); print(-1 >> 63);
         }",
        "2\n-9223372036854775808\n-4\n15\n2\n0\n8\n-1\n",
        0,
    );
}

#[test]
fn bitwise_casts_and_comparisons() {
    expect(
        "fn main() {
             print(12 & 10); print(12 | 10); print(12 ^ 10); print(!0); print(!true);
             print(-1 as u8); print(300 as u8); print(255u8 as i64); print(-1i32 as i64);
             print(4294967295 as i32); print(true as i64); print(200u8 as i32);
             print(1 < 2); print(-1 < 0); print(200u8 > 100u8); print(3 >= 3); print(3 != 3);
         }",
        "8\n14\n6\n-1\nfalse\n255\n44\n255\n-1\n-1\n1\n200\ntrue\ntrue\ntrue\ntrue\nfalse\n",
        0,
    );
}

#[test]
fn control_flow() {
    expect(
        "fn sum(n: i64) -> i64 {
             let mut s = 0;
             for i in 0..n { if i % 3 == 0 { continue; } if i > 10 { break; } s += i; }
             s
         }
         fn collatz(n: i64) -> i64 {
             let mut steps = 0; let mut x = n;
             while x != 1 { x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 }; steps += 1; }
             steps
         }
         fn sign(x: i64) -> i64 { if x < 0 { return -1; } if x == 0 { 0 } else { 1 } }
         fn nested() -> i64 {
             let mut count = 0;
             for i in 0..5 { for j in i..5 { if j == 3 { break; } count += 1; } }
             count
         }
         fn main() {
             print(sum(20)); print(collatz(27)); print(sign(-5)); print(sign(0)); print(sign(9));
             print(nested());
             let mut k = 10u8; while k > 0u8 { k -= 3u8; if k < 5u8 { break; } } print(k);
             for i in 5..2 { print(i); }
             let b = { let t = 4; t * t }; print(b);
         }",
        "37\n111\n-1\n0\n1\n7\n4\n16\n",
        0,
    );
}

#[test]
fn short_circuit_logic() {
    expect(
        "fn boom() -> bool { print(99); true }
         fn main() {
             print(false && boom()); print(true || boom()); print(true && boom());
             print(false || false); let z = 0; print(z != 0 && 10 / z == 1);
         }",
        "false\ntrue\n99\ntrue\nfalse\nfalse\n",
        0,
    );
}

#[test]
fn arrays_structs_and_globals() {
    expect(
        "struct Node { value: i64, flag: bool, small: i32, next: Node }
         global counter: i64 = 5;
         global primes: [i64; 5] = [2, 3, 5, 7, 11];
         global bytes: [u8; 3] = [1, 2, 255];
         global greeting: str = \"hi\\n\";
         global nothing: [i64] = null;
         fn push(head: Node, v: i64) -> Node { new Node { value: v, flag: v % 2 == 0, small: 7i32, next: head } }
         fn main() {
             let a = new [i64; 4];
             for i in 0..len(a) { a[i] = i * i; }
             a[3] += 100;
             print(a[1] + a[2] + a[3]); print(len(a));
             let mut list = push(push(push(null, 1), 2), 3);
             let mut total = 0;
             while list != null { total = total * 10 + list.value; if list.flag { print(list.small); } list = list.next; }
             print(total);
             counter += 10; print(counter);
             print(primes[4]); primes[0] = 100; print(primes[0] + len(primes));
             print(bytes[2]); print(len(bytes));
             print_str(greeting); print(len(\"abc\")); print(\"abc\"[1]);
             print(nothing == null);
             let flags = new [bool; 2]; flags[1] = true; print(flags[0]); print(flags[1]);
             let words = new [i32; 3]; words[2] = -5i32; print(words[2] as i64 + words[0] as i64);
         }",
        "114\n4\n7\n321\n15\n11\n105\n255\n3\nhi\n3\n98\ntrue\nfalse\ntrue\n-5\n",
        0,
    );
}

#[test]
fn generic_instances() {
    expect(
        "fn max<T>(a: T, b: T) -> T { if a > b { a } else { b } }
         fn scale<const K: i64>(x: i64) -> i64 { x * K }
         fn sum_by<f: fn(i64) -> i64>(xs: [i64]) -> i64 {
             let mut s = 0;
             for i in 0..len(xs) { s = s + f(xs[i]); }
             s
         }
         fn main() {
             let a = new [i64; 3]; a[1] = 5; a[2] = 1;
             print(sum_by<scale<3>>(a)); print(max(2, 7)); print(max<i32>(-3i32, -9i32));
             print(max<u8>(200u8, 100u8));
         }",
        "18\n7\n-3\n200\n",
        0,
    );
}

#[test]
fn exit_status_and_main_result() {
    expect("fn main() -> i64 { print(1); 300 }", "1\n", 44);
    expect("fn main() -> i32 { 7i32 }", "", 7);
    expect("fn main() { print(1); exit(3i32); print(2); }", "1\n", 3);
    expect("fn main() { if true { return; } print(5); }", "", 0);
}

#[test]
fn extern_functions() {
    expect(
        "extern fn labs(x: i64) -> i64;
         extern fn abs(x: i32) -> i32;
         extern fn putchar(c: i32) -> i32;
         fn main() { print(labs(-5)); print(abs(-2147483647i32)); print_str(\"a\"); putchar(98i32); putchar(10i32); }",
        "5\n2147483647\nab\n",
        0,
    );
}

#[test]
fn traps() {
    expect_trap(
        "fn d(a: i64, b: i64) -> i64 { a / b } fn main() { print(1); print(d(1, 0)); }",
        "1\n",
        "division by zero",
    );
    expect_trap(
        "fn d(a: i64, b: i64) -> i64 { a % b } fn main() { print(d(1, 0)); }",
        "",
        "division by zero",
    );
    expect_trap(
        "fn d(a: i64, b: i64) -> i64 { a / b } fn main() { print(d(-9223372036854775808, -1)); }",
        "",
        "division overflow",
    );
    expect_trap(
        "fn d(a: i32, b: i32) -> i32 { a / b } fn main() { print(d(-2147483648i32, -1i32)); }",
        "",
        "division overflow",
    );
    expect_trap(
        "fn d(a: u8, b: u8) -> u8 { a / b } fn main() { print(d(1u8, 0u8)); }",
        "",
        "division by zero",
    );
    expect_trap(
        "fn main() { let a = new [i64; 2]; print(a[2]); }",
        "",
        "index out of bounds",
    );
    expect_trap(
        "fn main() { let a = new [i64; 2]; let i = -1; a[i] = 5; }",
        "",
        "index out of bounds",
    );
    expect_trap(
        "fn main() { let a: [i64] = null; print(len(a)); }",
        "",
        "null dereference",
    );
    expect_trap(
        "struct P { x: i64 } fn main() { let p: P = null; print(1); p.x = 3; }",
        "1\n",
        "null dereference",
    );
    expect_trap(
        "fn main() { let n = -1; let a = new [u8; n]; print(len(a)); }",
        "",
        "negative array length",
    );
    expect_trap(
        "fn main() { let a = new [i64; 4611686018427387904]; print(len(a)); }",
        "",
        "out of memory",
    );
}

#[test]
fn multiple_modules_and_recursion() {
    let out = run_src(&[
        (
            "main",
            "import util;
             fn main() { let p = new util::Point { x: 3, y: 4 }; print(util::norm2(p)); print(util::fib(20)); \
             print(util::twice<i32>(21i32)); }",
        ),
        (
            "util",
            "pub struct Point { x: i64, y: i64 }
             pub fn norm2(p: Point) -> i64 { square(p.x) + square(p.y) }
             fn square(x: i64) -> i64 { x * x }
             pub fn fib(n: i64) -> i64 { if n < 2 { n } else { fib(n - 1) + fib(n - 2) } }
             pub fn twice<T>(x: T) -> T { x + x }",
        ),
    ]);
    assert_eq!(
        out,
        Outcome {
            status: 0,
            stdout: "25\n6765\n42\n".into(),
            stderr: String::new()
        }
    );
}

/// Checks proven on one path must not be reused where that path does not
/// dominate (the lowering's check facts are scoped to dominance).
#[test]
fn checks_are_not_reused_across_joins() {
    expect_trap(
        "struct P { x: i64 }
         fn f(p: P, c: bool) -> i64 { if c { print(p.x); } p.x }
         fn main() { print(f(null, false)); }",
        "",
        "null dereference",
    );
    expect_trap(
        "fn g(a: [i64], n: i64) -> i64 { let mut s = 0; for i in 0..n { s += a[i]; } print(s); a[n] }
         fn main() { let a = new [i64; 2]; a[1] = 4; print(g(a, 2)); }",
        "4\n",
        "index out of bounds",
    );
    expect_trap(
        "fn h(a: [i64]) -> i64 { let ok = a != null && len(a) > 0; print(ok); len(a) }
         fn main() { print(h(null)); }",
        "false\n",
        "null dereference",
    );
    expect_trap(
        "fn k(a: [i64], i: i64) -> i64 { let mut j = 0; while j < 2 { if j == 7 { print(a[i]); } j += 1; } a[i] }
         fn main() { let a = new [i64; 1]; print(k(a, 0)); print(k(a, 5)); }",
        "0\n",
        "index out of bounds",
    );
    expect(
        "fn bump(a: [u8], i: u8) -> u8 { a[i] += 7u8; a[i] * 2u8 }
         fn main() { let a = new [u8; 3]; a[2] = 250u8; print(bump(a, 2u8)); print(a[2]); }",
        "2\n1\n",
        0,
    );
}

/// A flat chain of 10,000 terms (issue 18) is not deep nesting: it is
/// checked, interpreted, lowered and dropped on this 2 MiB test thread.
#[test]
fn a_flat_chain_of_ten_thousand_terms() {
    let chain: Vec<String> = (0..10_000)
        .map(|i| {
            if i % 3 == 2 {
                "2".to_string()
            } else {
                "1".to_string()
            }
        })
        .collect();
    let src = format!(
        "fn main() {{ let x: i32 = {}; print(x); let y = {}; print(y); }}",
        chain.join(" - "),
        chain.join(" + ")
    );
    // 1 - (the other 9,999 terms: 3,333 twos and 6,666 ones), and the sum.
    let expected = "-13331\n13333\n";
    let program = support::check_src(&[("main", &src)]);
    let mut out = Vec::new();
    let exit = pare_frontend::interp::run_with_big_stack(&program, &mut out);
    assert_eq!(exit, pare_frontend::interp::Exit::Status(0));
    assert_eq!(String::from_utf8_lossy(&out), expected);
    expect(&src, expected, 0);
}
