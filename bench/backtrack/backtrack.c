/* C twin of bench/backtrack. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }

static int64_t queens(int64_t n, int64_t row, int64_t cols, int64_t d1, int64_t d2) {
    if (row == n) return 1;
    int64_t full = (1LL << n) - 1, fr = full & ~(cols | d1 | d2), count = 0;
    while (fr != 0) {
        int64_t bit = fr & -fr;
        fr ^= bit;
        count += queens(n, row + 1, cols | bit, ((d1 | bit) << 1) & full, (d2 | bit) >> 1);
    }
    return count;
}
static int64_t nodes;
static int64_t box_of(int64_t r, int64_t c) { return r / 3 * 3 + c / 3; }
static int solve(int64_t *grid, int64_t *rows, int64_t *cols, int64_t *boxes) {
    nodes++;
    int64_t best = -1, best_count = 10;
    for (int64_t i = 0; i < 81; i++)
        if (grid[i] == 0) {
            int64_t used = rows[i / 9] | cols[i % 9] | boxes[box_of(i / 9, i % 9)], count = 0;
            for (int64_t d = 1; d < 10; d++) if ((used & (1LL << d)) == 0) count++;
            if (count < best_count) { best = i; best_count = count; }
        }
    if (best < 0) return 1;
    int64_t r = best / 9, c = best % 9, b = box_of(r, c), used = rows[r] | cols[c] | boxes[b];
    for (int64_t d = 1; d < 10; d++) {
        int64_t bit = 1LL << d;
        if ((used & bit) == 0) {
            grid[best] = d; rows[r] |= bit; cols[c] |= bit; boxes[b] |= bit;
            if (solve(grid, rows, cols, boxes)) return 1;
            grid[best] = 0; rows[r] ^= bit; cols[c] ^= bit; boxes[b] ^= bit;
        }
    }
    return 0;
}
static void sudoku(const char *puzzle) {
    int64_t grid[81] = {0}, rows[9] = {0}, cols[9] = {0}, boxes[9] = {0};
    for (int64_t i = 0; i < 81; i++) {
        char ch = puzzle[i];
        if (ch != '.') {
            int64_t d = ch - '0';
            grid[i] = d; rows[i / 9] |= 1LL << d; cols[i % 9] |= 1LL << d; boxes[box_of(i / 9, i % 9)] |= 1LL << d;
        }
    }
    nodes = 0;
    print_b(solve(grid, rows, cols, boxes));
    print_i(nodes);
    for (int r = 0; r < 9; r++) {
        int64_t line = 0;
        for (int c = 0; c < 9; c++) line = line * 10 + grid[r * 9 + c];
        print_i(line);
    }
}
static int64_t perm_count, derangements;
static uint64_t perm_hash;
static void visit(int64_t *p, int64_t n) {
    perm_count++;
    int fixed = 0;
    int64_t h = 0;
    for (int64_t i = 0; i < n; i++) { if (p[i] == i) fixed = 1; h = h * 10 + p[i]; }
    if (!fixed) derangements++;
    perm_hash = perm_hash * 31u + (uint64_t)h;
}
static void heap_permute(int64_t *p, int64_t n, int64_t k) {
    if (k == 1) { visit(p, n); return; }
    heap_permute(p, n, k - 1);
    for (int64_t i = 0; i < k - 1; i++) {
        int64_t j = k % 2 == 0 ? i : 0;
        int64_t t = p[j]; p[j] = p[k - 1]; p[k - 1] = t;
        heap_permute(p, n, k - 1);
    }
}
int main(void) {
    for (int64_t n = 1; n < 11; n++) print_i(queens(n, 0, 0, 0, 0));
    sudoku("8..........36......7..9.2...5...7.......457.....1...3...1....68..85...1..9....4..");
    sudoku("53..7....6..195....98....6.8...6...34..8.3..17...2...6.6....28....419..5....8..79");
    int64_t p[8];
    for (int i = 0; i < 8; i++) p[i] = i;
    heap_permute(p, 8, 8);
    print_i(perm_count);
    print_i(derangements);
    print_i((int64_t)perm_hash);
    return 0;
}
