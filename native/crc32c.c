/*
 * Ferry's native CRC32C (Castagnoli, reflected polynomial 0x82F63B78), loaded through bun:ffi
 * dlopen by src/format/crc32c/native.ts.
 *
 *   uint32_t ferry_crc32c(uint32_t crc, const uint8_t *data, size_t length)
 *
 * continues a finished checksum like zlib's crc32: ferry_crc32c(ferry_crc32c(0, a), b) equals
 * the CRC32C of a followed by b. `data` may be NULL when `length` is 0.
 *
 * The library picks its fastest path once, when it is loaded (cpuid on x86-64, HWCAP on Linux
 * aarch64); ferry_crc32c_path() names the choice (enum ferry_crc32c_path below). Every
 * CPU-specific function carries a target attribute, so the file builds with plain -O3 and no
 * -march flag, and runs on any CPU of its architecture.
 *
 * Maths, used by all fast paths. A CRC register holding r is the polynomial r(x) with bit k
 * standing for x^(31-k) (the reflected order). Feeding n zero bits turns r into r(x) * x^n mod P,
 * and the register is linear in its input, so independently computed pieces combine:
 *   crc(s, A ++ B) = shift(crc(s, A), |B|) ^ crc(0, B).
 * The constants for shifts and folds are x^e mod P, computed when the library loads
 * (x_power_mod below) rather than pasted in as magic numbers.
 */
#include <stddef.h>
#include <stdint.h>

#define FERRY_EXPORT __attribute__((visibility("default")))
/* For helpers only some architectures' paths call (no -Wunused-function under -Werror). */
#define MAYBE_UNUSED __attribute__((unused))

/* The reflected CRC32C polynomial without its x^32 term. */
#define CRC32C_POLY 0x82f63b78u

/* Register value standing for the polynomial 1 (x^0) in the reflected order. */
#define X_POWER_0 0x80000000u

enum ferry_crc32c_path {
  FERRY_PATH_TABLE = 0,        /* slicing-by-8 tables: any CPU */
  FERRY_PATH_SSE42 = 1,        /* x86-64 crc32q, one stream: SSE4.2 without PCLMULQDQ */
  FERRY_PATH_SSE42_3WAY = 2,   /* x86-64 crc32q on 3 interleaved streams, joined by PCLMULQDQ */
  FERRY_PATH_AVX512_VPCLMUL = 3, /* x86-64 AVX-512 VPCLMULQDQ folding, 256 bytes per step */
  FERRY_PATH_AVX512_HYBRID = 4, /* the folding with three crc32q streams alongside */
  FERRY_PATH_ARMV8_CRC = 5,    /* aarch64 crc32cx */
};

typedef uint32_t (*crc_function)(uint32_t state, const uint8_t *data, size_t length);

static uint64_t load_u64(const uint8_t *p) {
  uint64_t v;
  __builtin_memcpy(&v, p, sizeof v); /* unaligned and aliasing-safe; compiles to one load */
  return v;
}

MAYBE_UNUSED static uint32_t load_u32(const uint8_t *p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

/* ---- Polynomial arithmetic modulo P, reflected order ---- */

/* a(x) * b(x) mod P by Horner's rule over a's coefficients, highest power (bit 0) first. */
static uint32_t multiply_mod(uint32_t a, uint32_t b) {
  uint32_t product = 0;
  for (int bit = 0; bit < 32; bit++) {
    product = (product >> 1) ^ ((product & 1) ? CRC32C_POLY : 0); /* product *= x */
    if ((a >> bit) & 1) product ^= b;
  }
  return product;
}

/* x^exponent mod P by square and multiply. */
MAYBE_UNUSED static uint32_t x_power_mod(uint64_t exponent) {
  uint32_t result = X_POWER_0;
  uint32_t square = X_POWER_0 >> 1; /* x^1 */
  while (exponent != 0) {
    if (exponent & 1) result = multiply_mod(result, square);
    square = multiply_mod(square, square);
    exponent >>= 1;
  }
  return result;
}

/* ---- Portable path: slicing-by-8, 8 KiB of tables ---- */

static uint32_t crc_tables[8][256];

static void tables_init(void) {
  for (uint32_t n = 0; n < 256; n++) {
    uint32_t c = n;
    for (int k = 0; k < 8; k++) c = (c >> 1) ^ ((c & 1) ? CRC32C_POLY : 0);
    crc_tables[0][n] = c;
  }
  for (uint32_t n = 0; n < 256; n++) {
    for (int slice = 1; slice < 8; slice++) {
      uint32_t previous = crc_tables[slice - 1][n];
      crc_tables[slice][n] = (previous >> 8) ^ crc_tables[0][previous & 0xff];
    }
  }
}

static uint32_t crc_table(uint32_t state, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t low = state ^ (uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24);
    state = crc_tables[7][low & 0xff] ^ crc_tables[6][(low >> 8) & 0xff] ^
            crc_tables[5][(low >> 16) & 0xff] ^ crc_tables[4][low >> 24] ^
            crc_tables[3][p[4]] ^ crc_tables[2][p[5]] ^ crc_tables[1][p[6]] ^ crc_tables[0][p[7]];
  }
  while (n-- != 0) state = (state >> 8) ^ crc_tables[0][(state ^ *p++) & 0xff];
  return state;
}

static crc_function selected_crc = crc_table;
static int selected_path = FERRY_PATH_TABLE;

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#include <immintrin.h>

#define TARGET_SSE42 __attribute__((target("sse4.2")))
#define TARGET_CLMUL __attribute__((target("sse4.2,pclmul")))
#define TARGET_AVX512 __attribute__((target("sse4.2,pclmul,avx,avx2,avx512f,avx512vl,vpclmulqdq")))
/* For helpers that take the accumulators by pointer: inlined, they stay in registers. */
#define INLINE static inline __attribute__((always_inline))

/* Stream lengths for the 3-way path: long blocks amortise the join (two PCLMULQDQ + two crc32q,
 * ~10 ns) over 3 x 4 KiB; short ones keep buffers of 768 bytes to 12 KiB on three streams. */
#define STREAM_LONG_BYTES 4096
#define STREAM_SHORT_BYTES 256

#define AVX512_BLOCK_BYTES 256 /* the four 64-byte accumulators of the folding */
/* Folding needs one whole block; from there it beats 3-way crc32q (256 B: 15 vs 8 GB/s). */
#define AVX512_MIN_BYTES AVX512_BLOCK_BYTES
_Static_assert(AVX512_MIN_BYTES >= AVX512_BLOCK_BYTES, "fold_start reads one whole block");

TARGET_SSE42 static uint32_t crc_sse42(uint32_t state, const uint8_t *p, size_t n) {
  uint64_t c = state;
  for (; n >= 8; p += 8, n -= 8) c = _mm_crc32_u64(c, load_u64(p));
  uint32_t c32 = (uint32_t)c;
  if (n >= 4) {
    c32 = _mm_crc32_u32(c32, load_u32(p));
    p += 4;
    n -= 4;
  }
  while (n-- != 0) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}

/* Multipliers for shift(): x^(8 * bytes - 33) mod P for 1x and 2x each stream length. */
static uint32_t shift_long_1, shift_long_2, shift_short_1, shift_short_2;

static uint32_t shift_multiplier(uint64_t bytes) { return x_power_mod(8 * bytes - 33); }

/* crc(x) * x^(8 * bytes) mod P. The carry-less product c * k holds c * k * x in 64 bits
 * (reflected order), and crc32q over it multiplies by x^32 and reduces: c * x^(8 * bytes). */
TARGET_CLMUL static uint32_t shift(uint32_t crc, uint32_t multiplier) {
  __m128i product = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)crc),
                                         _mm_cvtsi32_si128((int)multiplier), 0x00);
  return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(product));
}

/* One block of 3 * stream bytes: three independent crc32q chains keep the unit busy (latency
 * 3 cycles, one issued per cycle), then join: shift(c0, 2 streams) ^ shift(c1, 1 stream) ^ c2. */
TARGET_CLMUL static uint32_t crc_3way_block(uint32_t state, const uint8_t *p, size_t stream,
                                            uint32_t multiplier_1, uint32_t multiplier_2) {
  uint64_t c0 = state, c1 = 0, c2 = 0;
  for (const uint8_t *end = p + stream; p < end; p += 8) {
    c0 = _mm_crc32_u64(c0, load_u64(p));
    c1 = _mm_crc32_u64(c1, load_u64(p + stream));
    c2 = _mm_crc32_u64(c2, load_u64(p + 2 * stream));
  }
  return shift((uint32_t)c0, multiplier_2) ^ shift((uint32_t)c1, multiplier_1) ^ (uint32_t)c2;
}

TARGET_CLMUL static uint32_t crc_sse42_3way(uint32_t state, const uint8_t *p, size_t n) {
  for (; n >= 3 * STREAM_LONG_BYTES; p += 3 * STREAM_LONG_BYTES, n -= 3 * STREAM_LONG_BYTES)
    state = crc_3way_block(state, p, STREAM_LONG_BYTES, shift_long_1, shift_long_2);
  for (; n >= 3 * STREAM_SHORT_BYTES; p += 3 * STREAM_SHORT_BYTES, n -= 3 * STREAM_SHORT_BYTES)
    state = crc_3way_block(state, p, STREAM_SHORT_BYTES, shift_short_1, shift_short_2);
  return crc_sse42(state, p, n);
}

/*
 * Folding. A 128-bit lane loaded little-endian holds 16 message bytes as a polynomial A with
 * bit k standing for x^(127-k). Moving A forward by D bits (to XOR it into the lane D bits
 * later) needs A * x^D mod P, kept below 128 bits: split A = H * x^64 + L (H is the low
 * quadword) and multiply H by x^(D+32) mod P and L by x^(D-32) mod P. Each constant is stored
 * shifted left by one (33-bit reflected), so the 128-bit carry-less product lands in the lane's
 * bit order with the x^32 factor those exponents leave room for.
 */
typedef struct {
  uint64_t low, high;
} fold_constants;

/* Four 64-byte accumulators, 256 consecutive bytes: enough independent VPCLMULQDQ chains to
 * hide their latency (one more accumulator measured no faster: throughput-bound). */
typedef struct {
  __m512i lane[4];
} fold_accumulators;

/*
 * Hybrid: VPCLMULQDQ and crc32q use different execution units, so folding (~16 bytes/cycle
 * here, bounded by VPCLMULQDQ throughput) and three crc32q streams (~8 bytes/cycle) run at
 * once: ~75 GB/s against ~52 for folding alone. A hybrid block is HYBRID_STEPS x 256 bytes
 * for the accumulators followed by three streams of HYBRID_STEPS x 40 bytes; each step folds
 * 256 bytes and feeds 5 words to each stream (5 measured best of 4..6). To the folding the
 * streams' bytes are zeros: it folds across them with the constants for their length, and
 * their joined CRC r (from state 0) enters by XOR into the first 4 bytes of the next block,
 * since crc(0, G ++ B) = crc(0, B with r XORed into its first 4 bytes).
 * 16 steps (6016-byte blocks) measured as fast as 32 or 64 and start helping at 6 KiB.
 */
#define HYBRID_STEPS 16
#define HYBRID_STREAM_STEP_WORDS 5
#define HYBRID_STREAM_STEP_BYTES (8 * HYBRID_STREAM_STEP_WORDS)
#define HYBRID_FOLD_BYTES (AVX512_BLOCK_BYTES * HYBRID_STEPS)
#define HYBRID_STREAM_BYTES (HYBRID_STREAM_STEP_BYTES * HYBRID_STEPS)
#define HYBRID_BLOCK_BYTES (HYBRID_FOLD_BYTES + 3 * HYBRID_STREAM_BYTES)
_Static_assert(HYBRID_BLOCK_BYTES >= AVX512_MIN_BYTES, "a hybrid block starts with a fold block");

static fold_constants fold_256_bytes, fold_64_bytes, fold_32_bytes, fold_16_bytes;
static fold_constants fold_across_streams; /* 256 bytes plus the three streams */
static uint32_t hybrid_shift_1, hybrid_shift_2, hybrid_shift_3; /* shift(): 1, 2, 3 streams */

static fold_constants fold_for_distance(uint64_t bytes) {
  fold_constants k = {(uint64_t)x_power_mod(8 * bytes + 32) << 1,
                      (uint64_t)x_power_mod(8 * bytes - 32) << 1};
  return k;
}

TARGET_AVX512 static __m512i broadcast_fold(fold_constants k) {
  return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k.high, (long long)k.low));
}

/* a folded forward onto b: a.H * k.low ^ a.L * k.high ^ b, in every 128-bit lane. */
TARGET_AVX512 static __m512i fold512(__m512i a, __m512i k, __m512i b) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                   _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);
}

TARGET_AVX512 static __m128i fold128(__m128i a, fold_constants k, __m128i b) {
  __m128i kk = _mm_set_epi64x((long long)k.high, (long long)k.low);
  return _mm_ternarylogic_epi64(_mm_clmulepi64_si128(a, kk, 0x00),
                                _mm_clmulepi64_si128(a, kk, 0x11), b, 0x96);
}

/* The first 256 bytes, with the CRC register entering as an XOR into the first 4. */
TARGET_AVX512 static fold_accumulators fold_start(const uint8_t *p, uint32_t state) {
  fold_accumulators a;
  a.lane[0] = _mm512_xor_si512(_mm512_loadu_si512(p),
                               _mm512_castsi128_si512(_mm_cvtsi32_si128((int)state)));
  for (int i = 1; i < 4; i++) a.lane[i] = _mm512_loadu_si512(p + 64 * i);
  return a;
}

/* Folds the accumulators onto the 256 bytes at p, `k` ahead of them; `inject` is XORed into
 * the first 4 of those bytes (a CRC register carried in; 0 for none). */
TARGET_AVX512 INLINE void fold_step(fold_accumulators *a, __m512i k, const uint8_t *p,
                                    uint32_t inject) {
  __m512i first = _mm512_xor_si512(_mm512_loadu_si512(p),
                                   _mm512_castsi128_si512(_mm_cvtsi32_si128((int)inject)));
  a->lane[0] = fold512(a->lane[0], k, first);
  for (int i = 1; i < 4; i++) a->lane[i] = fold512(a->lane[i], k, _mm512_loadu_si512(p + 64 * i));
}

/* Folds the four lanes of x (64 message bytes) into one 128-bit lane. */
TARGET_AVX512 static __m128i fold_lanes(__m512i x) {
  __m256i low = _mm512_castsi512_si256(x);
  __m256i high = _mm512_extracti64x4_epi64(x, 1);
  __m256i k32 = _mm256_broadcastsi128_si256(
      _mm_set_epi64x((long long)fold_32_bytes.high, (long long)fold_32_bytes.low));
  __m256i y = _mm256_ternarylogic_epi64(_mm256_clmulepi64_epi128(low, k32, 0x00),
                                        _mm256_clmulepi64_epi128(low, k32, 0x11), high, 0x96);
  return fold128(_mm256_castsi256_si128(y), fold_16_bytes, _mm256_extracti128_si256(y, 1));
}

/* Reduces the accumulators and the n < 256 bytes that follow them at p to a CRC register. */
TARGET_AVX512 static uint32_t fold_finish(fold_accumulators a, const uint8_t *p, size_t n) {
  __m512i k = broadcast_fold(fold_64_bytes);
  __m512i x = fold512(fold512(fold512(a.lane[0], k, a.lane[1]), k, a.lane[2]), k, a.lane[3]);
  for (; n >= 64; p += 64, n -= 64) x = fold512(x, k, _mm512_loadu_si512(p));
  __m128i lane = fold_lanes(x);
  for (; n >= 16; p += 16, n -= 16)
    lane = fold128(lane, fold_16_bytes, _mm_loadu_si128((const __m128i *)p));
  /* The lane's 16 bytes through crc32q from state 0 give lane * x^32 mod P: the register. */
  uint64_t c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(lane));
  c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(lane, 1));
  return crc_sse42((uint32_t)c, p, n);
}

/* Folding alone; buffers under AVX512_MIN_BYTES take the 3-way path. */
TARGET_AVX512 static uint32_t crc_avx512(uint32_t state, const uint8_t *p, size_t n) {
  if (n < AVX512_MIN_BYTES) return crc_sse42_3way(state, p, n);
  fold_accumulators a = fold_start(p, state);
  __m512i k = broadcast_fold(fold_256_bytes);
  for (p += AVX512_BLOCK_BYTES, n -= AVX512_BLOCK_BYTES; n >= AVX512_BLOCK_BYTES;
       p += AVX512_BLOCK_BYTES, n -= AVX512_BLOCK_BYTES)
    fold_step(&a, k, p, 0);
  return fold_finish(a, p, n);
}

/* One hybrid block at p whose first 256 bytes the caller has folded: the rest of its fold
 * bytes into the accumulators, its streams into three crc32q chains. Returns the streams'
 * joined CRC register from state 0: shift(c0, 2 streams) ^ shift(c1, 1 stream) ^ c2. */
TARGET_AVX512 INLINE uint32_t hybrid_block(fold_accumulators *a, __m512i k, const uint8_t *p) {
  const uint8_t *stream = p + HYBRID_FOLD_BYTES;
  uint64_t c0 = 0, c1 = 0, c2 = 0;
  for (size_t step = 0; step < HYBRID_STEPS; step++) {
    if (step > 0) fold_step(a, k, p + AVX512_BLOCK_BYTES * step, 0);
    const uint8_t *q = stream + HYBRID_STREAM_STEP_BYTES * step;
    for (int w = 0; w < HYBRID_STREAM_STEP_WORDS; w++) {
      c0 = _mm_crc32_u64(c0, load_u64(q + 8 * w));
      c1 = _mm_crc32_u64(c1, load_u64(q + HYBRID_STREAM_BYTES + 8 * w));
      c2 = _mm_crc32_u64(c2, load_u64(q + 2 * HYBRID_STREAM_BYTES + 8 * w));
    }
  }
  return shift((uint32_t)c0, hybrid_shift_2) ^ shift((uint32_t)c1, hybrid_shift_1) ^ (uint32_t)c2;
}

/* Hybrid blocks while whole ones remain, then folding alone for the rest. */
TARGET_AVX512 static uint32_t crc_avx512_hybrid(uint32_t state, const uint8_t *p, size_t n) {
  if (n < HYBRID_BLOCK_BYTES) return crc_avx512(state, p, n);
  fold_accumulators a = fold_start(p, state);
  __m512i k_step = broadcast_fold(fold_256_bytes);
  __m512i k_across = broadcast_fold(fold_across_streams);
  uint32_t streams = hybrid_block(&a, k_step, p);
  for (p += HYBRID_BLOCK_BYTES, n -= HYBRID_BLOCK_BYTES; n >= HYBRID_BLOCK_BYTES;
       p += HYBRID_BLOCK_BYTES, n -= HYBRID_BLOCK_BYTES) {
    fold_step(&a, k_across, p, streams);
    streams = hybrid_block(&a, k_step, p);
  }
  /* The folded register stops before the last block's streams: shift past them, add them. */
  state = shift(fold_finish(a, NULL, 0), hybrid_shift_3) ^ streams;
  return crc_avx512(state, p, n);
}

static uint64_t read_xcr0(void) {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return ((uint64_t)edx << 32) | eax;
}

/* XCR0 bits the OS must enable before AVX-512 state is usable: SSE, AVX, opmask, ZMM. */
#define XCR0_AVX512_STATE 0xe6u

static void select_x86(void) {
  unsigned int eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  int sse42 = (ecx & bit_SSE4_2) != 0;
  int pclmul = (ecx & bit_PCLMUL) != 0;
  int osxsave = (ecx & bit_OSXSAVE) != 0;
  if (!sse42) return;
  selected_crc = crc_sse42;
  selected_path = FERRY_PATH_SSE42;
  if (!pclmul) return;
  shift_long_1 = shift_multiplier(STREAM_LONG_BYTES);
  shift_long_2 = shift_multiplier(2 * STREAM_LONG_BYTES);
  shift_short_1 = shift_multiplier(STREAM_SHORT_BYTES);
  shift_short_2 = shift_multiplier(2 * STREAM_SHORT_BYTES);
  selected_crc = crc_sse42_3way;
  selected_path = FERRY_PATH_SSE42_3WAY;
  if (!osxsave || (read_xcr0() & XCR0_AVX512_STATE) != XCR0_AVX512_STATE) return;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return;
  int avx512 = (ebx & bit_AVX512F) && (ebx & bit_AVX512VL) && (ebx & bit_AVX2);
  if (!avx512 || !(ecx & bit_VPCLMULQDQ)) return;
  fold_256_bytes = fold_for_distance(AVX512_BLOCK_BYTES);
  fold_64_bytes = fold_for_distance(64);
  fold_32_bytes = fold_for_distance(32);
  fold_16_bytes = fold_for_distance(16);
  fold_across_streams = fold_for_distance(AVX512_BLOCK_BYTES + 3 * HYBRID_STREAM_BYTES);
  hybrid_shift_1 = shift_multiplier(HYBRID_STREAM_BYTES);
  hybrid_shift_2 = shift_multiplier(2 * HYBRID_STREAM_BYTES);
  hybrid_shift_3 = shift_multiplier(3 * HYBRID_STREAM_BYTES);
  selected_crc = crc_avx512_hybrid;
  selected_path = FERRY_PATH_AVX512_HYBRID;
}
#endif /* x86-64 */

#if defined(__aarch64__)
/* crc32c{x,w,b} through inline assembly with .arch_extension, so neither -march nor a
 * compiler-specific target attribute spelling is needed. One stream: ~3 cycles per 8 bytes. */
static uint32_t crc_armv8(uint32_t state, const uint8_t *p, size_t n) {
  for (; n >= 8; p += 8, n -= 8)
    __asm__(".arch_extension crc\n\tcrc32cx %w0, %w0, %x1" : "+r"(state) : "r"(load_u64(p)));
  for (; n != 0; p++, n--)
    __asm__(".arch_extension crc\n\tcrc32cb %w0, %w0, %w1" : "+r"(state) : "r"((uint32_t)*p));
  return state;
}

#if defined(__APPLE__)
static int armv8_crc_present(void) { return 1; } /* every Apple arm64 CPU has it */
#elif defined(__linux__)
extern unsigned long getauxval(unsigned long type);
#define AUXV_AT_HWCAP 16
#define AUXV_HWCAP_CRC32 (1ul << 7)
static int armv8_crc_present(void) { return (getauxval(AUXV_AT_HWCAP) & AUXV_HWCAP_CRC32) != 0; }
#else
static int armv8_crc_present(void) { return 0; }
#endif
#endif /* aarch64 */

__attribute__((constructor)) static void ferry_crc32c_init(void) {
  tables_init();
#if defined(__x86_64__) || defined(_M_X64)
  select_x86();
#elif defined(__aarch64__)
  if (armv8_crc_present()) {
    selected_crc = crc_armv8;
    selected_path = FERRY_PATH_ARMV8_CRC;
  }
#endif
}

FERRY_EXPORT uint32_t ferry_crc32c(uint32_t crc, const uint8_t *data, size_t length) {
  if (length == 0) return crc;
  return ~selected_crc(~crc, data, length);
}

/* Which path ferry_crc32c takes on this CPU: enum ferry_crc32c_path. */
FERRY_EXPORT int ferry_crc32c_path(void) { return selected_path; }

/* The function behind one path, or NULL where this CPU or build lacks it. */
static crc_function path_function(int path) {
  switch (path) {
  case FERRY_PATH_TABLE:
    return crc_table;
#if defined(__x86_64__) || defined(_M_X64)
  case FERRY_PATH_SSE42:
    return selected_path >= FERRY_PATH_SSE42 ? crc_sse42 : NULL;
  case FERRY_PATH_SSE42_3WAY:
    return selected_path >= FERRY_PATH_SSE42_3WAY ? crc_sse42_3way : NULL;
  case FERRY_PATH_AVX512_VPCLMUL:
    return selected_path >= FERRY_PATH_AVX512_VPCLMUL ? crc_avx512 : NULL;
  case FERRY_PATH_AVX512_HYBRID:
    return selected_path >= FERRY_PATH_AVX512_HYBRID ? crc_avx512_hybrid : NULL;
#endif
  default:
    return path == selected_path ? selected_crc : NULL;
  }
}

/* For tests of the slower paths on a fast CPU: 1 when ferry_crc32c_on_path can take `path`. */
FERRY_EXPORT int ferry_crc32c_path_available(int path) { return path_function(path) != NULL; }

/* ferry_crc32c on one given path; an unavailable path falls back to the table path. */
FERRY_EXPORT uint32_t ferry_crc32c_on_path(int path, uint32_t crc, const uint8_t *data,
                                           size_t length) {
  crc_function f = path_function(path);
  if (length == 0) return crc;
  return ~(f != NULL ? f : crc_table)(~crc, data, length);
}
