/* C twin of bench/calc. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
enum { NUM, VAR, BIN, NEG };
typedef struct Expr { int64_t kind, value; uint8_t op; struct Expr *left, *right; } Expr;
static Expr *mk(int64_t kind, int64_t value, uint8_t op, Expr *l, Expr *r) {
    Expr *e = malloc(sizeof *e);
    e->kind = kind; e->value = value; e->op = op; e->left = l; e->right = r;
    return e;
}
static Expr *number(int64_t v) { return mk(NUM, v, ' ', NULL, NULL); }
static Expr *variable(int64_t i) { return mk(VAR, i, ' ', NULL, NULL); }
static Expr *binary(uint8_t op, Expr *l, Expr *r) { return mk(BIN, 0, op, l, r); }
static Expr *negate(Expr *e) { return mk(NEG, 0, '-', e, NULL); }
static bool is_number(Expr *e, int64_t v) { return e->kind == NUM && e->value == v; }
static int64_t count_nodes(Expr *e) { return e == NULL ? 0 : 1 + count_nodes(e->left) + count_nodes(e->right); }
static int64_t depth(Expr *e) {
    if (e == NULL) return 0;
    int64_t l = depth(e->left), r = depth(e->right);
    return l > r ? 1 + l : 1 + r;
}

typedef struct { uint8_t *kinds; int64_t *values, count, cap; } Tokens;
static void add(Tokens *t, uint8_t kind, int64_t value) {
    if (t->count == t->cap) {
        t->cap *= 2;
        t->kinds = realloc(t->kinds, t->cap);
        t->values = realloc(t->values, 8 * t->cap);
    }
    t->kinds[t->count] = kind; t->values[t->count] = value; t->count++;
}
static Tokens *tokenize(const uint8_t *s, int64_t n) {
    Tokens *t = malloc(sizeof *t);
    t->kinds = malloc(16); t->values = malloc(16 * 8); t->count = 0; t->cap = 16;
    int64_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c >= '0' && c <= '9') {
            int64_t v = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') { v = (int64_t)((uint64_t)v * 10u + (uint64_t)(s[i] - '0')); i++; }
            add(t, 'n', v);
        } else if (c >= 'a' && c <= 'z') { add(t, 'v', c - 'a'); i++; }
        else if (c && strchr("+-*/%^()", c)) { add(t, c, 0); i++; }
        else i++;
    }
    add(t, 'e', 0);
    return t;
}
typedef struct { Tokens *toks; int64_t pos, errors; } Parser;
static uint8_t peek(Parser *p) { return p->toks->kinds[p->pos]; }
static void advance(Parser *p) { if (p->pos < p->toks->count - 1) p->pos++; }
static void expect(Parser *p, uint8_t k) { if (peek(p) == k) advance(p); else p->errors++; }
static Expr *expr(Parser *p);
static Expr *unary(Parser *p);
static Expr *atom(Parser *p) {
    uint8_t k = peek(p);
    if (k == 'n') { int64_t v = p->toks->values[p->pos]; advance(p); return number(v); }
    if (k == 'v') { int64_t v = p->toks->values[p->pos]; advance(p); return variable(v); }
    if (k == '(') { advance(p); Expr *e = expr(p); expect(p, ')'); return e; }
    p->errors++;
    advance(p);
    return number(0);
}
static Expr *power(Parser *p) {
    Expr *base = atom(p);
    if (peek(p) == '^') { advance(p); Expr *r = unary(p); return binary('^', base, r); }
    return base;
}
static Expr *unary(Parser *p) {
    if (peek(p) == '-') { advance(p); return negate(unary(p)); }
    return power(p);
}
static Expr *term(Parser *p) {
    Expr *e = unary(p);
    while (peek(p) == '*' || peek(p) == '/' || peek(p) == '%') {
        uint8_t op = peek(p); advance(p);
        Expr *r = unary(p);
        e = binary(op, e, r);
    }
    return e;
}
static Expr *expr(Parser *p) {
    Expr *e = term(p);
    while (peek(p) == '+' || peek(p) == '-') {
        uint8_t op = peek(p); advance(p);
        Expr *r = term(p);
        e = binary(op, e, r);
    }
    return e;
}
static Expr *parse(const uint8_t *s, int64_t n, int64_t *errors) {
    Parser p = {tokenize(s, n), 0, 0};
    Expr *e = expr(&p);
    expect(&p, 'e');
    errors[0] = p.errors;
    return e;
}
static Expr *parse_str(const char *s, int64_t *errors) { return parse((const uint8_t *)s, (int64_t)strlen(s), errors); }

static int64_t apply(uint8_t op, int64_t a, int64_t b) {
    switch (op) {
    case '+': return (int64_t)((uint64_t)a + (uint64_t)b);
    case '-': return (int64_t)((uint64_t)a - (uint64_t)b);
    case '*': return (int64_t)((uint64_t)a * (uint64_t)b);
    case '/': return (b == 0 || (b == -1 && a == INT64_MIN)) ? 0 : a / b;
    case '%': return b == 0 || b == -1 ? 0 : a % b;
    default: {
        uint64_t r = 1;
        for (int64_t i = 0; i < (b & 15); i++) r *= (uint64_t)a;
        return (int64_t)r;
    }
    }
}
static int64_t eval(Expr *e, int64_t *env) {
    if (e->kind == NUM) return e->value;
    if (e->kind == VAR) return env[e->value];
    if (e->kind == NEG) return (int64_t)(0 - (uint64_t)eval(e->left, env));
    int64_t a = eval(e->left, env);
    int64_t b = eval(e->right, env);
    return apply(e->op, a, b);
}
static Expr *simplify(Expr *e) {
    if (e->kind == NUM || e->kind == VAR) return e;
    if (e->kind == NEG) {
        Expr *in = simplify(e->left);
        if (in->kind == NUM) return number((int64_t)(0 - (uint64_t)in->value));
        if (in->kind == NEG) return in->left;
        return negate(in);
    }
    Expr *l = simplify(e->left);
    Expr *r = simplify(e->right);
    if (l->kind == NUM && r->kind == NUM) return number(apply(e->op, l->value, r->value));
    if ((e->op == '+' && is_number(r, 0)) || (e->op == '-' && is_number(r, 0)) ||
        (e->op == '*' && is_number(r, 1)) || (e->op == '/' && is_number(r, 1)))
        return l;
    if ((e->op == '+' && is_number(l, 0)) || (e->op == '*' && is_number(l, 1))) return r;
    if (e->op == '*' && (is_number(l, 0) || is_number(r, 0))) return number(0);
    return binary(e->op, l, r);
}
typedef struct { uint8_t *data; int64_t size, cap; } Out;
static Out *new_out(void) { Out *o = malloc(sizeof *o); o->data = malloc(64); o->size = 0; o->cap = 64; return o; }
static void put(Out *o, uint8_t c) {
    if (o->size == o->cap) { o->cap *= 2; o->data = realloc(o->data, o->cap); }
    o->data[o->size++] = c;
}
static void put_digits(Out *o, int64_t v) {
    if (v >= 10) put_digits(o, v / 10);
    put(o, (uint8_t)('0' + (uint8_t)(v % 10)));
}
static void put_number(Out *o, int64_t v) {
    if (v < 0) { put(o, '-'); put_digits(o, (int64_t)(0 - (uint64_t)v)); }
    else put_digits(o, v);
}
static void write_expr(Out *o, Expr *e) {
    if (e->kind == NUM) {
        if (e->value < 0) { put(o, '('); put_number(o, e->value); put(o, ')'); }
        else put_number(o, e->value);
    } else if (e->kind == VAR) put(o, (uint8_t)('a' + e->value));
    else if (e->kind == NEG) { put(o, '('); put(o, '-'); write_expr(o, e->left); put(o, ')'); }
    else { put(o, '('); write_expr(o, e->left); put(o, ' '); put(o, e->op); put(o, ' '); write_expr(o, e->right); put(o, ')'); }
}
static void print_line(Out *o) { for (int64_t i = 0; i < o->size; i++) putchar(o->data[i]); putchar(10); }

static int64_t seed = 8675309;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static const char *INPUTS[12] = {
    "1 + 2 * 3", "(1 + 2) * 3 - 4 / 2", "a * x ^ 2 + b * x + c", "-(-(y)) * 1 + 0 * z - (q - 0)",
    "(a + b + c + d) % 7 - --e", "2 ^ 3 ^ 2 + 10 / 0 + 7 % 0", "((((w))))*(1*(v+0))/(1)",
    "123456789 * 987654321 * 1000003 - n * n * n", "(x - y) * (x + y) - (x * x - y * y)", "1 + + 2",
    "(3 * (4 + 5)", "k % -3 + -k / 4 - 2 ^ 62 * 4"};
static Expr *random_expr(int64_t d) {
    int64_t r = rnd(10);
    if (d == 0 || r < 2) {
        if (rnd(2) == 0) return number(rnd(21));
        return variable(rnd(26));
    }
    if (r == 2) return negate(random_expr(d - 1));
    uint8_t op = (uint8_t)"+-*/%^"[rnd(6)];
    Expr *l = random_expr(d - 1);
    Expr *rr = random_expr(d - 1);
    return binary(op, l, rr);
}
static void randomize(int64_t *env) { for (int i = 0; i < 26; i++) env[i] = rnd(2001) - 1000; }

int main(void) {
    int64_t errors[1], env[26], saved[26];
    for (int i = 0; i < 26; i++) env[i] = i * 7 - 40;
    for (int k = 0; k < 12; k++) {
        Expr *e = parse_str(INPUTS[k], errors);
        Expr *s = simplify(e);
        print_i(errors[0]);
        print_i(count_nodes(e) * 1000 + count_nodes(s));
        print_i(depth(e));
        print_i(eval(e, env));
        Out *o = new_out();
        write_expr(o, s);
        print_line(o);
    }
    memcpy(saved, env, sizeof env);
    int64_t agree = 0;
    uint64_t acc = 0;
    for (int k = 0; k < 12; k++) {
        Expr *e = parse_str(INPUTS[k], errors);
        Expr *s = simplify(e);
        for (int t = 0; t < 200; t++) {
            randomize(env);
            int64_t a = eval(e, env);
            if (a == eval(s, env)) agree++;
            acc = acc * 31u + (uint64_t)a;
        }
    }
    print_i(agree);
    print_i((int64_t)acc);
    int64_t round_trips = 0, nodes = 0, printed = 0, folded = 0;
    acc = 0;
    for (int k = 0; k < 300; k++) {
        Expr *e = random_expr(6);
        Out *o = new_out();
        write_expr(o, e);
        printed += o->size;
        Expr *back = parse(o->data, o->size, errors);
        Expr *s = simplify(back);
        nodes += count_nodes(e);
        folded += count_nodes(s);
        bool same = errors[0] == 0;
        for (int t = 0; t < 20; t++) {
            randomize(env);
            int64_t a = eval(e, env);
            if (a != eval(back, env) || a != eval(s, env)) same = false;
            acc = acc * 31u + (uint64_t)a;
        }
        if (same) round_trips++;
        if (k < 3) print_line(o);
    }
    print_i(round_trips);
    print_i(nodes);
    print_i(folded);
    print_i(printed);
    print_i((int64_t)acc);
    print_i(eval(parse_str("a+b+c", errors), saved));
    return 0;
}
