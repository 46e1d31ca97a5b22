// Copies for one-sided window memory (bulk_copy.h).
#include "bulk_copy.h"

#include <cstdint>
#include <cstdlib>

#include "config.h"
#include "log.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace weft {

namespace {

// WEFT_COPY_STREAMING_MIN's default, 256k, was measured on the 2-core EPYC VM (32 MiB L3, 1 MiB
// L2 a core): plain stores win while a burst of 64 puts stays in the caches, streaming stores
// from 256 KiB a put (docs/PERFORMANCE.md).
BulkCopyPlan make_plan() {
  BulkCopyPlan plan{size_t(setting_size("WEFT_COPY_STREAMING_MIN")), false};
#if defined(__x86_64__)
  plan.vector = __builtin_cpu_supports("avx2");
#endif
  return plan;
}

}  // namespace

const BulkCopyPlan& bulk_copy_plan() {
  static const BulkCopyPlan plan = make_plan();
  return plan;
}

bool bulk_copy_rewrites(const void* dst) {
  thread_local const void* recent[kBulkRecent] = {};
  thread_local size_t next = 0;
  for (const void* r : recent)
    if (r == dst) return true;
  recent[next] = dst;
  next = (next + 1) % kBulkRecent;
  return false;
}

#if defined(__x86_64__)

void copy_streaming(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  // Plain stores up to the first 16-byte boundary of the destination, whole 64-byte lines of
  // streaming stores, plain stores for the tail.
  size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
  if (head > bytes) head = bytes;
  memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (size_t lines = bytes / 64; lines > 0; --lines, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  _mm_sfence();  // streaming stores are weakly ordered: they land before anything stored after
  memcpy(d, s, bytes % 64);
}

__attribute__((target("avx2"))) void copy_vector(void* dst, const void* src, size_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    const __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  memcpy(d + i, s + i, bytes - i);
}

#else

void copy_streaming(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }
void copy_vector(void* dst, const void* src, size_t bytes) { memcpy(dst, src, bytes); }

#endif

}  // namespace weft
