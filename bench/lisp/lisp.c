/* C twin of bench/lisp. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
enum { NUM, SYM, PAIR, LAMBDA, BUILTIN, TRUE_ };
typedef struct Cell { int64_t tag, num; struct Cell *car, *cdr; } Cell;
static int64_t allocated = 0;
static Cell *make(int64_t tag, int64_t num, Cell *car, Cell *cdr) {
    allocated++;
    Cell *c = malloc(sizeof *c);
    c->tag = tag; c->num = num; c->car = car; c->cdr = cdr;
    return c;
}
static Cell *number(int64_t n) { return make(NUM, n, NULL, NULL); }
static Cell *cons(Cell *a, Cell *b) { return make(PAIR, 0, a, b); }
static bool is_pair(Cell *c) { return c != NULL && c->tag == PAIR; }
static int64_t list_length(Cell *c) { int64_t n = 0; for (; is_pair(c); c = c->cdr) n++; return n; }
static char *names[4096];
static int64_t name_len[4096], name_count = 0;
static int64_t intern(const char *text, int64_t start, int64_t end) {
    for (int64_t id = 0; id < name_count; id++)
        if (name_len[id] == end - start && memcmp(names[id], text + start, end - start) == 0) return id;
    names[name_count] = malloc(end - start + 1);
    memcpy(names[name_count], text + start, end - start);
    name_len[name_count] = end - start;
    return name_count++;
}
static Cell *symbol(const char *name) { return make(SYM, intern(name, 0, (int64_t)strlen(name)), NULL, NULL); }

/* reader */
typedef struct { const char *text; int64_t n, pos; } Reader;
static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t'; }
static bool is_delim(char c) { return is_space(c) || c == '(' || c == ')' || c == '\''; }
static void skip_space(Reader *r) { while (r->pos < r->n && is_space(r->text[r->pos])) r->pos++; }
static bool at_end(Reader *r) { skip_space(r); return r->pos >= r->n; }
static Cell *read_list(Reader *r);
static Cell *read(Reader *r) {
    skip_space(r);
    char c = r->text[r->pos];
    if (c == '(') { r->pos++; return read_list(r); }
    if (c == '\'') {
        r->pos++;
        Cell *q = read(r);
        Cell *sym = symbol("quote");
        Cell *tail = cons(q, NULL);
        return cons(sym, tail);
    }
    int64_t start = r->pos;
    while (r->pos < r->n && !is_delim(r->text[r->pos])) r->pos++;
    int64_t i = start;
    bool negative = r->text[i] == '-' && r->pos - start > 1;
    if (negative) i++;
    int64_t value = 0;
    while (i < r->pos && r->text[i] >= '0' && r->text[i] <= '9') { value = value * 10 + (r->text[i] - '0'); i++; }
    if (i == r->pos && ((r->text[start] >= '0' && r->text[start] <= '9') || negative)) return number(negative ? -value : value);
    if (r->pos - start == 2 && r->text[start] == '#' && r->text[start + 1] == 't') return make(TRUE_, 0, NULL, NULL);
    return make(SYM, intern(r->text, start, r->pos), NULL, NULL);
}
static Cell *read_list(Reader *r) {
    skip_space(r);
    if (r->text[r->pos] == ')') { r->pos++; return NULL; }
    Cell *head = read(r);
    Cell *tail = read_list(r);
    return cons(head, tail);
}

/* eval */
static Cell *globals = NULL;
static int64_t errors = 0, evals = 0;
static int64_t S_QUOTE, S_IF, S_DEFINE, S_LAMBDA, S_BEGIN, S_LET;
static Cell *bind(int64_t sym, Cell *value, Cell *env) {
    Cell *s = make(SYM, sym, NULL, NULL);
    Cell *p = cons(s, value);
    return cons(p, env);
}
static void define_global(int64_t sym, Cell *value) {
    for (Cell *l = globals; l; l = l->cdr) if (l->car->car->num == sym) { l->car->cdr = value; return; }
    globals = bind(sym, value, globals);
}
static Cell *lookup(int64_t sym, Cell *env) {
    for (Cell *l = env; l; l = l->cdr) if (l->car->car->num == sym) return l->car->cdr;
    for (Cell *l = globals; l; l = l->cdr) if (l->car->car->num == sym) return l->car->cdr;
    errors++;
    return NULL;
}
static bool truthy(Cell *c) { return c != NULL && !(c->tag == NUM && c->num == 0); }
static Cell *eval(Cell *x, Cell *env);
static Cell *apply(Cell *f, Cell *args);
static Cell *eval_list(Cell *l, Cell *env) {
    if (l == NULL) return NULL;
    Cell *h = eval(l->car, env);
    Cell *t = eval_list(l->cdr, env);
    return cons(h, t);
}
static Cell *eval_body(Cell *b, Cell *env) { Cell *r = NULL; for (; b; b = b->cdr) r = eval(b->car, env); return r; }
static Cell *eval(Cell *x, Cell *env) {
    evals++;
    if (x == NULL) return NULL;
    if (x->tag == SYM) return lookup(x->num, env);
    if (x->tag != PAIR) return x;
    Cell *head = x->car;
    if (head != NULL && head->tag == SYM) {
        int64_t s = head->num;
        if (s == S_QUOTE) return x->cdr->car;
        if (s == S_IF) {
            if (truthy(eval(x->cdr->car, env))) return eval(x->cdr->cdr->car, env);
            Cell *rest = x->cdr->cdr->cdr;
            if (rest == NULL) return NULL;
            return eval(rest->car, env);
        }
        if (s == S_DEFINE) { Cell *v = eval(x->cdr->cdr->car, env); define_global(x->cdr->car->num, v); return v; }
        if (s == S_LAMBDA) { Cell *c = cons(x->cdr->cdr, env); return make(LAMBDA, 0, x->cdr->car, c); }
        if (s == S_BEGIN) return eval_body(x->cdr, env);
        if (s == S_LET) {
            Cell *inner = env;
            for (Cell *b = x->cdr->car; b; b = b->cdr) { Cell *v = eval(b->car->cdr->car, env); inner = bind(b->car->car->num, v, inner); }
            return eval_body(x->cdr->cdr, inner);
        }
    }
    Cell *f = eval(head, env);
    Cell *args = eval_list(x->cdr, env);
    return apply(f, args);
}

/* builtins */
static const char *NAMES = "+ - * / < = car cdr cons null? list map foldl length not";
static void install(void) {
    int64_t i = 0, id = 0, n = (int64_t)strlen(NAMES);
    while (i < n) {
        int64_t j = i;
        while (j < n && NAMES[j] != ' ') j++;
        int64_t sym = intern(NAMES, i, j);
        define_global(sym, make(BUILTIN, id, NULL, NULL));
        id++;
        i = j + 1;
    }
}
static int64_t num(Cell *c) { if (c != NULL && c->tag == NUM) return c->num; errors++; return 0; }
static Cell *boolean(bool b) { return b ? make(TRUE_, 0, NULL, NULL) : number(0); }
static Cell *nth(Cell *l, int64_t n) {
    for (int64_t i = 0; i < n; i++) { if (l == NULL) return NULL; l = l->cdr; }
    return l == NULL ? NULL : l->car;
}
static Cell *map(Cell *f, Cell *l) {
    if (!is_pair(l)) return NULL;
    Cell *arg = cons(l->car, NULL);
    Cell *h = apply(f, arg);
    Cell *t = map(f, l->cdr);
    return cons(h, t);
}
static Cell *call(int64_t id, Cell *args) {
    Cell *a = nth(args, 0), *b = nth(args, 1);
    if (id == 0 || id == 2) {
        int64_t acc = id == 0 ? 0 : 1;
        for (Cell *l = args; l; l = l->cdr) {
            int64_t v = num(l->car);
            acc = id == 0 ? (int64_t)((uint64_t)acc + (uint64_t)v) : (int64_t)((uint64_t)acc * (uint64_t)v);
        }
        return number(acc);
    }
    if (id == 1) {
        if (list_length(args) == 1) return number(-num(a));
        int64_t x = num(a);
        int64_t y = num(b);
        return number(x - y);
    }
    if (id == 3) {
        int64_t d = num(b);
        if (d == 0) return number(0);
        int64_t x = num(a);
        return number(x / d);
    }
    if (id == 4 || id == 5) {
        int64_t x = num(a);
        int64_t y = num(b);
        return boolean(id == 4 ? x < y : x == y);
    }
    if (id == 6 || id == 7) {
        if (!is_pair(a)) { errors++; return NULL; }
        return id == 6 ? a->car : a->cdr;
    }
    if (id == 8) return cons(a, b);
    if (id == 9) return boolean(a == NULL);
    if (id == 10) return args;
    if (id == 11) return map(a, b);
    if (id == 12) {
        Cell *acc = b;
        for (Cell *l = nth(args, 2); is_pair(l); l = l->cdr) {
            Cell *t = cons(l->car, NULL);
            Cell *al = cons(acc, t);
            acc = apply(a, al);
        }
        return acc;
    }
    if (id == 13) return number(list_length(a));
    if (id == 14) return boolean(!truthy(a));
    errors++;
    return NULL;
}
static Cell *apply(Cell *f, Cell *args) {
    if (f == NULL) { errors++; return NULL; }
    if (f->tag == BUILTIN) return call(f->num, args);
    if (f->tag == LAMBDA) {
        Cell *env = f->cdr->cdr, *p = f->car, *a = args;
        while (p != NULL) {
            Cell *value = a == NULL ? NULL : a->car;
            env = bind(p->car->num, value, env);
            p = p->cdr;
            if (a != NULL) a = a->cdr;
        }
        return eval_body(f->cdr->car, env);
    }
    errors++;
    return NULL;
}

static void put_number(int64_t n) {
    if (n < 0) { putchar('-'); put_number(-n); return; }
    if (n >= 10) put_number(n / 10);
    putchar((int)('0' + n % 10));
}
static void write(Cell *c) {
    if (c == NULL) { putchar('('); putchar(')'); }
    else if (c->tag == NUM) put_number(c->num);
    else if (c->tag == SYM) fwrite(names[c->num], 1, name_len[c->num], stdout);
    else if (c->tag == TRUE_) { putchar('#'); putchar('t'); }
    else if (c->tag == LAMBDA) fputs("<lambda>", stdout);
    else if (c->tag == BUILTIN) fputs("<builtin>", stdout);
    else {
        putchar('(');
        write(c->car);
        Cell *l = c->cdr;
        for (; is_pair(l); l = l->cdr) { putchar(' '); write(l->car); }
        if (l != NULL) { fputs(" . ", stdout); write(l); }
        putchar(')');
    }
}
static const char *PROGRAM = "(define fib (lambda (n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2))))))\n(fib 20)\n(define fact (lambda (n) (if (= n 0) 1 (* n (fact (- n 1))))))\n(fact 20)\n(define range (lambda (a b) (if (< a b) (cons a (range (+ a 1) b)) '())))\n(define sum (lambda (xs) (foldl + 0 xs)))\n(sum (range 0 1000))\n(map (lambda (x) (* x x)) (range 1 11))\n(foldl + 0 (map fact (range 1 15)))\n(define ack (lambda (m n) (if (= m 0) (+ n 1) (if (= n 0) (ack (- m 1) 1) (ack (- m 1) (ack m (- n 1)))))))\n(ack 2 3)\n(define compose (lambda (f g) (lambda (x) (f (g x)))))\n((compose car cdr) '(1 2 3))\n(define adder (lambda (n) (lambda (x) (+ x n))))\n(map (adder 100) '(1 2 3))\n(let ((a 6) (b 7)) (* a b))\n(define reverse (lambda (xs) (foldl (lambda (acc x) (cons x acc)) '() xs)))\n(reverse (range 0 10))\n(define filter (lambda (f xs) (if (null? xs) '() (if (f (car xs)) (cons (car xs) (filter f (cdr xs))) (filter f (cdr xs))))))\n(define append (lambda (a b) (if (null? a) b (cons (car a) (append (cdr a) b)))))\n(define qsort (lambda (xs) (if (null? xs) '() (let ((p (car xs)) (rest (cdr xs))) (append (qsort (filter (lambda (x) (< x p)) rest)) (cons p (qsort (filter (lambda (x) (not (< x p))) rest))))))))\n(qsort '(3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 -2 0))\n(length (range 0 500))\n(begin (define counter 10) (define counter (+ counter 5)) counter)\n'(nested (list 1) #t sym)\n(undefined-thing 1)\n(/ 7 0)\n(- 5)\n(list 1 (list 2 3) '() #t)\n";

int main(void) {
    S_QUOTE = intern("quote", 0, 5);
    S_IF = intern("if", 0, 2);
    S_DEFINE = intern("define", 0, 6);
    S_LAMBDA = intern("lambda", 0, 6);
    S_BEGIN = intern("begin", 0, 5);
    S_LET = intern("let", 0, 3);
    install();
    Reader r = {PROGRAM, (int64_t)strlen(PROGRAM), 0};
    int64_t forms = 0;
    while (!at_end(&r)) {
        Cell *x = read(&r);
        Cell *v = eval(x, NULL);
        write(v);
        putchar('\n');
        forms++;
    }
    print_i(forms);
    print_i(evals);
    print_i(errors);
    print_i(allocated);
    return 0;
}
