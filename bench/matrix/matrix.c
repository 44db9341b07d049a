/* C twin of bench/matrix. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }

typedef struct { int64_t rows, cols, *data; } Matrix;
static int64_t seed = 12345;
static int64_t rnd(void) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return (seed >> 33) & 0x7fffffff;
}
static Matrix *zeros(int64_t r, int64_t c) {
    Matrix *m = malloc(sizeof *m);
    m->rows = r; m->cols = c; m->data = calloc(r * c + 1, 8);
    return m;
}
#define AT(m, i, j) ((m)->data[(i) * (m)->cols + (j)])
static Matrix *identity(int64_t n) { Matrix *m = zeros(n, n); for (int64_t i = 0; i < n; i++) AT(m, i, i) = 1; return m; }
static Matrix *random_matrix(int64_t r, int64_t c, int64_t range) {
    Matrix *m = zeros(r, c);
    for (int64_t i = 0; i < r * c; i++) m->data[i] = rnd() % (2 * range + 1) - range;
    return m;
}
static Matrix *multiply(Matrix *a, Matrix *b) {
    Matrix *c = zeros(a->rows, b->cols);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t k = 0; k < a->cols; k++) {
            int64_t aik = AT(a, i, k);
            if (aik != 0)
                for (int64_t j = 0; j < b->cols; j++)
                    c->data[i * c->cols + j] = (int64_t)((uint64_t)c->data[i * c->cols + j] + (uint64_t)aik * (uint64_t)b->data[k * b->cols + j]);
        }
    return c;
}
static Matrix *transpose(Matrix *a) {
    Matrix *t = zeros(a->cols, a->rows);
    for (int64_t i = 0; i < a->rows; i++) for (int64_t j = 0; j < a->cols; j++) AT(t, j, i) = AT(a, i, j);
    return t;
}
static int equal(Matrix *a, Matrix *b) {
    if (a->rows != b->rows || a->cols != b->cols) return 0;
    for (int64_t i = 0; i < a->rows * a->cols; i++) if (a->data[i] != b->data[i]) return 0;
    return 1;
}
static int64_t trace(Matrix *a) { int64_t t = 0; for (int64_t i = 0; i < a->rows; i++) t += AT(a, i, i); return t; }
static int64_t checksum(Matrix *a) {
    int64_t h = a->rows * 1000 + a->cols;
    for (int64_t i = 0; i < a->rows * a->cols; i++) h = (int64_t)((uint64_t)h * 31u + (uint64_t)a->data[i]);
    return h;
}
static int64_t reduce(int64_t P, int64_t x) { int64_t r = x % P; return r < 0 ? r + P : r; }
static int64_t pow_mod(int64_t P, int64_t base, int64_t e) {
    int64_t result = 1, b = reduce(P, base), k = e;
    while (k > 0) {
        if ((k & 1) == 1) result = result * b % P;
        b = b * b % P;
        k >>= 1;
    }
    return result;
}
static int64_t det_mod(int64_t P, Matrix *a) {
    int64_t n = a->rows;
    Matrix *m = zeros(n, n);
    for (int64_t i = 0; i < n * n; i++) m->data[i] = reduce(P, a->data[i]);
    int64_t det = 1;
    for (int64_t col = 0; col < n; col++) {
        int64_t pivot = -1, r = col;
        while (r < n && pivot < 0) { if (AT(m, r, col) != 0) pivot = r; r++; }
        if (pivot < 0) return 0;
        if (pivot != col) {
            for (int64_t j = 0; j < n; j++) { int64_t t = AT(m, col, j); AT(m, col, j) = AT(m, pivot, j); AT(m, pivot, j) = t; }
            det = reduce(P, -det);
        }
        int64_t p = AT(m, col, col);
        det = det * p % P;
        int64_t inv = pow_mod(P, p, P - 2);
        for (int64_t row = col + 1; row < n; row++) {
            int64_t factor = AT(m, row, col) * inv % P;
            if (factor != 0)
                for (int64_t j = col; j < n; j++) {
                    int64_t v = AT(m, row, j) - factor * AT(m, col, j) % P;
                    AT(m, row, j) = reduce(P, v);
                }
        }
    }
    return det;
}
static Matrix *multiply_mod(int64_t P, Matrix *a, Matrix *b) {
    Matrix *c = zeros(a->rows, b->cols);
    for (int64_t i = 0; i < a->rows; i++)
        for (int64_t j = 0; j < b->cols; j++) {
            int64_t s = 0;
            for (int64_t k = 0; k < a->cols; k++) s = (s + AT(a, i, k) * AT(b, k, j)) % P;
            AT(c, i, j) = s;
        }
    return c;
}
static Matrix *matrix_pow_mod(int64_t P, Matrix *m, int64_t e) {
    Matrix *result = identity(m->rows), *base = m;
    int64_t k = e;
    while (k > 0) {
        if ((k & 1) == 1) result = multiply_mod(P, result, base);
        base = multiply_mod(P, base, base);
        k >>= 1;
    }
    return result;
}

int main(void) {
    Matrix *a = random_matrix(50, 40, 100);
    Matrix *b = random_matrix(40, 60, 100);
    Matrix *c = multiply(a, b);
    print_i(checksum(c));
    print_i(trace(multiply(c, transpose(c))));
    Matrix *ct = transpose(c);
    Matrix *btat = multiply(transpose(b), transpose(a));
    print_b(equal(ct, btat));
    print_b(equal(c, multiply(a, multiply(b, identity(60)))));
    Matrix *sq = random_matrix(70, 70, 1000);
    print_i(det_mod(1000000007, sq));
    print_i(det_mod(998244353, sq));
    Matrix *x = random_matrix(40, 40, 50);
    Matrix *y = random_matrix(40, 40, 50);
    int64_t lhs = det_mod(1000000007, multiply(x, y));
    int64_t d1 = det_mod(1000000007, x);
    int64_t d2 = det_mod(1000000007, y);
    int64_t rhs = d1 * d2 % 1000000007;
    print_i(lhs);
    print_b(lhs == rhs);
    Matrix *s = random_matrix(30, 30, 9);
    for (int64_t j = 0; j < 30; j++) AT(s, 7, j) = AT(s, 3, j);
    print_i(det_mod(998244353, s));
    Matrix *fib = zeros(2, 2);
    AT(fib, 0, 0) = 1; AT(fib, 0, 1) = 1; AT(fib, 1, 0) = 1;
    Matrix *f = matrix_pow_mod(1000000007, fib, 1000000);
    print_i(AT(f, 0, 1));
    Matrix *g = matrix_pow_mod(998244353, random_matrix(12, 12, 5), 123456789);
    print_i(checksum(g));
    print_i(pow_mod(1000000007, 3, 1000000006));
    print_i(pow_mod(998244353, -2, 12345));
    return 0;
}
