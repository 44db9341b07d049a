/* C twin of bench/hashmap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t (*HashFn)(int64_t);
static void print_i(int64_t x) { printf("%lld\n", (long long)x); }

static int64_t shr(int64_t x, int64_t n) { return (int64_t)((uint64_t)x >> n); }
static int64_t mul(int64_t a, uint64_t b) { return (int64_t)((uint64_t)a * b); }
static int64_t splitmix(int64_t x) {
    int64_t z = (int64_t)((uint64_t)x + 0x9e3779b97f4a7c15ULL);
    z = mul(z ^ shr(z, 30), 0xbf58476d1ce4e5b9ULL);
    z = mul(z ^ shr(z, 27), 0x94d049bb133111ebULL);
    return z ^ shr(z, 31);
}
static int64_t fibonacci(int64_t x) { return shr(mul(x, 0x9e3779b97f4a7c15ULL), 29); }
static int64_t identity(int64_t x) { return x; }
static int64_t fnv1a(const char *s) {
    int64_t h = (int64_t)0xcbf29ce484222325ULL;
    for (size_t i = 0; i < strlen(s); i++) h = mul(h ^ (int64_t)(uint8_t)s[i], 0x100000001b3ULL);
    return h;
}

typedef struct { int64_t *keys, *vals; uint8_t *state; int64_t cap, count, tombs, mask; } Map;
static int64_t probes = 0;

static Map *new_map(int64_t cap) {
    Map *m = calloc(1, sizeof(Map));
    m->keys = calloc(cap, 8); m->vals = calloc(cap, 8); m->state = calloc(cap, 1);
    m->cap = cap; m->mask = cap - 1;
    return m;
}
static int64_t find(HashFn h, Map *m, int64_t key) {
    int64_t i = h(key) & m->mask;
    for (;;) {
        probes++;
        uint8_t s = m->state[i];
        if (s == 0) return -1;
        if (s == 1 && m->keys[i] == key) return i;
        i = (i + 1) & m->mask;
    }
}
static void place(HashFn h, Map *m, int64_t key, int64_t val) {
    int64_t i = h(key) & m->mask;
    while (m->state[i] == 1) { probes++; i = (i + 1) & m->mask; }
    if (m->state[i] == 2) m->tombs--;
    m->state[i] = 1; m->keys[i] = key; m->vals[i] = val; m->count++;
}
static void rehash(HashFn h, Map *m, int64_t cap) {
    int64_t *ok = m->keys, *ov = m->vals, ocap = m->cap;
    uint8_t *os = m->state;
    m->keys = calloc(cap, 8); m->vals = calloc(cap, 8); m->state = calloc(cap, 1);
    m->cap = cap; m->mask = cap - 1; m->count = 0; m->tombs = 0;
    for (int64_t i = 0; i < ocap; i++) if (os[i] == 1) place(h, m, ok[i], ov[i]);
    free(ok); free(ov); free(os);
}
static int insert(HashFn h, Map *m, int64_t key, int64_t val) {
    int64_t f = find(h, m, key);
    if (f >= 0) { m->vals[f] = val; return 0; }
    int64_t cap = m->cap;
    if ((m->count + m->tombs + 1) * 4 > cap * 3) rehash(h, m, m->count * 2 >= cap ? cap * 2 : cap);
    place(h, m, key, val);
    return 1;
}
static int64_t get(HashFn h, Map *m, int64_t key, int64_t def) {
    int64_t i = find(h, m, key);
    return i < 0 ? def : m->vals[i];
}
static int contains(HashFn h, Map *m, int64_t key) { return find(h, m, key) >= 0; }
static int removek(HashFn h, Map *m, int64_t key) {
    int64_t i = find(h, m, key);
    if (i < 0) return 0;
    m->state[i] = 2; m->count--; m->tombs++;
    return 1;
}
typedef int64_t (*FoldFn)(int64_t, int64_t, int64_t);
static int64_t fold(FoldFn f, Map *m, int64_t init) {
    int64_t acc = init;
    for (int64_t i = 0; i < m->cap; i++) if (m->state[i] == 1) acc = f(acc, m->keys[i], m->vals[i]);
    return acc;
}

static Map *count_all(int64_t *xs, int64_t n) {
    Map *m = new_map(16);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = get(splitmix, m, xs[i], 0);
        insert(splitmix, m, xs[i], c + 1);
    }
    return m;
}
static int64_t mode(int64_t *xs, int64_t n) {
    Map *m = count_all(xs, n);
    int64_t best = 0, bc = 0;
    for (int64_t i = 0; i < m->cap; i++)
        if (m->state[i] == 1) {
            int64_t k = m->keys[i], c = m->vals[i];
            if (c > bc || (c == bc && k < best)) { best = k; bc = c; }
        }
    return best * 1000000 + bc;
}

static int64_t seed = 7;
static int64_t rnd(void) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return (seed >> 33) & 0x7fffffff;
}
static int64_t entry_sum(int64_t acc, int64_t k, int64_t v) {
    return (int64_t)((uint64_t)acc + (uint64_t)k * 3u + (uint64_t)v);
}
static int64_t entry_xor(int64_t acc, int64_t k, int64_t v) { return acc ^ splitmix(k + v); }

static void workload(HashFn h, const char *name, int64_t *keys, int64_t n) {
    probes = 0;
    Map *m = new_map(8);
    int64_t fresh = 0, found = 0, sum = 0, removed = 0, still = 0;
    for (int64_t i = 0; i < n; i++) if (insert(h, m, keys[i], i)) fresh++;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = i % 2 == 0 ? keys[i] : keys[i] + 1;
        int64_t v = get(h, m, k, -1);
        if (v >= 0) { found++; sum += v; }
    }
    for (int64_t i = 0; i < n; i += 3) if (removek(h, m, keys[i])) removed++;
    for (int64_t j = 0; j < n; j++) if (contains(h, m, keys[j])) still++;
    for (int64_t j = 0; j < n / 4; j++) insert(h, m, keys[j] * 2 + 1, j);
    fputs(name, stdout); fputs("\n", stdout);
    print_i(fresh); print_i(found); print_i(sum); print_i(removed); print_i(still);
    print_i(m->count); print_i(m->cap);
    print_i(fold(entry_sum, m, 0)); print_i(fold(entry_xor, m, 0));
    print_i(probes);
}

int main(void) {
    int64_t n = 60000;
    int64_t *keys = calloc(n, 8);
    for (int64_t i = 0; i < n; i++) keys[i] = rnd() % 200000;
    workload(splitmix, "splitmix", keys, n);
    workload(fibonacci, "fibonacci", keys, n);
    workload(identity, "identity", keys, n);
    int64_t words[5000];
    for (int i = 0; i < 5000; i++) { int64_t r = rnd() % 1000; words[i] = r * r / 1000; }
    print_i(count_all(words, 5000)->count);
    print_i(mode(words, 5000));
    print_i(fnv1a("the quick brown fox"));
    print_i(fnv1a(""));
    return 0;
}
