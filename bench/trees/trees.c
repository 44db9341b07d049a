/* C twin of bench/trees. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void print_i(int64_t x) { printf("%lld\n", (long long)x); }
static void print_b(int b) { fputs(b ? "true\n" : "false\n", stdout); }
static int64_t seed = 424242;
static int64_t rnd(int64_t n) {
    seed = (int64_t)((uint64_t)seed * 6364136223846793005ULL + 1442695040888963407ULL);
    return ((seed >> 33) & 0x7fffffff) % n;
}

typedef struct Node { int64_t key, value, height; struct Node *left, *right; } Node;
static int64_t rotations = 0;
static int64_t max(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t height(Node *n) { return n == NULL ? 0 : n->height; }
static void update(Node *n) { n->height = 1 + max(height(n->left), height(n->right)); }
static int64_t balance_of(Node *n) { return height(n->left) - height(n->right); }
static Node *rotate_right(Node *y) { Node *x = y->left; y->left = x->right; x->right = y; update(y); update(x); rotations++; return x; }
static Node *rotate_left(Node *x) { Node *y = x->right; x->right = y->left; y->left = x; update(x); update(y); rotations++; return y; }
static Node *rebalance(Node *n) {
    update(n);
    int64_t b = balance_of(n);
    if (b > 1) { if (balance_of(n->left) < 0) n->left = rotate_left(n->left); return rotate_right(n); }
    if (b < -1) { if (balance_of(n->right) > 0) n->right = rotate_right(n->right); return rotate_left(n); }
    return n;
}
static Node *insert(Node *n, int64_t key, int64_t value) {
    if (n == NULL) {
        Node *m = malloc(sizeof *m);
        m->key = key; m->value = value; m->height = 1; m->left = m->right = NULL;
        return m;
    }
    if (key < n->key) n->left = insert(n->left, key, value);
    else if (key > n->key) n->right = insert(n->right, key, value);
    else { n->value = value; return n; }
    return rebalance(n);
}
static Node *leftmost(Node *n) { while (n->left != NULL) n = n->left; return n; }
static Node *removek(Node *n, int64_t key) {
    if (n == NULL) return NULL;
    if (key < n->key) n->left = removek(n->left, key);
    else if (key > n->key) n->right = removek(n->right, key);
    else {
        if (n->left == NULL) return n->right;
        if (n->right == NULL) return n->left;
        Node *m = leftmost(n->right);
        n->key = m->key; n->value = m->value;
        n->right = removek(n->right, m->key);
    }
    return rebalance(n);
}
static Node *find(Node *n, int64_t key) {
    while (n != NULL && n->key != key) n = key < n->key ? n->left : n->right;
    return n;
}
static int64_t size(Node *n) { return n == NULL ? 0 : 1 + size(n->left) + size(n->right); }
static int64_t count_range(Node *n, int64_t lo, int64_t hi) {
    if (n == NULL) return 0;
    if (n->key < lo) return count_range(n->right, lo, hi);
    if (n->key > hi) return count_range(n->left, lo, hi);
    return 1 + count_range(n->left, lo, hi) + count_range(n->right, lo, hi);
}
typedef int64_t (*FoldFn)(int64_t, int64_t, int64_t);
static int64_t fold(FoldFn f, Node *n, int64_t acc) {
    if (n == NULL) return acc;
    int64_t a = fold(f, n->left, acc);
    int64_t b = f(a, n->key, n->value);
    return fold(f, n->right, b);
}
static bool valid(Node *n, int64_t lo, int64_t hi) {
    if (n == NULL) return true;
    if (n->key < lo || n->key > hi) return false;
    int64_t b = balance_of(n);
    if (b < -1 || b > 1) return false;
    if (n->height != 1 + max(height(n->left), height(n->right))) return false;
    return valid(n->left, lo, n->key - 1) && valid(n->right, n->key + 1, hi);
}

typedef struct Cell { int64_t value; struct Cell *next; } Cell;
static Cell *cons(int64_t v, Cell *next) { Cell *c = malloc(sizeof *c); c->value = v; c->next = next; return c; }
static int64_t length(Cell *l) { int64_t n = 0; for (; l; l = l->next) n++; return n; }
static Cell *reverse(Cell *l) {
    Cell *prev = NULL, *cur = l;
    while (cur) { Cell *next = cur->next; cur->next = prev; prev = cur; cur = next; }
    return prev;
}
static Cell *merge(Cell *a, Cell *b) {
    Cell *head = cons(0, NULL), *tail = head;
    while (a && b) {
        if (b->value < a->value) { tail->next = b; b = b->next; }
        else { tail->next = a; a = a->next; }
        tail = tail->next;
    }
    tail->next = a ? a : b;
    return head->next;
}
static Cell *lsort(Cell *l) {
    if (l == NULL || l->next == NULL) return l;
    Cell *slow = l, *fast = l->next;
    while (fast && fast->next) { slow = slow->next; fast = fast->next->next; }
    Cell *second = slow->next;
    slow->next = NULL;
    Cell *a = lsort(l);
    Cell *b = lsort(second);
    return merge(a, b);
}
static int64_t lchecksum(Cell *l) { uint64_t h = 0; for (; l; l = l->next) h = h * 31u + (uint64_t)l->value; return (int64_t)h; }
static bool lsorted(Cell *l) {
    for (; l && l->next; l = l->next) if (l->next->value < l->value) return false;
    return true;
}

static int64_t sum_values(int64_t acc, int64_t k, int64_t v) { (void)k; return acc + v; }
static int64_t hash_pairs(int64_t acc, int64_t k, int64_t v) {
    return (int64_t)(((uint64_t)acc * 31u + (uint64_t)k) * 31u + (uint64_t)v);
}
static int64_t previous_key = 0;
static int64_t widest_gap(int64_t acc, int64_t k, int64_t v) {
    (void)v;
    int64_t gap = k - previous_key;
    previous_key = k;
    return gap > acc ? gap : acc;
}

int main(void) {
    Node *root = NULL;
    for (int64_t i = 0; i < 20000; i++) root = insert(root, rnd(100000), i);
    print_i(size(root));
    print_i(height(root));
    print_b(valid(root, -1, 100000));
    print_i(fold(sum_values, root, 0));
    print_i(fold(hash_pairs, root, 0));
    int64_t found = 0, vs = 0;
    for (int64_t i = 0; i < 20000; i++) {
        Node *n = find(root, rnd(100000));
        if (n) { found++; vs += n->value; }
    }
    print_i(found);
    print_i(vs);
    for (int64_t k = 0; k < 30000; k++) root = removek(root, k);
    for (int64_t i = 0; i < 10000; i++) root = removek(root, rnd(100000));
    print_i(size(root));
    print_i(height(root));
    print_b(valid(root, 30000, 100000));
    print_i(count_range(root, 50000, 59999));
    previous_key = 30000;
    print_i(fold(widest_gap, root, 0));
    print_i(rotations);
    Node *seq = NULL;
    for (int64_t k = 0; k < 4096; k++) seq = insert(seq, k, k * k);
    print_i(height(seq));
    print_b(valid(seq, 0, 4095));
    print_i(find(seq, 77)->value);
    print_b(find(seq, 5000) == NULL);
    Cell *l = NULL;
    for (int64_t i = 0; i < 30000; i++) l = cons(rnd(1000000), l);
    print_i(length(l));
    print_i(lchecksum(l));
    l = reverse(l);
    print_i(lchecksum(l));
    l = lsort(l);
    print_b(lsorted(l));
    print_i(lchecksum(l));
    print_i(l->value);
    print_i(length(l));
    return 0;
}
