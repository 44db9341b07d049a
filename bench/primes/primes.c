/* C twin of bench/primes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }
#define LIMIT 2000000
static uint8_t *composite;

static uint8_t *sieve(int64_t n) {
    uint8_t *c = calloc(n + 1, 1);
    c[0] = c[1] = 1;
    for (int64_t i = 2; i * i <= n; i++)
        if (!c[i]) for (int64_t j = i * i; j <= n; j += i) c[j] = 1;
    return c;
}
static int is_prime_sieve(int64_t n) { return !composite[n]; }
static int64_t pow_mod(int64_t base, int64_t e, int64_t m) {
    int64_t r = 1, b = base % m, k = e;
    while (k > 0) { if ((k & 1) == 1) r = r * b % m; b = b * b % m; k >>= 1; }
    return r;
}
static int spp(int64_t n, int64_t a) {
    int64_t d = n - 1, s = 0;
    while (d % 2 == 0) { d /= 2; s++; }
    int64_t x = pow_mod(a, d, n);
    if (x == 1 || x == n - 1) return 1;
    for (int64_t r = 1; r < s; r++) { x = x * x % n; if (x == n - 1) return 1; }
    return 0;
}
static int is_prime_mr(int64_t n) {
    if (n < 2) return 0;
    if (n < 4) return 1;
    if (n % 2 == 0 || n % 3 == 0 || n % 5 == 0 || n % 7 == 0) return n == 5 || n == 7;
    return spp(n, 2) && spp(n, 3) && spp(n, 5) && spp(n, 7);
}
static int64_t reverse_digits(int64_t n) { int64_t r = 0; for (int64_t v = n; v > 0; v /= 10) r = r * 10 + v % 10; return r; }
static int is_palindromic_prime(int64_t n) { return is_prime_sieve(n) && reverse_digits(n) == n; }
static int is_emirp(int64_t n) {
    if (!is_prime_sieve(n)) return 0;
    int64_t r = reverse_digits(n);
    return r != n && r <= LIMIT && is_prime_sieve(r);
}
static int is_twin(int64_t n) { return is_prime_sieve(n) && is_prime_sieve(n + 2); }
typedef int (*Pred)(int64_t);
static int64_t count_if(Pred p, int64_t lo, int64_t hi) { int64_t c = 0; for (int64_t n = lo; n < hi; n++) if (p(n)) c++; return c; }
static int64_t sum_if(Pred p, int64_t lo, int64_t hi) { int64_t s = 0; for (int64_t n = lo; n < hi; n++) if (p(n)) s += n; return s; }
static int64_t *totients(int64_t n) {
    int64_t *phi = calloc(n + 1, 8);
    for (int64_t i = 0; i <= n; i++) phi[i] = i;
    for (int64_t p = 2; p <= n; p++)
        if (phi[p] == p) for (int64_t k = p; k <= n; k += p) phi[k] -= phi[k] / p;
    return phi;
}
static int64_t goldbach(int64_t n) {
    int64_t c = 0;
    for (int64_t p = 2; p < n / 2 + 1; p++) if (is_prime_sieve(p) && is_prime_sieve(n - p)) c++;
    return c;
}
static int64_t gcd(int64_t a, int64_t b) { while (b != 0) { int64_t t = a % b; a = b; b = t; } return a; }

int main(void) {
    composite = sieve(LIMIT);
    print_i(count_if(is_prime_sieve, 0, LIMIT + 1));
    print_i(sum_if(is_prime_sieve, 0, LIMIT + 1));
    print_i(count_if(is_twin, 0, LIMIT - 1));
    print_i(count_if(is_palindromic_prime, 0, LIMIT + 1));
    print_i(count_if(is_emirp, 0, 100000));
    int64_t disagree = 0;
    for (int64_t n = 1; n <= LIMIT; n += 31) if (is_prime_mr(n) != is_prime_sieve(n)) disagree++;
    print_i(disagree);
    print_i(count_if(is_prime_mr, 2147483000, 2147483648LL));
    print_b(is_prime_mr(2147483647));
    print_b(is_prime_mr(1000000007));
    print_b(is_prime_mr(999999999));
    int64_t *phi = totients(100000), ps = 0;
    for (int64_t i = 1; i < 100001; i++) ps += phi[i];
    print_i(ps); print_i(phi[99991]); print_i(phi[65536]);
    print_i(goldbach(100000));
    print_i(goldbach(1000000));
    int64_t cop = 0;
    for (int64_t a = 1; a < 301; a++) for (int64_t b = 1; b < 301; b++) if (gcd(a, b) == 1) cop++;
    print_i(cop);
    return 0;
}
