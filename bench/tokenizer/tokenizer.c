/* C twin of bench/tokenizer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
enum { KIND_IDENT, KIND_KEYWORD, KIND_INT, KIND_STRING, KIND_OP, KIND_PUNCT, KIND_COMMENT, KIND_OTHER, KINDS };
static const char *KEYWORDS = "fn let mut if else while for in return struct new import pub global int const char unsigned void true";

typedef struct {
    int64_t counts[KINDS], lines, int_sum, ident_hash, longest_ident, string_bytes, seen[4096], distinct;
} Stats;

static int is_alpha(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static int64_t hex_value(uint8_t c) {
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static int is_op_char(uint8_t c) { return c && strchr("+-*/%<>=!&|^?", c) != NULL; }
static int is_punct(uint8_t c) { return c && strchr("(){}[],;:.", c) != NULL; }
static int is_two_char_op(uint8_t a, uint8_t b) {
    return (b == '=' && (a == '=' || a == '!' || a == '<' || a == '>' || a == '+' || a == '-' || a == '*' ||
                         a == '/' || a == '^' || a == '|' || a == '&')) ||
           (a == '-' && (b == '>' || b == '-')) || (a == ':' && b == ':') || (a == '&' && b == '&') ||
           (a == '|' && b == '|') || (a == '<' && b == '<') || (a == '>' && b == '>') || (a == '.' && b == '.');
}
static int is_keyword(const uint8_t *src, int64_t start, int64_t end) {
    const char *kw = KEYWORDS;
    int64_t n = (int64_t)strlen(kw), i = 0;
    while (i < n) {
        int64_t j = i;
        while (j < n && kw[j] != ' ') j++;
        if (j - i == end - start) {
            int64_t k = 0;
            while (k < j - i && (uint8_t)kw[i + k] == src[start + k]) k++;
            if (k == j - i) return 1;
        }
        i = j + 1;
    }
    return 0;
}
static void remember(Stats *st, int64_t h) {
    int64_t key = h == 0 ? 1 : h, mask = 4095, i = (key ^ (key >> 17)) & mask;
    while (st->seen[i] != 0) {
        if (st->seen[i] == key) return;
        i = (i + 1) & mask;
    }
    st->seen[i] = key;
    st->distinct++;
}
static int64_t scan_word(const uint8_t *src, int64_t n, int64_t start, Stats *st) {
    int64_t i = start;
    uint64_t h = 0xcbf29ce484222325ULL;
    while (i < n && (is_alpha(src[i]) || is_digit(src[i]))) { h = (h ^ src[i]) * 0x100000001b3ULL; i++; }
    if (is_keyword(src, start, i)) st->counts[KIND_KEYWORD]++;
    else {
        st->counts[KIND_IDENT]++;
        st->ident_hash = (int64_t)((uint64_t)st->ident_hash * 31u + h);
        if (i - start > st->longest_ident) st->longest_ident = i - start;
        remember(st, (int64_t)h);
    }
    return i;
}
static int64_t scan_number(const uint8_t *src, int64_t n, int64_t start, Stats *st) {
    int64_t i = start, v = 0;
    if (src[i] == '0' && i + 1 < n && (src[i + 1] == 'x' || src[i + 1] == 'X')) {
        i += 2;
        while (i < n && hex_value(src[i]) >= 0) { v = v * 16 + hex_value(src[i]); i++; }
    } else {
        while (i < n && (is_digit(src[i]) || src[i] == '_')) { if (src[i] != '_') v = v * 10 + (src[i] - '0'); i++; }
    }
    st->counts[KIND_INT]++;
    st->int_sum += v;
    return i;
}
static int64_t scan_string(const uint8_t *src, int64_t n, int64_t start, Stats *st) {
    int64_t i = start + 1;
    while (i < n && src[i] != '"') { if (src[i] == '\\') i++; i++; st->string_bytes++; }
    st->counts[KIND_STRING]++;
    return i + 1;
}
static void lex(const uint8_t *src, int64_t n, Stats *st) {
    int64_t i = 0;
    while (i < n) {
        uint8_t c = src[i];
        if (c == '\n') { st->lines++; i++; }
        else if (is_space(c)) i++;
        else if (c == '/' && i + 1 < n && src[i + 1] == '/') { while (i < n && src[i] != '\n') i++; st->counts[KIND_COMMENT]++; }
        else if (is_alpha(c)) i = scan_word(src, n, i, st);
        else if (is_digit(c)) i = scan_number(src, n, i, st);
        else if (c == '"') i = scan_string(src, n, i, st);
        else if (i + 1 < n && is_two_char_op(c, src[i + 1])) { st->counts[KIND_OP]++; i += 2; }
        else if (is_op_char(c)) { st->counts[KIND_OP]++; i++; }
        else if (is_punct(c)) { st->counts[KIND_PUNCT]++; i++; }
        else { st->counts[KIND_OTHER]++; i++; }
    }
}
static void report(Stats *st) {
    for (int k = 0; k < KINDS; k++) print_i(st->counts[k]);
    print_i(st->lines); print_i(st->int_sum); print_i(st->ident_hash);
    print_i(st->longest_ident); print_i(st->string_bytes); print_i(st->distinct);
}

typedef struct { uint8_t *data; int64_t size, cap; } Buf;
static void push_byte(Buf *b, uint8_t c) {
    if (b->size == b->cap) { b->cap *= 2; b->data = realloc(b->data, b->cap); }
    b->data[b->size++] = c;
}
static void push_str(Buf *b, const char *s) { for (; *s; s++) push_byte(b, (uint8_t)*s); }
static void push_int(Buf *b, int64_t x) { if (x >= 10) push_int(b, x / 10); push_byte(b, (uint8_t)('0' + x % 10)); }
static int64_t seed = 4242;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static void push_ident(Buf *b) {
    int64_t r = rnd(6);
    if (r == 0) push_str(b, "count");
    else if (r == 1) { push_str(b, "total_"); push_int(b, rnd(40)); }
    else if (r == 2) { push_str(b, "x"); push_int(b, rnd(1000)); }
    else if (r == 3) push_str(b, "buffer");
    else if (r == 4) push_byte(b, (uint8_t)('a' + rnd(26)));
    else { push_str(b, "Node"); push_byte(b, (uint8_t)('A' + rnd(26))); }
}
static void push_operand(Buf *b) {
    int64_t r = rnd(4);
    if (r == 0) push_int(b, rnd(100000));
    else if (r == 1) { push_str(b, "0x"); push_byte(b, (uint8_t)('a' + rnd(6))); push_int(b, rnd(99)); }
    else push_ident(b);
}
static Buf generate(int64_t lines) {
    Buf b = {malloc(64), 0, 64};
    for (int64_t l = 0; l < lines; l++) {
        int64_t kind = rnd(5);
        if (kind == 0) { push_str(&b, "// line "); push_int(&b, l); }
        else if (kind == 1) {
            push_str(&b, "let mut "); push_ident(&b); push_str(&b, " = "); push_operand(&b);
            push_str(&b, " + "); push_operand(&b); push_str(&b, ";");
        } else if (kind == 2) {
            push_str(&b, "if "); push_ident(&b); push_str(&b, " <= "); push_operand(&b);
            push_str(&b, " { return "); push_ident(&b); push_str(&b, "[i]; }");
        } else if (kind == 3) {
            push_str(&b, "print_str(\"item "); push_int(&b, rnd(500)); push_str(&b, "\\n\");");
        } else {
            push_ident(&b); push_str(&b, " += f("); push_operand(&b); push_str(&b, ", ");
            push_operand(&b); push_str(&b, ") << 2;");
        }
        push_byte(&b, '\n');
    }
    return b;
}
static void lex_str(const char *s, Stats *st) { lex((const uint8_t *)s, (int64_t)strlen(s), st); }

int main(void) {
    static Stats st0, st1, st2, st3;
    lex_str("// A small Pare-like module used as tokenizer input.\nimport util;\n\npub struct Point { x: i64, y: i64 }\n\nglobal origin_x: i64 = 0x10;\nglobal limit: i64 = 1_000_000;\n\nfn dist2(a: Point, b: Point) -> i64 {\n    let dx = a.x - b.x;\n    let dy = a.y - b.y;\n    dx * dx + dy * dy\n}\n\npub fn closest(points: [Point], target: Point) -> i64 {\n    let mut best = -1;\n    let mut best_d = limit;\n    for i in 0..len(points) {\n        let d = dist2(points[i], target);\n        if d < best_d && d >= 0 {\n            best_d = d;\n            best = i;\n        }\n    }\n    best\n}\n\nfn main() {\n    let p = new Point { x: 3, y: 4 };\n    print(util::square(p.x) + 0xff);\n    print_str(\"closest: \\\"done\\\"\\n\");\n    if p.x != p.y || p.x << 2 == 12 { print(1); } else { print(0); }\n}\n", &st0);
    report(&st0);
    lex_str("/* C-style text: the scanner treats slash-star as two operators. */\nint fib(int n) {\n    int a = 0, b = 1;\n    while (n-- > 0) { int t = a + b; a = b; b = t; }\n    return a;\n}\nint main(void) {\n    const char *msg = \"fib(40) = %d\\n\";\n    unsigned mask = 0xdeadbeef;\n    for (int i = 0; i <= 40; i += 1) { mask ^= mask << 5; mask |= i & 7; }\n    printf(msg, fib(40));\n    return mask >= 12345 ? 0 : 1;\n}\n", &st1);
    report(&st1);
    lex_str("{\"name\": \"parec\", \"version\": 3, \"tags\": [\"compiler\", \"cranelift\", \"jit\"],\n \"limits\": {\"stack\": 8388608, \"heap\": 268435456, \"files\": 64},\n \"authors\": [{\"name\": \"a\", \"id\": 101}, {\"name\": \"b\", \"id\": 202}],\n \"escaped\": \"tab\\there \\\"quoted\\\" back\\\\slash\", \"ok\": true, \"ratio\": 0.75}\n", &st2);
    report(&st2);
    Buf g = generate(10000);
    print_i(g.size);
    for (int r = 0; r < 2; r++) lex(g.data, g.size, &st3);
    report(&st3);
    return 0;
}
