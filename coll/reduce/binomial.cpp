// Binomial-tree reduce: log2 p rounds. Commutative operations use a tree rooted at the root.
// Non-commutative ones use the tree rooted at rank 0, where every subtree is a contiguous range
// of ranks combined in order, and rank 0 then sends the result to the root.
#include <cstring>
#include <vector>

#include "coll/p2p.h"

namespace weft::coll {

Status reduce_binomial(CollContext& c, const void* send, void* recv, size_t count,
                       const Reduction& red, int root) {
  const int p = c.comm.size, me = c.comm.rank;
  const int tree_root = red.commutative ? root : 0;
  const int rel = (me - tree_root + p) % p;
  const size_t bytes = count * red.elem_size;
  std::vector<char> acc_storage;
  char* acc;
  if (me == root && tree_root == root) {
    acc = static_cast<char*>(recv);
    if (send != recv) memcpy(acc, send, bytes);
  } else {
    acc_storage.assign(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
    acc = acc_storage.data();
  }
  std::vector<char> incoming(bytes);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rel & mask) {
      WEFT_TRY(send_to(c, acc, bytes, (rel - mask + tree_root) % p, kTagReduce));
      break;
    }
    if (rel + mask < p) {
      WEFT_TRY(recv_from(c, incoming.data(), bytes, (rel + mask + tree_root) % p, kTagReduce));
      if (red.commutative) {
        WEFT_TRY(red.apply(incoming.data(), acc, count));
      } else {  // acc holds the lower ranks
        WEFT_TRY(red.apply(acc, incoming.data(), count));
        memcpy(acc, incoming.data(), bytes);
      }
    }
  }
  if (tree_root != root) {
    if (me == tree_root) WEFT_TRY(send_to(c, acc, bytes, root, kTagReduce));
    if (me == root) WEFT_TRY(recv_from(c, recv, bytes, tree_root, kTagReduce));
  }
  return Status::ok;
}

}  // namespace weft::coll
