// Cartesian grid arithmetic and the balanced factorisation of MPI_Dims_create.
#include "runtime/process_topology.h"

#include <algorithm>

namespace weft {

void balanced_dims(int nnodes, int ndims, int* dims) {
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] > 0) fixed *= dims[i];
    else ++free_dims;
  }
  if (free_dims == 0) return;
  // Hand out prime factors, largest first, to the smallest dimension.
  int rest = nnodes / fixed;
  std::vector<int> factors;
  for (int f = 2; (long)f * f <= rest; ++f)
    while (rest % f == 0) { factors.push_back(f); rest /= f; }
  if (rest > 1) factors.push_back(rest);
  std::vector<int> out(size_t(free_dims), 1);
  std::sort(factors.rbegin(), factors.rend());
  for (int f : factors) *std::min_element(out.begin(), out.end()) *= f;
  std::sort(out.rbegin(), out.rend());  // non-increasing, as the standard asks
  size_t k = 0;
  for (int i = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = out[k++];
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
