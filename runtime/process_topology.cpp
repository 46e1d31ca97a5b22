// Cartesian grid arithmetic and the balanced factorisation of MPI_Dims_create.
#include "runtime/process_topology.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace weft {

namespace {

// The most balanced factorisation of n into k factors, non-increasing: the smallest spread
// (largest factor minus smallest), then, among equal spreads, the largest smallest factor, the
// largest second smallest, and so on. Factors are picked largest first from the divisors of n,
// a branch dropped once its spread cannot beat the best found.
class Factoriser {
 public:
  Factoriser(int n, int k) : k_(k), cur_(size_t(k)) {
    for (int d = 1; int64_t(d) * d <= n; ++d)
      if (n % d == 0) {
        divs_.push_back(d);
        if (d != n / d) divs_.push_back(n / d);
      }
    std::sort(divs_.begin(), divs_.end());
    pick(n, 0, n);
  }
  const std::vector<int>& best() const { return best_; }

 private:
  // remaining^(1/slots) rounded down: the largest the smallest factor left can be.
  static int root_floor(int remaining, int slots) {
    int r = int(std::pow(double(remaining), 1.0 / slots));
    while (r > 1 && power_above(r, slots, remaining)) --r;
    while (!power_above(r + 1, slots, remaining)) ++r;
    return r;
  }
  // d^slots > limit
  static bool power_above(int d, int slots, int limit) {
    int64_t p = 1;
    for (int i = 0; i < slots; ++i)
      if ((p *= d) > limit) return true;
    return false;
  }
  bool better(int spread) const {
    if (best_.empty() || spread != best_spread_) return best_.empty() || spread < best_spread_;
    for (int i = k_ - 1; i >= 0; --i)
      if (cur_[size_t(i)] != best_[size_t(i)]) return cur_[size_t(i)] > best_[size_t(i)];
    return false;
  }
  void pick(int remaining, int slot, int max_factor) {
    const int slots = k_ - slot;
    if (slots == 1) {
      if (remaining > max_factor) return;
      cur_[size_t(slot)] = remaining;
      const int spread = cur_[0] - remaining;
      if (better(spread)) {
        best_ = cur_;
        best_spread_ = spread;
      }
      return;
    }
    const int low = root_floor(remaining, slots);  // the largest factor left is at least this
    if (slot > 0 && !best_.empty() && cur_[0] - low > best_spread_) return;
    for (int d : divs_) {
      if (d > max_factor || d > remaining) break;
      if (d < low || remaining % d != 0 || !power_above(d, slots, remaining - 1)) continue;  // d^slots >= remaining
      cur_[size_t(slot)] = d;
      pick(remaining / d, slot + 1, d);
    }
  }

  int k_;
  std::vector<int> divs_, cur_, best_;
  int best_spread_ = 0;
};

}  // namespace

void balanced_dims(int nnodes, int ndims, int* dims) {
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] > 0) fixed *= dims[i];
    else ++free_dims;
  }
  if (free_dims == 0) return;
  const Factoriser f(nnodes / fixed, free_dims);
  size_t k = 0;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = f.best()[k++];
}

void cart_coords(const CartGrid& g, int rank, int* coords) {
  for (int d = int(g.dims.size()) - 1; d >= 0; --d) {
    coords[d] = rank % g.dims[size_t(d)];
    rank /= g.dims[size_t(d)];
  }
}

int cart_rank(const CartGrid& g, const int* coords) {
  int rank = 0;
  for (size_t d = 0; d < g.dims.size(); ++d) {
    int c = coords[d], n = g.dims[d];
    if (g.periods[d]) c = ((c % n) + n) % n;
    else if (c < 0 || c >= n) return -1;
    rank = rank * n + c;
  }
  return rank;
}

void cart_shift(const CartGrid& g, int rank, int direction, int disp, int* source, int* dest) {
  std::vector<int> coords(g.dims.size());
  cart_coords(g, rank, coords.data());
  const int home = coords[size_t(direction)];
  coords[size_t(direction)] = home + disp;
  *dest = cart_rank(g, coords.data());
  coords[size_t(direction)] = home - disp;
  *source = cart_rank(g, coords.data());
}

void cart_neighbors(const CartGrid& g, int rank, std::vector<int>* sources, std::vector<int>* dests) {
  sources->clear();
  dests->clear();
  for (int d = 0; d < int(g.dims.size()); ++d) {
    int minus, plus;
    cart_shift(g, rank, d, 1, &minus, &plus);
    for (int r : {minus, plus}) {
      sources->push_back(r);
      dests->push_back(r);
    }
  }
}

void graph_neighbors(const std::vector<int>& index, const std::vector<int>& edges, int rank,
                     std::vector<int>* sources, std::vector<int>* dests) {
  int begin, end;
  graph_neighbor_range(index, rank, &begin, &end);
  sources->assign(edges.begin() + begin, edges.begin() + end);
  *dests = *sources;
}

CartGrid cart_sub(const CartGrid& g, int rank, const int* remain, int* color, int* key) {
  std::vector<int> coords(g.dims.size());
  cart_coords(g, rank, coords.data());
  CartGrid sub;
  *color = *key = 0;
  for (size_t d = 0; d < g.dims.size(); ++d) {
    if (remain[d]) {
      sub.dims.push_back(g.dims[d]);
      sub.periods.push_back(g.periods[d]);
      *key = *key * g.dims[d] + coords[d];
    } else {
      *color = *color * g.dims[d] + coords[d];
    }
  }
  return sub;
}

void keep_edges(const std::vector<int64_t>& triples, int rank, DistGraph* g) {
  for (size_t e = 0; e + 2 < triples.size(); e += 3) {
    const int src = int(triples[e]), dst = int(triples[e + 1]), w = int(triples[e + 2]);
    if (dst == rank) {
      g->sources.push_back(src);
      g->source_weights.push_back(w);
    }
    if (src == rank) {
      g->dests.push_back(dst);
      g->dest_weights.push_back(w);
    }
  }
}

int64_t entries_before(const std::vector<int64_t>& counts, int rank) {
  int64_t n = 0;
  for (int r = 0; r < rank; ++r) n += counts[size_t(r)];
  return n;
}

}  // namespace weft
