/* CRC-32C (v2 batches) and CRC-32 (legacy messages). */

#include "speedups.h"

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define HAVE_X86_CRC 1
#endif

/* ---------------------------------------------------------------------------------------------
 * CRC-32C (Castagnoli, reflected 0x82F63B78): SSE4.2 instruction where the CPU has it, else
 * slicing-by-8 tables. Same results as the crc32c package (checked by the tests).
 */

static uint32_t crc_table[8][256];  /* CRC-32C (Castagnoli) */
static uint32_t ieee_table[8][256]; /* CRC-32 (IEEE, zlib's): legacy messages */
int have_hw_crc;

/* The CPU's crc32 instruction takes 3 cycles and starts one a cycle: three streams at once over
 * three blocks of a buffer, joined by the linearity of the CRC register (the register after A then
 * B is the register after A moved past len(B) zero bytes, xor the register of B from 0). Moving a
 * register past LONG or SHORT zero bytes is a linear map, tabulated by bytes of the register. */
#define CRC_LONG 8192
#define CRC_SHORT 256
static uint32_t crc_long[4][256], crc_short[4][256];

static void make_shift(uint32_t t[4][256], size_t len) {
    uint32_t basis[32];
    for (int b = 0; b < 32; b++) {
        uint32_t c = 1u << b;
        for (size_t i = 0; i < len; i++) /* one zero byte */
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
        basis[b] = c;
    }
    for (int k = 0; k < 4; k++)
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t v = 0;
            for (int bit = 0; bit < 8; bit++)
                if (n >> bit & 1)
                    v ^= basis[8 * k + bit];
            t[k][n] = v;
        }
}

static inline uint32_t crc_shift(uint32_t t[4][256], uint32_t c) {
    return t[0][c & 0xFF] ^ t[1][(c >> 8) & 0xFF] ^ t[2][(c >> 16) & 0xFF] ^ t[3][c >> 24];
}

static void make_tables(uint32_t table[8][256], uint32_t poly) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xFF];
}

void crc_init(void) {
    make_tables(crc_table, 0x82F63B78u);
    make_tables(ieee_table, 0xEDB88320u);
    make_shift(crc_long, CRC_LONG);
    make_shift(crc_short, CRC_SHORT);
#ifdef HAVE_X86_CRC
    __builtin_cpu_init();
    have_hw_crc = __builtin_cpu_supports("sse4.2");
#endif
}

/* Slicing-by-8 over a reflected CRC's tables. */
static uint32_t crc_sw(uint32_t table[8][256], uint32_t crc, const unsigned char *p, size_t n) {
    while (n >= 8) {
        uint32_t lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        lo ^= crc;
        crc = table[7][lo & 0xFF] ^ table[6][(lo >> 8) & 0xFF] ^ table[5][(lo >> 16) & 0xFF] ^ table[4][lo >> 24] ^
              table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return crc;
}

uint32_t crc32_ieee(const unsigned char *p, size_t n) { return crc_sw(ieee_table, 0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu; }

#ifdef HAVE_X86_CRC
#if defined(__x86_64__)
/* Three blocks of len bytes from p at once: the register after all three. */
__attribute__((target("sse4.2"))) static inline uint32_t crc_hw3(uint32_t crc, const unsigned char *p, size_t len,
                                                                 uint32_t shift[4][256]) {
    uint64_t c0 = crc, c1 = 0, c2 = 0;
    const unsigned char *end = p + len;
    do {
        uint64_t a, b, d;
        memcpy(&a, p, 8);
        memcpy(&b, p + len, 8);
        memcpy(&d, p + 2 * len, 8);
        c0 = _mm_crc32_u64(c0, a);
        c1 = _mm_crc32_u64(c1, b);
        c2 = _mm_crc32_u64(c2, d);
        p += 8;
    } while (p < end);
    crc = crc_shift(shift, (uint32_t)c0) ^ (uint32_t)c1;
    return crc_shift(shift, crc) ^ (uint32_t)c2;
}
#endif

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
#if defined(__x86_64__)
    while (n >= 3 * CRC_LONG) {
        crc = crc_hw3(crc, p, CRC_LONG, crc_long);
        p += 3 * CRC_LONG;
        n -= 3 * CRC_LONG;
    }
    while (n >= 3 * CRC_SHORT) {
        crc = crc_hw3(crc, p, CRC_SHORT, crc_short);
        p += 3 * CRC_SHORT;
        n -= 3 * CRC_SHORT;
    }
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    crc = (uint32_t)c;
#endif
    while (n--)
        crc = _mm_crc32_u8(crc, *p++);
    return crc;
}
#endif

uint32_t crc32c(const unsigned char *p, size_t n) {
#ifdef HAVE_X86_CRC
    if (have_hw_crc)
        return crc_hw(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
#endif
    return crc_sw(crc_table, 0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}


/* checksum(bytes-like) -> int for one of the two CRCs */
PyObject *checksum(PyObject *arg, uint32_t (*fn)(const unsigned char *, size_t)) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t c = fn((const unsigned char *)view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(c);
}

PyObject *py_crc32(PyObject *self, PyObject *arg) { return checksum(arg, crc32_ieee); }

PyObject *py_crc32c(PyObject *self, PyObject *arg) { return checksum(arg, crc32c); }

PyObject *hardware_crc(PyObject *self, PyObject *unused) { return PyBool_FromLong(have_hw_crc); }
