/* C twin of bench/vm. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const int64_t program[] = {
    1, 2, 3, 0, 1, 0, 3, 2, 1, 0, 3, 3, 2, 0, 1, 2000,
    9, 13, 57, 1, 2, 3, 1, 2, 1, 2, 1, 6, 2, 0, 10, 14,
    44, 2, 0, 2, 1, 8, 13, 53, 19, 1, 12, 23, 19, 2, 2, 3,
    2, 0, 4, 3, 3, 19, 0, 12, 12, 2, 2, 15, 2, 3, 15, 1,
    1, 3, 0, 1, 0, 3, 6, 1, 0, 3, 7, 2, 0, 1, 1500, 9,
    13, 146, 2, 0, 3, 4, 1, 0, 3, 5, 2, 4, 1, 1, 11, 14,
    127, 2, 4, 1, 2, 8, 13, 116, 2, 4, 1, 3, 6, 1, 1, 4,
    3, 4, 12, 123, 2, 4, 1, 2, 7, 3, 4, 19, 5, 12, 90, 2,
    5, 2, 6, 10, 13, 142, 2, 5, 3, 6, 2, 0, 3, 7, 19, 0,
    12, 75, 2, 6, 15, 2, 7, 15, 1, 0, 3, 3, 1, 1, 3, 8,
    2, 8, 1, 60, 9, 13, 221, 1, 1, 3, 9, 2, 9, 1, 60, 9,
    13, 217, 2, 8, 3, 4, 2, 9, 3, 10, 2, 10, 1, 0, 11, 14,
    206, 2, 4, 2, 10, 8, 2, 10, 3, 4, 3, 10, 12, 186, 2, 3,
    2, 4, 4, 3, 3, 19, 9, 12, 171, 19, 8, 12, 160, 2, 3, 15,
    1, 21, 20, 248, 15, 1, 0, 1, 5, 5, 1, 3, 7, 15, 1, 0,
    1, 7, 5, 1, 3, 8, 15, 0, 16, 1, 2, 9, 14, 267, 16, 1,
    1, 5, 20, 248, 18, 1, 2, 5, 20, 248, 4, 21,
};
#define PLEN ((int64_t)(sizeof program / sizeof program[0]))

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }

typedef struct {
    int64_t stack[1024], sp, calls[256], csp, locals[16], steps, max_depth, histogram[22];
} Machine;

static void push(Machine *m, int64_t v) {
    m->stack[m->sp++] = v;
    if (m->sp > m->max_depth) m->max_depth = m->sp;
}
static int64_t pop(Machine *m) { return m->stack[--m->sp]; }

static int64_t run(Machine *m, const int64_t *code) {
    int64_t pc = 0;
    for (;;) {
        int64_t op = code[pc], a, b;
        m->steps++;
        m->histogram[op]++;
        pc++;
        switch (op) {
        case 0: return m->steps;
        case 1: push(m, code[pc]); pc++; break;
        case 2: push(m, m->locals[code[pc]]); pc++; break;
        case 3: m->locals[code[pc]] = pop(m); pc++; break;
        case 4: b = pop(m); a = pop(m); push(m, (int64_t)((uint64_t)a + (uint64_t)b)); break;
        case 5: b = pop(m); a = pop(m); push(m, (int64_t)((uint64_t)a - (uint64_t)b)); break;
        case 6: b = pop(m); a = pop(m); push(m, (int64_t)((uint64_t)a * (uint64_t)b)); break;
        case 7: b = pop(m); a = pop(m); push(m, a / b); break;
        case 8: b = pop(m); a = pop(m); push(m, a % b); break;
        case 9: b = pop(m); a = pop(m); push(m, a < b); break;
        case 10: b = pop(m); a = pop(m); push(m, a > b); break;
        case 11: b = pop(m); a = pop(m); push(m, a == b); break;
        case 12: pc = code[pc]; break;
        case 13: if (pop(m) == 0) pc = code[pc]; else pc++; break;
        case 14: if (pop(m) != 0) pc = code[pc]; else pc++; break;
        case 15: print_i(pop(m)); break;
        case 16: a = pop(m); push(m, a); push(m, a); break;
        case 17: pop(m); break;
        case 18: b = pop(m); a = pop(m); push(m, b); push(m, a); break;
        case 19: m->locals[code[pc]]++; pc++; break;
        case 20: m->calls[m->csp++] = pc + 1; pc = code[pc]; break;
        case 21: pc = m->calls[--m->csp]; break;
        default: fputs("bad opcode\n", stdout); exit(1);
        }
    }
}

int main(void) {
    static Machine m;
    int64_t steps = run(&m, program);
    print_i(steps);
    print_i(m.max_depth);
    print_i(m.sp);
    int64_t h = 0;
    for (int i = 0; i < 22; i++) h = (int64_t)((uint64_t)h * 1000003u + (uint64_t)m.histogram[i]);
    print_i(h);
    int64_t counts[22] = {0};
    int64_t pc = 0;
    while (pc < PLEN) {
        int64_t op = program[pc];
        counts[op]++;
        if (op == 1 || op == 2 || op == 3 || (op >= 12 && op <= 14) || op == 19 || op == 20) pc += 2;
        else pc++;
    }
    int64_t most = 0;
    for (int i = 1; i < 22; i++) if (counts[i] > counts[most]) most = i;
    print_i(most);
    print_i(counts[most]);
    return 0;
}
