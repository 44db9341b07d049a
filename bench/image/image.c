/* C twin of bench/image. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
typedef struct { int64_t width, height; uint8_t *pixels; } Image;
static Image *new_image(int64_t w, int64_t h) {
    Image *img = malloc(sizeof *img);
    img->width = w; img->height = h; img->pixels = calloc(w * h + 1, 1);
    return img;
}
static int32_t at(Image *img, int64_t x, int64_t y) {
    int64_t cx = x < 0 ? 0 : x >= img->width ? img->width - 1 : x;
    int64_t cy = y < 0 ? 0 : y >= img->height ? img->height - 1 : y;
    return img->pixels[cy * img->width + cx];
}
static uint8_t clamp_u8(int32_t v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }
static int64_t seed = 1357;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}
static Image *synthesize(int64_t w, int64_t h) {
    Image *img = new_image(w, h);
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++) {
            int32_t v = (int32_t)(x * 255 / w + y * 64 / h);
            int64_t dx1 = x - 50, dy1 = y - 40, dx2 = x - 120, dy2 = y - 80;
            if (dx1 * dx1 + dy1 * dy1 < 900) v += 120;
            if (dx2 * dx2 + dy2 * dy2 < 400) v -= 90;
            v += (int32_t)(rnd(41) - 20);
            img->pixels[y * w + x] = clamp_u8(v);
        }
    return img;
}
static Image *blur(Image *img) {
    Image *out = new_image(img->width, img->height);
    for (int64_t y = 0; y < img->height; y++)
        for (int64_t x = 0; x < img->width; x++) {
            int32_t sum = 0;
            for (int64_t dy = -1; dy < 2; dy++) for (int64_t dx = -1; dx < 2; dx++) sum += at(img, x + dx, y + dy);
            out->pixels[y * img->width + x] = (uint8_t)(sum / 9);
        }
    return out;
}
static int32_t abs32(int32_t v) { return v < 0 ? -v : v; }
static Image *sobel(Image *img) {
    Image *out = new_image(img->width, img->height);
    for (int64_t y = 0; y < img->height; y++)
        for (int64_t x = 0; x < img->width; x++) {
            int32_t gx = at(img, x + 1, y - 1) + 2 * at(img, x + 1, y) + at(img, x + 1, y + 1) - at(img, x - 1, y - 1) -
                         2 * at(img, x - 1, y) - at(img, x - 1, y + 1);
            int32_t gy = at(img, x - 1, y + 1) + 2 * at(img, x, y + 1) + at(img, x + 1, y + 1) - at(img, x - 1, y - 1) -
                         2 * at(img, x, y - 1) - at(img, x + 1, y - 1);
            out->pixels[y * img->width + x] = clamp_u8(abs32(gx) + abs32(gy));
        }
    return out;
}
static int64_t *histogram(Image *img) {
    int64_t *h = calloc(256, 8);
    for (int64_t i = 0; i < img->width * img->height; i++) h[img->pixels[i]]++;
    return h;
}
typedef uint8_t (*PixFn)(uint8_t);
static uint8_t *current_lut;
static uint8_t lookup(uint8_t v) { return current_lut[v]; }
static Image *map(PixFn f, Image *img, uint8_t *lut) {
    current_lut = lut;
    Image *out = new_image(img->width, img->height);
    for (int64_t i = 0; i < img->width * img->height; i++) out->pixels[i] = f(img->pixels[i]);
    return out;
}
static Image *equalize(Image *img) {
    int64_t *h = histogram(img);
    uint8_t *lut = calloc(256, 1);
    int64_t total = img->width * img->height, cdf = 0, cdf_min = -1;
    for (int v = 0; v < 256; v++) {
        cdf += h[v];
        if (cdf_min < 0 && cdf > 0) cdf_min = cdf;
        if (total > cdf_min) lut[v] = (uint8_t)((cdf - cdf_min) * 255 / (total - cdf_min));
    }
    return map(lookup, img, lut);
}
static uint8_t invert(uint8_t v) { return (uint8_t)(255 - v); }
static uint8_t threshold_100(uint8_t v) { return v >= 100 ? 255 : 0; }
static uint8_t posterize_4(uint8_t v) { int64_t step = 255 / (4 - 1); return (uint8_t)((v + step / 2) / step * step); }
static Image *dither(Image *img) {
    int64_t w = img->width, n = w * img->height;
    int32_t *err = calloc(n, 4);
    for (int64_t i = 0; i < n; i++) err[i] = img->pixels[i];
    Image *out = new_image(w, img->height);
    for (int64_t y = 0; y < img->height; y++)
        for (int64_t x = 0; x < w; x++) {
            int32_t old = err[y * w + x], nv = old >= 128 ? 255 : 0;
            out->pixels[y * w + x] = (uint8_t)nv;
            int32_t e = old - nv;
            if (x + 1 < w) err[y * w + x + 1] += e * 7 / 16;
            if (y + 1 < img->height) {
                if (x > 0) err[(y + 1) * w + x - 1] += e * 3 / 16;
                err[(y + 1) * w + x] += e * 5 / 16;
                if (x + 1 < w) err[(y + 1) * w + x + 1] += e / 16;
            }
        }
    return out;
}
static Image *downscale(Image *img) {
    Image *out = new_image(img->width / 2, img->height / 2);
    for (int64_t y = 0; y < out->height; y++)
        for (int64_t x = 0; x < out->width; x++) {
            int32_t s = at(img, 2 * x, 2 * y) + at(img, 2 * x + 1, 2 * y) + at(img, 2 * x, 2 * y + 1) + at(img, 2 * x + 1, 2 * y + 1);
            out->pixels[y * out->width + x] = (uint8_t)((s + 2) / 4);
        }
    return out;
}
static int64_t checksum(Image *img) {
    uint64_t h = (uint64_t)(img->width * 100003 + img->height);
    for (int64_t i = 0; i < img->width * img->height; i++) h = (h ^ img->pixels[i]) * 0x100000001b3ULL;
    return (int64_t)h;
}
static int64_t mean(Image *img) {
    int64_t s = 0, n = img->width * img->height;
    for (int64_t i = 0; i < n; i++) s += img->pixels[i];
    return s / n;
}
static int64_t count_at_least(Image *img, uint8_t t) {
    int64_t c = 0;
    for (int64_t i = 0; i < img->width * img->height; i++) if (img->pixels[i] >= t) c++;
    return c;
}
static const char *RAMP = " .:-=+*#%@";
static void preview(Image *img, int64_t cols, int64_t rows) {
    int64_t rl = (int64_t)strlen(RAMP);
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t c = 0; c < cols; c++) {
            int64_t v = img->pixels[(r * img->height / rows) * img->width + c * img->width / cols];
            putchar(RAMP[v * rl / 256]);
        }
        putchar(10);
    }
}
static void report(const char *name, Image *img) { fputs(name, stdout); fputs(" ", stdout); print_i(checksum(img)); }
int main(void) {
    Image *img = synthesize(160, 120);
    report("source", img);
    print_i(mean(img));
    Image *soft = blur(img);
    report("blur", soft);
    Image *edges = sobel(soft);
    report("sobel", edges);
    print_i(count_at_least(edges, 128));
    Image *eq = equalize(img);
    report("equalized", eq);
    print_i(mean(eq));
    Image *dots = dither(soft);
    report("dither", dots);
    print_i(count_at_least(dots, 255));
    Image *small = downscale(soft);
    report("downscale", small);
    report("invert", map(invert, small, NULL));
    report("threshold", map(threshold_100, small, NULL));
    report("posterize", map(posterize_4, small, NULL));
    int64_t *h = histogram(img);
    int64_t mode = 0;
    for (int v = 1; v < 256; v++) if (h[v] > h[mode]) mode = v;
    print_i(mode);
    preview(soft, 48, 14);
    preview(edges, 48, 8);
    return 0;
}
