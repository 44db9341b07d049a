/* C twin of bench/pipeline. Arrays of records are arrays of 64-bit words
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
typedef W (*Map)(W);
typedef W (*Fold)(W, W);
typedef Arr (*Stage)(Arr);

/* ---- gen ---- */
static int64_t rstate = 1;
static int64_t rnext(void) {
    rstate = wadd(wmul(rstate, 6364136223846793005LL), 1442695040888963407LL);
    return (int64_t)(((uint64_t)rstate >> 33) & 0x7fffffff);
}
static int64_t below(int64_t n) { return rnext() % n; }
static int64_t between(int64_t lo, int64_t hi) { return lo + rnext() % (hi - lo + 1); }

/* ---- event ---- */
typedef struct { int64_t seq, time; uint8_t kind; int32_t source; int64_t value; int32_t prio; } Event;
#define EV(x) ((Event *)(intptr_t)(x))
#define WORD(p) ((W)(intptr_t)(p))
static Arr generate(int64_t n) {
    Arr out = arr(n);
    int64_t t = 0;
    for (int64_t i = 0; i < n; i++) {
        t += between(0, 4);
        int64_t r = below(100);
        uint8_t kind = r < 50 ? 0 : r < 75 ? 1 : r < 85 ? 2 : 3;
        int32_t source = (int32_t)below(8);
        int64_t value = kind == 0 ? between(-200, 1200) : kind == 1 ? between(1, 50000) : kind == 2 ? between(1, 5) : 0;
        int32_t prio = (int32_t)between(0, 9);
        Event *e = malloc(sizeof(Event));
        e->seq = i; e->time = t; e->kind = kind; e->source = source; e->value = value; e->prio = prio;
        out.p[i] = WORD(e);
    }
    return out;
}
static int64_t seq_of(W e) { return EV(e)->seq; }
static int64_t time_of(W e) { return EV(e)->time; }
static int64_t kind_of(W e) { return EV(e)->kind; }
static int64_t source_of(W e) { return EV(e)->source; }
static int64_t value_of(W e) { return EV(e)->value; }
static int64_t eprio_of(W e) { return EV(e)->prio; }
#define IS_KIND(K) static bool is_kind_##K(W e) { return EV(e)->kind == K; }
IS_KIND(0) IS_KIND(1) IS_KIND(2) IS_KIND(3)
#define FROM_SOURCE(S) static bool from_source_##S(W e) { return EV(e)->source == S; }
FROM_SOURCE(0) FROM_SOURCE(1) FROM_SOURCE(2) FROM_SOURCE(3) FROM_SOURCE(4) FROM_SOURCE(5) FROM_SOURCE(6) FROM_SOURCE(7)
#define VALUE_ABOVE(NAME, V) static bool NAME(W e) { return EV(e)->value > V; }
VALUE_ABOVE(value_above_1000, 1000) VALUE_ABOVE(value_above_40000, 40000) VALUE_ABOVE(value_above_0, 0)
static bool urgent_8(W e) { return EV(e)->prio >= 8; }
static Event *clone(W e) { Event *o = malloc(sizeof(Event)); *o = *EV(e); return o; }
#define CALIBRATE(NAME, NUM, DEN, OFF) static W NAME(W e) { Event *o = clone(e); o->value = wadd(wmul(o->value, NUM) / DEN, OFF); return WORD(o); }
CALIBRATE(calibrate_9_10_m20, 9, 10, -20) CALIBRATE(calibrate_9_5_320, 9, 5, 320)
static W delay_5(W e) { Event *o = clone(e); o->time += 5; return WORD(o); }
static W escalate_2(W e) { Event *o = clone(e); o->prio = o->prio + 2 > 9 ? 9 : o->prio + 2; return WORD(o); }

/* ---- stage ---- */
static Arr take_n(Arr xs, int64_t n) {
    int64_t m = n < xs.n ? n : xs.n;
    Arr out = arr(m);
    for (int64_t i = 0; i < m; i++) out.p[i] = xs.p[i];
    return out;
}
static Arr keep(Arr xs, Pred p) {
    Arr out = arr(xs.n);
    int64_t n = 0;
    for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) out.p[n++] = xs.p[i];
    return take_n(out, n);
}
static Arr apply(Arr xs, Map f) { Arr out = arr(xs.n); for (int64_t i = 0; i < xs.n; i++) out.p[i] = f(xs.p[i]); return out; }
static Arr project(Arr xs, Key k) { Arr out = arr(xs.n); for (int64_t i = 0; i < xs.n; i++) out.p[i] = k(xs.p[i]); return out; }
static W reduce(Arr xs, W init, Fold f) { W acc = init; for (int64_t i = 0; i < xs.n; i++) acc = f(acc, xs.p[i]); return acc; }
static int64_t count(Arr xs, Pred p) { int64_t c = 0; for (int64_t i = 0; i < xs.n; i++) if (p(xs.p[i])) c++; return c; }
static Arr tap(Arr xs, void (*v)(W)) { for (int64_t i = 0; i < xs.n; i++) v(xs.p[i]); return xs; }
static Arr dedup_by(Arr xs, Key key) {
    Arr out = arr(xs.n);
    int64_t n = 0;
    for (int64_t i = 0; i < xs.n; i++)
        if (n == 0 || key(out.p[n - 1]) != key(xs.p[i])) out.p[n++] = xs.p[i];
    return take_n(out, n);
}
static int64_t sum(Arr xs, Key k) { int64_t s = 0; for (int64_t i = 0; i < xs.n; i++) s = wadd(s, k(xs.p[i])); return s; }

/* ---- window ---- */
static Arr tumbling(Arr xs, int64_t horizon, Key time, Key val, int64_t w) {
    Arr out = arr(horizon / w + 1);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t k = time(xs.p[i]) / w;
        if (k < out.n) out.p[k] = wadd(out.p[k], val(xs.p[i]));
    }
    return out;
}
static int64_t one_of(W x) { (void)x; return 1; }
static Arr sliding_sum(int64_t w, Arr xs) {
    Arr out = arr(xs.n);
    int64_t s = 0;
    for (int64_t i = 0; i < xs.n; i++) { s = wadd(s, xs.p[i]); if (i >= w) s -= xs.p[i - w]; out.p[i] = s; }
    return out;
}
static Arr sliding_max(int64_t w, Arr xs) {
    Arr out = arr(xs.n);
    int64_t *q = calloc(xs.n + 1, 8);
    int64_t head = 0, tail = 0;
    for (int64_t i = 0; i < xs.n; i++) {
        while (tail > head && xs.p[q[tail - 1]] <= xs.p[i]) tail--;
        q[tail++] = i;
        if (q[head] <= i - w) head++;
        out.p[i] = xs.p[q[head]];
    }
    return out;
}
static Arr smooth(int64_t shift, Arr xs) {
    Arr out = arr(xs.n);
    int64_t e = 0;
    for (int64_t i = 0; i < xs.n; i++) { e += (xs.p[i] - e) / ((int64_t)1 << shift); out.p[i] = e; }
    return out;
}
static Arr rate_limit(Arr xs, Key time, int64_t w, int64_t max) {
    int64_t *ring = calloc(max, 8);
    int64_t accepted = 0;
    Arr out = arr(xs.n);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t t = time(xs.p[i]);
        int64_t slot = accepted % max;
        if (accepted < max || ring[slot] <= t - w) { ring[slot] = t; out.p[accepted++] = xs.p[i]; }
    }
    return take_n(out, accepted);
}
static int64_t over(int64_t limit, Arr xs) { int64_t c = 0; for (int64_t i = 0; i < xs.n; i++) if (xs.p[i] > limit) c++; return c; }

/* ---- fsm ---- */
typedef int64_t (*Step)(int64_t, W);
static Arr run(Arr xs, Step step, Key key, int64_t n, int64_t states) {
    int64_t *state = calloc(n, 8);
    Arr out = arr(states + 1);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t k = key(xs.p[i]);
        int64_t next = step(state[k], xs.p[i]);
        if (next != state[k]) out.p[states]++;
        state[k] = next;
    }
    for (int64_t k = 0; k < n; k++) out.p[state[k]]++;
    return out;
}
#define THRESHOLD(NAME, HIGH, LOW) static int64_t NAME(int64_t s, W e) { \
    return s == 0 && EV(e)->value > HIGH ? 1 : s == 1 && EV(e)->value < LOW ? 0 : s; }
THRESHOLD(threshold_900_700, 900, 700) THRESHOLD(threshold_1100_300, 1100, 300)
#define ORDER(NAME, CANCEL) static int64_t NAME(int64_t s, W e) { \
    return s >= 3 ? 0 : EV(e)->value % CANCEL == 0 && s < 2 ? 4 : s + 1; }
ORDER(order_7, 7) ORDER(order_3, 3)
#define ESCALATION(NAME, LEVEL) static int64_t NAME(int64_t s, W e) { \
    return EV(e)->kind == 3 ? (s > 0 ? s - 1 : 0) : EV(e)->value >= LEVEL ? 2 : s == 0 ? 1 : s; }
ESCALATION(escalation_4, 4) ESCALATION(escalation_5, 5) ESCALATION(escalation_3, 3)

/* ---- heap ---- */
static void sift_up(W *h, int64_t i, Less less) {
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!less(h[i], h[p])) return;
        W t = h[i]; h[i] = h[p]; h[p] = t;
        i = p;
    }
}
static void sift_down(W *h, int64_t n, int64_t i, Less less) {
    for (;;) {
        int64_t l = 2 * i + 1;
        if (l >= n) return;
        int64_t c = l;
        if (l + 1 < n && less(h[l + 1], h[l])) c = l + 1;
        if (!less(h[c], h[i])) return;
        W t = h[i]; h[i] = h[c]; h[c] = t;
        i = c;
    }
}
static Arr hpush(Arr h, int64_t n, W x, Less less) {
    Arr out = h;
    if (n == h.n) { out = arr(2 * n + 4); for (int64_t i = 0; i < n; i++) out.p[i] = h.p[i]; }
    out.p[n] = x;
    sift_up(out.p, n, less);
    return out;
}
static W hpop(Arr h, int64_t n, Less less) {
    W top = h.p[0];
    h.p[0] = h.p[n - 1];
    sift_down(h.p, n - 1, 0, less);
    return top;
}
static void heapify(Arr h, Less less) {
    for (int64_t i = h.n / 2; i > 0;) { i--; sift_down(h.p, h.n, i, less); }
}
/* heapsort<T, less> runs on flip<T, less>: FLIPPED(less) names that instance. */
static void heapsort(Arr xs, Less flipped) {
    heapify(xs, flipped);
    int64_t n = xs.n;
    while (n > 1) { W top = hpop(xs, n, flipped); n--; xs.p[n] = top; }
}
static W hselect(Arr xs, int64_t k, Less less) {
    Arr h = take_n(xs, xs.n);
    heapify(h, less);
    int64_t n = h.n;
    for (int64_t i = 0; i < k; i++) { hpop(h, n, less); n--; }
    return h.p[0];
}
#define BY_KEY(NAME, KEY) static bool NAME(W a, W b) { return KEY(a) < KEY(b); }
#define BY_KEY_DESC(NAME, KEY) static bool NAME(W a, W b) { return KEY(a) > KEY(b); }
#define THEN_BY(NAME, A, B) static bool NAME(W a, W b) { if (A(a, b)) return true; if (A(b, a)) return false; return B(a, b); }
#define FLIP(NAME, L) static bool NAME(W a, W b) { return L(b, a); }
static bool less_i64(W a, W b) { return a < b; }
FLIP(flip_less_i64, less_i64)

/* ---- sched ---- */
typedef struct { int64_t id, arrive, deadline, work, prio; } Job;
#define JB(x) ((Job *)(intptr_t)(x))
typedef struct { int64_t done, late, lateness, total_wait, max_wait, makespan, digest; } Outcome;
static bool kind_1_or_2(W e) { return is_kind_1(e) || is_kind_2(e); }
static Arr jobs(Arr events) {
    Arr js = keep(events, kind_1_or_2);
    Arr out = arr(js.n);
    for (int64_t i = 0; i < js.n; i++) {
        Event *e = EV(js.p[i]);
        Job *j = malloc(sizeof(Job));
        j->work = e->kind == 2 ? 2 * e->value : 1 + e->value % 9;
        j->id = e->seq; j->arrive = e->time; j->deadline = e->time + 12 + 4 * (9 - (int64_t)e->prio); j->prio = e->prio;
        out.p[i] = WORD(j);
    }
    return out;
}
static int64_t id_of(W j) { return JB(j)->id; }
static int64_t arrive_of(W j) { return JB(j)->arrive; }
static int64_t deadline_of(W j) { return JB(j)->deadline; }
static int64_t slack_of(W j) { return JB(j)->deadline - JB(j)->arrive - JB(j)->work; }
static int64_t work_of(W j) { return JB(j)->work; }
static int64_t jprio_of(W j) { return JB(j)->prio; }
static Outcome simulate(Arr js, Less less, int64_t workers) {
    int64_t *free_at = calloc(workers, 8);
    Arr queue = arr(16);
    int64_t queued = 0, next = 0;
    Outcome r = {0, 0, 0, 0, 0, 0, 0};
    while (next < js.n || queued > 0) {
        int64_t w = 0;
        for (int64_t k = 1; k < workers; k++) if (free_at[k] < free_at[w]) w = k;
        int64_t now = free_at[w];
        if (queued == 0 && JB(js.p[next])->arrive > now) now = JB(js.p[next])->arrive;
        while (next < js.n && JB(js.p[next])->arrive <= now) { queue = hpush(queue, queued, js.p[next], less); queued++; next++; }
        Job *j = JB(hpop(queue, queued, less));
        queued--;
        int64_t start = j->arrive > now ? j->arrive : now;
        int64_t wait = start - j->arrive, finish = start + j->work;
        free_at[w] = finish;
        r.done++;
        r.total_wait += wait;
        if (wait > r.max_wait) r.max_wait = wait;
        if (finish > j->deadline) { r.late++; r.lateness += finish - j->deadline; }
        if (finish > r.makespan) r.makespan = finish;
        r.digest = wadd(wmul(r.digest, 31), j->id) & 0xffffffffLL;
    }
    return r;
}

/* ---- text ---- */
typedef struct { uint8_t *bytes; int64_t n, cap; } Buf;
static Buf *bmake(void) { Buf *b = malloc(sizeof(Buf)); b->cap = 64; b->bytes = malloc(64); b->n = 0; return b; }
static void byte(Buf *b, uint8_t c) {
    if (b->n == b->cap) { b->cap *= 2; b->bytes = realloc(b->bytes, b->cap); }
    b->bytes[b->n++] = c;
}
static void text(Buf *b, const char *s) { while (*s) byte(b, (uint8_t)*s++); }
static void bint(Buf *b, int64_t x) {
    if (x < 0) { byte(b, '-'); bint(b, -x); return; }
    if (x >= 10) bint(b, x / 10);
    byte(b, (uint8_t)('0' + x % 10));
}
static void fixed(Buf *b, int64_t width, int64_t x) {
    uint8_t digits[32];
    int64_t v = x;
    for (int64_t i = 0; i < width; i++) { digits[width - 1 - i] = (uint8_t)('0' + v % 10); v /= 10; }
    for (int64_t i = 0; i < width; i++) byte(b, digits[i]);
}
static void hex(Buf *b, int64_t digits, int64_t x) {
    for (int64_t i = 0; i < digits; i++) {
        int64_t d = (int64_t)(((uint64_t)x >> (4 * (digits - 1 - i))) & 15);
        byte(b, (uint8_t)(d < 10 ? '0' + d : 'a' + (d - 10)));
    }
}
static void field(Buf *b, const char *name, W x, Key key, uint8_t sep) { text(b, name); byte(b, '='); bint(b, key(x)); byte(b, sep); }
static void cell(Buf *b, W x, Key key, uint8_t sep) { bint(b, key(x)); byte(b, sep); }
static Buf *write_all(Arr xs, void (*row)(Buf *, W)) { Buf *b = bmake(); for (int64_t i = 0; i < xs.n; i++) row(b, xs.p[i]); return b; }
static int64_t lines(Buf *b) { int64_t c = 0; for (int64_t i = 0; i < b->n; i++) if (b->bytes[i] == '\n') c++; return c; }
static int64_t checksum(Buf *b) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t i = 0; i < b->n; i++) h = (h ^ b->bytes[i]) * 1099511628211ULL;
    return (int64_t)((h ^ (h >> 32)) & 0xffffffffULL);
}
static void echo(Buf *b, int64_t k) {
    for (int64_t i = 0; i < b->n && k > 0; i++) { putchar(b->bytes[i]); if (b->bytes[i] == '\n') k--; }
}

/* ---- stats ---- */
static int64_t percentile(Arr xs, Key key, int64_t p) {
    if (xs.n == 0) return 0;
    Arr ks = project(xs, key);
    heapsort(ks, flip_less_i64);
    return ks.p[p * (ks.n - 1) / 100];
}
static int64_t mean(Arr xs, Key key) { return xs.n == 0 ? 0 : sum(xs, key) / xs.n; }
static Arr histogram(Arr xs, Key key, int64_t buckets, int64_t lo, int64_t width) {
    Arr counts = arr(buckets);
    for (int64_t i = 0; i < xs.n; i++) {
        int64_t b = (key(xs.p[i]) - lo) / width;
        if (b < 0) b = 0;
        if (b >= buckets) b = buckets - 1;
        counts.p[b]++;
    }
    return counts;
}
static void row(const char *label, Arr xs) {
    printf("%s:", label);
    for (int64_t i = 0; i < xs.n; i++) printf(" %lld", (long long)xs.p[i]);
    putchar('\n');
}
static void describe(const char *label, Arr xs, Key key) {
    printf("%s: n=%lld mean=%lld p50=%lld p90=%lld p99=%lld\n", label, (long long)xs.n, (long long)mean(xs, key),
           (long long)percentile(xs, key, 50), (long long)percentile(xs, key, 90), (long long)percentile(xs, key, 99));
}
static void one(const char *label, int64_t x) { printf("%s: %lld\n", label, (long long)x); }

/* ---- main ---- */
static int64_t alarms_seen = 0, worst_alarm = 0;
static void visit_alarm(W e) { alarms_seen++; if (EV(e)->value > worst_alarm) worst_alarm = EV(e)->value; }
static W add_value(W acc, W e) { return wadd(acc, EV(e)->value); }
static W digest(W acc, W e) { return wadd(wadd(wmul(acc, 1000003), wmul(EV(e)->seq, 7)), EV(e)->value) & 0xffffffffffLL; }
static W latest(W acc, W e) { return EV(e)->time > acc ? EV(e)->time : acc; }

static Arr counts_by_kind(Arr xs) {
    Arr out = arr(4);
    out.p[0] = count(xs, is_kind_0); out.p[1] = count(xs, is_kind_1);
    out.p[2] = count(xs, is_kind_2); out.p[3] = count(xs, is_kind_3);
    return out;
}
static Arr counts_by_source(Arr xs) {
    Pred ps[8] = {from_source_0, from_source_1, from_source_2, from_source_3, from_source_4, from_source_5, from_source_6, from_source_7};
    Arr out = arr(8);
    for (int k = 0; k < 8; k++) out.p[k] = count(xs, ps[k]);
    return out;
}

static int64_t ingest(Arr xs) {
    printf("== ingest ==\n");
    one("events", xs.n);
    int64_t horizon = reduce(xs, 0, latest);
    one("horizon", horizon);
    row("by kind", counts_by_kind(xs));
    row("by source", counts_by_source(xs));
    row("orders by source", counts_by_source(keep(xs, is_kind_1)));
    row("urgent by kind", counts_by_kind(keep(xs, urgent_8)));
    one("digest", reduce(xs, 0, digest));
    return horizon;
}

static bool not_value_above_1000(W e) { return !value_above_1000(e); }
static W delay_then_escalate(W e) { return escalate_2(delay_5(e)); }
static bool not_value_above_0(W e) { return !value_above_0(e); }
static bool sensor_not_positive(W e) { return is_kind_0(e) && not_value_above_0(e); }
static bool noise(W e) { return is_kind_3(e) || sensor_not_positive(e); }
static bool not_noise(W e) { return !noise(e); }

static void stages(Arr xs) {
    printf("== stages ==\n");
    Arr calibrated = keep(apply(keep(xs, is_kind_0), calibrate_9_10_m20), not_value_above_1000);
    describe("calibrated", calibrated, value_of);
    Arr fahrenheit = apply(keep(xs, is_kind_0), calibrate_9_5_320);
    describe("scaled", fahrenheit, value_of);
    Arr big = keep(keep(xs, is_kind_1), value_above_40000);
    one("big orders", big.n);
    one("big order total", reduce(big, 0, add_value));
    Arr escalated = apply(keep(xs, is_kind_2), delay_then_escalate);
    one("escalated urgent", count(escalated, urgent_8));
    one("escalated digest", reduce(escalated, 0, digest));
    tap(escalated, visit_alarm);
    one("alarms seen", alarms_seen);
    one("worst alarm", worst_alarm);
    one("source runs", dedup_by(xs, source_of).n);
    one("kind runs", dedup_by(xs, kind_of).n);
    one("rate 3/10", rate_limit(xs, time_of, 10, 3).n);
    one("orders 8/50", rate_limit(keep(xs, is_kind_1), time_of, 50, 8).n);
    Arr quiet = keep(xs, not_noise);
    one("after noise filter", quiet.n);
    row("first kept", project(take_n(quiet, 12), seq_of));
}

static void windows(Arr xs, int64_t horizon) {
    printf("== windows ==\n");
    Arr orders = keep(xs, is_kind_1);
    row("revenue per 250", tumbling(orders, horizon, time_of, value_of, 250));
    Arr traffic = tumbling(xs, horizon, time_of, one_of, 100);
    row("events per 100 (first 12)", take_n(traffic, 12));
    one("busy windows", over(34, traffic));
    Arr readings = project(keep(xs, is_kind_0), value_of);
    row("sum of 5 (first 10)", take_n(sliding_sum(5, readings), 10));
    row("max of 8 (first 10)", take_n(sliding_max(8, readings), 10));
    one("windows of 32 peaking over 1190", over(1190, sliding_max(32, readings)));
    row("smoothed 1/8 (first 10)", take_n(smooth(3, readings), 10));
    one("smoothed 1/16 above 600", over(600, smooth(4, readings)));
    one("hot windows of 20", over(11000, sliding_sum(20, readings)));
    row("alarm severity per 500", tumbling(keep(xs, is_kind_2), horizon, time_of, value_of, 500));
}

static bool kind_2_or_3(W e) { return is_kind_2(e) || is_kind_3(e); }

static void machines(Arr xs) {
    printf("== machines ==\n");
    Arr sensors = keep(xs, is_kind_0);
    row("threshold 900/700", run(sensors, threshold_900_700, source_of, 8, 2));
    row("threshold 1100/300", run(sensors, threshold_1100_300, source_of, 8, 2));
    Arr orders = keep(xs, is_kind_1);
    row("orders cancel%7", run(orders, order_7, source_of, 8, 5));
    row("orders cancel%3", run(orders, order_3, source_of, 8, 5));
    Arr alarms = keep(xs, kind_2_or_3);
    row("escalation >= 4", run(alarms, escalation_4, source_of, 8, 3));
    row("escalation >= 5", run(alarms, escalation_5, source_of, 8, 3));
    row("escalation by prio", run(alarms, escalation_3, eprio_of, 10, 3));
}

static void outcome(const char *label, Outcome r) {
    Buf *b = bmake();
    printf("%s: done=%lld late=%lld lateness=%lld wait=%lld max_wait=%lld end=%lld order=", label, (long long)r.done,
           (long long)r.late, (long long)r.lateness, (long long)r.total_wait, (long long)r.max_wait, (long long)r.makespan);
    hex(b, 8, r.digest);
    byte(b, '\n');
    echo(b, 1);
}

BY_KEY(by_arrive, arrive_of) BY_KEY(by_id, id_of) BY_KEY(by_deadline, deadline_of) BY_KEY(by_work, work_of)
BY_KEY_DESC(by_prio_desc, jprio_of) BY_KEY_DESC(by_work_desc, work_of)
THEN_BY(fifo, by_arrive, by_id) THEN_BY(edf, by_deadline, by_id) THEN_BY(prio, by_prio_desc, by_id)
THEN_BY(sjf, by_work, by_id) THEN_BY(longest_first, by_work_desc, by_id) THEN_BY(tight_first, by_deadline, by_work_desc)

static void scheduling(Arr xs) {
    printf("== scheduling ==\n");
    Arr js = jobs(xs);
    one("jobs", js.n);
    describe("work", js, work_of);
    describe("slack", js, slack_of);
    describe("priority", js, jprio_of);
    outcome("fifo x1", simulate(js, fifo, 1));
    outcome("edf x1", simulate(js, edf, 1));
    outcome("prio x1", simulate(js, prio, 1));
    outcome("sjf x1", simulate(js, sjf, 1));
    outcome("fifo x2", simulate(js, fifo, 2));
    outcome("edf x2", simulate(js, edf, 2));
    outcome("sjf x3", simulate(js, sjf, 3));
    one("longest job", JB(hselect(js, 0, longest_first))->id);
    one("4th tightest deadline", JB(hselect(js, 3, tight_first))->deadline);
}

static void event_kv(Buf *b, W e) {
    field(b, "seq", e, seq_of, ' ');
    field(b, "t", e, time_of, ' ');
    field(b, "kind", e, kind_of, ' ');
    field(b, "src", e, source_of, ' ');
    field(b, "prio", e, eprio_of, ' ');
    field(b, "v", e, value_of, '\n');
}
static void event_csv(Buf *b, W e) {
    fixed(b, 6, EV(e)->time);
    byte(b, ',');
    cell(b, e, seq_of, ',');
    cell(b, e, kind_of, ',');
    cell(b, e, source_of, ',');
    cell(b, e, value_of, '\n');
}
static void job_line(Buf *b, W j) {
    hex(b, 4, JB(j)->id);
    byte(b, ' ');
    fixed(b, 5, JB(j)->arrive);
    byte(b, ' ');
    fixed(b, 5, JB(j)->deadline);
    byte(b, ' ');
    cell(b, j, work_of, '/');
    cell(b, j, jprio_of, '\n');
}
static void report(const char *name, Buf *b) {
    printf("%s: %lld bytes, %lld lines, fnv ", name, (long long)b->n, (long long)lines(b));
    Buf *s = bmake();
    hex(s, 8, checksum(b));
    byte(s, '\n');
    echo(s, 1);
}

static void serialisation(Arr xs) {
    printf("== serialisation ==\n");
    Buf *kv = write_all(take_n(xs, 400), event_kv);
    report("key=value", kv);
    echo(kv, 2);
    Buf *csv = write_all(keep(xs, is_kind_1), event_csv);
    report("orders.csv", csv);
    echo(csv, 2);
    Buf *jl = write_all(jobs(xs), job_line);
    report("jobs", jl);
    echo(jl, 2);
}

BY_KEY_DESC(by_value_desc, value_of) BY_KEY(by_seq, seq_of) THEN_BY(value_then_seq, by_value_desc, by_seq)
FLIP(flip_value_then_seq, value_then_seq)

static void statistics(Arr xs) {
    printf("== statistics ==\n");
    Arr sensors = keep(xs, is_kind_0), orders = keep(xs, is_kind_1);
    describe("sensor values", sensors, value_of);
    describe("order values", orders, value_of);
    describe("priorities", xs, eprio_of);
    row("sensor histogram", histogram(sensors, value_of, 7, -200, 200));
    row("order histogram", histogram(orders, value_of, 5, 0, 10000));
    row("prio histogram", histogram(xs, eprio_of, 10, 0, 1));
    one("p75 source", percentile(xs, source_of, 75));
    one("p25 order", percentile(orders, value_of, 25));
    Arr by_value = take_n(xs, 1000);
    heapsort(by_value, flip_value_then_seq);
    row("top orders (seq)", project(take_n(by_value, 6), seq_of));
}

int main(void) {
    rstate = 424242;
    Arr xs = generate(1500);
    int64_t horizon = ingest(xs);
    stages(xs);
    windows(xs, horizon);
    machines(xs);
    scheduling(xs);
    serialisation(xs);
    statistics(xs);
    return 0;
}
