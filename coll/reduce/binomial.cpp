// Binomial-tree reduce toward the root, for commutative operations: log2 p rounds.
#include <cstring>
#include <vector>

#include "coll/p2p.h"

namespace weft::coll {

Status reduce_binomial(CollContext& c, const void* send, void* recv, size_t count,
                       const Reduction& red, int root) {
  const int p = c.comm.size;
  const int rel = (c.comm.rank - root + p) % p;
  const size_t bytes = count * red.elem_size;
  std::vector<char> acc_storage;
  char* acc;
  if (c.comm.rank == root) {
    acc = static_cast<char*>(recv);
    if (send != recv) memcpy(acc, send, bytes);
  } else {
    acc_storage.assign(static_cast<const char*>(send), static_cast<const char*>(send) + bytes);
    acc = acc_storage.data();
  }
  std::vector<char> incoming(bytes);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (rel & mask) {
      return send_to(c, acc, bytes, (rel - mask + root) % p, kTagReduce);
    }
    if (rel + mask < p) {
      WEFT_TRY(recv_from(c, incoming.data(), bytes, (rel + mask + root) % p, kTagReduce));
      WEFT_TRY(red.apply(incoming.data(), acc, count));
    }
  }
  return Status::ok;
}

}  // namespace weft::coll
