#!/usr/bin/env python3
"""Source texts scanned by bench/tokenizer; prints them as escaped string
literals (valid in both Pare and C) for main.pare and tokenizer.c."""

TEXTS = [
r'''// A small Pare-like module used as tokenizer input.
import util;

pub struct Point { x: i64, y: i64 }

global origin_x: i64 = 0x10;
global limit: i64 = 1_000_000;

fn dist2(a: Point, b: Point) -> i64 {
    let dx = a.x - b.x;
    let dy = a.y - b.y;
    dx * dx + dy * dy
}

pub fn closest(points: [Point], target: Point) -> i64 {
    let mut best = -1;
    let mut best_d = limit;
    for i in 0..len(points) {
        let d = dist2(points[i], target);
        if d < best_d && d >= 0 {
            best_d = d;
            best = i;
        }
    }
    best
}

fn main() {
    let p = new Point { x: 3, y: 4 };
    print(util::square(p.x) + 0xff);
    print_str("closest: \"done\"\n");
    if p.x != p.y || p.x << 2 == 12 { print(1); } else { print(0); }
}
''',
r'''/* C-style text: the scanner treats slash-star as two operators. */
int fib(int n) {
    int a = 0, b = 1;
    while (n-- > 0) { int t = a + b; a = b; b = t; }
    return a;
}
int main(void) {
    const char *msg = "fib(40) = %d\n";
    unsigned mask = 0xdeadbeef;
    for (int i = 0; i <= 40; i += 1) { mask ^= mask << 5; mask |= i & 7; }
    printf(msg, fib(40));
    return mask >= 12345 ? 0 : 1;
}
''',
r'''{"name": "parec", "version": 3, "tags": ["compiler", "cranelift", "jit"],
 "limits": {"stack": 8388608, "heap": 268435456, "files": 64},
 "authors": [{"name": "a", "id": 101}, {"name": "b", "id": 202}],
 "escaped": "tab\there \"quoted\" back\\slash", "ok": true, "ratio": 0.75}
''',
]

def escape(s):
    out = []
    for ch in s:
        if ch == "\\": out.append("\\\\")
        elif ch == '"': out.append('\\"')
        elif ch == "\n": out.append("\\n")
        elif ch == "\t": out.append("\\t")
        else:
            assert 32 <= ord(ch) < 127, repr(ch)
            out.append(ch)
    return "".join(out)

if __name__ == "__main__":
    for t in TEXTS:
        assert "??" not in t
        print('"' + escape(t) + '"')
