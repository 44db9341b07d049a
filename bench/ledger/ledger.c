/* C twin of bench/ledger. Pare arrays of records are arrays of 64-bit words
 * holding pointers (or i64 values); generic Pare functions become C
 * functions taking function pointers over words, and every instance with
 * constant or function arguments becomes a small named function (macros). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

typedef int64_t W;
typedef struct { W *p; int64_t n; } Arr;
static Arr arr(int64_t n) { Arr a = {calloc(n + 1, sizeof(W)), n}; return a; }
typedef bool (*Less)(W, W);
typedef int64_t (*Key)(W);
typedef bool (*Pred)(W);
typedef void (*Visit)(W);
typedef W (*Fold)(W, W);
typedef W (*Map)(W);

/* ---- rng ---- */
static int64_t rstate = 20261122;
static void reseed(int64_t s) { rstate = s; }
static int64_t rnext(void) {
    rstate = wadd(wmul(rstate, 6364136223846793005LL), 1442695040888963407LL);
    return (int64_t)(((uint64_t)rstate >> 33) & 0x7fffffff);
}
static int64_t below(int64_t n) { return rnext() % n; }
static int64_t between(int64_t lo, int64_t hi) { return lo + rnext() % (hi - lo + 1); }
static bool chance(int64_t pct) { return rnext() % 100 < pct; }

/* ---- vec ---- */
static Arr push(Arr xs, int64_t n, W x) {
    Arr out = xs;
    if (n == xs.n) {
        out = arr(2 * n + 4);
        for (int64_t i = 0; i < n; i++) out.p[i] = xs.p[i];
    }
    out.p[n] = x;
    return out;
}
static Arr truncate(Arr xs, int64_t n) {
    Arr out = arr(n);
    for (int64_t i = 0; i < n; i++) out.p[i] = xs.p[i];
    return out;
}
static Arr copy(Arr xs) { return truncate(xs, xs.n); }
static void for_each(Arr xs, Visit v) { for (int64_t i = 0; i < xs.n; i++) v(xs.p[i]); }
static W fold(Arr xs, W init, Fold f) { W acc = init; for (int64_t i = 0; i < xs.n; i++) acc = f(acc, xs.p[i]); return acc; }
static int64_t count_if(Arr xs, Pred p) { int64_t c = 0; for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) c++; return c; }
static int64_t find_if(Arr xs, Pred p) { for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) return i; return -1; }
static Arr filter(Arr xs, Pred p) {
    Arr out = arr(4);
    int64_t n = 0;
    for (int64_t i = 0; i < xs.n; i++)
        if (p(xs.p[i])) { out = push(out, n, xs.p[i]); n++; }
    return truncate(out, n);
}
static Arr map(Arr xs, Map f) { Arr out = arr(xs.n); for (int64_t i = 0; i < xs.n; i++) out.p[i] = f(xs.p[i]); return out; }
static int64_t sum_by(Arr xs, Key k) { int64_t s = 0; for (int64_t i = 0; i < xs.n; i++) s = wadd(s, k(xs.p[i])); return s; }
static int64_t max_by(Arr xs, Key key) {
    int64_t best = -1, bk = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t k = key(xs.p[i]); if (best < 0 || k > bk) { best = i; bk = k; } }
    return best;
}
static int64_t min_by(Arr xs, Key key) {
    int64_t best = -1, bk = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t k = key(xs.p[i]); if (best < 0 || k < bk) { best = i; bk = k; } }
    return best;
}

/* ---- sort ---- */
static void insertion_sort(Arr xs, int64_t lo, int64_t hi, Less less) {
    for (int64_t i = lo + 1; i < hi; i++) {
        W x = xs.p[i];
        int64_t j = i;
        while (j > lo && less(x, xs.p[j - 1])) { xs.p[j] = xs.p[j - 1]; j--; }
        xs.p[j] = x;
    }
}
static void merge_runs(Arr xs, Arr tmp, int64_t lo, int64_t mid, int64_t hi, Less less) {
    int64_t i = lo, j = mid;
    for (int64_t k = lo; k < hi; k++) {
        if (j >= hi || (i < mid && !less(xs.p[j], xs.p[i]))) tmp.p[k] = xs.p[i++];
        else tmp.p[k] = xs.p[j++];
    }
    for (int64_t k = lo; k < hi; k++) xs.p[k] = tmp.p[k];
}
static void sort_by(Arr xs, Less less) {
    int64_t n = xs.n, lo = 0;
    while (lo < n) { int64_t hi = lo + 8 < n ? lo + 8 : n; insertion_sort(xs, lo, hi, less); lo = hi; }
    Arr tmp = arr(n);
    for (int64_t width = 8; width < n; width *= 2)
        for (int64_t start = 0; start + width < n; start += 2 * width) {
            int64_t end = start + 2 * width < n ? start + 2 * width : n;
            merge_runs(xs, tmp, start, start + width, end, less);
        }
}
static Arr sorted(Arr xs, Less less) { Arr ys = copy(xs); sort_by(ys, less); return ys; }
static bool is_sorted(Arr xs, Less less) {
    for (int64_t i = 1; i < xs.n; i++) if (less(xs.p[i], xs.p[i - 1])) return false;
    return true;
}
static int64_t lower_bound(Arr xs, W x, Less less) {
    int64_t lo = 0, hi = xs.n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (less(xs.p[mid], x)) lo = mid + 1; else hi = mid; }
    return lo;
}
static int64_t upper_bound(Arr xs, W x, Less less) {
    int64_t lo = 0, hi = xs.n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (less(x, xs.p[mid])) hi = mid; else lo = mid + 1; }
    return lo;
}
static Arr top_k(Arr xs, int64_t k, Less less) {
    Arr out = arr(k);
    int64_t n = 0;
    for (int64_t i = 0; i < xs.n; i++) {
        W x = xs.p[i];
        if (n < k || less(x, out.p[n - 1])) {
            int64_t j = n < k ? n : n - 1;
            while (j > 0 && less(x, out.p[j - 1])) { out.p[j] = out.p[j - 1]; j--; }
            out.p[j] = x;
            if (n < k) n++;
        }
    }
    return truncate(out, n);
}
static bool less_i64(W a, W b) { return a < b; }
static bool greater_i64(W a, W b) { return a > b; }
#define BY_KEY(NAME, KEY) static bool NAME(W a, W b) { return KEY(a) < KEY(b); }
#define BY_KEY_DESC(NAME, KEY) static bool NAME(W a, W b) { return KEY(a) > KEY(b); }
#define THEN_BY(NAME, A, B) static bool NAME(W a, W b) { if (A(a, b)) return true; if (A(b, a)) return false; return B(a, b); }
#define FLIP(NAME, L) static bool NAME(W a, W b) { return L(b, a); }

/* ---- table ---- */
typedef struct { int64_t *keys, *vals; bool *used; int64_t count, rejected, cap; } Table;
static Table *tmake(int64_t cap) {
    Table *t = calloc(1, sizeof(Table));
    t->keys = calloc(cap, 8); t->vals = calloc(cap, 8); t->used = calloc(cap, 1); t->cap = cap;
    return t;
}
static int64_t thome(int64_t cap, int64_t key) {
    int64_t h = wmul(key, -7046029254386353131LL);
    return (int64_t)(((uint64_t)h >> 29) & 0x7fffffff) % cap;
}
static int64_t tslot(Table *t, int64_t key) {
    int64_t i = thome(t->cap, key);
    for (int64_t probe = 0; probe < t->cap; probe++) {
        if (!t->used[i] || t->keys[i] == key) return i;
        i = i + 1 == t->cap ? 0 : i + 1;
    }
    return -1;
}
static bool tupdate(Table *t, int64_t key, int64_t v, int64_t (*f)(int64_t, int64_t)) {
    int64_t i = tslot(t, key);
    if (i < 0) { t->rejected++; return false; }
    if (!t->used[i]) { t->used[i] = true; t->keys[i] = key; t->vals[i] = 0; t->count++; }
    t->vals[i] = f(t->vals[i], v);
    return true;
}
static int64_t plus(int64_t a, int64_t b) { return wadd(a, b); }
static int64_t keep_max(int64_t a, int64_t b) { return b > a ? b : a; }
static int64_t count_one(int64_t a, int64_t b) { (void)b; return a + 1; }
static bool tadd(Table *t, int64_t key, int64_t v) { return tupdate(t, key, v, plus); }
static int64_t tget(Table *t, int64_t key, int64_t dflt) { int64_t i = tslot(t, key); return i >= 0 && t->used[i] ? t->vals[i] : dflt; }
static Arr tkeys(Table *t) {
    Arr out = arr(4);
    int64_t n = 0;
    for (int64_t i = 0; i < t->cap; i++) if (t->used[i]) { out = push(out, n, t->keys[i]); n++; }
    Arr ks = truncate(out, n);
    sort_by(ks, less_i64);
    return ks;
}
static int64_t tfold(Table *t, int64_t init, int64_t (*f)(int64_t, int64_t, int64_t)) {
    Arr ks = tkeys(t);
    int64_t acc = init;
    for (int64_t i = 0; i < ks.n; i++) acc = f(acc, ks.p[i], tget(t, ks.p[i], 0));
    return acc;
}
static int64_t tsum(Table *t) { int64_t s = 0; for (int64_t i = 0; i < t->cap; i++) if (t->used[i]) s = wadd(s, t->vals[i]); return s; }

/* ---- ring ---- */
typedef struct { int64_t *data; int64_t head, size, n; } Ring;
static Ring *rmake(int64_t n) { Ring *r = calloc(1, sizeof(Ring)); r->data = calloc(n, 8); r->n = n; return r; }
static int64_t rwrap(Ring *r, int64_t i) { return i >= r->n ? i - r->n : i; }
static void rpush(Ring *r, int64_t x) {
    r->data[rwrap(r, r->head + r->size)] = x;
    if (r->size < r->n) r->size++; else r->head = rwrap(r, r->head + 1);
}
static int64_t rget(Ring *r, int64_t i) { return r->data[rwrap(r, r->head + i)]; }
static int64_t rtotal(Ring *r) { int64_t s = 0; for (int64_t i = 0; i < r->size; i++) s = wadd(s, rget(r, i)); return s; }
static int64_t rpeak(Ring *r) { int64_t m = INT64_MIN; for (int64_t i = 0; i < r->size; i++) if (rget(r, i) > m) m = rget(r, i); return m; }
static int64_t rmean(Ring *r) { return r->size == 0 ? 0 : rtotal(r) / r->size; }
static Arr moving_means(int64_t n, Arr xs) {
    Ring *r = rmake(n);
    Arr out = arr(xs.n);
    for (int64_t i = 0; i < xs.n; i++) { rpush(r, xs.p[i]); out.p[i] = rmean(r); }
    return out;
}
static int64_t best_window(int64_t n, Arr xs) {
    Ring *r = rmake(n);
    int64_t best = INT64_MIN;
    for (int64_t i = 0; i < xs.n; i++) {
        rpush(r, xs.p[i]);
        if (r->size == n || i == xs.n - 1) { int64_t t = rtotal(r); if (t > best) best = t; }
    }
    return best;
}

/* ---- account ---- */
typedef struct { int64_t id, day, account, amount; bool debit; uint8_t cat; } Entry;
#define E(x) ((Entry *)(intptr_t)(x))
typedef struct { Arr entries; int64_t count; } Journal;
static void post(Journal *j, Entry *e) { j->entries = push(j->entries, j->count, (W)(intptr_t)e); j->count++; }
static void generate_entries(Journal *j, int64_t n, int64_t days) {
    for (int64_t i = 0; i < n; i++) {
        Entry *e = calloc(1, sizeof(Entry));
        e->day = between(1, days);
        e->account = 1000 + below(12);
        e->amount = chance(10) ? between(100000, 900000) : between(100, 25000);
        e->debit = chance(55);
        e->cat = (uint8_t)('a' + (uint8_t)below(6));
        e->id = j->count + 1;
        post(j, e);
    }
}
static int64_t e_id(W e) { return E(e)->id; }
static int64_t e_day(W e) { return E(e)->day; }
static int64_t e_account(W e) { return E(e)->account; }
static int64_t e_amount(W e) { return E(e)->amount; }
static int64_t e_cat(W e) { return E(e)->cat; }
static int64_t e_signed(W e) { return E(e)->debit ? E(e)->amount : -E(e)->amount; }
static bool is_debit(W e) { return E(e)->debit; }
static bool is_credit(W e) { return !E(e)->debit; }
#define IN_ACCOUNT(A) static bool in_account_##A(W e) { return E(e)->account == A; }
#define E_IN_CAT(C) static bool e_in_cat_##C(W e) { return E(e)->cat == (uint8_t)#C[0]; }
IN_ACCOUNT(1003)
IN_ACCOUNT(1011)
E_IN_CAT(a) E_IN_CAT(b) E_IN_CAT(c) E_IN_CAT(d) E_IN_CAT(e) E_IN_CAT(f)
static bool in_days_30_59(W e) { return E(e)->day >= 30 && E(e)->day <= 59; }
static Table *balances(int64_t cap, Arr xs) {
    Table *t = tmake(cap);
    for (int64_t i = 0; i < xs.n; i++) tadd(t, E(xs.p[i])->account, e_signed(xs.p[i]));
    return t;
}
static Arr daily_net(int64_t days, Arr xs) {
    Arr out = arr(days);
    for (int64_t i = 0; i < xs.n; i++) out.p[E(xs.p[i])->day - 1] = wadd(out.p[E(xs.p[i])->day - 1], e_signed(xs.p[i]));
    return out;
}

/* ---- stock ---- */
typedef struct { int64_t sku, price; int32_t qty, reorder; uint8_t cat; } Item;
#define I(x) ((Item *)(intptr_t)(x))
static Arr generate_items(int64_t n) {
    Arr items = arr(n);
    for (int64_t i = 0; i < n; i++) {
        Item *it = calloc(1, sizeof(Item));
        it->sku = 5000 + i * 7;
        it->price = between(50, 20000);
        it->qty = (int32_t)between(0, 120);
        it->reorder = (int32_t)between(5, 40);
        it->cat = (uint8_t)('a' + (uint8_t)below(6));
        items.p[i] = (W)(intptr_t)it;
    }
    return items;
}
static int64_t i_sku(W x) { return I(x)->sku; }
static int64_t i_price(W x) { return I(x)->price; }
static int64_t i_qty(W x) { return I(x)->qty; }
static int64_t i_value(W x) { return wmul(I(x)->price, I(x)->qty); }
static int64_t i_cat(W x) { return I(x)->cat; }
static int64_t i_shortfall(W x) { return I(x)->qty < I(x)->reorder ? (int64_t)(I(x)->reorder - I(x)->qty) : 0; }
static bool needs_reorder(W x) { return I(x)->qty < I(x)->reorder; }
static bool out_of_stock(W x) { return I(x)->qty == 0; }
#define QTY_BELOW(M) static bool qty_below_##M(W x) { return I(x)->qty < M; }
QTY_BELOW(10) QTY_BELOW(25) QTY_BELOW(100)
#define I_IN_CAT(C) static bool i_in_cat_##C(W x) { return I(x)->cat == (uint8_t)#C[0]; }
I_IN_CAT(a) I_IN_CAT(d) I_IN_CAT(f)
static Item *clone_item(Item *it) { Item *o = malloc(sizeof(Item)); *o = *it; return o; }
static W restock_50(W x) {
    Item *o = clone_item(I(x));
    o->qty = o->qty + (o->qty < o->reorder ? 50 : 0);
    return (W)(intptr_t)o;
}
#define REPRICE(NAME, P) static W NAME(W x) { Item *o = clone_item(I(x)); o->price = wadd(o->price, wmul(o->price, P) / 100); return (W)(intptr_t)o; }
REPRICE(reprice_12, 12) REPRICE(reprice_m15, -15) REPRICE(reprice_0, 0)
static int64_t sell_all(int32_t units, Arr items) {
    int64_t revenue = 0;
    for (int64_t i = 0; i < items.n; i++) {
        Item *it = I(items.p[i]);
        int32_t n = it->qty < units ? it->qty : units;
        it->qty -= n;
        revenue = wadd(revenue, wmul(it->price, n));
    }
    return revenue;
}

/* ---- report ---- */
static void put_int(int64_t x) {
    if (x < 0) { putchar('-'); put_int(-x); return; }
    if (x >= 10) put_int(x / 10);
    putchar((int)(48 + x % 10));
}
static void put_cents(int64_t x) {
    if (x < 0) { putchar('-'); put_cents(-x); return; }
    put_int(x / 100);
    putchar('.');
    int64_t c = x % 100;
    putchar((int)(48 + c / 10));
    putchar((int)(48 + c % 10));
}
static void figure(const char *label, int64_t x) { printf("%s: %lld\n", label, (long long)x); }
static void money(const char *label, int64_t x) { printf("%s: ", label); put_cents(x); putchar('\n'); }
static void pair(const char *label, int64_t a, int64_t b) { printf("%s: ", label); put_int(a); putchar(' '); put_int(b); putchar('\n'); }
static void triple(const char *label, int64_t a, int64_t b, int64_t c) {
    printf("%s: ", label); put_int(a); putchar(' '); put_int(b); putchar(' '); put_int(c); putchar('\n');
}
static int64_t put_pair(int64_t acc, int64_t k, int64_t v) { putchar(' '); put_int(k); putchar('='); put_int(v); return acc + 1; }
static int64_t put_cat_pair(int64_t acc, int64_t k, int64_t v) { putchar(' '); putchar((int)(int32_t)k); putchar('='); put_int(v); return acc + 1; }
static void groups(const char *title, Table *t) { printf("%s:", title); tfold(t, 0, put_pair); putchar('\n'); }
static void cat_groups(const char *title, Table *t) { printf("%s:", title); tfold(t, 0, put_cat_pair); putchar('\n'); }
static Table *group_by(int64_t cap, Arr xs, Key g, Key v) {
    Table *t = tmake(cap);
    for (int64_t i = 0; i < xs.n; i++) tadd(t, g(xs.p[i]), v(xs.p[i]));
    return t;
}
static Table *group_max(int64_t cap, Arr xs, Key g, Key v) {
    Table *t = tmake(cap);
    for (int64_t i = 0; i < xs.n; i++) tupdate(t, g(xs.p[i]), v(xs.p[i]), keep_max);
    return t;
}
static Table *group_count(int64_t cap, Arr xs, Key g) {
    Table *t = tmake(cap);
    for (int64_t i = 0; i < xs.n; i++) tupdate(t, g(xs.p[i]), 0, count_one);
    return t;
}
static void summary(const char *title, Arr xs, Key key) {
    printf("%s: n=", title);
    put_int(xs.n);
    if (xs.n > 0) {
        int64_t total = sum_by(xs, key);
        printf(" total="); put_int(total);
        printf(" min="); put_int(key(xs.p[min_by(xs, key)]));
        printf(" max="); put_int(key(xs.p[max_by(xs, key)]));
        printf(" mean="); put_int(total / xs.n);
        printf(" median=");
        Arr ks = map(xs, key);
        sort_by(ks, less_i64);
        put_int(ks.p[ks.n / 2]);
    }
    putchar('\n');
}
static void histogram(const char *title, Arr xs, Key key, int64_t buckets, int64_t width) {
    int64_t *counts = calloc(buckets, 8);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t b = key(xs.p[i]) / width;
        if (b >= buckets) b = buckets - 1;
        if (b < 0) b = 0;
        counts[b]++;
    }
    printf("%s:", title);
    for (int64_t b = 0; b < buckets; b++) { putchar(' '); put_int(counts[b]); }
    putchar('\n');
}
static void ranking(const char *title, Arr xs, int64_t k, Less less, Key key) {
    Arr top = top_k(xs, k, less);
    printf("%s:", title);
    for (int64_t i = 0; i < top.n; i++) { putchar(' '); put_int(key(top.p[i])); }
    putchar('\n');
}
static void list(const char *title, Arr xs, Key key) {
    printf("%s:", title);
    for (int64_t i = 0; i < xs.n; i++) { putchar(' '); put_int(key(xs.p[i])); }
    putchar('\n');
}
static void rule(const char *name, Arr xs, Pred p) {
    printf("rule %s: ", name);
    put_int(xs.n - count_if(xs, p));
    printf(" of ");
    put_int(xs.n);
    printf(" fail\n");
}

/* ---- rules (instances) ---- */
#define WITHIN(NAME, KEY, LO, HI) static bool NAME(W x) { int64_t k = KEY(x); return k >= LO && k <= HI; }
#define AT_MOST(NAME, KEY, HI) static bool NAME(W x) { return KEY(x) <= HI; }
#define AT_LEAST(NAME, KEY, LO) static bool NAME(W x) { return KEY(x) >= LO; }
#define MULTIPLE_OF(NAME, KEY, M) static bool NAME(W x) { return KEY(x) % M == 0; }
#define BOTH(NAME, A, B) static bool NAME(W x) { return A(x) && B(x); }
#define EITHER(NAME, A, B) static bool NAME(W x) { return A(x) || B(x); }
#define NEGATE(NAME, P) static bool NAME(W x) { return !P(x); }
static int64_t violations(Arr xs, Pred rule) { return xs.n - count_if(xs, rule); }
static int64_t first_violation(Arr xs, Pred neg_rule, Key key) { int64_t i = find_if(xs, neg_rule); return i < 0 ? -1 : key(xs.p[i]); }

WITHIN(amount_range, e_amount, 100, 900000)
AT_MOST(amount_le_500000, e_amount, 500000)
WITHIN(day_1_90, e_day, 1, 90)
WITHIN(account_range, e_account, 1000, 1011)
BOTH(day_and_account, day_1_90, account_range)
AT_MOST(amount_le_20000, e_amount, 20000)
EITHER(credits_under, is_debit, amount_le_20000)
AT_LEAST(amount_ge_800000, e_amount, 800000)
BOTH(large_f, e_in_cat_f, amount_ge_800000)
NEGATE(no_large_f, large_f)
MULTIPLE_OF(round_5, e_amount, 5)
AT_LEAST(not_first_week, e_day, 8)
AT_MOST(amount_le_800000, e_amount, 800000)
NEGATE(not_amount_le_800000, amount_le_800000)
MULTIPLE_OF(day_mult_7, e_day, 7)
NEGATE(not_day_mult_7, day_mult_7)
NEGATE(not_not_day_mult_7, not_day_mult_7)
WITHIN(price_range, i_price, 50, 20000)
NEGATE(stocked, needs_reorder)
AT_LEAST(qty_ge_10, i_qty, 10)
EITHER(no_dribbles, out_of_stock, qty_ge_10)
AT_MOST(value_le, i_value, 1000000)
MULTIPLE_OF(sku_even, i_sku, 2)
BOTH(below100_even, qty_below_100, sku_even)

/* ---- comparators (instances) ---- */
BY_KEY(by_day, e_day) BY_KEY(by_id, e_id) THEN_BY(day_then_id, by_day, by_id)
BY_KEY(by_account, e_account) BY_KEY_DESC(by_amount_desc, e_amount) THEN_BY(account_then_amount, by_account, by_amount_desc)
BY_KEY(by_cat, e_cat) BY_KEY(by_amount, e_amount) FLIP(latest, by_day)
BY_KEY_DESC(by_shortfall_desc, i_shortfall) BY_KEY_DESC(by_value_desc, i_value) BY_KEY(by_sku, i_sku)
THEN_BY(value_then_sku, by_value_desc, by_sku)

/* ---- main ---- */
static int64_t ident(W x) { return x; }
static bool positive(W x) { return x > 0; }
static int64_t visited = 0, largest_seen = 0;
static void visit_entry(W e) { visited++; if (E(e)->amount > largest_seen) largest_seen = E(e)->amount; }
static void visit_item(W it) { visited += I(it)->qty; }
static W digest_entry(W h, W e) { return wadd(wmul(h, 1000003), E(e)->id) & 0xffffffffffLL; }
static W digest_item(W h, W it) { return wadd(wmul(h, 1000003), I(it)->sku) & 0xffffffffffLL; }
static W add_value(W total, W it) { return wadd(total, i_value(it)); }
static int64_t day_tens(W e) { return E(e)->day / 10; }

static void journal(Arr xs) {
    printf("== journal ==\n");
    figure("entries", xs.n);
    Arr debits = filter(xs, is_debit), credits = filter(xs, is_credit);
    money("debits", sum_by(debits, e_amount));
    money("credits", sum_by(credits, e_amount));
    money("net", sum_by(xs, e_signed));
    groups("balances", balances(32, xs));
    Table *small = balances(8, xs);
    pair("cap-8 table accounts, rejected", small->count, small->rejected);
    money("cap-16 table total", tsum(balances(16, xs)));
    summary("amounts", xs, e_amount);
    summary("debit amounts", debits, e_amount);
    summary("credit days", credits, e_day);
    for_each(xs, visit_entry);
    money("largest", largest_seen);
}

static void categories(Arr xs) {
    printf("== categories ==\n");
    cat_groups("amount", group_by(16, xs, e_cat, e_amount));
    cat_groups("count", group_count(8, xs, e_cat));
    cat_groups("largest", group_max(16, xs, e_cat, e_amount));
    summary("cat a", filter(xs, e_in_cat_a), e_amount);
    summary("cat b", filter(xs, e_in_cat_b), e_amount);
    summary("cat c", filter(xs, e_in_cat_c), e_amount);
    summary("cat d", filter(xs, e_in_cat_d), e_amount);
    summary("cat e", filter(xs, e_in_cat_e), e_signed);
    summary("cat f", filter(xs, e_in_cat_f), e_signed);
    Arr c = filter(xs, e_in_cat_c);
    groups("cat c by account", group_by(32, c, e_account, e_signed));
    groups("1003 by day/10", group_count(16, filter(xs, in_account_1003), day_tens));
}

static void sorting(Arr xs) {
    printf("== sorting ==\n");
    Arr by_day_ = sorted(xs, day_then_id);
    list("first by day", truncate(by_day_, 10), e_id);
    Arr by_acc = sorted(xs, account_then_amount);
    figure("by account sorted", is_sorted(by_acc, by_account));
    Arr stable = sorted(by_day_, by_cat);
    triple("digests: day, account, category", fold(by_day_, 0, digest_entry), fold(by_acc, 0, digest_entry), fold(stable, 0, digest_entry));
    ranking("largest", xs, 6, by_amount_desc, e_amount);
    ranking("smallest", xs, 6, by_amount, e_amount);
    ranking("latest", xs, 6, latest, e_id);
    Entry plo = {0, 30, 0, 0, true, 'a'}, phi = {0, 59, 0, 0, true, 'a'};
    int64_t lo = lower_bound(by_day_, (W)(intptr_t)&plo, by_day);
    int64_t hi = upper_bound(by_day_, (W)(intptr_t)&phi, by_day);
    figure("days 30..59", hi - lo);
    (void)in_days_30_59;
    Arr amounts = map(xs, e_amount);
    sort_by(amounts, greater_i64);
    pair("third largest, count >= 1000.00", amounts.p[2], lower_bound(amounts, 99999, greater_i64));
}

static void validation(Arr xs, Arr items) {
    printf("== rules ==\n");
    rule("amount range", xs, amount_range);
    rule("amount <= 5000.00", xs, amount_le_500000);
    rule("day and account", xs, day_and_account);
    rule("credits under 200.00", xs, credits_under);
    rule("no large f", xs, no_large_f);
    rule("round to 0.05", xs, round_5);
    rule("not in first week", xs, not_first_week);
    pair("first over 8000.00, first weekly", first_violation(xs, not_amount_le_800000, e_id),
         first_violation(xs, not_not_day_mult_7, e_day));
    rule("price range", items, price_range);
    rule("stocked", items, stocked);
    rule("no dribbles", items, no_dribbles);
    rule("value <= 10000.00", items, value_le);
    figure("violations", violations(items, below100_even));
}

static void daily(Arr xs) {
    printf("== daily ==\n");
    Arr net = daily_net(90, xs);
    figure("positive days", count_if(net, positive));
    triple("best week, fortnight, month", best_window(7, net), best_window(14, net), best_window(30, net));
    Arr weekly = moving_means(7, net);
    list("7-day means, first 8", truncate(copy(weekly), 8), ident);
    Arr monthly = moving_means(30, net);
    figure("30-day mean at end", monthly.p[89]);
    Ring *last = rmake(10);
    for (int d = 0; d < 90; d++) rpush(last, net.p[d]);
    pair("last 10 days peak, total", rpeak(last), rtotal(last));
    ranking("best days", net, 5, greater_i64, ident);
    ranking("worst days", net, 5, less_i64, ident);
}

static void inventory(Arr items) {
    printf("== inventory ==\n");
    summary("value", items, i_value);
    summary("price", items, i_price);
    summary("quantity", items, i_qty);
    pair("to reorder, out of stock", count_if(items, needs_reorder), count_if(items, out_of_stock));
    pair("below 10, below 25", count_if(items, qty_below_10), count_if(items, qty_below_25));
    ranking("reorder first", items, 6, by_shortfall_desc, i_sku);
    Arr restocked = map(items, restock_50);
    figure("to reorder after restock", count_if(restocked, needs_reorder));
    money("value after restock", fold(restocked, 0, add_value));
    cat_groups("value by category", group_by(8, items, i_cat, i_value));
    cat_groups("dearest by category", group_max(8, items, i_cat, i_price));
    Arr up = map(items, reprice_12), down = map(items, reprice_m15);
    money("value +12%", sum_by(up, i_value));
    money("value -15%", sum_by(down, i_value));
    summary("cat a prices", filter(items, i_in_cat_a), i_price);
    summary("cat d prices", filter(items, i_in_cat_d), i_price);
    summary("cat f quantities", filter(items, i_in_cat_f), i_qty);
    histogram("price histogram", items, i_price, 10, 2000);
    histogram("quantity histogram", items, i_qty, 6, 20);
    Arr by_value = sorted(items, value_then_sku);
    list("most valuable", truncate(by_value, 6), i_sku);
    figure("value order digest", fold(by_value, 0, digest_item));
    Arr day1 = map(restocked, reprice_0);
    money("sold 3 each", sell_all(3, day1));
    money("sold 10 each", sell_all(10, day1));
    figure("empty after sales", count_if(day1, out_of_stock));
    for_each(day1, visit_item);
    figure("units left", visited);
}

int main(void) {
    reseed(7919);
    Journal j = {arr(4), 0};
    generate_entries(&j, 700, 90);
    Arr xs = truncate(j.entries, j.count);
    Arr items = generate_items(160);
    journal(xs);
    categories(xs);
    sorting(xs);
    validation(xs, items);
    daily(xs);
    inventory(items);
    histogram("amount histogram", xs, e_amount, 8, 3000);
    return 0;
}
