/* C twin of bench/dynprog. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static const int64_t COINS[8] = {1, 2, 5, 10, 20, 50, 100, 200};
static int64_t seed = 777;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
static uint8_t *random_text(int64_t n, int64_t alpha) {
    uint8_t *s = calloc(n + 1, 1);
    for (int64_t i = 0; i < n; i++) s[i] = (uint8_t)('a' + rnd(alpha));
    return s;
}
static int64_t lcs(uint8_t *a, int64_t na, uint8_t *b, int64_t m) {
    int32_t *prev = calloc(m + 1, 4), *cur = calloc(m + 1, 4);
    for (int64_t i = 0; i < na; i++) {
        for (int64_t j = 0; j < m; j++)
            cur[j + 1] = a[i] == b[j] ? prev[j] + 1 : MAX(prev[j + 1], cur[j]);
        int32_t *t = prev; prev = cur; cur = t;
    }
    return prev[m];
}
static int64_t edit_distance(uint8_t *a, int64_t na, uint8_t *b, int64_t m) {
    int64_t *prev = calloc(m + 1, 8), *cur = calloc(m + 1, 8);
    for (int64_t j = 0; j <= m; j++) prev[j] = j;
    for (int64_t i = 0; i < na; i++) {
        cur[0] = i + 1;
        for (int64_t j = 0; j < m; j++) {
            int64_t cost = a[i] == b[j] ? 0 : 1;
            int64_t x = MIN(prev[j + 1] + 1, cur[j] + 1);
            cur[j + 1] = MIN(x, prev[j] + cost);
        }
        int64_t *t = prev; prev = cur; cur = t;
    }
    return prev[m];
}
static int64_t knapsack(int64_t *w, int64_t *v, int64_t n, int64_t cap) {
    int64_t *best = calloc(cap + 1, 8);
    for (int64_t i = 0; i < n; i++)
        for (int64_t c = cap; c >= w[i]; c--) best[c] = MAX(best[c], best[c - w[i]] + v[i]);
    return best[cap];
}
static int64_t lis(int64_t *xs, int64_t n) {
    int64_t *tails = calloc(n, 8), size = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = xs[i], lo = 0, hi = size;
        while (lo < hi) { int64_t mid = (lo + hi) / 2; if (tails[mid] < x) lo = mid + 1; else hi = mid; }
        tails[lo] = x;
        if (lo == size) size++;
    }
    return size;
}
static int64_t coin_ways(int64_t amount, int64_t mod) {
    int64_t *ways = calloc(amount + 1, 8);
    ways[0] = 1;
    for (int k = 0; k < 8; k++) for (int64_t v = COINS[k]; v <= amount; v++) ways[v] = (ways[v] + ways[v - COINS[k]]) % mod;
    return ways[amount];
}
static int64_t min_coins(int64_t amount) {
    int64_t *best = calloc(amount + 1, 8);
    for (int64_t v = 1; v <= amount; v++) {
        best[v] = amount + 1;
        for (int k = 0; k < 8; k++) if (COINS[k] <= v) best[v] = MIN(best[v], best[v - COINS[k]] + 1);
    }
    return best[amount];
}
static int64_t max_subarray(int64_t *xs, int64_t n) {
    int64_t best = xs[0], run = xs[0];
    for (int64_t i = 1; i < n; i++) { run = MAX(xs[i], run + xs[i]); best = MAX(best, run); }
    return best;
}
int main(void) {
    uint8_t *a = random_text(800, 4), *b = random_text(700, 4);
    print_i(lcs(a, 800, b, 700));
    uint8_t *c = random_text(700, 26), *d = random_text(650, 26);
    print_i(edit_distance(c, 700, d, 650));
    print_i(edit_distance(a, 800, a, 800));
    print_i(lcs(c, 700, c, 700));
    int64_t n = 150, w[150], v[150];
    for (int64_t i = 0; i < n; i++) { w[i] = 10 + rnd(90); v[i] = w[i] + rnd(50); }
    print_i(knapsack(w, v, n, 4000));
    print_i(knapsack(w, v, n, 500));
    int64_t *xs = calloc(50000, 8);
    for (int64_t i = 0; i < 50000; i++) xs[i] = rnd(1000000);
    print_i(lis(xs, 50000));
    for (int64_t i = 0; i < 50000; i++) xs[i] = i * 3 - rnd(20);
    print_i(lis(xs, 50000));
    print_i(coin_ways(200, 1000000007));
    print_i(coin_ways(100000, 1000000007));
    print_i(min_coins(9999));
    for (int64_t i = 0; i < 50000; i++) xs[i] = rnd(2001) - 1000;
    print_i(max_subarray(xs, 50000));
    print_i(200);
    print_i(-5);
    return 0;
}
