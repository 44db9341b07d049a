/* C twin of bench/life. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }
static int64_t seed = 2718;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static uint8_t cell(int64_t W, int64_t H, uint8_t *g, int64_t x, int64_t y) {
    return g[((y + H) % H) * W + (x + W) % W];
}
static void step(int64_t W, int64_t H, uint8_t *cur, uint8_t *next) {
    for (int64_t y = 0; y < H; y++)
        for (int64_t x = 0; x < W; x++) {
            uint8_t n = 0;
            for (int64_t dy = -1; dy < 2; dy++)
                for (int64_t dx = -1; dx < 2; dx++)
                    if (dx != 0 || dy != 0) n = (uint8_t)(n + cell(W, H, cur, x + dx, y + dy));
            int alive = cur[y * W + x] == 1;
            next[y * W + x] = (n == 3 || (alive && n == 2)) ? 1 : 0;
        }
}
static int64_t population(uint8_t *g, int64_t n) { int64_t p = 0; for (int64_t i = 0; i < n; i++) p += g[i]; return p; }
static int64_t grid_hash(uint8_t *g, int64_t n) {
    uint64_t h = 17;
    for (int64_t i = 0; i < n; i++) h = h * 31u + g[i];
    return (int64_t)h;
}
static int same(uint8_t *a, uint8_t *b, int64_t n) { return memcmp(a, b, n) == 0; }
static uint8_t *run(int64_t W, int64_t H, uint8_t *start, int64_t gens, int64_t every) {
    uint8_t *cur = calloc(W * H, 1), *next = calloc(W * H, 1);
    memcpy(cur, start, W * H);
    for (int64_t g = 0; g < gens; g++) {
        step(W, H, cur, next);
        uint8_t *t = cur; cur = next; next = t;
        if ((g + 1) % every == 0) print_i(population(cur, W * H));
    }
    return cur;
}
static void place_glider(int64_t W, uint8_t *g, int64_t x, int64_t y) {
    g[y * W + x + 1] = 1; g[(y + 1) * W + x + 2] = 1;
    g[(y + 2) * W + x] = 1; g[(y + 2) * W + x + 1] = 1; g[(y + 2) * W + x + 2] = 1;
}
int main(void) {
    uint8_t *soup = calloc(64 * 48, 1);
    for (int i = 0; i < 64 * 48; i++) if (rnd(100) < 35) soup[i] = 1;
    print_i(population(soup, 64 * 48));
    uint8_t *end = run(64, 48, soup, 120, 20);
    print_i(grid_hash(end, 64 * 48));
    uint8_t *g = calloc(400, 1);
    place_glider(20, g, 3, 5);
    uint8_t *after = run(20, 20, g, 80, 40);
    print_b(same(g, after, 400));
    print_i(grid_hash(after, 400));
    uint8_t *b = calloc(256, 1);
    b[5 * 16 + 4] = 1; b[5 * 16 + 5] = 1; b[5 * 16 + 6] = 1;
    b[10 * 16 + 10] = 1; b[10 * 16 + 11] = 1; b[11 * 16 + 10] = 1; b[11 * 16 + 11] = 1;
    uint8_t *once = run(16, 16, b, 1, 1);
    uint8_t *twice = run(16, 16, b, 2, 3);
    print_b(same(b, once, 256));
    print_b(same(b, twice, 256));
    return 0;
}
