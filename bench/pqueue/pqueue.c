/* C twin of bench/pqueue. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }

#define DEFINE_PQ(T, NAME, LESS)                                                    \
    static int64_t push_##NAME(T *heap, int64_t size, T x) {                        \
        int64_t i = size;                                                           \
        while (i > 0) {                                                             \
            int64_t p = (i - 1) / 2;                                                \
            if (!LESS(x, heap[p])) break;                                           \
            heap[i] = heap[p]; i = p;                                               \
        }                                                                           \
        heap[i] = x;                                                                \
        return size + 1;                                                            \
    }                                                                               \
    static void sift_##NAME(T *heap, int64_t size, int64_t start) {                 \
        T x = heap[start];                                                          \
        int64_t i = start;                                                          \
        while (2 * i + 1 < size) {                                                  \
            int64_t c = 2 * i + 1;                                                  \
            if (c + 1 < size && LESS(heap[c + 1], heap[c])) c++;                    \
            if (!LESS(heap[c], x)) break;                                           \
            heap[i] = heap[c]; i = c;                                               \
        }                                                                           \
        heap[i] = x;                                                                \
    }                                                                               \
    static int64_t pop_##NAME(T *heap, int64_t size) {                              \
        int64_t last = size - 1;                                                    \
        heap[0] = heap[last];                                                       \
        if (last > 1) sift_##NAME(heap, last, 0);                                   \
        return last;                                                                \
    }                                                                               \
    static void heapify_##NAME(T *xs, int64_t size) {                               \
        for (int64_t i = size / 2 - 1; i >= 0; i--) sift_##NAME(xs, size, i);       \
    }                                                                               \
    static int is_heap_##NAME(T *heap, int64_t size) {                              \
        for (int64_t i = 1; i < size; i++) if (LESS(heap[i], heap[(i - 1) / 2])) return 0; \
        return 1;                                                                   \
    }
/* heapsort by LESS uses the heap ops of the flipped order FNAME */
#define DEFINE_HEAPSORT(T, NAME, FNAME)                                             \
    static void heapsort_##NAME(T *xs, int64_t n) {                                 \
        heapify_##FNAME(xs, n);                                                     \
        for (int64_t end = n - 1; end > 0; end--) {                                 \
            T top = xs[0]; xs[0] = xs[end]; xs[end] = top;                          \
            sift_##FNAME(xs, end, 0);                                               \
        }                                                                           \
    }

#define LT(a, b) ((a) < (b))
#define GT(a, b) ((a) > (b))
static int evens_first(int64_t a, int64_t b) {
    int64_t pa = a & 1, pb = b & 1;
    return pa != pb ? pa < pb : a < b;
}
#define EVF_FLIP(a, b) evens_first(b, a)
typedef struct { int64_t list, pos, value; } Cursor;
static int cursor_less(Cursor *a, Cursor *b) { return a->value < b->value || (a->value == b->value && a->list < b->list); }
typedef struct { int64_t id, arrival, work, priority, start, finish; } Job;
typedef struct { int64_t time, seq, kind; Job *job; } Event;
static int event_before(Event *a, Event *b) { return a->time < b->time || (a->time == b->time && a->seq < b->seq); }
static int runs_before(Job *a, Job *b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    if (a->arrival != b->arrival) return a->arrival < b->arrival;
    return a->id < b->id;
}

DEFINE_PQ(int64_t, lt64, LT)
DEFINE_PQ(int64_t, gt64, GT)
DEFINE_PQ(int64_t, evf, EVF_FLIP)
DEFINE_PQ(int32_t, gt32, GT)
DEFINE_PQ(Cursor *, cur, cursor_less)
DEFINE_PQ(Event *, ev, event_before)
DEFINE_PQ(Job *, job, runs_before)
DEFINE_HEAPSORT(int64_t, lt64, gt64)
DEFINE_HEAPSORT(int64_t, evf, evf)
DEFINE_HEAPSORT(int64_t, gt64, lt64)
DEFINE_HEAPSORT(int32_t, lt32, gt32)

static int64_t seed = 5;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static int64_t checksum(int64_t *xs, int64_t n) {
    uint64_t h = 0;
    for (int64_t i = 0; i < n; i++) h = h * 1000003u + (uint64_t)xs[i];
    return (int64_t)h;
}
typedef struct { int64_t *p, n; } List;
static int64_t *merge_all(List *lists, int64_t k, int64_t *total_out) {
    int64_t total = 0;
    for (int64_t i = 0; i < k; i++) total += lists[i].n;
    int64_t *out = calloc(total + 1, 8);
    Cursor **heap = calloc(k, sizeof *heap);
    int64_t size = 0;
    for (int64_t i = 0; i < k; i++)
        if (lists[i].n > 0) {
            Cursor *c = malloc(sizeof *c); c->list = i; c->pos = 0; c->value = lists[i].p[0];
            size = push_cur(heap, size, c);
        }
    int64_t at = 0;
    while (size > 0) {
        Cursor *c = heap[0];
        size = pop_cur(heap, size);
        out[at++] = c->value;
        List l = lists[c->list];
        if (c->pos + 1 < l.n) {
            Cursor *nx = malloc(sizeof *nx); nx->list = c->list; nx->pos = c->pos + 1; nx->value = l.p[c->pos + 1];
            size = push_cur(heap, size, nx);
        }
    }
    *total_out = total;
    return out;
}
typedef struct { int64_t makespan, total_turnaround, max_wait, order_hash, events; } Result;
static Result simulate(Job **jobs, int64_t n, int64_t cores) {
    Event **events = calloc(2 * n + 1, sizeof *events);
    int64_t nev = 0, seq = 0;
    for (int64_t i = 0; i < n; i++) {
        Event *e = malloc(sizeof *e); e->time = jobs[i]->arrival; e->seq = seq; e->kind = 0; e->job = jobs[i];
        nev = push_ev(events, nev, e);
        seq++;
    }
    Job **ready = calloc(n, sizeof *ready);
    int64_t nready = 0, fr = cores;
    Result res = {0, 0, 0, 0, 0};
    while (nev > 0) {
        Event *e = events[0];
        nev = pop_ev(events, nev);
        res.events++;
        int64_t now = e->time;
        if (e->kind == 0) nready = push_job(ready, nready, e->job);
        else {
            fr++;
            Job *j = e->job;
            j->finish = now;
            res.total_turnaround += now - j->arrival;
            if (now > res.makespan) res.makespan = now;
        }
        while (fr > 0 && nready > 0) {
            Job *j = ready[0];
            nready = pop_job(ready, nready);
            fr--;
            j->start = now;
            if (now - j->arrival > res.max_wait) res.max_wait = now - j->arrival;
            res.order_hash = (int64_t)((uint64_t)res.order_hash * 31u + (uint64_t)j->id);
            Event *d = malloc(sizeof *d); d->time = now + j->work; d->seq = seq; d->kind = 1; d->job = j;
            seq++;
            nev = push_ev(events, nev, d);
        }
    }
    return res;
}

int main(void) {
    int64_t n = 40000;
    int64_t *xs = calloc(n, 8), *ys = calloc(n, 8);
    for (int64_t i = 0; i < n; i++) xs[i] = rnd(1000000);
    for (int64_t i = 0; i < n; i++) ys[i] = xs[i];
    heapsort_lt64(xs, n);
    print_i(checksum(xs, n)); print_i(xs[0]); print_i(xs[n - 1]);
    heapsort_evf(ys, n);
    print_i(checksum(ys, n));
    heapsort_gt64(ys, n);
    print_i(checksum(ys, n));
    print_i(ys[0]);
    int32_t small[5000];
    for (int i = 0; i < 5000; i++) small[i] = (int32_t)(rnd(20001) - 10000);
    heapsort_lt32(small, 5000);
    int ok = 1;
    for (int i = 1; i < 5000; i++) if (small[i] < small[i - 1]) ok = 0;
    print_b(ok);
    print_i(small[2500]);
    int64_t heap[1000], size = 0;
    uint64_t popped = 0;
    for (int step = 0; step < 20000; step++) {
        if (size < 1000 && (size == 0 || rnd(3) != 0)) size = push_lt64(heap, size, rnd(100000));
        else { popped = popped * 7u + (uint64_t)heap[0]; size = pop_lt64(heap, size); }
    }
    print_i(size);
    print_i((int64_t)popped);
    print_b(is_heap_lt64(heap, size));
    int64_t k = 16;
    List lists[16];
    for (int64_t i = 0; i < k; i++) {
        int64_t m = 200 + rnd(800);
        int64_t *l = calloc(m, 8);
        for (int64_t j = 0; j < m; j++) l[j] = rnd(50000);
        heapsort_lt64(l, m);
        lists[i].p = l; lists[i].n = m;
    }
    int64_t total;
    int64_t *merged = merge_all(lists, k, &total);
    print_i(total);
    print_i(checksum(merged, total));
    int64_t njobs = 3000, t = 0;
    Job **jobs = calloc(njobs, sizeof *jobs);
    for (int64_t i = 0; i < njobs; i++) {
        t += rnd(10);
        Job *j = malloc(sizeof *j);
        j->id = i; j->arrival = t;
        j->work = 5 + rnd(40);
        j->priority = rnd(4);
        j->start = -1; j->finish = -1;
        jobs[i] = j;
    }
    Result r1 = simulate(jobs, njobs, 2);
    Result r4 = simulate(jobs, njobs, 4);
    print_i(r1.makespan); print_i(r1.total_turnaround); print_i(r1.max_wait); print_i(r1.order_hash);
    print_i(r4.makespan); print_i(r4.total_turnaround); print_i(r4.max_wait); print_i(r4.order_hash);
    print_i(r4.events);
    print_i(jobs[njobs - 1]->finish - jobs[njobs - 1]->start);
    return 0;
}
