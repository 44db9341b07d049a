/* C twin of bench/bignum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BASE 1000000000LL
static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
typedef struct { int64_t *limbs, size; } Big;

static Big *with_capacity(int64_t cap) { Big *b = malloc(sizeof *b); b->limbs = calloc(cap, 8); b->size = 1; return b; }
static Big *from_i64(int64_t x) {
    Big *b = with_capacity(3);
    int64_t v = x, i = 0;
    while (v > 0) { b->limbs[i] = v % BASE; v /= BASE; i++; }
    if (i > 0) b->size = i;
    return b;
}
static void normalize(Big *b) { while (b->size > 1 && b->limbs[b->size - 1] == 0) b->size--; }
static Big *add(Big *a, Big *b) {
    int64_t n = a->size > b->size ? a->size : b->size;
    Big *r = with_capacity(n + 1);
    int64_t carry = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t s = carry;
        if (i < a->size) s += a->limbs[i];
        if (i < b->size) s += b->limbs[i];
        if (s >= BASE) { r->limbs[i] = s - BASE; carry = 1; } else { r->limbs[i] = s; carry = 0; }
    }
    r->limbs[n] = carry; r->size = n + 1; normalize(r);
    return r;
}
static Big *sub(Big *a, Big *b) {
    Big *r = with_capacity(a->size);
    int64_t borrow = 0;
    for (int64_t i = 0; i < a->size; i++) {
        int64_t d = a->limbs[i] - borrow;
        if (i < b->size) d -= b->limbs[i];
        if (d < 0) { d += BASE; borrow = 1; } else borrow = 0;
        r->limbs[i] = d;
    }
    r->size = a->size; normalize(r);
    return r;
}
static Big *mul_small(Big *a, int64_t k) {
    Big *r = with_capacity(a->size + 1);
    int64_t carry = 0;
    for (int64_t i = 0; i < a->size; i++) { int64_t p = a->limbs[i] * k + carry; r->limbs[i] = p % BASE; carry = p / BASE; }
    r->limbs[a->size] = carry; r->size = a->size + 1; normalize(r);
    return r;
}
static int64_t div_small(Big *a, int64_t k) {
    int64_t rem = 0;
    for (int64_t i = a->size - 1; i >= 0; i--) { int64_t cur = rem * BASE + a->limbs[i]; a->limbs[i] = cur / k; rem = cur % k; }
    normalize(a);
    return rem;
}
static Big *mul(Big *a, Big *b) {
    Big *r = with_capacity(a->size + b->size);
    for (int64_t i = 0; i < a->size; i++) {
        int64_t carry = 0, ai = a->limbs[i];
        for (int64_t j = 0; j < b->size; j++) {
            int64_t cur = r->limbs[i + j] + ai * b->limbs[j] + carry;
            r->limbs[i + j] = cur % BASE; carry = cur / BASE;
        }
        int64_t k = i + b->size;
        while (carry > 0) { int64_t cur = r->limbs[k] + carry; r->limbs[k] = cur % BASE; carry = cur / BASE; k++; }
    }
    r->size = a->size + b->size; normalize(r);
    return r;
}
static int64_t compare(Big *a, Big *b) {
    if (a->size != b->size) return a->size < b->size ? -1 : 1;
    for (int64_t i = a->size - 1; i >= 0; i--)
        if (a->limbs[i] != b->limbs[i]) return a->limbs[i] < b->limbs[i] ? -1 : 1;
    return 0;
}
static int64_t digits_of_limb(int64_t x) { int64_t n = 1; while (x >= 10) { x /= 10; n++; } return n; }
static int64_t digit_count(Big *a) { return (a->size - 1) * 9 + digits_of_limb(a->limbs[a->size - 1]); }
static int64_t digit_sum(Big *a) {
    int64_t s = 0;
    for (int64_t i = 0; i < a->size; i++) for (int64_t v = a->limbs[i]; v > 0; v /= 10) s += v % 10;
    return s;
}
static int64_t trailing_zeros(Big *a) {
    int64_t z = 0, i = 0;
    while (i < a->size && a->limbs[i] == 0) { z += 9; i++; }
    if (i < a->size) for (int64_t v = a->limbs[i]; v % 10 == 0; v /= 10) z++;
    return z;
}
static void put_digits(int64_t x, int64_t width) {
    int64_t div = 1;
    for (int64_t i = 1; i < width; i++) div *= 10;
    int64_t v = x;
    while (div > 0) { putchar((int32_t)(48 + v / div)); v %= div; div /= 10; }
}
static void put_big(Big *a) {
    int64_t top = a->limbs[a->size - 1];
    put_digits(top, digits_of_limb(top));
    for (int64_t i = a->size - 2; i >= 0; i--) put_digits(a->limbs[i], 9);
    putchar(10);
}
static Big *factorial(int64_t n) { Big *r = from_i64(1); for (int64_t k = 2; k < n + 1; k++) r = mul_small(r, k); return r; }
static Big *fibonacci(int64_t n) {
    Big *a = from_i64(0), *b = from_i64(1);
    for (int64_t i = 0; i < n; i++) { Big *c = add(a, b); a = b; b = c; }
    return a;
}
static Big *power(int64_t base, int64_t e) {
    Big *result = from_i64(1), *sq = from_i64(base);
    int64_t k = e;
    while (k > 0) {
        if ((k & 1) == 1) result = mul(result, sq);
        k >>= 1;
        if (k > 0) sq = mul(sq, sq);
    }
    return result;
}
static Big *catalan(int64_t n) {
    Big *c = from_i64(1);
    for (int64_t k = 0; k < n; k++) { c = mul_small(c, 2 * n - k); div_small(c, k + 1); }
    div_small(c, n + 1);
    return c;
}
static void report(Big *b) { print_i(digit_count(b)); print_i(digit_sum(b)); }

int main(void) {
    Big *f = factorial(1000);
    report(f);
    print_i(trailing_zeros(f));
    Big *fib = fibonacci(8000);
    report(fib);
    print_i(fib->limbs[fib->size - 1]);
    Big *p = power(2, 3000);
    report(p);
    print_i(p->limbs[0]);
    print_i(compare(sub(p, power(2, 2999)), power(2, 2999)));
    Big *prod = factorial(150);
    for (int64_t k = 151; k < 301; k++) prod = mul(prod, from_i64(k));
    print_i(compare(prod, factorial(300)));
    print_i(compare(factorial(299), factorial(300)));
    Big *bp = mul(factorial(200), fibonacci(900));
    report(bp);
    Big *cat = catalan(600);
    report(cat);
    print_i(div_small(cat, 1000003));
    put_big(factorial(60));
    put_big(fibonacci(300));
    put_big(from_i64(0));
    put_big(sub(power(10, 30), from_i64(1)));
    return 0;
}
