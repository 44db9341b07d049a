/* C twin of bench/generic_zoo. Generic Pare functions become C functions
 * taking function pointers (or per-type copies); every constant-parameter
 * instance becomes a small named function. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wsub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

typedef struct { int64_t *p; int64_t n; } A64;
static A64 a64(int64_t n) { A64 a = {calloc(n + 1, 8), n}; return a; }
typedef int64_t (*F1)(int64_t);
typedef bool (*P1)(int64_t);
typedef int64_t (*F2)(int64_t, int64_t);

/* ---- hash ---- */
static int64_t shr(int64_t x, int n) { return (int64_t)((uint64_t)x >> n); }
static int64_t mix(int64_t salt, int64_t x) {
    int64_t z = x ^ salt;
    z = wmul(z ^ shr(z, 33), (int64_t)0xff51afd7ed558ccdULL);
    z = wmul(z ^ shr(z, 33), (int64_t)0xc4ceb9fe1a85ec53ULL);
    return z ^ shr(z, 33);
}
static int64_t fold_fnv(int64_t h, int64_t x) { return wmul(h ^ x, 0x100000001b3LL); }
static int64_t combine(int64_t a, int64_t b) { return wadd(wmul(a, 31), b); }
static int64_t hash_bytes(int64_t seed, const uint8_t *xs, int64_t n) {
    int64_t h = seed;
    for (int64_t i = 0; i < n; i++) h = fold_fnv(h, xs[i]);
    return h;
}
#define MIXF(S, NAME) static int64_t NAME(int64_t x) { return mix(S, x); }
MIXF(0, mix_0) MIXF(12345, mix_12345) MIXF(1, mix_1) MIXF(2, mix_2) MIXF(5, mix_5) MIXF(99, mix_99) MIXF(9, mix_9)
static int64_t fold_sum_mixed_1(int64_t h, int64_t x) { return wadd(h, mix(1, x)); }
static int64_t fold_sum_mixed_2(int64_t h, int64_t x) { return wadd(h, mix(2, x)); }

/* ---- num ---- */
#define SCALE(K, NAME) static int64_t NAME(int64_t x) { return wmul(x, K); }
#define OFFSET(K, NAME) static int64_t NAME(int64_t x) { return wadd(x, K); }
#define CLAMP(LO, HI, NAME) static int64_t NAME(int64_t x) { return x < LO ? LO : x > HI ? HI : x; }
#define MODULO(M, NAME) static int64_t NAME(int64_t x) { return (x % M + M) % M; }
#define POW(E, NAME) static int64_t NAME(int64_t x) { int64_t r = 1; for (int i = 0; i < E; i++) r = wmul(r, x); return r; }
#define ABOVE(K, NAME) static bool NAME(int64_t x) { return x > K; }
#define BELOW(K, NAME) static bool NAME(int64_t x) { return x < K; }
#define DIVISIBLE(K, NAME) static bool NAME(int64_t x) { return x % K == 0; }
#define BETWEEN(LO, HI, NAME) static bool NAME(int64_t x) { return x >= LO && x <= HI; }
SCALE(2, scale_2) SCALE(3, scale_3) SCALE(-1, scale_m1) SCALE(1000, scale_1000)
OFFSET(1, offset_1) OFFSET(-100, offset_m100) OFFSET(4096, offset_4096) OFFSET(-7, offset_m7) OFFSET(5, offset_5)
OFFSET(2000, offset_2000) OFFSET(5000, offset_5000)
CLAMP(0, 100, clamp_0_100) CLAMP(-50, 50, clamp_m50_50) CLAMP(-1000, 0, clamp_m1000_0) CLAMP(-2000, 2000, clamp_m2000_2000)
MODULO(7, modulo_7) MODULO(10, modulo_10) MODULO(256, modulo_256) MODULO(16, ring_index_16) MODULO(100, modulo_100)
MODULO(3, modulo_3) MODULO(1000, modulo_1000) MODULO(1024, modulo_1024)
POW(2, pow_2) POW(3, pow_3) POW(5, pow_5)
ABOVE(0, above_0) ABOVE(1000, above_1000) ABOVE(-1000, above_m1000) ABOVE(4990, above_4990) ABOVE(5000, above_5000)
ABOVE(4000, above_4000)
BELOW(0, below_0) BELOW(-2500, below_m2500) BELOW(-4000, below_m4000)
DIVISIBLE(2, divisible_2) DIVISIBLE(3, divisible_3) DIVISIBLE(7, divisible_7) DIVISIBLE(100, divisible_100)
DIVISIBLE(4999, divisible_4999) DIVISIBLE(5, divisible_5) DIVISIBLE(4, divisible_4) DIVISIBLE(13, divisible_13)
BETWEEN(0, 99, between_0_99) BETWEEN(-10, 10, between_m10_10) BETWEEN(1000, 2000, between_1000_2000)
BETWEEN(42, 42, between_42_42) BETWEEN(-5000, 4999, between_m5000_4999) BETWEEN(-100, 100, between_m100_100)
static bool is_even(int64_t x) { return (x & 1) == 0; }
static int64_t square(int64_t x) { return wmul(x, x); }
static int64_t absv(int64_t x) { return x < 0 ? -x : x; }
static int64_t compose_s2_o1(int64_t x) { return offset_1(scale_2(x)); }
static int64_t compose_o1_s2(int64_t x) { return scale_2(offset_1(x)); }
static int64_t compose_abs_m100(int64_t x) { return modulo_100(absv(x)); }
static int64_t compose_abs_o5(int64_t x) { return offset_5(absv(x)); }
static int64_t twice_s3(int64_t x) { return scale_3(scale_3(x)); }
static int64_t twice_om7(int64_t x) { return offset_m7(offset_m7(x)); }
static int64_t twice_abs_o5(int64_t x) { return compose_abs_o5(compose_abs_o5(x)); }
static bool not_even(int64_t x) { return !is_even(x); }
static bool not_above_0(int64_t x) { return !above_0(x); }
static bool pos_div5(int64_t x) { return above_0(x) && divisible_5(x); }
static bool extreme(int64_t x) { return below_m4000(x) || above_4000(x); }
static bool not_div4(int64_t x) { return !divisible_4(x); }
static bool even_not_div4(int64_t x) { return is_even(x) && not_div4(x); }
static bool odd_small(int64_t x) { return not_even(x) && between_m100_100(x); }
static int64_t f_add(int64_t a, int64_t b) { return wadd(a, b); }
static int64_t f_sub(int64_t a, int64_t b) { return wsub(a, b); }
static int64_t f_max(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t f_min(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t f_xor(int64_t a, int64_t b) { return a ^ b; }
static bool lt(int64_t a, int64_t b) { return a < b; }
static bool gt(int64_t a, int64_t b) { return a > b; }

/* ---- vec over i64 ---- */
static int64_t checksum(A64 xs) {
    int64_t h = 0;
    for (int64_t i = 0; i < xs.n; i++) h = wadd(wmul(h, 31), xs.p[i]);
    return h;
}
static A64 copy64(A64 xs) { A64 o = a64(xs.n); memcpy(o.p, xs.p, 8 * xs.n); return o; }
static A64 map64(A64 xs, F1 f) { A64 o = a64(xs.n); for (int64_t i = 0; i < xs.n; i++) o.p[i] = f(xs.p[i]); return o; }
static void map_in_place64(A64 xs, F1 f) { for (int64_t i = 0; i < xs.n; i++) xs.p[i] = f(xs.p[i]); }
static int64_t count_if64(A64 xs, P1 p) { int64_t c = 0; for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) c++; return c; }
static int64_t find_if64(A64 xs, P1 p) { for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) return i; return -1; }
static bool any64(A64 xs, P1 p) { return find_if64(xs, p) >= 0; }
static bool all64(A64 xs, P1 p) { return count_if64(xs, p) == xs.n; }
static A64 filter64(A64 xs, P1 p) {
    A64 o = a64(xs.n);
    int64_t n = 0;
    for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) o.p[n++] = xs.p[i];
    o.n = n;
    return o;
}
static int64_t fold64(A64 xs, int64_t init, F2 f) { int64_t a = init; for (int64_t i = 0; i < xs.n; i++) a = f(a, xs.p[i]); return a; }
static A64 zip64(A64 a, A64 b, F2 f) {
    int64_t n = a.n < b.n ? a.n : b.n;
    A64 o = a64(n);
    for (int64_t i = 0; i < n; i++) o.p[i] = f(a.p[i], b.p[i]);
    return o;
}
static int64_t sum_by64(A64 xs, F1 key) { int64_t s = 0; for (int64_t i = 0; i < xs.n; i++) s = wadd(s, key(xs.p[i])); return s; }
static int64_t max_by64(A64 xs, F1 key) {
    int64_t best = -1, bk = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t k = key(xs.p[i]); if (best < 0 || k > bk) { best = i; bk = k; } }
    return best;
}
static int64_t mapped(A64 xs, F1 f) { return checksum(map64(xs, f)); }

/* ---- sort (same stable algorithm, generic over element size) ---- */
typedef bool (*Less)(const void *, const void *);
static void insertion_sort(char *xs, size_t sz, Less less, int64_t lo, int64_t hi) {
    char x[64];
    for (int64_t i = lo + 1; i < hi; i++) {
        memcpy(x, xs + i * sz, sz);
        int64_t j = i;
        while (j > lo && less(x, xs + (j - 1) * sz)) { memcpy(xs + j * sz, xs + (j - 1) * sz, sz); j--; }
        memcpy(xs + j * sz, x, sz);
    }
}
static void merge_pass(char *xs, char *tmp, size_t sz, Less less, int64_t lo, int64_t mid, int64_t hi) {
    int64_t i = lo, j = mid;
    for (int64_t k = lo; k < hi; k++) {
        if (j >= hi || (i < mid && !less(xs + j * sz, xs + i * sz))) { memcpy(tmp + k * sz, xs + i * sz, sz); i++; }
        else { memcpy(tmp + k * sz, xs + j * sz, sz); j++; }
    }
    memcpy(xs + lo * sz, tmp + lo * sz, (hi - lo) * sz);
}
static void sort_by(void *base, int64_t n, size_t sz, Less less) {
    char *xs = base;
    for (int64_t lo = 0; lo < n;) { int64_t hi = lo + 8 < n ? lo + 8 : n; insertion_sort(xs, sz, less, lo, hi); lo = hi; }
    char *tmp = calloc(n + 1, sz);
    for (int64_t w = 8; w < n; w *= 2)
        for (int64_t s = 0; s + w < n; s += 2 * w) {
            int64_t end = s + 2 * w < n ? s + 2 * w : n;
            merge_pass(xs, tmp, sz, less, s, s + w, end);
        }
    free(tmp);
}
static bool is_sorted_by(void *base, int64_t n, size_t sz, Less less) {
    char *xs = base;
    for (int64_t i = 1; i < n; i++) if (less(xs + i * sz, xs + (i - 1) * sz)) return false;
    return true;
}
#define I64(p) (*(const int64_t *)(p))
static bool v_lt(const void *a, const void *b) { return I64(a) < I64(b); }
static bool v_gt(const void *a, const void *b) { return I64(a) > I64(b); }
static bool v_by_abs(const void *a, const void *b) { return absv(I64(a)) < absv(I64(b)); }
static bool v_desc_m100(const void *a, const void *b) { return modulo_100(I64(a)) > modulo_100(I64(b)); }
static bool v_by_last(const void *a, const void *b) { return modulo_10(I64(a)) < modulo_10(I64(b)); }
static bool v_then(const void *a, const void *b) {
    if (v_by_last(a, b)) return true;
    if (v_by_last(b, a)) return false;
    return v_gt(a, b);
}
static A64 sorted_copy64(A64 xs, Less less) { A64 o = copy64(xs); sort_by(o.p, o.n, 8, less); return o; }
static int64_t lower_bound64(A64 xs, int64_t x, Less less) {
    int64_t lo = 0, hi = xs.n;
    while (lo < hi) { int64_t mid = (lo + hi) / 2; if (less(&xs.p[mid], &x)) lo = mid + 1; else hi = mid; }
    return lo;
}
static int64_t percentile64(A64 xs, Less less, int64_t P) { A64 ys = sorted_copy64(xs, less); return ys.p[(ys.n - 1) * P / 100]; }

/* ---- main sections ---- */
static int64_t digest = 0;
static void note(int64_t x) { digest = combine(digest, x); }
static void section(const char *name) { fputs(name, stdout); fputs(": ", stdout); print_i(digest); digest = 0; }
static int64_t seed = 20240601;
static A64 random_values(int64_t n, int64_t lo, int64_t hi) {
    A64 xs = a64(n);
    for (int64_t i = 0; i < n; i++) {
        seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
        xs.p[i] = lo + ((seed >> 33) & 0x7fffffff) % (hi - lo);
    }
    return xs;
}
static void transforms(A64 xs) {
    F1 fs[] = {scale_2, scale_3, scale_m1, scale_1000, offset_1, offset_m100, offset_4096, clamp_0_100,
               clamp_m50_50, clamp_m1000_0, modulo_7, modulo_10, modulo_256, ring_index_16, pow_2, pow_3,
               pow_5, square, absv, compose_s2_o1, compose_o1_s2, compose_abs_m100, twice_s3, twice_om7,
               twice_abs_o5, mix_0, mix_12345};
    for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++) note(mapped(xs, fs[i]));
    A64 ys = copy64(xs);
    map_in_place64(ys, clamp_m2000_2000);
    map_in_place64(ys, offset_2000);
    note(checksum(ys));
    section("transforms");
}
static void predicates(A64 xs) {
    P1 ps[] = {above_0, above_1000, above_m1000, below_0, below_m2500, divisible_2, divisible_3, divisible_7,
               divisible_100, between_0_99, between_m10_10, between_1000_2000, is_even, not_even, not_above_0,
               pos_div5, extreme, even_not_div4};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) note(count_if64(xs, ps[i]));
    note(find_if64(xs, above_4990));
    note(find_if64(xs, between_42_42));
    note(any64(xs, divisible_4999));
    note(any64(xs, above_5000));
    note(all64(xs, between_m5000_4999));
    note(all64(xs, above_0));
    A64 pos = filter64(xs, above_0);
    note(pos.n);
    note(checksum(pos));
    A64 sev = filter64(xs, divisible_7);
    note(sev.n);
    note(all64(sev, divisible_7));
    note(checksum(filter64(xs, odd_small)));
    section("predicates");
}
static void folds(A64 xs, A64 ys) {
    note(fold64(xs, 0, f_add));
    note(fold64(xs, -1000000, f_max));
    note(fold64(xs, 1000000, f_min));
    note(fold64(xs, 0, f_xor));
    note(fold64(xs, 0, f_sub));
    note(fold64(xs, 0, fold_fnv));
    note(fold64(xs, 0, fold_sum_mixed_1));
    note(fold64(xs, 0, fold_sum_mixed_2));
    note(fold64(xs, 7, combine));
    note(checksum(zip64(xs, ys, f_add)));
    note(checksum(zip64(xs, ys, f_sub)));
    note(checksum(zip64(xs, ys, f_max)));
    note(checksum(zip64(xs, ys, f_min)));
    note(checksum(zip64(xs, ys, f_xor)));
    note(sum_by64(xs, absv));
    note(sum_by64(xs, square));
    note(sum_by64(xs, modulo_3));
    note(max_by64(xs, absv));
    note(max_by64(xs, modulo_1000));
    note(max_by64(xs, mix_5));
    section("folds");
}
static void sorting(A64 xs) {
    A64 a = sorted_copy64(xs, v_lt);
    note(checksum(a));
    int64_t distinct = a.n == 0 ? 0 : 1;
    for (int64_t i = 1; i < a.n; i++) if (a.p[i] != a.p[i - 1]) distinct++;
    note(distinct);
    note(lower_bound64(a, 0, v_lt));
    note(lower_bound64(a, 2500, v_lt));
    A64 b = sorted_copy64(xs, v_gt);
    note(checksum(b));
    note(lower_bound64(b, 0, v_gt));
    for (int64_t i = 0, j = b.n - 1; i < j; i++, j--) { int64_t t = b.p[i]; b.p[i] = b.p[j]; b.p[j] = t; }
    note(memcmp(a.p, b.p, 8 * a.n) == 0);
    A64 c = sorted_copy64(xs, v_by_abs);
    note(checksum(c));
    note(is_sorted_by(c.p, c.n, 8, v_by_abs));
    note(checksum(sorted_copy64(xs, v_desc_m100)));
    A64 e = sorted_copy64(xs, v_then);
    note(checksum(e));
    note(is_sorted_by(e.p, e.n, 8, v_by_last));
    note(is_sorted_by(e.p, e.n, 8, v_lt));
    A64 small = a64(50);
    memcpy(small.p, xs.p, 8 * 50);
    insertion_sort((char *)small.p, 8, v_gt, 0, 50);
    note(checksum(small));
    section("sorting");
}

typedef struct { int64_t *keys; bool *used; int64_t cap, count; } IntSet;
static IntSet *new_set(int64_t cap) {
    IntSet *s = malloc(sizeof *s);
    s->keys = calloc(cap, 8); s->used = calloc(cap, 1); s->cap = cap; s->count = 0;
    return s;
}
static int64_t slot(F1 h, IntSet *s, int64_t key) {
    int64_t mask = s->cap - 1, i = h(key) & mask;
    while (s->used[i] && s->keys[i] != key) i = (i + 1) & mask;
    return i;
}
static void grow(F1 h, IntSet *s) {
    int64_t *ok = s->keys, oc = s->cap;
    bool *ou = s->used;
    s->cap = 2 * oc; s->keys = calloc(s->cap, 8); s->used = calloc(s->cap, 1);
    for (int64_t i = 0; i < oc; i++)
        if (ou[i]) { int64_t j = slot(h, s, ok[i]); s->used[j] = true; s->keys[j] = ok[i]; }
}
static bool set_insert(F1 h, IntSet *s, int64_t key) {
    if (2 * (s->count + 1) > s->cap) grow(h, s);
    int64_t i = slot(h, s, key);
    if (s->used[i]) return false;
    s->used[i] = true; s->keys[i] = key; s->count++;
    return true;
}
static bool set_contains(F1 h, IntSet *s, int64_t key) { return s->used[slot(h, s, key)]; }
static int64_t set_distinct(F1 h, A64 xs) {
    IntSet *s = new_set(16);
    for (int64_t i = 0; i < xs.n; i++) set_insert(h, s, xs.p[i]);
    return s->count;
}
static void sets(A64 xs) {
    note(set_distinct(mix_1, xs));
    note(set_distinct(mix_99, xs));
    note(set_distinct(modulo_1024, xs));
    note(set_distinct(absv, xs));
    IntSet *s = new_set(8);
    int64_t fresh = 0, hits = 0;
    for (int64_t i = 0; i < xs.n; i++) if (set_insert(mix_1, s, xs.p[i] / 10)) fresh++;
    note(fresh);
    for (int64_t k = -600; k < 600; k++) if (set_contains(mix_1, s, k)) hits++;
    note(hits);
    section("sets");
}

/* ring buffers */
typedef struct { int64_t *data, head, size, N; } Ring;
static int64_t ring_index(int64_t N, int64_t i) { return (i % N + N) % N; }
static Ring *new_ring(int64_t N) { Ring *r = malloc(sizeof *r); r->data = calloc(N, 8); r->head = 0; r->size = 0; r->N = N; return r; }
static void ring_put(Ring *r, int64_t x) {
    r->data[ring_index(r->N, r->head + r->size)] = x;
    if (r->size < r->N) r->size++; else r->head = ring_index(r->N, r->head + 1);
}
static int64_t ring_get(Ring *r, int64_t i) { return r->data[ring_index(r->N, r->head + i)]; }
static A64 window_sums(int64_t N, A64 xs) {
    Ring *r = new_ring(N);
    A64 o = a64(xs.n);
    int64_t sum = 0;
    for (int64_t i = 0; i < xs.n; i++) {
        if (r->size == N) sum -= ring_get(r, 0);
        ring_put(r, xs.p[i]);
        sum += xs.p[i];
        o.p[i] = sum;
    }
    return o;
}
static A64 window_max(int64_t N, A64 xs) {
    Ring *r = new_ring(N);
    A64 o = a64(xs.n);
    for (int64_t i = 0; i < xs.n; i++) {
        ring_put(r, xs.p[i]);
        int64_t m = ring_get(r, 0);
        for (int64_t k = 1; k < r->size; k++) m = f_max(m, ring_get(r, k));
        o.p[i] = m;
    }
    return o;
}
static void windows(A64 xs) {
    note(checksum(window_sums(3, xs)));
    note(checksum(window_sums(8, xs)));
    note(checksum(window_sums(32, xs)));
    note(checksum(window_max(4, xs)));
    note(checksum(window_max(16, xs)));
    Ring *r = new_ring(5);
    for (int64_t i = 0; i < xs.n; i++) ring_put(r, xs.p[i]);
    note(ring_get(r, 0));
    note(ring_get(r, r->size - 1));
    uint8_t bytes[7] = {0};
    A64 longs = a64(12);
    for (int64_t i = 0; i < 100; i++) { bytes[ring_index(7, i)] = (uint8_t)i; longs.p[ring_index(12, i)] = i * i; }
    note(hash_bytes(5, bytes, 7));
    note(checksum(longs));
    section("windows");
}
static A64 histogram(int64_t B, int64_t W, A64 xs) {
    A64 c = a64(B);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t b = xs.p[i] / W;
        b = b < 0 ? 0 : b > B - 1 ? B - 1 : b;
        c.p[b]++;
    }
    return c;
}
static int64_t mean_by64(A64 xs, F1 key) { return xs.n == 0 ? 0 : sum_by64(xs, key) / xs.n; }
static int64_t variance_by64(A64 xs, F1 key) {
    int64_t m = mean_by64(xs, key), s = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t d = key(xs.p[i]) - m; s += d * d; }
    return xs.n == 0 ? 0 : s / xs.n;
}
static int64_t range_by64(A64 xs, F1 key) {
    int64_t lo = key(xs.p[0]), hi = lo;
    for (int64_t i = 1; i < xs.n; i++) { lo = f_min(lo, key(xs.p[i])); hi = f_max(hi, key(xs.p[i])); }
    return hi - lo;
}
static void distributions(A64 xs) {
    A64 sh = map64(xs, offset_5000);
    note(checksum(histogram(10, 1000, sh)));
    note(checksum(histogram(20, 500, sh)));
    note(checksum(histogram(8, 64, sh)));
    note(percentile64(xs, v_lt, 10));
    note(percentile64(xs, v_lt, 90));
    note(percentile64(xs, v_gt, 25));
    note(percentile64(xs, v_lt, 50));
    note(mean_by64(xs, absv));
    note(variance_by64(xs, modulo_100));
    note(range_by64(xs, square));
    section("distributions");
}
static void callbacks(A64 xs) {
    int64_t visited = 0, largest = -1000000;
    for (int64_t i = 0; i < xs.n; i++) visited++;
    for (int64_t i = 0; i < xs.n; i++) largest = f_max(largest, xs.p[i]);
    note(visited);
    note(largest);
    int64_t cap = 0, n = 0;
    A64 st = a64(xs.n);
    for (int64_t i = 0; i < xs.n; i++)
        if (divisible_13(xs.p[i])) { if (n == cap) cap = 2 * n + 4; st.p[n++] = xs.p[i]; }
    note(n);
    note(cap);
    st.n = n;
    note(checksum(st));
    note(-1);
    note(13);
    A64 idx = a64(20);
    for (int i = 0; i < 20; i++) idx.p[i] = i;
    note(checksum(map64(idx, pow_2)));
    section("callbacks");
}

/* ---- inventory ---- */
typedef struct { int64_t id, price; int32_t qty; uint8_t category; } Item;
typedef struct { Item **p; int64_t n; } AI;
typedef int64_t (*IKey)(const Item *);
typedef bool (*IPred)(const Item *);
static int64_t price_of(const Item *it) { return it->price; }
static int64_t qty_of(const Item *it) { return it->qty; }
static int64_t value_of(const Item *it) { return wmul(it->price, it->qty); }
static int64_t category_of(const Item *it) { return it->category; }
static bool in_cat_a(const Item *it) { return it->category == 'a'; }
static bool in_cat_b(const Item *it) { return it->category == 'b'; }
static bool in_cat_c(const Item *it) { return it->category == 'c'; }
static bool in_cat_d(const Item *it) { return it->category == 'd'; }
static bool cheaper_100(const Item *it) { return it->price < 100; }
static bool cheaper_500(const Item *it) { return it->price < 500; }
static bool cheaper_10(const Item *it) { return it->price < 10; }
static bool in_stock(const Item *it) { return it->qty > 0; }
static Item *new_item(int64_t id, int64_t price, int32_t qty, uint8_t cat) {
    Item *it = malloc(sizeof *it);
    it->id = id; it->price = price; it->qty = qty; it->category = cat;
    return it;
}
static Item *restock_15(const Item *it) { return new_item(it->id, it->price, (int32_t)((uint32_t)it->qty + 15u), it->category); }
static Item *discount(const Item *it, int64_t pct) { return new_item(it->id, it->price - it->price * pct / 100, it->qty, it->category); }
static AI make_items(int64_t n, int64_t seed0) {
    AI a = {calloc(n, sizeof(Item *)), n};
    int64_t s = seed0;
    for (int64_t i = 0; i < n; i++) {
        s = mix(77, wadd(s, i));
        int64_t r = s & 0x7fffffff;
        a.p[i] = new_item(i, 5 + r % 995, (int32_t)(r / 1000 % 60 - 10), (uint8_t)('a' + r / 100000 % 5));
    }
    return a;
}
static int64_t icount(AI xs, IPred p) { int64_t c = 0; for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) c++; return c; }
static int64_t isum(AI xs, IKey k) { int64_t s = 0; for (int64_t i = 0; i < xs.n; i++) s = wadd(s, k(xs.p[i])); return s; }
static int64_t imax_by(AI xs, IKey key) {
    int64_t best = -1, bk = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t k = key(xs.p[i]); if (best < 0 || k > bk) { best = i; bk = k; } }
    return best;
}
static int64_t imean(AI xs, IKey k) { return xs.n == 0 ? 0 : isum(xs, k) / xs.n; }
static int64_t ivariance(AI xs, IKey key) {
    int64_t m = imean(xs, key), s = 0;
    for (int64_t i = 0; i < xs.n; i++) { int64_t d = key(xs.p[i]) - m; s += d * d; }
    return xs.n == 0 ? 0 : s / xs.n;
}
static int64_t irange(AI xs, IKey key) {
    int64_t lo = key(xs.p[0]), hi = lo;
    for (int64_t i = 1; i < xs.n; i++) { lo = f_min(lo, key(xs.p[i])); hi = f_max(hi, key(xs.p[i])); }
    return hi - lo;
}
#define IT(p) (*(Item *const *)(p))
static bool by_price(const void *a, const void *b) { return price_of(IT(a)) < price_of(IT(b)); }
static bool by_value(const void *a, const void *b) { return value_of(IT(a)) < value_of(IT(b)); }
static bool by_cat(const void *a, const void *b) { return category_of(IT(a)) < category_of(IT(b)); }
static bool by_value_desc(const void *a, const void *b) { return value_of(IT(a)) > value_of(IT(b)); }
static bool cat_then_value_desc(const void *a, const void *b) {
    if (by_cat(a, b)) return true;
    if (by_cat(b, a)) return false;
    return by_value_desc(a, b);
}
static AI icopy(AI xs) { AI o = {calloc(xs.n + 1, sizeof(Item *)), xs.n}; memcpy(o.p, xs.p, xs.n * sizeof(Item *)); return o; }
static AI isorted(AI xs, Less less) { AI o = icopy(xs); sort_by(o.p, o.n, sizeof(Item *), less); return o; }
static int64_t ids_hash(AI xs) { int64_t h = 0; for (int64_t i = 0; i < xs.n; i++) h = combine(h, xs.p[i]->id); return h; }
static int64_t inventory_report(AI items) {
    int64_t d = 0;
    d = combine(d, icount(items, in_cat_a));
    d = combine(d, icount(items, in_cat_b));
    d = combine(d, icount(items, in_cat_c));
    d = combine(d, icount(items, in_cat_d));
    d = combine(d, icount(items, cheaper_100));
    d = combine(d, icount(items, cheaper_500));
    d = combine(d, icount(items, in_stock));
    d = combine(d, isum(items, value_of));
    d = combine(d, isum(items, price_of));
    d = combine(d, isum(items, qty_of));
    d = combine(d, imax_by(items, value_of));
    d = combine(d, imax_by(items, price_of));
    d = combine(d, imean(items, price_of));
    d = combine(d, ivariance(items, price_of));
    d = combine(d, ivariance(items, qty_of));
    d = combine(d, irange(items, value_of));
    AI sp = isorted(items, by_price);
    d = combine(d, sp.p[(sp.n - 1) * 50 / 100]->id);
    AI sv = isorted(items, by_value);
    d = combine(d, sv.p[(sv.n - 1) * 90 / 100]->id);
    int64_t total = 0;
    for (int64_t i = 0; i < items.n; i++) total = wadd(total, f_max(value_of(items.p[i]), 0));
    d = combine(d, total);
    AI stocked = {calloc(items.n + 1, sizeof(Item *)), 0};
    for (int64_t i = 0; i < items.n; i++) if (in_stock(items.p[i])) stocked.p[stocked.n++] = items.p[i];
    d = combine(d, stocked.n);
    d = combine(d, icount(stocked, in_stock) == stocked.n);
    int any10 = 0;
    for (int64_t i = 0; i < stocked.n; i++) if (cheaper_10(stocked.p[i])) { any10 = 1; break; }
    d = combine(d, any10);
    d = combine(d, ids_hash(isorted(items, by_price)));
    AI layered = isorted(items, cat_then_value_desc);
    d = combine(d, ids_hash(layered));
    d = combine(d, is_sorted_by(layered.p, layered.n, sizeof(Item *), by_cat));
    AI re = icopy(items);
    for (int64_t i = 0; i < re.n; i++) re.p[i] = restock_15(items.p[i]);
    d = combine(d, icount(re, in_stock));
    AI sale = icopy(re);
    for (int64_t i = 0; i < sale.n; i++) sale.p[i] = discount(re.p[i], 20);
    d = combine(d, isum(sale, value_of));
    for (int64_t i = 0; i < sale.n; i++) sale.p[i] = discount(sale.p[i], 50);
    d = combine(d, isum(sale, price_of));
    return d;
}

/* ---- text ---- */
static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_upper(uint8_t c) { return c >= 'A' && c <= 'Z'; }
static bool is_lower(uint8_t c) { return c >= 'a' && c <= 'z'; }
static bool is_alpha(uint8_t c) { return is_upper(c) || is_lower(c); }
static bool is_space(uint8_t c) { return c == ' ' || c == '\n' || c == '\t'; }
static uint8_t to_upper(uint8_t c) { return is_lower(c) ? (uint8_t)(c - 32) : c; }
static uint8_t to_lower(uint8_t c) { return is_upper(c) ? (uint8_t)(c + 32) : c; }
static bool is_vowel(uint8_t c) { uint8_t l = to_lower(c); return l == 'a' || l == 'e' || l == 'i' || l == 'o' || l == 'u'; }
static uint8_t rot(uint8_t c, uint8_t k) {
    if (is_lower(c)) return (uint8_t)('a' + (uint8_t)(c - 'a' + k) % 26);
    if (is_upper(c)) return (uint8_t)('A' + (uint8_t)(c - 'A' + k) % 26);
    return c;
}
typedef bool (*BP)(uint8_t);
static int64_t bcount(const uint8_t *xs, int64_t n, BP p) { int64_t c = 0; for (int64_t i = 0; i < n; i++) if (p(xs[i])) c++; return c; }
static int64_t text_analyze(const char *s) {
    int64_t n = (int64_t)strlen(s);
    uint8_t *xs = malloc(n + 1);
    memcpy(xs, s, n);
    int64_t d = 0;
    d = combine(d, bcount(xs, n, is_digit));
    d = combine(d, bcount(xs, n, is_upper));
    d = combine(d, bcount(xs, n, is_lower));
    d = combine(d, bcount(xs, n, is_alpha));
    d = combine(d, bcount(xs, n, is_space));
    d = combine(d, bcount(xs, n, is_vowel));
    int64_t words = 0;
    bool in_word = false;
    for (int64_t i = 0; i < n; i++) {
        if (is_space(xs[i])) in_word = false;
        else if (!in_word) { in_word = true; words++; }
    }
    d = combine(d, words);
    int64_t fd = -1, fz = -1;
    for (int64_t i = 0; i < n; i++) if (is_digit(xs[i])) { fd = i; break; }
    for (int64_t i = 0; i < n; i++) if (xs[i] == 'z') { fz = i; break; }
    d = combine(d, fd);
    d = combine(d, fz);
    int64_t dv = 0, fnv = 0;
    uint8_t mx = 0, xr = 0, sm = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_digit(xs[i])) dv = dv * 10 % 1000000007 + (xs[i] - '0');
        fnv = fold_fnv(fnv, xs[i]);
        if (xs[i] > mx) mx = xs[i];
        xr ^= xs[i];
        sm = (uint8_t)(sm + xs[i]);
    }
    d = combine(d, dv);
    d = combine(d, fnv);
    d = combine(d, mx);
    d = combine(d, xr);
    d = combine(d, sm);
    uint8_t *up = calloc(n + 1, 1), *lo = calloc(n + 1, 1), *r13 = calloc(n + 1, 1), *r3 = calloc(n + 1, 1), *br = calloc(n + 1, 1), *rev = calloc(n + 1, 1);
    for (int64_t i = 0; i < n; i++) up[i] = to_upper(xs[i]);
    d = combine(d, hash_bytes(1, up, n));
    for (int64_t i = 0; i < n; i++) lo[i] = to_lower(up[i]);
    d = combine(d, hash_bytes(2, lo, n));
    for (int64_t i = 0; i < n; i++) r13[i] = rot(xs[i], 13);
    d = combine(d, hash_bytes(3, r13, n));
    bool eq = true;
    for (int64_t i = 0; i < n; i++) if (rot(r13[i], 13) != xs[i]) eq = false;
    d = combine(d, eq);
    for (int64_t i = 0; i < n; i++) r3[i] = rot(rot(xs[i], 3), 23);
    d = combine(d, memcmp(r3, xs, n) == 0);
    for (int64_t i = 0; i < n; i++) br[i] = xs[i] > 255 - 200 ? 255 : (uint8_t)(xs[i] + 200);
    d = combine(d, bcount(br, n, is_alpha));
    int64_t sm9 = 0;
    for (int64_t i = 0; i < n; i++) sm9 = wadd(sm9, mix(9, br[i]));
    d = combine(d, sm9);
    for (int64_t i = 0; i < n; i++) rev[i] = xs[n - 1 - i];
    d = combine(d, hash_bytes(1, rev, n));
    return d;
}

/* ---- signal ---- */
typedef struct { int32_t *p; int64_t n; } A32;
static A32 samples(int64_t n, int64_t period, int64_t amp, int64_t seed0) {
    A32 o = {calloc(n, 4), n};
    int64_t s = seed0;
    for (int64_t i = 0; i < n; i++) {
        s = (int64_t)((uint64_t)s * 6364136223846793005ULL + 1442695040888963407ULL);
        int64_t noise = ((s >> 33) & 0x7fffffff) % 201 - 100;
        int64_t phase = i % period;
        int64_t tri = phase < period / 2 ? phase : period - phase;
        o.p[i] = (int32_t)(tri * 4 * amp / period - amp + noise);
    }
    return o;
}
static A64 widen_all(A32 xs) { A64 o = a64(xs.n); for (int64_t i = 0; i < xs.n; i++) o.p[i] = xs.p[i]; return o; }
#define I32(p) (*(const int32_t *)(p))
static bool v32_lt(const void *a, const void *b) { return I32(a) < I32(b); }
static bool v32_gt(const void *a, const void *b) { return I32(a) > I32(b); }
static int32_t percentile32(A32 xs, Less less, int64_t P) {
    int32_t *ys = malloc(4 * xs.n + 4);
    memcpy(ys, xs.p, 4 * xs.n);
    sort_by(ys, xs.n, 4, less);
    return ys[(xs.n - 1) * P / 100];
}
static int64_t signal_process(A32 a, A32 b) {
    uint64_t d;
    A32 clipped = {calloc(a.n, 4), a.n};
    for (int64_t i = 0; i < a.n; i++) {
        int32_t v = (int32_t)((uint32_t)a.p[i] * 3u);
        clipped.p[i] = v < -1000 ? -1000 : v > 1000 ? 1000 : v;
    }
    d = (uint64_t)checksum(widen_all(clipped));
    int64_t pos = 0, energy = 0;
    int32_t mx = INT32_MIN, mn = INT32_MAX;
    for (int64_t i = 0; i < a.n; i++) if (clipped.p[i] > 0) pos++;
    d = d * 31 + (uint64_t)pos;
    for (int64_t i = 0; i < a.n; i++) {
        energy = wadd(energy, (int64_t)a.p[i] * a.p[i]);
        if (a.p[i] > mx) mx = a.p[i];
        if (a.p[i] < mn) mn = a.p[i];
    }
    d = d * 31 + (uint64_t)energy;
    d = d * 31 + (uint64_t)(int64_t)mx;
    d = d * 31 + (uint64_t)(int64_t)mn;
    int64_t n = a.n < b.n ? a.n : b.n;
    A32 mixed = {calloc(n, 4), n}, diff = {calloc(n, 4), n};
    for (int64_t i = 0; i < n; i++) {
        mixed.p[i] = (int32_t)((uint32_t)a.p[i] + (uint32_t)b.p[i]);
        diff.p[i] = (int32_t)((uint32_t)a.p[i] - (uint32_t)b.p[i]);
    }
    A64 wm = widen_all(mixed), wd = widen_all(diff), wb = widen_all(b);
    d = d * 31 + (uint64_t)fold64(wm, 0, f_add);
    d = d * 31 + (uint64_t)fold64(wd, 0, f_add);
    int64_t mean = wb.n == 0 ? 0 : fold64(wb, 0, f_add) / wb.n;
    d = d * 31 + (uint64_t)mean;
    int64_t var = 0;
    for (int64_t i = 0; i < wb.n; i++) var += (wb.p[i] - mean) * (wb.p[i] - mean);
    d = d * 31 + (uint64_t)(var / wb.n);
    d = d * 31 + (uint64_t)(int64_t)percentile32(a, v32_lt, 10);
    d = d * 31 + (uint64_t)(int64_t)percentile32(a, v32_lt, 90);
    d = d * 31 + (uint64_t)(int64_t)percentile32(b, v32_gt, 50);
    A32 quiet = {calloc(b.n, 4), b.n};
    for (int64_t i = 0; i < b.n; i++) quiet.p[i] = (int32_t)((uint32_t)b.p[i] * (uint32_t)-2);
    sort_by(quiet.p, quiet.n, 4, v32_gt);
    d = d * 31 + (uint64_t)(int64_t)quiet.p[0] + (uint64_t)(int64_t)quiet.p[quiet.n - 1];
    d = d * 31 + (uint64_t)is_sorted_by(quiet.p, quiet.n, 4, v32_gt);
    d = d * 31 + (uint64_t)checksum(window_sums(8, wm));
    d = d * 31 + (uint64_t)checksum(window_max(5, wm));
    return (int64_t)d;
}

int main(void) {
    A64 xs = random_values(3000, -5000, 5000);
    A64 ys = random_values(3000, -5000, 5000);
    transforms(xs);
    predicates(xs);
    folds(xs, ys);
    sorting(xs);
    sets(xs);
    windows(xs);
    distributions(xs);
    callbacks(xs);
    AI items = make_items(3000, 99);
    fputs("inventory: ", stdout);
    print_i(inventory_report(items));
    fputs("text: ", stdout);
    print_i(text_analyze("The Quick Brown Fox jumps over 13 lazy dogs; 2024-06-01, room 404.\nPack my box with five dozen liquor jugs!\tZebra 7"));
    print_i(text_analyze("aeiou AEIOU 0123456789 zzz"));
    A32 a = samples(5000, 200, 900, 1);
    A32 b = samples(5000, 77, 400, 2);
    fputs("signal: ", stdout);
    print_i(signal_process(a, b));
    return 0;
}
