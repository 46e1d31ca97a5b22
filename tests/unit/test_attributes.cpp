// The attribute service (runtime/attributes): keys and their callbacks through an adapter, values
// per object, copy on duplication, delete on removal and free, keys freed while values use them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/attributes.h"

namespace weft {
namespace {

// The "user functions" of these tests, and the adapter that calls them (as the MPI binding calls
// MPI_Comm_copy_attr_function and MPI_Comm_delete_attr_function). Every call is recorded.
using CopyFn = int (*)(void* in, void** out, bool* keep);
using DeleteFn = int (*)(void* value);

std::vector<std::string> g_calls;

std::string call(const char* what, uint32_t key, intptr_t object, void* value) {
  return std::string(what) + " key " + std::to_string(key) + " object " + std::to_string(object) +
         " value " + std::to_string(reinterpret_cast<intptr_t>(value));
}

int adapt_copy(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value, void** out, bool* keep) {
  g_calls.push_back(call("copy", key, object, value));
  return reinterpret_cast<CopyFn>(cb.copy)(value, out, keep);
}

int adapt_delete(const AttrCallbacks& cb, uint32_t key, intptr_t object, void* value) {
  g_calls.push_back(call("delete", key, object, value));
  EXPECT_EQ(cb.extra_state, &g_calls);  // the creator's extra state comes back
  return reinterpret_cast<DeleteFn>(cb.del)(value);
}

constexpr AttrAdapter kAdapter{adapt_copy, adapt_delete};

int copy_plus_1000(void* in, void** out, bool* keep) {
  *out = reinterpret_cast<void*>(reinterpret_cast<intptr_t>(in) + 1000);
  *keep = true;
  return 0;
}
int copy_declines(void*, void** out, bool* keep) {
  *out = reinterpret_cast<void*>(intptr_t(-1));
  *keep = false;
  return 0;
}
int copy_fails(void*, void**, bool*) { return 7; }
int delete_ok(void*) { return 0; }
int delete_fails(void*) { return 5; }

AttrCallbacks callbacks(CopyFn copy, DeleteFn del) {
  return AttrCallbacks{reinterpret_cast<AttrCallbacks::Fn>(copy), reinterpret_cast<AttrCallbacks::Fn>(del),
                       &g_calls};
}

void* v(intptr_t x) { return reinterpret_cast<void*>(x); }

class AttributesTest : public ::testing::Test {
 protected:
  void SetUp() override { g_calls.clear(); }
  Attributes attrs;
};

TEST_F(AttributesTest, SetGetReplaceAndDelete) {
  const uint32_t k = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_ok));
  EXPECT_NE(k, 0u);
  AttributeSet s;
  void* out = v(-5);
  EXPECT_FALSE(attrs.get(s, k, &out));
  EXPECT_EQ(out, v(-5));  // untouched when absent
  ASSERT_EQ(attrs.set(s, k, v(10), kAdapter, 3), 0);
  ASSERT_TRUE(attrs.get(s, k, &out));
  EXPECT_EQ(out, v(10));
  EXPECT_TRUE(g_calls.empty());
  // Replacing deletes the old value first.
  ASSERT_EQ(attrs.set(s, k, v(20), kAdapter, 3), 0);
  ASSERT_TRUE(attrs.get(s, k, &out));
  EXPECT_EQ(out, v(20));
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("delete", k, 3, v(10))}));
  ASSERT_EQ(attrs.remove(s, k, kAdapter, 3), 0);
  EXPECT_FALSE(attrs.get(s, k, &out));
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("delete", k, 3, v(10)), call("delete", k, 3, v(20))}));
  attrs.free_key(k);
  EXPECT_FALSE(attrs.is_key(k, AttrObject::comm));
  EXPECT_EQ(attrs.keys(), 0u);
}

TEST_F(AttributesTest, ErrorsOfDeleteCallbacksComeBackAndKeepTheValue) {
  const uint32_t k = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_fails));
  AttributeSet s;
  ASSERT_EQ(attrs.set(s, k, v(1), kAdapter, 0), 0);
  EXPECT_EQ(attrs.set(s, k, v(2), kAdapter, 0), 5);
  void* out = nullptr;
  ASSERT_TRUE(attrs.get(s, k, &out));
  EXPECT_EQ(out, v(1));
  // A failing delete callback keeps the value on remove too.
  EXPECT_EQ(attrs.remove(s, k, kAdapter, 0), 5);
  ASSERT_TRUE(attrs.get(s, k, &out));
  EXPECT_EQ(out, v(1));
  EXPECT_EQ(s.size(), 1u);
}

TEST_F(AttributesTest, CopyOnDuplicationFollowsEachKeysCallback) {
  const uint32_t plus = attrs.create_key(AttrObject::comm, callbacks(copy_plus_1000, delete_ok));
  const uint32_t declines = attrs.create_key(AttrObject::comm, callbacks(copy_declines, delete_ok));
  const uint32_t none = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_ok));
  AttributeSet from, to;
  ASSERT_EQ(attrs.set(from, none, v(3), kAdapter, 1), 0);
  ASSERT_EQ(attrs.set(from, declines, v(2), kAdapter, 1), 0);
  ASSERT_EQ(attrs.set(from, plus, v(1), kAdapter, 1), 0);
  ASSERT_EQ(attrs.copy_all(from, 1, to, kAdapter), 0);
  // In the order of setting, and no call for the key without a copy callback.
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("copy", declines, 1, v(2)), call("copy", plus, 1, v(1))}));
  EXPECT_EQ(to.size(), 1u);
  void* out = nullptr;
  ASSERT_TRUE(attrs.get(to, plus, &out));
  EXPECT_EQ(out, v(1001));
  EXPECT_FALSE(attrs.get(to, declines, &out));
  EXPECT_FALSE(attrs.get(to, none, &out));
  EXPECT_EQ(from.size(), 3u);  // the original keeps its values
}

TEST_F(AttributesTest, CopyErrorStopsTheDuplication) {
  const uint32_t fails = attrs.create_key(AttrObject::comm, callbacks(copy_fails, delete_ok));
  const uint32_t later = attrs.create_key(AttrObject::comm, callbacks(copy_plus_1000, delete_ok));
  AttributeSet from, to;
  ASSERT_EQ(attrs.set(from, fails, v(1), kAdapter, 1), 0);
  ASSERT_EQ(attrs.set(from, later, v(2), kAdapter, 1), 0);
  EXPECT_EQ(attrs.copy_all(from, 1, to, kAdapter), 7);
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("copy", fails, 1, v(1))}));
  EXPECT_TRUE(to.empty());
}

TEST_F(AttributesTest, ClearDeletesEachValueOnceLastSetFirst) {
  uint32_t k[3];
  for (auto& key : k) key = attrs.create_key(AttrObject::comm, callbacks(copy_plus_1000, delete_ok));
  AttributeSet s;
  ASSERT_EQ(attrs.set(s, k[2], v(30), kAdapter, 9), 0);
  ASSERT_EQ(attrs.set(s, k[0], v(10), kAdapter, 9), 0);
  ASSERT_EQ(attrs.set(s, k[1], v(20), kAdapter, 9), 0);
  ASSERT_EQ(attrs.clear(s, kAdapter, 9), 0);
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("delete", k[1], 9, v(20)), call("delete", k[0], 9, v(10)),
                                               call("delete", k[2], 9, v(30))}));
  EXPECT_TRUE(s.empty());
  ASSERT_EQ(attrs.clear(s, kAdapter, 9), 0);
  EXPECT_EQ(g_calls.size(), 3u);  // nothing left to delete
}

TEST_F(AttributesTest, ClearStopsAtTheFirstFailingDelete) {
  const uint32_t a = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_ok));
  const uint32_t b = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_fails));
  const uint32_t c = attrs.create_key(AttrObject::comm, callbacks(nullptr, delete_ok));
  AttributeSet s;
  for (uint32_t key : {a, b, c}) ASSERT_EQ(attrs.set(s, key, v(key), kAdapter, 0), 0);
  EXPECT_EQ(attrs.clear(s, kAdapter, 0), 5);
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("delete", c, 0, v(c)), call("delete", b, 0, v(b))}));
  void* out = nullptr;
  EXPECT_FALSE(attrs.get(s, c, &out));
  EXPECT_TRUE(attrs.get(s, b, &out));  // its delete failed: it stays
  EXPECT_TRUE(attrs.get(s, a, &out));
  EXPECT_EQ(s.size(), 2u);
}

TEST_F(AttributesTest, CopyKeepsTheOrderOfSetting) {
  uint32_t k[3];
  for (auto& key : k) key = attrs.create_key(AttrObject::datatype, callbacks(copy_plus_1000, delete_ok));
  AttributeSet from, to;
  ASSERT_EQ(attrs.set(from, k[1], v(1), kAdapter, 4), 0);
  ASSERT_EQ(attrs.set(from, k[2], v(2), kAdapter, 4), 0);
  ASSERT_EQ(attrs.set(from, k[0], v(3), kAdapter, 4), 0);
  ASSERT_EQ(attrs.copy_all(from, 4, to, kAdapter), 0);
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("copy", k[1], 4, v(1)), call("copy", k[2], 4, v(2)),
                                               call("copy", k[0], 4, v(3))}));
  g_calls.clear();
  ASSERT_EQ(attrs.clear(to, kAdapter, 5), 0);
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("delete", k[0], 5, v(1003)), call("delete", k[2], 5, v(1002)),
                                               call("delete", k[1], 5, v(1001))}));
}

TEST_F(AttributesTest, FreeingAKeyAgainWhileValuesUseItChangesNothing) {
  const uint32_t k = attrs.create_key(AttrObject::win, callbacks(nullptr, delete_ok));
  AttributeSet one, two;
  ASSERT_EQ(attrs.set(one, k, v(1), kAdapter, 1), 0);
  ASSERT_EQ(attrs.set(two, k, v(2), kAdapter, 2), 0);
  attrs.free_key(k);
  attrs.free_key(k);  // the creator's reference goes once only
  attrs.free_key(k);
  ASSERT_EQ(attrs.clear(one, kAdapter, 1), 0);
  EXPECT_TRUE(attrs.is_key(k, AttrObject::win));  // two still uses it
  void* out = nullptr;
  ASSERT_TRUE(attrs.get(two, k, &out));
  EXPECT_EQ(out, v(2));
  ASSERT_EQ(attrs.clear(two, kAdapter, 2), 0);
  EXPECT_FALSE(attrs.is_key(k, AttrObject::win));
  EXPECT_EQ(attrs.keys(), 0u);
}

TEST_F(AttributesTest, FreedKeyLivesWhileValuesUseIt) {
  const uint32_t k = attrs.create_key(AttrObject::comm, callbacks(copy_plus_1000, delete_ok));
  AttributeSet one, two;
  ASSERT_EQ(attrs.set(one, k, v(1), kAdapter, 1), 0);
  ASSERT_EQ(attrs.copy_all(one, 1, two, kAdapter), 0);  // a second value through the copy
  attrs.free_key(k);
  EXPECT_TRUE(attrs.is_key(k, AttrObject::comm));
  ASSERT_EQ(attrs.clear(one, kAdapter, 1), 0);
  EXPECT_TRUE(attrs.is_key(k, AttrObject::comm));
  ASSERT_EQ(attrs.remove(two, k, kAdapter, 2), 0);
  EXPECT_FALSE(attrs.is_key(k, AttrObject::comm));
  EXPECT_EQ(attrs.keys(), 0u);
  // Both values were deleted once each, with the callbacks of the freed key.
  EXPECT_EQ(g_calls, (std::vector<std::string>{call("copy", k, 1, v(1)), call("delete", k, 1, v(1)),
                                               call("delete", k, 2, v(1001))}));
  // The slot is reused by the next key.
  EXPECT_EQ(attrs.create_key(AttrObject::comm, callbacks(nullptr, nullptr)), k);
}

TEST_F(AttributesTest, KeysServeOneObjectKind) {
  const uint32_t comm = attrs.create_key(AttrObject::comm, callbacks(nullptr, nullptr));
  const uint32_t win = attrs.create_key(AttrObject::win, callbacks(nullptr, nullptr));
  EXPECT_TRUE(attrs.is_key(comm, AttrObject::comm));
  EXPECT_FALSE(attrs.is_key(comm, AttrObject::win));
  EXPECT_TRUE(attrs.is_key(win, AttrObject::win));
  EXPECT_FALSE(attrs.is_key(win, AttrObject::datatype));
  EXPECT_FALSE(attrs.is_key(0, AttrObject::comm));
  EXPECT_FALSE(attrs.is_key(99, AttrObject::comm));
  // No delete callback: removing calls nothing.
  AttributeSet s;
  ASSERT_EQ(attrs.set(s, comm, v(4), kAdapter, 0), 0);
  ASSERT_EQ(attrs.remove(s, comm, kAdapter, 0), 0);
  EXPECT_TRUE(g_calls.empty());
}

}  // namespace
}  // namespace weft
