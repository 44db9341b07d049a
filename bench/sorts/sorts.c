/* C twin of bench/sorts: same algorithms, same output. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t state = 88172645463325252LL;
static void rng_reseed(int64_t s) { state = s; }
static int64_t rng_next(void) {
    state = (int64_t)((uint64_t)state * 6364136223846793005ULL + 1442695040888963407ULL);
    return (state >> 33) & 0x7fffffff;
}
static int64_t rng_below(int64_t n) { return rng_next() % n; }

typedef struct { int64_t *p; int64_t n; } AI64;
typedef struct { int32_t *p; int64_t n; } AI32;
typedef struct { uint8_t *p; int64_t n; } AU8;
typedef struct Order { int64_t id, price; int32_t qty; uint8_t side; } Order;
typedef struct { Order **p; int64_t n; } AOrd;

#define DEFINE_SORTS(A, T, NAME, LESS)                                              \
    static void ins_##NAME(A xs, int64_t lo, int64_t hi) {                         \
        int64_t i = lo + 1;                                                         \
        while (i < hi) {                                                            \
            T x = xs.p[i];                                                          \
            int64_t j = i;                                                          \
            while (j > lo && LESS(x, xs.p[j - 1])) { xs.p[j] = xs.p[j - 1]; j--; }  \
            xs.p[j] = x;                                                            \
            i++;                                                                    \
        }                                                                           \
    }                                                                               \
    static void swap_##NAME(A xs, int64_t i, int64_t j) {                           \
        T t = xs.p[i]; xs.p[i] = xs.p[j]; xs.p[j] = t;                              \
    }                                                                               \
    static void qsr_##NAME(A xs, int64_t lo, int64_t hi) {                          \
        if (hi - lo <= 12) { ins_##NAME(xs, lo, hi); return; }                      \
        int64_t mid = lo + (hi - lo) / 2;                                           \
        if (LESS(xs.p[mid], xs.p[lo])) swap_##NAME(xs, mid, lo);                    \
        if (LESS(xs.p[hi - 1], xs.p[lo])) swap_##NAME(xs, hi - 1, lo);              \
        if (LESS(xs.p[hi - 1], xs.p[mid])) swap_##NAME(xs, hi - 1, mid);            \
        T pivot = xs.p[mid];                                                        \
        int64_t i = lo, j = hi - 1;                                                 \
        while (i <= j) {                                                            \
            while (LESS(xs.p[i], pivot)) i++;                                       \
            while (LESS(pivot, xs.p[j])) j--;                                       \
            if (i <= j) { swap_##NAME(xs, i, j); i++; j--; }                        \
        }                                                                           \
        qsr_##NAME(xs, lo, j + 1);                                                  \
        qsr_##NAME(xs, i, hi);                                                      \
    }                                                                               \
    static void quick_##NAME(A xs) { qsr_##NAME(xs, 0, xs.n); }                     \
    static void merge_##NAME(A xs, T *tmp, int64_t lo, int64_t mid, int64_t hi) {   \
        int64_t i = lo, j = mid, k = lo;                                            \
        while (i < mid && j < hi) {                                                 \
            if (LESS(xs.p[j], xs.p[i])) tmp[k] = xs.p[j++];                         \
            else tmp[k] = xs.p[i++];                                                \
            k++;                                                                    \
        }                                                                           \
        while (i < mid) tmp[k++] = xs.p[i++];                                       \
        while (j < hi) tmp[k++] = xs.p[j++];                                        \
        for (int64_t t = lo; t < hi; t++) xs.p[t] = tmp[t];                         \
    }                                                                               \
    static void msr_##NAME(A xs, T *tmp, int64_t lo, int64_t hi) {                  \
        if (hi - lo < 2) return;                                                    \
        int64_t mid = lo + (hi - lo) / 2;                                           \
        msr_##NAME(xs, tmp, lo, mid);                                               \
        msr_##NAME(xs, tmp, mid, hi);                                               \
        merge_##NAME(xs, tmp, lo, mid, hi);                                         \
    }                                                                               \
    static void msort_##NAME(A xs) {                                                \
        T *tmp = calloc(xs.n + 1, sizeof(T));                                       \
        msr_##NAME(xs, tmp, 0, xs.n);                                               \
        free(tmp);                                                                  \
    }                                                                               \
    static int sorted_##NAME(A xs) {                                                \
        for (int64_t i = 1; i < xs.n; i++)                                          \
            if (LESS(xs.p[i], xs.p[i - 1])) return 0;                               \
        return 1;                                                                   \
    }

#define LT(a, b) ((a) < (b))
#define GT(a, b) ((a) > (b))
static int abs_lt(int64_t a, int64_t b) {
    int64_t x = a < 0 ? -a : a, y = b < 0 ? -b : b;
    return x == y ? a < b : x < y;
}
#define PRICE_DESC(a, b) ((a)->price > (b)->price)
#define QTY_ASC(a, b) ((int64_t)(a)->qty < (int64_t)(b)->qty)
#define PRICE_ASC(a, b) ((a)->price < (b)->price)

DEFINE_SORTS(AI64, int64_t, lt64, LT)
DEFINE_SORTS(AI64, int64_t, gt64, GT)
DEFINE_SORTS(AI64, int64_t, abs64, abs_lt)
DEFINE_SORTS(AI32, int32_t, lt32, LT)
DEFINE_SORTS(AU8, uint8_t, ltu8, LT)
DEFINE_SORTS(AU8, uint8_t, gtu8, GT)
DEFINE_SORTS(AOrd, Order *, pdesc, PRICE_DESC)
DEFINE_SORTS(AOrd, Order *, qasc, QTY_ASC)
DEFINE_SORTS(AOrd, Order *, pasc, PRICE_ASC)

#define CHECKSUM(xs)                                                          \
    ({ int64_t h_ = 0;                                                        \
       for (int64_t i_ = 0; i_ < (xs).n; i_++)                                \
           h_ = (int64_t)((uint64_t)h_ * 31u + (uint64_t)(int64_t)(xs).p[i_]); \
       h_; })

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }
static void report(const char *name, int ok, int64_t sum) {
    fputs(name, stdout); fputs("\n", stdout); print_b(ok); print_i(sum);
}

static AI64 copy64(AI64 a) { AI64 r = {malloc(8 * (a.n + 1)), a.n}; memcpy(r.p, a.p, 8 * a.n); return r; }
static AI64 fill_i64(int64_t n, int64_t range) {
    AI64 a = {calloc(n + 1, 8), n};
    for (int64_t i = 0; i < n; i++) a.p[i] = rng_below(range) - range / 2;
    return a;
}
static AI32 fill_i32(int64_t n) {
    AI32 a = {calloc(n + 1, 4), n};
    for (int64_t i = 0; i < n; i++) a.p[i] = (int32_t)(rng_below(2000000) - 1000000);
    return a;
}
static AU8 fill_u8(int64_t n) {
    AU8 a = {calloc(n + 1, 1), n};
    for (int64_t i = 0; i < n; i++) a.p[i] = (uint8_t)rng_next();
    return a;
}
static int64_t distinct_sorted(AI64 xs) {
    if (xs.n == 0) return 0;
    int64_t c = 1;
    for (int64_t i = 1; i < xs.n; i++) if (xs.p[i] != xs.p[i - 1]) c++;
    return c;
}
static int32_t median_i32(AI32 xs) {
    AI32 ys = {malloc(4 * (xs.n + 1)), xs.n};
    memcpy(ys.p, xs.p, 4 * xs.n);
    quick_lt32(ys);
    return ys.p[ys.n / 2];
}
static uint8_t percentile_u8(AU8 xs, int64_t p) {
    AU8 ys = {malloc(xs.n + 1), xs.n};
    memcpy(ys.p, xs.p, xs.n);
    ins_ltu8(ys, 0, ys.n);
    return ys.p[(ys.n - 1) * p / 100];
}
static AOrd make_orders(int64_t n) {
    AOrd o = {calloc(n + 1, sizeof(Order *)), n};
    for (int64_t i = 0; i < n; i++) {
        Order *r = calloc(1, sizeof(Order));
        r->id = i;
        r->price = 100 + rng_below(900);
        r->qty = (int32_t)(1 + rng_below(50));
        r->side = rng_below(2) == 0 ? 'B' : 'S';
        o.p[i] = r;
    }
    return o;
}
static int64_t id_checksum(AOrd o) {
    int64_t h = 0;
    for (int64_t i = 0; i < o.n; i++) h = (int64_t)((uint64_t)h * 1000003u + (uint64_t)o.p[i]->id);
    return h;
}
static int64_t best_bids(AOrd o, int64_t k) {
    int64_t nbuy = 0;
    for (int64_t i = 0; i < o.n; i++) if (o.p[i]->side == 'B') nbuy++;
    AOrd b = {calloc(nbuy + 1, sizeof(Order *)), nbuy};
    int64_t at = 0;
    for (int64_t i = 0; i < o.n; i++) if (o.p[i]->side == 'B') b.p[at++] = o.p[i];
    quick_pdesc(b);
    int64_t total = 0;
    for (int64_t i = 0; i < k && i < nbuy; i++) total += b.p[i]->price;
    return total;
}

int main(void) {
    rng_reseed(2024);
    AI64 a = fill_i64(30000, 1000000);
    AI64 b = copy64(a), c = copy64(a);
    quick_lt64(a);
    report("quicksort i64 asc", sorted_lt64(a), CHECKSUM(a));
    msort_gt64(b);
    report("merge sort i64 desc", sorted_gt64(b), CHECKSUM(b));
    quick_abs64(c);
    report("quicksort i64 by abs", sorted_abs64(c), CHECKSUM(c));
    print_i(distinct_sorted(a));

    AI64 small = fill_i64(1500, 100);
    ins_lt64(small, 0, small.n);
    report("insertion i64", sorted_lt64(small), CHECKSUM(small));
    print_i(distinct_sorted(small));

    AI32 d = fill_i32(40000);
    print_i(median_i32(d));
    msort_lt32(d);
    report("merge sort i32", sorted_lt32(d), CHECKSUM(d));
    print_i(d.p[0]);
    print_i(d.p[d.n - 1]);

    AU8 e = fill_u8(3000);
    print_i(percentile_u8(e, 10));
    print_i(percentile_u8(e, 50));
    print_i(percentile_u8(e, 90));
    quick_gtu8(e);
    report("quicksort u8 desc", sorted_gtu8(e), CHECKSUM(e));

    AOrd orders = make_orders(5000);
    print_i(best_bids(orders, 100));
    msort_qasc(orders);
    msort_pasc(orders);
    report("orders by price then qty", sorted_pasc(orders), id_checksum(orders));
    print_i(orders.p[0]->price);
    print_i(orders.p[0]->qty);
    print_i(orders.p[orders.n - 1]->price);
    return 0;
}
