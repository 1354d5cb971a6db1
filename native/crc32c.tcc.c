/*
 * Ferry's CRC32C for bun:ffi's built-in TinyCC (`cc` in src/format/crc32c/tcc.ts): compiled at
 * start-up on any machine, with no system compiler. Same contract as native/crc32c.c:
 *
 *   uint32_t ferry_crc32c(uint32_t crc, const uint8_t *data, uint64_t length)
 *
 * continues a finished checksum like zlib's crc32.
 *
 * TinyCC has no intrinsics, no target attributes and an assembler that knows neither crc32q
 * nor pclmulqdq, so on x86-64 with SSE4.2 (checked with cpuid) the hot loops are inline
 * assembly with crc32 emitted as .byte encodings on fixed registers. Three interleaved streams
 * keep the crc32 unit busy (latency 3 cycles, one issued per cycle); the streams are joined
 * with shift tables (no PCLMULQDQ needed). Other CPUs get slicing-by-8 in plain C.
 */
#include <stddef.h>
#include <stdint.h>

#define CRC32C_POLY 0x82f63b78u
#define X_POWER_0 0x80000000u /* the polynomial 1 in the reflected order (bit k is x^(31-k)) */

#define PATH_TABLE 0
#define PATH_SSE42_3WAY 1

/* Stream lengths of the 3-way loop. Each join costs 8 table lookups in TinyCC's unoptimised
 * code (~10 ns): long streams amortise it, short ones keep 768 B .. 12 KiB buffers 3-way. */
#define STREAM_LONG_BYTES 4096
#define STREAM_SHORT_BYTES 256

#define STRINGIFY(x) #x
#define DECIMAL(x) STRINGIFY(x)

static uint32_t crc_tables[8][256];
/* shift_*[k][j][b]: byte b at byte position j of a register, times x^(8 * (k+1) * stream). */
static uint32_t shift_long[2][4][256];
static uint32_t shift_short[2][4][256];
static int initialised;
static int hardware;

/* a(x) * b(x) mod P, reflected order, by Horner's rule over a's coefficients. */
static uint32_t multiply_mod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  int bit;
  for (bit = 0; bit < 32; bit++) {
    product = (product >> 1) ^ ((product & 1) ? CRC32C_POLY : 0);
    if ((a >> bit) & 1) product ^= b;
  }
  return product;
}

static uint32_t x_power_mod(uint64_t exponent) {
  uint32_t result = X_POWER_0;
  uint32_t square = X_POWER_0 >> 1;
  while (exponent != 0) {
    if (exponent & 1) result = multiply_mod(result, square);
    square = multiply_mod(square, square);
    exponent >>= 1;
  }
  return result;
}

/* Linear in the register, so each entry is one product: 4 x 1024 of them, ~0.5 ms at init. */
static void shift_tables_init(uint32_t table[4][256], uint64_t bytes) {
  uint32_t multiplier = x_power_mod(8 * bytes);
  int position, b;
  for (position = 0; position < 4; position++)
    for (b = 0; b < 256; b++) table[position][b] = multiply_mod((uint32_t)b << (8 * position), multiplier);
}

static uint32_t shift(uint32_t table[4][256], uint32_t c) {
  return table[0][c & 0xff] ^ table[1][(c >> 8) & 0xff] ^ table[2][(c >> 16) & 0xff] ^ table[3][c >> 24];
}

static void tables_init(void) {
  uint32_t n, c, previous;
  int k, slice;
  for (n = 0; n < 256; n++) {
    c = n;
    for (k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY : 0);
    crc_tables[0][n] = c;
  }
  for (n = 0; n < 256; n++)
    for (slice = 1; slice < 8; slice++) {
      previous = crc_tables[slice - 1][n];
      crc_tables[slice][n] = (previous >> 8) ^ crc_tables[0][previous & 0xff];
    }
}

#if defined(__x86_64__)
static int cpu_has_sse42(void) {
  uint32_t a, b, c, d;
  __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
  return (c >> 20) & 1; /* CPUID.1:ECX.SSE4_2 */
}
#endif

static void init(void) {
  tables_init();
#if defined(__x86_64__)
  hardware = cpu_has_sse42();
  if (hardware) {
    shift_tables_init(shift_long[0], STREAM_LONG_BYTES);
    shift_tables_init(shift_long[1], 2 * STREAM_LONG_BYTES);
    shift_tables_init(shift_short[0], STREAM_SHORT_BYTES);
    shift_tables_init(shift_short[1], 2 * STREAM_SHORT_BYTES);
  }
#endif
  initialised = 1;
}

static uint32_t crc_table(uint32_t state, const uint8_t *p, uint64_t n) {
  uint32_t low;
  for (; n >= 8; p += 8, n -= 8) {
    low = state ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    state = crc_tables[7][low & 0xff] ^ crc_tables[6][(low >> 8) & 0xff] ^
            crc_tables[5][(low >> 16) & 0xff] ^ crc_tables[4][low >> 24] ^ crc_tables[3][p[4]] ^
            crc_tables[2][p[5]] ^ crc_tables[1][p[6]] ^ crc_tables[0][p[7]];
  }
  while (n-- != 0) state = (state >> 8) ^ crc_tables[0][(state ^ *p++) & 0xff];
  return state;
}

#if defined(__x86_64__)
/*
 * Encodings (F2 REX.W 0F 38 F1 /r is crc32q r/m64, r64; F2 0F 38 F0 /r is crc32b r/m8, r32):
 *   f2 48 0f 38 f1 06          crc32q (%rsi), %rax
 *   f2 48 0f 38 f1 96 <disp32> crc32q disp32(%rsi), %rdx
 *   f2 48 0f 38 f1 be <disp32> crc32q disp32(%rsi), %rdi
 *   f2 0f 38 f0 06             crc32b (%rsi), %eax
 */
#define CRC32Q_RSI_RAX ".byte 0xf2,0x48,0x0f,0x38,0xf1,0x06\n\t"
#define CRC32Q_DISP_RSI_RDX(disp) ".byte 0xf2,0x48,0x0f,0x38,0xf1,0x96\n\t.long " DECIMAL(disp) "\n\t"
#define CRC32Q_DISP_RSI_RDI(disp) ".byte 0xf2,0x48,0x0f,0x38,0xf1,0xbe\n\t.long " DECIMAL(disp) "\n\t"
#define CRC32B_RSI_EAX ".byte 0xf2,0x0f,0x38,0xf0,0x06\n\t"

/* One block of 3 streams: the whole loop is one asm statement, since TinyCC would keep the
 * three registers in memory between statements. Returns the joined register. */
#define DEFINE_3WAY_BLOCK(name, stream, shifts)                                                   \
  static uint32_t name(uint32_t state, const uint8_t *p) {                                      \
    uint64_t c0 = state, c1 = 0, c2 = 0;                                                        \
    const uint8_t *end = p + (stream);                                                          \
    __asm__ volatile("1:\n\t" CRC32Q_RSI_RAX CRC32Q_DISP_RSI_RDX(stream)                        \
                         CRC32Q_DISP_RSI_RDI(2 * (stream)) "addq $8, %%rsi\n\t"                 \
                                                           "cmpq %%rcx, %%rsi\n\t"              \
                                                           "jb 1b\n\t"                          \
                     : "+a"(c0), "+d"(c1), "+D"(c2), "+S"(p)                                    \
                     : "c"(end)                                                                 \
                     : "cc", "memory");                                                         \
    return shift(shifts[1], (uint32_t)c0) ^ shift(shifts[0], (uint32_t)c1) ^ (uint32_t)c2;     \
  }

DEFINE_3WAY_BLOCK(block_long, STREAM_LONG_BYTES, shift_long)
DEFINE_3WAY_BLOCK(block_short, STREAM_SHORT_BYTES, shift_short)

/* One stream of 8-byte words, then single bytes; each loop runs only when it has work. */
static uint32_t crc_hardware_tail(uint32_t state, const uint8_t *p, uint64_t n) {
  uint64_t c = state;
  const uint8_t *words_end = p + (n & ~(uint64_t)7);
  const uint8_t *end = p + n;
  if (p < words_end)
    __asm__ volatile("1:\n\t" CRC32Q_RSI_RAX "addq $8, %%rsi\n\t"
                     "cmpq %%rcx, %%rsi\n\t"
                     "jb 1b\n\t"
                     : "+a"(c), "+S"(p)
                     : "c"(words_end)
                     : "cc", "memory");
  if (p < end)
    __asm__ volatile("1:\n\t" CRC32B_RSI_EAX "addq $1, %%rsi\n\t"
                     "cmpq %%rcx, %%rsi\n\t"
                     "jb 1b\n\t"
                     : "+a"(c), "+S"(p)
                     : "c"(end)
                     : "cc", "memory");
  return (uint32_t)c;
}

static uint32_t crc_hardware(uint32_t state, const uint8_t *p, uint64_t n) {
  for (; n >= 3 * STREAM_LONG_BYTES; p += 3 * STREAM_LONG_BYTES, n -= 3 * STREAM_LONG_BYTES)
    state = block_long(state, p);
  for (; n >= 3 * STREAM_SHORT_BYTES; p += 3 * STREAM_SHORT_BYTES, n -= 3 * STREAM_SHORT_BYTES)
    state = block_short(state, p);
  return crc_hardware_tail(state, p, n);
}
#endif

uint32_t ferry_crc32c(uint32_t crc, const uint8_t *data, uint64_t length) {
  if (!initialised) init();
  if (length == 0) return crc;
#if defined(__x86_64__)
  if (hardware) return ~crc_hardware(~crc, data, length);
#endif
  return ~crc_table(~crc, data, length);
}

/* Which path ferry_crc32c takes here: 0 table, 1 SSE4.2 crc32q on 3 streams. */
int ferry_crc32c_path(void) {
  if (!initialised) init();
  return hardware ? PATH_SSE42_3WAY : PATH_TABLE;
}

/* For tests of the table path on a CPU with SSE4.2: ferry_crc32c on one given path. */
uint32_t ferry_crc32c_on_path(int path, uint32_t crc, const uint8_t *data, uint64_t length) {
  if (!initialised) init();
  if (length == 0) return crc;
#if defined(__x86_64__)
  if (path == PATH_SSE42_3WAY && hardware) return ~crc_hardware(~crc, data, length);
#endif
  return ~crc_table(~crc, data, length);
}
