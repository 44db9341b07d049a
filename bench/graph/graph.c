/* C twin of bench/graph. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static int64_t seed = 99;
static int64_t rnd(void) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return (seed >> 33) & 0x7fffffff;
}
typedef struct { int64_t n, m, *offsets, *targets, *weights; } Graph;

static Graph *from_edges(int64_t n, int64_t m, int64_t *from, int64_t *to, int64_t *w) {
    int64_t *off = calloc(n + 1, 8);
    for (int64_t e = 0; e < m; e++) off[from[e] + 1]++;
    for (int64_t u = 0; u < n; u++) off[u + 1] += off[u];
    int64_t *fill = calloc(n + 1, 8);
    for (int64_t u = 0; u < n; u++) fill[u] = off[u];
    int64_t *tg = calloc(m + 1, 8), *wt = calloc(m + 1, 8);
    for (int64_t e = 0; e < m; e++) { int64_t u = from[e]; tg[fill[u]] = to[e]; wt[fill[u]] = w[e]; fill[u]++; }
    Graph *g = malloc(sizeof *g);
    g->n = n; g->m = m; g->offsets = off; g->targets = tg; g->weights = wt;
    return g;
}
static int64_t degree(Graph *g, int64_t u) { return g->offsets[u + 1] - g->offsets[u]; }
static Graph *symmetric(Graph *g) {
    int64_t m = g->m;
    int64_t *from = calloc(2 * m, 8), *to = calloc(2 * m, 8), *w = calloc(2 * m, 8);
    int64_t k = 0;
    for (int64_t u = 0; u < g->n; u++)
        for (int64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
            from[k] = u; to[k] = g->targets[e]; w[k] = g->weights[e];
            from[k + 1] = g->targets[e]; to[k + 1] = u; w[k + 1] = g->weights[e];
            k += 2;
        }
    return from_edges(g->n, 2 * m, from, to, w);
}
static int64_t *bfs(Graph *g, int64_t src) {
    int64_t *dist = malloc(8 * g->n), *q = malloc(8 * g->n), head = 0, tail = 0;
    for (int64_t i = 0; i < g->n; i++) dist[i] = -1;
    dist[src] = 0; q[tail++] = src;
    while (head < tail) {
        int64_t u = q[head++];
        for (int64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
            int64_t v = g->targets[e];
            if (dist[v] < 0) { dist[v] = dist[u] + 1; q[tail++] = v; }
        }
    }
    return dist;
}
static int64_t dfs_order_hash(Graph *g, int64_t src, int64_t *out) {
    uint8_t *vis = calloc(g->n, 1);
    int64_t *stack = calloc(g->n, 8), *ne = calloc(g->n, 8), sp = 0, count = 0;
    uint64_t h = 0;
    vis[src] = 1; stack[sp++] = src; ne[src] = g->offsets[src];
    h = h * 1000003u + (uint64_t)src; count++;
    while (sp > 0) {
        int64_t u = stack[sp - 1];
        if (ne[u] == g->offsets[u + 1]) { sp--; continue; }
        int64_t v = g->targets[ne[u]];
        ne[u]++;
        if (!vis[v]) {
            vis[v] = 1; ne[v] = g->offsets[v]; stack[sp++] = v;
            h = h * 1000003u + (uint64_t)v; count++;
        }
    }
    out[0] = count;
    return (int64_t)h;
}
static int64_t components(Graph *g, int64_t *comp) {
    for (int64_t i = 0; i < g->n; i++) comp[i] = -1;
    int64_t *q = malloc(8 * g->n), nc = 0;
    for (int64_t s = 0; s < g->n; s++)
        if (comp[s] < 0) {
            int64_t head = 0, tail = 1;
            q[0] = s; comp[s] = nc;
            while (head < tail) {
                int64_t u = q[head++];
                for (int64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
                    int64_t v = g->targets[e];
                    if (comp[v] < 0) { comp[v] = nc; q[tail++] = v; }
                }
            }
            nc++;
        }
    return nc;
}

#define DEFINE_HEAP(T, NAME, LESS)                                                  \
    static int64_t push_##NAME(T *xs, int64_t size, T x) {                          \
        int64_t i = size;                                                           \
        xs[i] = x;                                                                  \
        while (i > 0) {                                                             \
            int64_t p = (i - 1) / 2;                                                \
            if (!LESS(xs[i], xs[p])) break;                                         \
            T t = xs[i]; xs[i] = xs[p]; xs[p] = t; i = p;                           \
        }                                                                           \
        return size + 1;                                                            \
    }                                                                               \
    static void sift_##NAME(T *xs, int64_t size, int64_t i) {                       \
        for (;;) {                                                                  \
            int64_t l = 2 * i + 1;                                                  \
            if (l >= size) break;                                                   \
            int64_t c = l;                                                          \
            if (l + 1 < size && LESS(xs[l + 1], xs[l])) c = l + 1;                  \
            if (!LESS(xs[c], xs[i])) break;                                         \
            T t = xs[i]; xs[i] = xs[c]; xs[c] = t; i = c;                           \
        }                                                                           \
    }                                                                               \
    static int64_t pop_##NAME(T *xs, int64_t size) {                                \
        int64_t last = size - 1;                                                    \
        xs[0] = xs[last];                                                           \
        sift_##NAME(xs, last, 0);                                                   \
        return last;                                                                \
    }                                                                               \
    static void replace_##NAME(T *xs, int64_t size, T x) { xs[0] = x; sift_##NAME(xs, size, 0); }

typedef struct { int64_t node, degree; } NodeDegree;
static int weaker(NodeDegree *a, NodeDegree *b) { return a->degree != b->degree ? a->degree < b->degree : a->node > b->node; }
static int stronger(NodeDegree *a, NodeDegree *b) { return weaker(b, a); }
#define LT(a, b) ((a) < (b))
DEFINE_HEAP(int64_t, i64, LT)
DEFINE_HEAP(NodeDegree *, weak, weaker)
DEFINE_HEAP(NodeDegree *, strong, stronger)

static int64_t *dijkstra(Graph *g, int64_t src) {
    int64_t *dist = malloc(8 * g->n);
    for (int64_t i = 0; i < g->n; i++) dist[i] = -1;
    int64_t mask = (1 << 20) - 1;
    int64_t *pq = calloc(g->m + 1, 8);
    int64_t size = push_i64(pq, 0, src);
    uint8_t *done = calloc(g->n, 1);
    dist[src] = 0;
    while (size > 0) {
        int64_t top = pq[0];
        size = pop_i64(pq, size);
        int64_t u = top & mask, d = top >> 20;
        if (done[u]) continue;
        done[u] = 1;
        for (int64_t e = g->offsets[u]; e < g->offsets[u + 1]; e++) {
            int64_t v = g->targets[e], nd = d + g->weights[e];
            if (dist[v] < 0 || nd < dist[v]) { dist[v] = nd; size = push_i64(pq, size, (nd << 20) | v); }
        }
    }
    return dist;
}
static void summarize(const char *name, int64_t *dist, int64_t n) {
    int64_t reached = 0, far = 0, total = 0;
    for (int64_t i = 0; i < n; i++)
        if (dist[i] >= 0) { reached++; total += dist[i]; if (dist[i] > far) far = dist[i]; }
    fputs(name, stdout); fputs("\n", stdout);
    print_i(reached); print_i(far); print_i(total);
}

int main(void) {
    int64_t n = 30000, m = 75000;
    int64_t *from = calloc(m, 8), *to = calloc(m, 8), *w = calloc(m, 8);
    for (int64_t e = 0; e < m; e++) {
        from[e] = rnd() % n;
        if (rnd() % 4 == 0) to[e] = rnd() % n;
        else to[e] = (from[e] + 1 + rnd() % 50) % n;
        w[e] = 1 + rnd() % 100;
    }
    Graph *g = from_edges(n, m, from, to, w);
    print_i(g->m);
    summarize("bfs", bfs(g, 0), n);
    summarize("dijkstra", dijkstra(g, 0), n);
    Graph *sym = symmetric(g);
    summarize("bfs undirected", bfs(sym, 17), n);
    int64_t count[1];
    print_i(dfs_order_hash(g, 0, count));
    print_i(count[0]);
    int64_t m2 = 14000;
    int64_t *f2 = calloc(m2, 8), *t2 = calloc(m2, 8), *w2 = calloc(m2, 8);
    for (int64_t e = 0; e < m2; e++) { f2[e] = rnd() % 20000; t2[e] = rnd() % 20000; w2[e] = 1; }
    Graph *g2 = symmetric(from_edges(20000, m2, f2, t2, w2));
    int64_t *comp = calloc(20000, 8);
    int64_t nc = components(g2, comp);
    print_i(nc);
    int64_t *sizes = calloc(nc, 8);
    for (int i = 0; i < 20000; i++) sizes[comp[i]]++;
    int64_t biggest = 0;
    for (int64_t c = 0; c < nc; c++) if (sizes[c] > biggest) biggest = sizes[c];
    print_i(biggest);
    int64_t k = 5, size = 0;
    NodeDegree **top = calloc(k, sizeof *top);
    for (int64_t u = 0; u < sym->n; u++) {
        NodeDegree *nd = malloc(sizeof *nd);
        nd->node = u; nd->degree = degree(sym, u);
        if (size < k) size = push_weak(top, size, nd);
        else if (weaker(top[0], nd)) replace_weak(top, size, nd);
    }
    NodeDegree **order = calloc(k, sizeof *order);
    int64_t os = 0;
    for (int64_t i = 0; i < size; i++) os = push_strong(order, os, top[i]);
    while (os > 0) {
        NodeDegree *best = order[0];
        os = pop_strong(order, os);
        print_i(best->node * 1000 + best->degree);
    }
    return 0;
}
