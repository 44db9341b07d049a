/* C twin of bench/sim. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static int64_t seed = 1234567;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
#define WIDTH 1000000
#define HEIGHT 600000
#define GRAVITY 35
typedef struct { int64_t x, y, vx, vy, bounces; } Particle;

static void bounce(Particle *p, int horizontal, int64_t limit) {
    if (horizontal) {
        if (p->x < 0) p->x = -p->x; else p->x = 2 * limit - p->x;
        p->vx = -p->vx * 9 / 10;
    } else {
        if (p->y < 0) p->y = -p->y; else p->y = 2 * limit - p->y;
        p->vy = -p->vy * 9 / 10;
    }
    p->bounces++;
}
static void advance(Particle **ps, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        Particle *p = ps[i];
        p->vy -= GRAVITY; p->x += p->vx; p->y += p->vy;
        if (p->x < 0 || p->x > WIDTH) bounce(p, 1, WIDTH);
        if (p->y < 0 || p->y > HEIGHT) bounce(p, 0, HEIGHT);
    }
}
static int64_t energy(Particle **ps, int64_t n) {
    int64_t e = 0;
    for (int64_t i = 0; i < n; i++) { Particle *p = ps[i]; e += (p->vx * p->vx + p->vy * p->vy) / 2 + GRAVITY * p->y; }
    return e;
}
static void particles(void) {
    int64_t n = 400;
    Particle **ps = calloc(n, sizeof *ps);
    for (int64_t i = 0; i < n; i++) {
        Particle *p = malloc(sizeof *p);
        p->x = rnd(WIDTH); p->y = rnd(HEIGHT);
        p->vx = rnd(4001) - 2000; p->vy = rnd(4001) - 2000; p->bounces = 0;
        ps[i] = p;
    }
    for (int round = 0; round < 5; round++) {
        for (int s = 0; s < 100; s++) advance(ps, n);
        int64_t cx = 0, cy = 0;
        for (int64_t i = 0; i < n; i++) { cx += ps[i]->x; cy += ps[i]->y; }
        print_i(cx / n); print_i(cy / n); print_i(energy(ps, n));
    }
    int64_t total = 0, most = 0;
    for (int64_t i = 0; i < n; i++) { total += ps[i]->bounces; if (ps[i]->bounces > ps[most]->bounces) most = i; }
    print_i(total); print_i(most);
}
typedef struct { int64_t items[64], head, count; } Queue;
static int queue_push(Queue *q, int64_t x) {
    if (q->count == 64) return 0;
    q->items[(q->head + q->count) % 64] = x; q->count++;
    return 1;
}
static int64_t queue_pop(Queue *q) { int64_t x = q->items[q->head]; q->head = (q->head + 1) % 64; q->count--; return x; }
static void bank(int64_t tellers, int64_t ticks, int64_t pct) {
    Queue q = {{0}, 0, 0};
    int64_t *busy = calloc(tellers, 8);
    int64_t served = 0, away = 0, total_wait = 0, max_wait = 0, max_len = 0, idle = 0;
    for (int64_t t = 0; t < ticks; t++) {
        if (rnd(100) < pct) if (!queue_push(&q, t)) away++;
        for (int64_t k = 0; k < tellers; k++) {
            if (busy[k] > 0) busy[k]--;
            if (busy[k] == 0) {
                if (q.count > 0) {
                    int64_t arrived = queue_pop(&q), wait = t - arrived;
                    total_wait += wait;
                    if (wait > max_wait) max_wait = wait;
                    served++;
                    int64_t a = rnd(9);
                    int64_t b = rnd(9);
                    busy[k] = 2 + a + b;
                } else idle++;
            }
        }
        if (q.count > max_len) max_len = q.count;
    }
    print_i(served); print_i(away); print_i(total_wait * 1000 / served);
    print_i(max_wait); print_i(max_len); print_i(idle);
}
int main(void) {
    particles();
    bank(3, 60000, 30);
    bank(4, 60000, 30);
    bank(2, 60000, 30);
    return 0;
}
