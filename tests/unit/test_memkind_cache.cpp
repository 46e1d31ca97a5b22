// HostPageCache (runtime/memkind_cache.h): pages remembered as host memory, forgotten when
// unmapped, and never remembered across an unmapping that raced the query.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <ucm/api/ucm.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/memkind_cache.h"

namespace weft {
namespace {

constexpr size_t kPage = size_t(1) << HostPageCache::kPageShift;

TEST(HostPageCache, RemembersAndForgetsTheUnmappedRangeOnly) {
  HostPageCache c;
  alignas(4096) static char pages[8 * 4096];
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(c.known_host(pages + i * kPage));
    c.remember(pages + i * kPage + 5, c.generation());
    EXPECT_TRUE(c.known_host(pages + i * kPage + 100));
  }
  c.unmapped(pages + 2 * kPage + 1, 2 * kPage);  // touches pages 2, 3 and 4
  for (int i = 0; i < 8; ++i) EXPECT_EQ(c.known_host(pages + i * kPage), i < 2 || i > 4) << "page " << i;
  c.clear();
  for (int i = 0; i < 8; ++i) EXPECT_FALSE(c.known_host(pages + i * kPage));
}

TEST(HostPageCache, AnAnswerOlderThanAnUnmappingIsNotKept) {
  HostPageCache c;
  static char buf[64];
  const uint64_t before = c.generation();
  c.unmapped(&buf[0], 1);  // between the driver's answer and remember()
  c.remember(buf, before);
  EXPECT_FALSE(c.known_host(buf));
  c.remember(buf, c.generation());
  EXPECT_TRUE(c.known_host(buf));
}

TEST(HostPageCache, PagesSharingASlotDoNotAlias) {
  HostPageCache c;
  const char* a = reinterpret_cast<const char*>(uintptr_t(0x10000000));
  c.remember(a, c.generation());
  // Another page that maps to the same slot replaces it; neither reads as the other.
  for (size_t k = 1; k < 4 * HostPageCache::kEntries; ++k) {
    const char* b = a + k * kPage;
    if (c.known_host(b)) ADD_FAILURE() << "page " << k << " read as a remembered one";
  }
  EXPECT_TRUE(c.known_host(a));
}

TEST(HostPageCache, ConcurrentQueriesAndUnmappings) {
  HostPageCache c;
  alignas(4096) static char pages[16 * 4096];
  std::atomic<bool> stop{false};
  std::thread unmapper([&] {
    for (int i = 0; i < 20000; ++i) c.unmapped(pages + size_t(i % 16) * kPage, kPage);
    stop = true;
  });
  size_t hits = 0;
  while (!stop) {
    for (int i = 0; i < 16; ++i) {
      const char* p = pages + size_t(i) * kPage;
      if (c.known_host(p)) ++hits;
      else c.remember(p, c.generation());
    }
  }
  unmapper.join();
  // Once quiet, a final unmapping of everything leaves nothing behind.
  c.unmapped(pages, sizeof(pages));
  for (int i = 0; i < 16; ++i) EXPECT_FALSE(c.known_host(pages + size_t(i) * kPage));
  (void)hits;
}

// The hooks memkind_cuda.cpp relies on: UCX reports a munmap of memory the cache holds.
TEST(HostPageCache, UcxMemoryHooksReportUnmapping) {
  static HostPageCache c;
  auto handler = [](ucm_event_type_t, ucm_event_t* e, void*) {
    c.unmapped(e->vm_unmapped.address, e->vm_unmapped.size);
  };
  if (ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, handler, nullptr) != UCS_OK)
    GTEST_SKIP() << "UCX memory hooks are not available here";
  void* p = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  char* q = static_cast<char*>(p);
  q[0] = 1;
  c.remember(q + kPage, c.generation());
  ASSERT_TRUE(c.known_host(q + kPage));
  ASSERT_EQ(munmap(p, 4 * kPage), 0);
  EXPECT_FALSE(c.known_host(q + kPage));
  ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, handler, nullptr);
}

}  // namespace
}  // namespace weft
