/* C twin of bench/strings. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }
typedef struct { uint8_t *p; int64_t n; } Arr;
typedef struct { uint8_t *data; int64_t size, cap; } Bytes;

static Bytes *new_bytes(int64_t cap) { Bytes *b = malloc(sizeof *b); b->data = calloc(cap + 1, 1); b->size = 0; b->cap = cap; return b; }
static void push(Bytes *b, uint8_t c) {
    if (b->size == b->cap) {
        int64_t nc = 2 * b->cap + 8;
        uint8_t *bigger = calloc(nc, 1);
        memcpy(bigger, b->data, b->size);
        b->data = bigger; b->cap = nc;
    }
    b->data[b->size++] = c;
}
static void push_str(Bytes *b, const char *s) { for (; *s; s++) push(b, (uint8_t)*s); }
static void push_negative(Bytes *b, int64_t x) {
    if (x <= -10) push_negative(b, x / 10);
    push(b, (uint8_t)('0' + (-(x % 10))));
}
static void push_int(Bytes *b, int64_t x) {
    if (x < 0) { push(b, '-'); push_negative(b, x); }
    else push_negative(b, -x);
}
static Arr to_array(Bytes *b) { Arr a = {calloc(b->size + 1, 1), b->size}; memcpy(a.p, b->data, b->size); return a; }
static Arr from_str(const char *s) { Arr a = {calloc(strlen(s) + 1, 1), (int64_t)strlen(s)}; memcpy(a.p, s, a.n); return a; }
static void reverse_u8(Arr xs) {
    for (int64_t i = 0, j = xs.n - 1; i < j; i++, j--) { uint8_t t = xs.p[i]; xs.p[i] = xs.p[j]; xs.p[j] = t; }
}
static int equal_u8(Arr a, Arr b) { return a.n == b.n && memcmp(a.p, b.p, a.n) == 0; }
static int64_t find_u8(Arr hay, Arr needle, int64_t start) {
    for (int64_t i = start; i + needle.n <= hay.n; i++) {
        int64_t k = 0;
        while (k < needle.n && hay.p[i + k] == needle.p[k]) k++;
        if (k == needle.n) return i;
    }
    return -1;
}
static int64_t hash(Arr xs) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int64_t i = 0; i < xs.n; i++) h = (h ^ xs.p[i]) * 0x100000001b3ULL;
    return (int64_t)h;
}
static void write_line(Arr xs) { for (int64_t i = 0; i < xs.n; i++) putchar(xs.p[i]); putchar('\n'); }

static Arr rle_encode(Arr xs) {
    Bytes *out = new_bytes(16);
    int64_t i = 0;
    while (i < xs.n) {
        uint8_t c = xs.p[i];
        int64_t run = 1;
        while (i + run < xs.n && xs.p[i + run] == c && run < 255) run++;
        push(out, (uint8_t)run); push(out, c);
        i += run;
    }
    return to_array(out);
}
static Arr rle_decode(Arr xs) {
    Bytes *out = new_bytes(16);
    for (int64_t i = 0; i + 1 < xs.n; i += 2) for (int64_t k = 0; k < xs.p[i]; k++) push(out, xs.p[i + 1]);
    return to_array(out);
}
static const char *ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static Arr base64_encode(Arr xs) {
    Bytes *out = new_bytes(xs.n * 4 / 3 + 4);
    int64_t i = 0;
    while (i + 2 < xs.n) {
        int64_t v = ((int64_t)xs.p[i] << 16) | ((int64_t)xs.p[i + 1] << 8) | (int64_t)xs.p[i + 2];
        push(out, ALPHABET[(v >> 18) & 63]); push(out, ALPHABET[(v >> 12) & 63]);
        push(out, ALPHABET[(v >> 6) & 63]); push(out, ALPHABET[v & 63]);
        i += 3;
    }
    int64_t rest = xs.n - i;
    if (rest == 1) {
        int64_t v = (int64_t)xs.p[i] << 16;
        push(out, ALPHABET[(v >> 18) & 63]); push(out, ALPHABET[(v >> 12) & 63]); push_str(out, "==");
    } else if (rest == 2) {
        int64_t v = ((int64_t)xs.p[i] << 16) | ((int64_t)xs.p[i + 1] << 8);
        push(out, ALPHABET[(v >> 18) & 63]); push(out, ALPHABET[(v >> 12) & 63]);
        push(out, ALPHABET[(v >> 6) & 63]); push(out, '=');
    }
    return to_array(out);
}
static int64_t sextet(uint8_t c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return 0;
}
static Arr base64_decode(Arr xs) {
    Bytes *out = new_bytes(xs.n);
    for (int64_t i = 0; i + 3 < xs.n; i += 4) {
        int64_t v = (sextet(xs.p[i]) << 18) | (sextet(xs.p[i + 1]) << 12) | (sextet(xs.p[i + 2]) << 6) | sextet(xs.p[i + 3]);
        push(out, (uint8_t)(v >> 16));
        if (xs.p[i + 2] != '=') push(out, (uint8_t)(v >> 8));
        if (xs.p[i + 3] != '=') push(out, (uint8_t)v);
    }
    return to_array(out);
}
static void rot13(Arr xs) {
    for (int64_t i = 0; i < xs.n; i++) {
        uint8_t c = xs.p[i];
        if (c >= 'a' && c <= 'z') xs.p[i] = (uint8_t)('a' + (uint8_t)(c - 'a' + 13) % 26);
        else if (c >= 'A' && c <= 'Z') xs.p[i] = (uint8_t)('A' + (uint8_t)(c - 'A' + 13) % 26);
    }
}
static int64_t kmp_count(Arr hay, Arr needle) {
    int64_t m = needle.n, *fail = calloc(m + 1, 8), k = -1, count = 0, q = 0;
    fail[0] = -1;
    for (int64_t i = 0; i < m; i++) {
        while (k >= 0 && needle.p[k] != needle.p[i]) k = fail[k];
        k++;
        fail[i + 1] = k;
    }
    for (int64_t i = 0; i < hay.n; i++) {
        while (q >= 0 && (q == m || needle.p[q] != hay.p[i])) q = fail[q];
        q++;
        if (q == m) count++;
    }
    return count;
}

static int64_t seed = 31337;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static const char *WORDS = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor";
static Arr make_text(int64_t words) {
    Bytes *b = new_bytes(64);
    int64_t wl = (int64_t)strlen(WORDS);
    for (int64_t w = 0; w < words; w++) {
        int64_t k = rnd(12), i = 0, seen = 0;
        while (seen < k) { if (WORDS[i] == ' ') seen++; i++; }
        while (i < wl && WORDS[i] != ' ') { push(b, (uint8_t)WORDS[i]); i++; }
        uint8_t sep = rnd(3) == 0 ? '-' : ' ';
        int64_t run = 1 + rnd(6);
        for (int64_t r = 0; r < run; r++) push(b, sep);
    }
    return to_array(b);
}
static int is_palindrome(Arr xs) {
    Arr c = {malloc(xs.n + 1), xs.n};
    memcpy(c.p, xs.p, xs.n);
    reverse_u8(c);
    return equal_u8(c, xs);
}
static int64_t count_naive(Arr hay, Arr needle) {
    int64_t count = 0, at = find_u8(hay, needle, 0);
    while (at >= 0) { count++; at = find_u8(hay, needle, at + 1); }
    return count;
}

int main(void) {
    Arr text = make_text(20000);
    print_i(text.n);
    print_i(hash(text));
    Arr packed = rle_encode(text);
    print_i(packed.n);
    print_b(equal_u8(rle_decode(packed), text));
    Arr b64 = base64_encode(text);
    print_i(b64.n);
    print_i(hash(b64));
    print_b(equal_u8(base64_decode(b64), text));
    write_line(base64_encode(from_str("Pare!")));
    write_line(base64_encode(from_str("Pare!?")));
    write_line(base64_decode(from_str("aGVsbG8sIHdvcmxk")));
    Arr r = rle_encode(text);
    reverse_u8(r); reverse_u8(r);
    print_b(equal_u8(r, packed));
    rot13(text);
    print_i(hash(text));
    rot13(text);
    print_i(hash(text));
    Arr needle = from_str("dolor");
    print_i(count_naive(text, needle));
    print_i(kmp_count(text, needle));
    Arr dashes = from_str("--");
    print_i(count_naive(text, dashes));
    print_i(kmp_count(text, dashes));
    print_b(is_palindrome(from_str("never odd or even")));
    print_b(is_palindrome(from_str("neveroddoreven")));
    Bytes *nums = new_bytes(16);
    int64_t x = 1;
    for (int i = 0; i < 60; i++) {
        push_int(nums, x); push(nums, ',');
        push_int(nums, (int64_t)(0 - (uint64_t)x)); push(nums, ' ');
        x = (int64_t)((uint64_t)x * 3u + 1u);
    }
    push_int(nums, INT64_MIN);
    Arr formatted = to_array(nums);
    print_i(formatted.n);
    print_i(hash(formatted));
    Arr tail = {formatted.p + formatted.n - 40, 40};
    write_line(tail);
    int64_t squares[1000];
    for (int64_t i = 0; i < 1000; i++) squares[i] = i * i;
    for (int64_t i = 0, j = 999; i < j; i++, j--) { int64_t t = squares[i]; squares[i] = squares[j]; squares[j] = t; }
    print_i(squares[0]);
    int64_t found = -1;
    for (int64_t i = 0; i + 2 <= 1000 && found < 0; i++) if (squares[i] == 961 && squares[i + 1] == 900) found = i;
    print_i(found);
    return 0;
}
