// Every registered algorithm, run for every rank of communicators of 1 to 16 ranks in the
// schedule simulator, on data whose correct result is computed here: sizes, roots, in place,
// uneven blocks, commutative and non-commutative reductions.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "schedule_sim.h"

using namespace weft;
using namespace weft::coll;
using sim::comm_of;

namespace {

const std::vector<int> kSizes = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};

// An associative, non-commutative operation: concatenation of strings, each kept as (length,
// polynomial hash). `in` holds the lower ranks' part.
struct Cat {
  uint32_t len, hash;
};
Status cat_op(const void*, const void* in, void* inout, size_t count) {
  auto* a = static_cast<const Cat*>(in);
  auto* b = static_cast<Cat*>(inout);
  for (size_t i = 0; i < count; ++i) {
    uint32_t pow = 1;
    for (uint32_t k = 0; k < b[i].len; ++k) pow *= 31;
    b[i] = Cat{a[i].len + b[i].len, a[i].hash * pow + b[i].hash};
  }
  return Status::ok;
}
Cat cat_value(int rank, size_t i) { return Cat{1, uint32_t(rank * 7 + i % 13 + 1)}; }
Cat cat_combine(Cat a, Cat b) {
  (void)cat_op(nullptr, &a, &b, 1);  // always ok
  return b;
}

Reduction int_sum() { return Reduction{ReduceOp::sum, BasicType::i32, 4}; }
Reduction cat_reduction() {
  Reduction r;
  r.elem_size = sizeof(Cat);
  r.commutative = false;
  r.user = cat_op;
  return r;
}
int32_t int_value(int rank, size_t i) { return int32_t(rank * 1000 + int(i % 977)); }

// The schedules this simulator can run: the shared-memory engine's ("shm") need processes
// that share a segment, and tests/mpi runs them; the hierarchical ones ("hier...") need ranks
// on several nodes, and test_hier.cpp runs them; the offloaded ones need a plugin and its
// service, and tests/offload runs them.
std::vector<const Algorithm*> of(Collective coll) {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : algorithms())
    if (a->coll == coll && std::string_view(a->name) != "shm" && std::string_view(a->name) != "offload" &&
        !std::string_view(a->name).starts_with("hier"))
      out.push_back(a);
  return out;
}

std::string where(const Algorithm* a, int p, size_t n, int root = 0) {
  return std::string(collective_name(a->coll)) + ":" + a->name + " p=" + std::to_string(p) +
         " n=" + std::to_string(n) + " root=" + std::to_string(root);
}

// Builds every rank's schedule (skipping algorithms that decline) and runs them.
// Returns false when the algorithm does not support the call.
bool run(const Algorithm* alg, int p, const std::vector<CollArgs>& args) {
  std::vector<std::shared_ptr<Schedule>> s;
  for (int r = 0; r < p; ++r) {
    Comm c = comm_of(r, p);
    if (!alg->supports(args[size_t(r)], bare_context(c))) return false;
    s.push_back(alg->build(args[size_t(r)], bare_context(c)));
  }
  std::string err = sim::run_all(s);
  EXPECT_EQ(err, "");
  return true;
}

}  // namespace

TEST(Algorithms, EveryCollectiveHasAnAlgorithmAndNamesAreUnique) {
  for (int c = 0; c < int(Collective::count_); ++c) {
    auto algs = of(Collective(c));
    EXPECT_FALSE(algs.empty()) << collective_name(Collective(c));
    for (size_t i = 0; i < algs.size(); ++i)
      for (size_t j = i + 1; j < algs.size(); ++j) EXPECT_STRNE(algs[i]->name, algs[j]->name);
  }
}

TEST(Algorithms, Barrier) {
  for (const Algorithm* alg : of(Collective::barrier))
    for (int p : kSizes) {
      std::vector<CollArgs> a(static_cast<size_t>(p), CollArgs{Collective::barrier});
      EXPECT_TRUE(run(alg, p, a)) << where(alg, p, 0);
    }
}

TEST(Algorithms, Bcast) {
  for (const Algorithm* alg : of(Collective::bcast))
    for (int p : kSizes)
      for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(65537)})
        for (int root : {0, p / 2, p - 1}) {
          std::vector<std::vector<char>> buf(static_cast<size_t>(p), std::vector<char>(n, 0));
          for (size_t i = 0; i < n; ++i) buf[size_t(root)][i] = char(i * 7 + 3);
          std::vector<CollArgs> a(static_cast<size_t>(p));
          for (int r = 0; r < p; ++r) {
            a[size_t(r)].coll = Collective::bcast;
            a[size_t(r)].recv = buf[size_t(r)].data();
            a[size_t(r)].bytes = n;
            a[size_t(r)].root = root;
          }
          if (!run(alg, p, a)) continue;
          for (int r = 0; r < p; ++r)
            ASSERT_EQ(buf[size_t(r)], buf[size_t(root)]) << where(alg, p, n, root) << " rank " << r;
        }
}

// Reduce, allreduce: commutative int sum and the non-commutative concatenation.
template <class T>
void check_reductions(Collective coll, const Reduction& red, T (*value)(int, size_t),
                      T (*combine)(T, T), bool (*same)(const T&, const T&)) {
  for (const Algorithm* alg : of(coll))
    for (int p : kSizes)
      for (size_t n : {size_t(1), size_t(5), size_t(16), size_t(1001)})
        for (int root : {0, p - 1})
          for (bool in_place : {false, true}) {
            if (coll == Collective::allreduce && root != 0) continue;
            std::vector<std::vector<T>> send(static_cast<size_t>(p), std::vector<T>(n)), recv = send;
            for (int r = 0; r < p; ++r)
              for (size_t i = 0; i < n; ++i) send[size_t(r)][i] = value(r, i);
            if (in_place) recv = send;
            std::vector<CollArgs> a(static_cast<size_t>(p));
            for (int r = 0; r < p; ++r) {
              CollArgs& x = a[size_t(r)];
              x.coll = coll;
              x.recv = recv[size_t(r)].data();
              x.send = in_place ? x.recv : send[size_t(r)].data();
              x.count = n;
              x.bytes = n * sizeof(T);
              x.red = red;
              x.root = root;
            }
            // The algorithms' allreduce works in place; plan() adds the copy otherwise.
            if (coll == Collective::allreduce && !in_place) continue;
            if (!run(alg, p, a)) continue;
            for (size_t i = 0; i < n; ++i) {
              T want = value(0, i);
              for (int r = 1; r < p; ++r) want = combine(want, value(r, i));
              for (int r = 0; r < p; ++r) {
                if (coll == Collective::reduce && r != root) continue;
                ASSERT_TRUE(same(recv[size_t(r)][i], want))
                    << where(alg, p, n, root) << " rank " << r << " element " << i
                    << (in_place ? " in place" : "");
              }
            }
          }
}

namespace {
int32_t add(int32_t a, int32_t b) { return a + b; }
bool same_int(const int32_t& a, const int32_t& b) { return a == b; }
bool same_cat(const Cat& a, const Cat& b) { return a.len == b.len && a.hash == b.hash; }
}  // namespace

TEST(Algorithms, ReduceAndAllreduce) {
  for (Collective coll : {Collective::reduce, Collective::allreduce}) {
    check_reductions<int32_t>(coll, int_sum(), int_value, add, same_int);
    check_reductions<Cat>(coll, cat_reduction(), cat_value, cat_combine, same_cat);
  }
}

// Blocks of rank r: uneven sizes (some empty) at reversed, gapped offsets when `uneven`.
std::vector<Block> layout(int p, size_t unit, bool uneven, size_t* total) {
  std::vector<Block> b(static_cast<size_t>(p));
  size_t off = 0;
  for (int r = p - 1; r >= 0; --r) {
    size_t bytes = uneven ? unit * size_t((r * 3) % 4) : unit;
    b[size_t(r)] = Block{off, bytes};
    off += bytes + (uneven ? 3 : 0);
  }
  *total = off;
  return b;
}

char byte_of(int from, int to, size_t i) { return char(from * 31 + to * 7 + int(i)); }

TEST(Algorithms, AllgatherAndGather) {
  for (Collective coll : {Collective::allgather, Collective::gather})
    for (const Algorithm* alg : of(coll))
      for (int p : kSizes)
        for (size_t unit : {size_t(0), size_t(1), size_t(13), size_t(4096)})
          for (bool uneven : {false, true})
            for (bool in_place : {false, true})
              for (int root : {0, p - 1}) {
                if (coll == Collective::allgather && root != 0) continue;
                size_t total;
                std::vector<Block> blocks = layout(p, unit, uneven, &total);
                std::vector<std::vector<char>> mine(static_cast<size_t>(p)), recv(static_cast<size_t>(p), std::vector<char>(total, 'x'));
                std::vector<CollArgs> a(static_cast<size_t>(p));
                for (int r = 0; r < p; ++r) {
                  const Block& own = blocks[size_t(r)];
                  for (size_t i = 0; i < own.bytes; ++i) mine[size_t(r)].push_back(byte_of(r, 0, i));
                  CollArgs& x = a[size_t(r)];
                  x.coll = coll;
                  x.recv = recv[size_t(r)].data();
                  x.recv_blocks = blocks;
                  x.root = root;
                  x.uniform = !uneven;
                  x.bytes = total;
                  x.own_bytes = own.bytes;
                  const bool here = in_place && (coll == Collective::allgather || r == root);
                  if (here) {
                    if (own.bytes) memcpy(recv[size_t(r)].data() + own.offset, mine[size_t(r)].data(), own.bytes);
                    x.send = recv[size_t(r)].data() + own.offset;
                  } else {
                    x.send = mine[size_t(r)].data();
                  }
                }
                if (!run(alg, p, a)) continue;
                for (int r = 0; r < p; ++r) {
                  if (coll == Collective::gather && r != root) continue;
                  std::vector<char> want(total, 'x');
                  for (int q = 0; q < p; ++q)
                    for (size_t i = 0; i < blocks[size_t(q)].bytes; ++i)
                      want[blocks[size_t(q)].offset + i] = byte_of(q, 0, i);
                  ASSERT_EQ(recv[size_t(r)], want) << where(alg, p, unit, root) << " rank " << r
                                                   << (uneven ? " uneven" : "") << (in_place ? " in place" : "");
                }
              }
}

TEST(Algorithms, Scatter) {
  for (const Algorithm* alg : of(Collective::scatter))
    for (int p : kSizes)
      for (size_t unit : {size_t(0), size_t(1), size_t(13), size_t(4096)})
        for (bool uneven : {false, true})
          for (bool in_place : {false, true})
            for (int root : {0, p - 1}) {
              size_t total;
              std::vector<Block> blocks = layout(p, unit, uneven, &total);
              std::vector<char> send(total, 'x');
              for (int q = 0; q < p; ++q)
                for (size_t i = 0; i < blocks[size_t(q)].bytes; ++i)
                  send[blocks[size_t(q)].offset + i] = byte_of(root, q, i);
              std::vector<std::vector<char>> recv(static_cast<size_t>(p));
              std::vector<CollArgs> a(static_cast<size_t>(p));
              for (int r = 0; r < p; ++r) {
                recv[size_t(r)].assign(blocks[size_t(r)].bytes, 'y');
                CollArgs& x = a[size_t(r)];
                x.coll = Collective::scatter;
                x.send = send.data();
                x.send_blocks = blocks;
                x.root = root;
                x.uniform = !uneven;
                x.bytes = total;
                x.own_bytes = blocks[size_t(r)].bytes;
                x.recv = (in_place && r == root) ? send.data() + blocks[size_t(r)].offset : recv[size_t(r)].data();
              }
              if (!run(alg, p, a)) continue;
              for (int r = 0; r < p; ++r) {
                if (in_place && r == root) continue;
                for (size_t i = 0; i < blocks[size_t(r)].bytes; ++i)
                  ASSERT_EQ(recv[size_t(r)][i], byte_of(root, r, i)) << where(alg, p, unit, root) << " rank " << r;
              }
            }
}

TEST(Algorithms, Alltoall) {
  for (const Algorithm* alg : of(Collective::alltoall))
    for (int p : kSizes)
      for (size_t unit : {size_t(0), size_t(1), size_t(13), size_t(4096)})
        for (bool uneven : {false, true}) {
          size_t total;
          std::vector<Block> blocks = layout(p, unit, uneven, &total);  // same shape both sides
          std::vector<std::vector<char>> send(static_cast<size_t>(p), std::vector<char>(total, 'x')), recv = send;
          std::vector<CollArgs> a(static_cast<size_t>(p));
          for (int r = 0; r < p; ++r) {
            for (int q = 0; q < p; ++q)
              for (size_t i = 0; i < blocks[size_t(q)].bytes; ++i)
                send[size_t(r)][blocks[size_t(q)].offset + i] = byte_of(r, q, i);
            CollArgs& x = a[size_t(r)];
            x.coll = Collective::alltoall;
            x.send = send[size_t(r)].data();
            x.recv = recv[size_t(r)].data();
            x.bytes = total;
            x.uniform = !uneven;
            // Rank r sends blocks[q].bytes to q; q expects blocks[q].bytes from everyone.
            x.send_blocks = blocks;
            x.recv_blocks.resize(static_cast<size_t>(p));
            for (int q = 0; q < p; ++q)
              x.recv_blocks[size_t(q)] = Block{blocks[size_t(q)].offset, blocks[size_t(r)].bytes};
          }
          if (uneven) {  // receive blocks must not overlap: lay them out again
            for (int r = 0; r < p; ++r) {
              size_t off = 0;
              for (int q = 0; q < p; ++q) {
                a[size_t(r)].recv_blocks[size_t(q)].offset = off;
                off += blocks[size_t(r)].bytes + 1;
              }
              recv[size_t(r)].assign(off + 1, 'x');
              a[size_t(r)].recv = recv[size_t(r)].data();
            }
          }
          if (!run(alg, p, a)) continue;
          for (int r = 0; r < p; ++r)
            for (int q = 0; q < p; ++q) {
              const Block& b = a[size_t(r)].recv_blocks[size_t(q)];
              for (size_t i = 0; i < b.bytes; ++i)
                ASSERT_EQ(recv[size_t(r)][b.offset + i], byte_of(q, r, i))
                    << where(alg, p, unit) << " rank " << r << " from " << q << (uneven ? " uneven" : "");
            }
        }
}

TEST(Algorithms, ReduceScatter) {
  for (const Algorithm* alg : of(Collective::reduce_scatter))
    for (int p : kSizes)
      for (size_t unit : {size_t(0), size_t(1), size_t(7), size_t(300)})
        for (bool uneven : {false, true})
          for (bool commutative : {true, false}) {
            std::vector<size_t> counts(static_cast<size_t>(p));
            for (int r = 0; r < p; ++r) counts[size_t(r)] = uneven ? unit * size_t((r * 3) % 4) : unit;
            const size_t total = std::accumulate(counts.begin(), counts.end(), size_t(0));
            std::vector<CollArgs> a(static_cast<size_t>(p));
            std::vector<std::vector<int32_t>> isend(static_cast<size_t>(p)), irecv(static_cast<size_t>(p));
            std::vector<std::vector<Cat>> csend(static_cast<size_t>(p)), crecv(static_cast<size_t>(p));
            for (int r = 0; r < p; ++r) {
              CollArgs& x = a[size_t(r)];
              x.coll = Collective::reduce_scatter;
              x.counts = counts;
              x.count = total;
              x.uniform = !uneven;
              for (size_t i = 0; i < total; ++i) {
                isend[size_t(r)].push_back(int_value(r, i));
                csend[size_t(r)].push_back(cat_value(r, i));
              }
              irecv[size_t(r)].assign(counts[size_t(r)] + 1, -1);
              crecv[size_t(r)].assign(counts[size_t(r)] + 1, Cat{0, 0});
              x.red = commutative ? int_sum() : cat_reduction();
              x.bytes = total * x.red.elem_size;
              x.send = commutative ? static_cast<void*>(isend[size_t(r)].data()) : csend[size_t(r)].data();
              x.recv = commutative ? static_cast<void*>(irecv[size_t(r)].data()) : crecv[size_t(r)].data();
            }
            if (!run(alg, p, a)) continue;
            size_t start = 0;
            for (int r = 0; r < p; ++r) {
              for (size_t i = 0; i < counts[size_t(r)]; ++i) {
                if (commutative) {
                  int32_t want = 0;
                  for (int q = 0; q < p; ++q) want += int_value(q, start + i);
                  ASSERT_EQ(irecv[size_t(r)][i], want) << where(alg, p, unit) << " rank " << r;
                } else {
                  Cat want = cat_value(0, start + i);
                  for (int q = 1; q < p; ++q) want = cat_combine(want, cat_value(q, start + i));
                  ASSERT_TRUE(same_cat(crecv[size_t(r)][i], want)) << where(alg, p, unit) << " rank " << r;
                }
              }
              start += counts[size_t(r)];
            }
          }
}

TEST(Algorithms, ScanAndExscan) {
  for (Collective coll : {Collective::scan, Collective::exscan})
    for (const Algorithm* alg : of(coll))
      for (int p : kSizes)
        for (size_t n : {size_t(1), size_t(9), size_t(1000)})
          for (bool in_place : {false, true}) {
            std::vector<std::vector<Cat>> send(static_cast<size_t>(p), std::vector<Cat>(n)), recv = send;
            for (int r = 0; r < p; ++r)
              for (size_t i = 0; i < n; ++i) send[size_t(r)][i] = cat_value(r, i);
            if (in_place) recv = send;
            std::vector<CollArgs> a(static_cast<size_t>(p));
            for (int r = 0; r < p; ++r) {
              CollArgs& x = a[size_t(r)];
              x.coll = coll;
              x.recv = recv[size_t(r)].data();
              x.send = in_place ? x.recv : send[size_t(r)].data();
              x.count = n;
              x.red = cat_reduction();
              x.bytes = n * sizeof(Cat);
            }
            if (!run(alg, p, a)) continue;
            const bool exclusive = coll == Collective::exscan;
            for (int r = exclusive ? 1 : 0; r < p; ++r)
              for (size_t i = 0; i < n; ++i) {
                Cat want = cat_value(0, i);
                for (int q = 1; q <= (exclusive ? r - 1 : r); ++q) want = cat_combine(want, cat_value(q, i));
                ASSERT_TRUE(same_cat(recv[size_t(r)][i], want)) << where(alg, p, n) << " rank " << r;
              }
          }
}
