/* C twin of bench/checksum. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static int64_t table[256];
static uint32_t table32[256];
static void crc_table(void) {
    for (int64_t n = 0; n < 256; n++) {
        int64_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) == 1 ? 0xedb88320LL ^ (c >> 1) : c >> 1;
        table[n] = c;
        table32[n] = (uint32_t)c;
    }
}
static int64_t crc32(const uint8_t *d, int64_t n) {
    int64_t c = 0xffffffffLL;
    for (int64_t i = 0; i < n; i++) c = table[(c ^ d[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffLL;
}
static int32_t crc32_i32(const uint8_t *d, int64_t n) {
    uint32_t c = 0xffffffffu;
    for (int64_t i = 0; i < n; i++) c = table32[(c ^ d[i]) & 0xff] ^ (c >> 8);
    return (int32_t)~c;
}
static int64_t adler32(const uint8_t *d, int64_t n) {
    int64_t a = 1, b = 0;
    for (int64_t i = 0; i < n; i++) { a = (a + d[i]) % 65521; b = (b + a) % 65521; }
    return (b << 16) | a;
}
static int32_t murmur3(const uint8_t *d, int64_t n, uint32_t seed) {
    const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
    uint32_t h = seed;
    int64_t blocks = n / 4;
    for (int64_t i = 0; i < blocks; i++) {
        int64_t j = 4 * i;
        uint32_t k = (uint32_t)d[j] | (uint32_t)d[j + 1] << 8 | (uint32_t)d[j + 2] << 16 | (uint32_t)d[j + 3] << 24;
        k *= c1; k = rotl32(k, 15); k *= c2;
        h ^= k; h = rotl32(h, 13); h = h * 5 + 0xe6546b64u;
    }
    int64_t tail = blocks * 4, rest = n & 3;
    uint32_t k = 0;
    if (rest == 3) k ^= (uint32_t)d[tail + 2] << 16;
    if (rest >= 2) k ^= (uint32_t)d[tail + 1] << 8;
    if (rest >= 1) { k ^= d[tail]; k *= c1; k = rotl32(k, 15); k *= c2; h ^= k; }
    h ^= (uint32_t)n;
    h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
    return (int32_t)h;
}
static uint32_t xs_state = 2463534242u;
static int32_t xorshift32(void) {
    uint32_t x = xs_state;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    xs_state = x;
    return (int32_t)x;
}
static uint8_t ptable[256];
static void pearson_table(void) {
    for (int i = 0; i < 256; i++) ptable[i] = (uint8_t)i;
    for (int64_t i = 255; i > 0; i--) {
        int64_t j = ((int64_t)xorshift32() & 0x7fffffff) % (i + 1);
        uint8_t t = ptable[i]; ptable[i] = ptable[j]; ptable[j] = t;
    }
}
static uint8_t pearson(const uint8_t *d, int64_t n) { uint8_t h = 0; for (int64_t i = 0; i < n; i++) h = ptable[h ^ d[i]]; return h; }
static uint8_t byte_sum(const uint8_t *d, int64_t n) {
    uint8_t s = 0;
    for (int64_t i = 0; i < n; i++) { s = (uint8_t)(s + d[i]); s = (uint8_t)(s * 3 + 1); }
    return s;
}
int main(void) {
    crc_table();
    const uint8_t *fox = (const uint8_t *)"The quick brown fox jumps over the lazy dog";
    int64_t fn = 43;
    print_i(crc32(fox, fn));
    print_i(crc32_i32(fox, fn));
    print_i(adler32(fox, fn));
    print_i(murmur3(fox, fn, 0));
    print_i(murmur3((const uint8_t *)"", 0, 1));
    print_i(murmur3((const uint8_t *)"abc", 3, 0x9747b28cu));
    int64_t n = 200000;
    uint8_t *data = calloc(n, 1);
    for (int64_t i = 0; i < n; i++) data[i] = (uint8_t)xorshift32();
    print_i(crc32(data, n));
    print_i((int64_t)crc32_i32(data, n) & 0xffffffffLL);
    print_i(adler32(data, n));
    print_i(murmur3(data, n, 42));
    pearson_table();
    print_i(pearson(data, n));
    print_i(pearson(fox, fn));
    print_i(byte_sum(data, n));
    print_i(xorshift32());
    uint64_t acc = 0;
    for (int64_t m = 0; m < 64; m++)
        acc = acc * 31u + (uint64_t)(int64_t)murmur3(data, m, (uint32_t)m) + (uint64_t)crc32(data, m);
    print_i((int64_t)acc);
    return 0;
}
