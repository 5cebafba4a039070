// Degree-1 Vietoris-Rips persistence by the method of Ripser (Bauer 2021, "Ripser: efficient computation
// of Vietoris-Rips persistence barcodes"), specialised to H1 over Z/2:
//
//   - cohomology: the columns are edges, processed from the last edge of the filtration to the first, and
//     a column's pivot is the earliest triangle of its (reduced) coboundary;
//   - edges and triangles are named by the combinatorial number system, {i > j} -> C(i,2) + j and
//     {a > b > c} -> C(a,3) + C(b,2) + c, so the filtration needs no simplex table and a triangle's name
//     is a key for the pivot map;
//   - coboundaries are enumerated when needed, never stored: the reduction keeps, per finished column,
//     only the list of edges that were added to it (the "V" column) and re-enumerates their cofacets;
//   - clearing: the edges of the minimum spanning forest kill components in degree 0 and so cannot
//     create loops; they are never reduced;
//   - apparent pairs: an edge whose earliest cofacet has it as its latest facet is paired with that
//     triangle at zero persistence without any reduction (most edges, on real data);
//   - emergent pairs: a column whose earliest cofacet has the column's own diameter and is not yet a pivot
//     is paired with it at once, before its coboundary is even put into a heap;
//   - the working coboundary is a binary heap in which equal triangles cancel in pairs (Z/2).
//
// The filtration is refined to a total order exactly as Ripser refines it: by diameter, and among equal
// diameters the simplex with the larger index first. Finite pairs with positive persistence do not
// depend on the refinement; using one refinement throughout (spanning forest, apparent pairs, pivots) is
// what makes clearing and the shortcuts valid.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ffnshape/geometry/persistence.h"

namespace ffnshape::geometry {
namespace {

using Index = int64_t;
constexpr Index kNone = -1;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::string describe(const PersistenceBudget& budget) {
  char memory[64] = "no memory limit", time[64] = "no time limit";
  if (budget.memory_bytes > 0) std::snprintf(memory, sizeof memory, "%.3g GiB of memory", budget.memory_bytes / kBytesPerGiB);
  if (budget.seconds > 0) std::snprintf(time, sizeof time, "%g s", budget.seconds);
  return std::string(memory) + ", " + time;
}

constexpr const char* kBudgetAdvice = "; use fewer points, a threshold (edges longer than it are left out), or a larger budget";

// An edge or a triangle of the filtration: its diameter (when it enters) and its combinatorial index.
struct Simplex {
  double diameter;
  Index index;
};

// True when `a` enters the refined filtration after `b`. As the comparator of a binary heap it puts the
// earliest simplex on top: that is the pivot of a coboundary column.
inline bool enters_after(const Simplex& a, const Simplex& b) {
  return a.diameter > b.diameter || (a.diameter == b.diameter && a.index < b.index);
}

// Working coboundary over Z/2: a heap in which two copies of a triangle cancel when they meet at the top.
class CoboundaryHeap {
 public:
  void clear() { heap_.clear(); }
  void push(const Simplex& s) {
    heap_.push_back(s);
    std::push_heap(heap_.begin(), heap_.end(), enters_after);
  }
  std::vector<Simplex>& raw() { return heap_; }  // bulk fill, then heapify()
  size_t capacity() const { return heap_.capacity(); }
  void heapify() { std::make_heap(heap_.begin(), heap_.end(), enters_after); }

  // The earliest triangle with an odd count, left in the heap; index kNone if the column is zero.
  Simplex pivot() {
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), enters_after);
      const Simplex top = heap_.back();
      if (heap_.size() > 1 && heap_.front().index == top.index) {  // a pair cancels
        heap_.pop_back();
        std::pop_heap(heap_.begin(), heap_.end(), enters_after);
        heap_.pop_back();
        continue;
      }
      std::push_heap(heap_.begin(), heap_.end(), enters_after);
      return top;
    }
    return {0.0, kNone};
  }

 private:
  std::vector<Simplex> heap_;
};

class RipsH1 {
 public:
  // `dist` is a dense, symmetric, validated (n, n) matrix; `threshold` already capped at the enclosing radius.
  RipsH1(std::vector<double> dist, Index n, double threshold, const PersistenceBudget& budget)
      : dist_(std::move(dist)), n_(n), threshold_(threshold), binom2_(n + 1), binom3_(n + 1), budget_(budget),
        start_(std::chrono::steady_clock::now()) {
    for (Index v = 0; v <= n; ++v) {
      binom2_[v] = v * (v - 1) / 2;
      binom3_[v] = v * (v - 1) * (v - 2) / 6;
    }
  }

  PersistenceDiagram compute() {
    mark_spanning_forest();
    collect_columns();
    reduce();
    std::sort(diagram_.begin(), diagram_.end(), [](const PersistencePair& a, const PersistencePair& b) {
      return a.birth < b.birth || (a.birth == b.birth && a.death < b.death);
    });
    return std::move(diagram_);
  }

 private:
  // Per edge: the third vertex of its apparent pair's triangle, or one of these.
  static constexpr int32_t kNoApparent = -1;
  static constexpr int32_t kForest = -2;  // kills a component in degree 0: cleared

  const double* row(Index i) const { return dist_.data() + i * n_; }
  Index edge_index(Index i, Index j) const { return binom2_[i] + j; }  // i > j
  Index triangle_index(Index a, Index b, Index c) const { return binom3_[a] + binom2_[b] + c; }  // a > b > c

  // Largest v with table[v] <= index: the top vertex of a simplex from its combinatorial index.
  static Index top_vertex(const std::vector<Index>& table, Index index) {
    return static_cast<Index>(std::upper_bound(table.begin(), table.end(), index) - table.begin()) - 1;
  }
  void edge_vertices(Index e, Index& i, Index& j) const {
    i = top_vertex(binom2_, e);
    j = e - binom2_[i];
  }
  void triangle_vertices(Index t, Index& a, Index& b, Index& c) const {
    a = top_vertex(binom3_, t);
    t -= binom3_[a];
    b = top_vertex(binom2_, t);
    c = t - binom2_[b];
  }

  // Degree 0 by Prim's algorithm in O(N^2) under the refined order (no sort of all edges needed): the
  // edges of the minimum spanning forest are exactly those that merge components, and are cleared.
  void mark_spanning_forest() {
    edge_state_.assign(static_cast<size_t>(binom2_[n_]), kNoApparent);
    std::vector<char> in_tree(n_, 0);
    std::vector<Simplex> best(n_, Simplex{kInfinity, kNone});  // cheapest edge from the tree to each vertex
    for (Index root = 0; root < n_; ++root) {
      if (in_tree[root]) continue;
      Index v = root;
      while (v != kNone) {
        in_tree[v] = 1;
        const double* dv = row(v);
        Index next = kNone;
        for (Index w = 0; w < n_; ++w) {
          if (in_tree[w]) continue;
          if (dv[w] <= threshold_) {
            const Simplex candidate{dv[w], w > v ? edge_index(w, v) : edge_index(v, w)};
            if (best[w].index == kNone || enters_after(best[w], candidate)) best[w] = candidate;
          }
          if (best[w].index != kNone && (next == kNone || enters_after(best[next], best[w]))) next = w;
        }
        if (next != kNone) edge_state_[best[next].index] = kForest;
        v = next;
      }
    }
  }

  // The earliest cofacet of edge {i, j}, if it has the edge's own diameter: the third vertex, else kNone.
  // Cofacets are scanned in decreasing index order (k from N-1 down), so the first hit is the earliest.
  Index zero_pivot_cofacet_vertex(Index i, Index j, double diameter) const {
    const double* di = row(i);
    const double* dj = row(j);
    for (Index k = n_ - 1; k >= 0; --k) {
      if (di[k] <= diameter && dj[k] <= diameter && k != i && k != j) return k;
    }
    return kNone;
  }

  // The latest facet of triangle {a > b > c} of diameter `diameter` is the first of {b,c}, {a,c}, {a,b}
  // (increasing index) with that length. Returns that edge's index and sets `opposite` to the third vertex.
  Index zero_pivot_facet(Index a, Index b, Index c, double diameter, Index& opposite) const {
    if (row(b)[c] == diameter) {
      opposite = a;
      return edge_index(b, c);
    }
    if (row(a)[c] == diameter) {
      opposite = b;
      return edge_index(a, c);
    }
    opposite = c;
    return edge_index(a, b);
  }

  // The edge paired apparently with triangle t (so t is that edge's coboundary pivot), or kNone.
  Index apparent_facet(const Simplex& t) const {
    Index a, b, c, opposite;
    triangle_vertices(t.index, a, b, c);
    const Index facet = zero_pivot_facet(a, b, c, t.diameter, opposite);
    return edge_state_[facet] == opposite ? facet : kNone;
  }

  // Every edge within the threshold that is neither cleared nor apparent becomes a column, ordered from
  // the last edge of the filtration to the first.
  void collect_columns() {
    for (Index i = 1; i < n_; ++i) {
      spend(i * n_);
      const double* di = row(i);
      for (Index j = 0; j < i; ++j) {
        const double diameter = di[j];
        const Index e = edge_index(i, j);
        if (diameter > threshold_ || edge_state_[e] == kForest) continue;
        const Index k = zero_pivot_cofacet_vertex(i, j, diameter);
        if (k != kNone) {
          const Index a = std::max(i, k), c = std::min(j, k), b = i + j + k - a - c;
          Index opposite;
          if (zero_pivot_facet(a, b, c, diameter, opposite) == e) {
            edge_state_[e] = static_cast<int32_t>(k);
            continue;
          }
        }
        columns_.push_back({diameter, e});
      }
    }
    std::sort(columns_.begin(), columns_.end(), [](const Simplex& a, const Simplex& b) { return enters_after(a, b); });
  }

  // Push the cofacets of edge {i, j} within the threshold onto the working coboundary (unordered; the
  // caller heapifies), in decreasing index order. With `emergent` set, stop at the earliest cofacet if it
  // has the edge's diameter and can be paired with it at once; returns that triangle, else kNone.
  template <bool kEmergent>
  Index push_coboundary(Index i, Index j, double diameter, std::vector<Simplex>& out) const {
    const double* di = row(i);
    const double* dj = row(j);
    bool check = kEmergent;
    auto visit = [&](double d, Index t) -> bool {
      if (d > threshold_) return false;
      if (check && d == diameter) {
        if (pivot_of_.find(t) == pivot_of_.end() && apparent_facet({d, t}) == kNone) return true;
        check = false;
      }
      out.push_back({d, t});
      return false;
    };
    const Index i2 = binom2_[i], i3 = binom3_[i], j2 = binom2_[j];
    for (Index k = n_ - 1; k > i; --k) {  // {k > i > j}
      const Index t = binom3_[k] + i2 + j;
      if (visit(std::max(diameter, std::max(di[k], dj[k])), t)) return t;
    }
    for (Index k = i - 1; k > j; --k) {  // {i > k > j}
      const Index t = i3 + binom2_[k] + j;
      if (visit(std::max(diameter, std::max(di[k], dj[k])), t)) return t;
    }
    for (Index k = j - 1; k >= 0; --k) {  // {i > j > k}
      const Index t = i3 + j2 + k;
      if (visit(std::max(diameter, std::max(di[k], dj[k])), t)) return t;
    }
    return kNone;
  }

  void add_edge_coboundary(Index e, double diameter) {
    spend(n_);
    Index i, j;
    edge_vertices(e, i, j);
    const size_t before = heap_.raw().size();
    push_coboundary<false>(i, j, diameter, heap_.raw());
    // Sift the new entries in one by one (cheaper than re-heapifying when the heap is large).
    auto& h = heap_.raw();
    for (size_t end = before + 1; end <= h.size(); ++end) std::push_heap(h.begin(), h.begin() + end, enters_after);
    added_.push_back({diameter, e});
  }

  void reduce() {
    pivot_of_.reserve(columns_.size());
    for (size_t col = 0; col < columns_.size(); ++col) {
      const Simplex column = columns_[col];
      Index i, j;
      edge_vertices(column.index, i, j);
      heap_.clear();
      added_.clear();
      spend(n_);
      Simplex pivot;
      const Index emergent = push_coboundary<true>(i, j, column.diameter, heap_.raw());
      if (emergent != kNone) {
        pivot = {column.diameter, emergent};
      } else {
        heap_.heapify();
        pivot = heap_.pivot();
      }
      while (true) {
        if (pivot.index == kNone) {  // the cocycle never becomes a coboundary: an essential class
          diagram_.push_back({column.diameter, kInfinity});
          break;
        }
        const auto found = pivot_of_.find(pivot.index);
        if (found != pivot_of_.end()) {  // add the column that owns this pivot: its edge and its V column
          const size_t other = found->second;
          add_edge_coboundary(columns_[other].index, columns_[other].diameter);
          for (size_t k = v_bounds_[other]; k < v_bounds_[other + 1]; ++k) {
            add_edge_coboundary(v_entries_[k].index, v_entries_[k].diameter);
          }
          pivot = heap_.pivot();
          continue;
        }
        const Index facet = apparent_facet(pivot);
        if (facet != kNone) {  // the pivot belongs to an apparent pair: add that edge's coboundary
          add_edge_coboundary(facet, pivot.diameter);
          pivot = heap_.pivot();
          continue;
        }
        if (pivot.diameter > column.diameter) diagram_.push_back({column.diameter, pivot.diameter});
        pivot_of_.emplace(pivot.index, col);
        break;
      }
      store_v_column(col);
    }
  }

  // Keep the edges added to column `col` (pairs cancel over Z/2) for when it is added to a later column.
  void store_v_column(size_t col) {
    v_bounds_.resize(col + 1, v_entries_.size());
    std::sort(added_.begin(), added_.end(), [](const Simplex& a, const Simplex& b) { return a.index < b.index; });
    for (size_t k = 0; k < added_.size();) {
      if (k + 1 < added_.size() && added_[k + 1].index == added_[k].index) {
        k += 2;
      } else {
        v_entries_.push_back(added_[k]);
        ++k;
      }
    }
    v_bounds_.push_back(v_entries_.size());
  }

  // Counts `work` (about one distance read or heap entry each) and checks the budget every 2^20 of it.
  void spend(Index work) {
    work_ += work;
    if (work_ < next_check_) return;
    next_check_ = work_ + (Index{1} << 20);
    const double bytes = memory_in_use(), seconds = elapsed();
    if (budget_.memory_bytes > 0 && bytes > budget_.memory_bytes) over_budget("memory", bytes, seconds);
    if (budget_.seconds > 0 && seconds > budget_.seconds) over_budget("time", bytes, seconds);
  }

  double elapsed() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

  // Bytes held by the computation: the matrix and edge states, and what the reduction has grown.
  double memory_in_use() const {
    const double simplex = sizeof(Simplex), map_entry = 4.0 * sizeof(void*) + sizeof(Index) + sizeof(size_t);
    return static_cast<double>(dist_.capacity()) * sizeof(double) +
           static_cast<double>(edge_state_.capacity()) * sizeof(int32_t) +
           simplex * static_cast<double>(columns_.capacity() + v_entries_.capacity() + added_.capacity() +
                                         heap_.capacity() + diagram_.capacity()) +
           map_entry * static_cast<double>(pivot_of_.size()) + sizeof(void*) * static_cast<double>(pivot_of_.bucket_count()) +
           sizeof(size_t) * static_cast<double>(v_bounds_.capacity());
  }

  [[noreturn]] void over_budget(const char* what, double bytes, double seconds) const {
    char text[640];
    std::snprintf(text, sizeof text,
                  "Rips persistence (H1) of %lld points stopped at its %s budget (%s): %.3g GiB in use after %.1f s, "
                  "%zu of %zu columns reduced, edges up to %g%s",
                  static_cast<long long>(n_), what, describe(budget_).c_str(), bytes / kBytesPerGiB, seconds, pivot_of_.size(),
                  columns_.size(), threshold_, kBudgetAdvice);
    throw PersistenceBudgetExceeded(text);
  }

  std::vector<double> dist_;
  Index n_;
  double threshold_;
  std::vector<Index> binom2_, binom3_;  // C(v, 2) and C(v, 3) for v = 0..N
  std::vector<int32_t> edge_state_;     // per edge index: apparent partner's third vertex, kNoApparent or kForest
  std::vector<Simplex> columns_;
  std::unordered_map<Index, size_t> pivot_of_;  // triangle index -> the column whose pivot it is
  std::vector<size_t> v_bounds_;                // column c's added edges: v_entries_[v_bounds_[c], v_bounds_[c+1])
  std::vector<Simplex> v_entries_;
  std::vector<Simplex> added_;
  CoboundaryHeap heap_;
  PersistenceDiagram diagram_;
  PersistenceBudget budget_;
  std::chrono::steady_clock::time_point start_;
  Index work_ = 0, next_check_ = 0;
};

}  // namespace

PersistenceDiagram rips_h1(const torch::Tensor& distances, double threshold, const PersistenceBudget& budget) {
  if (distances.dim() != 2 || distances.size(0) != distances.size(1)) {
    std::string shape;
    for (int64_t k = 0; k < distances.dim(); ++k) shape += (k ? "x" : "") + std::to_string(distances.size(k));
    throw std::invalid_argument("rips_h1 needs a square (N, N) distance matrix, but got shape [" + shape + "]");
  }
  if (!distances.is_floating_point()) {
    throw std::invalid_argument("rips_h1 needs a floating-point distance matrix");
  }
  if (std::isnan(threshold) || threshold < 0) {
    throw std::invalid_argument("the Rips threshold must be a non-negative number, but is " + std::to_string(threshold));
  }
  if (std::isnan(budget.memory_bytes) || budget.memory_bytes < 0 || std::isnan(budget.seconds) || budget.seconds < 0) {
    throw std::invalid_argument("the persistence budget must be >= 0 (0: no limit), but is " + describe(budget));
  }
  const Index n = distances.size(0);
  // The float64 copy of the matrix and 4 bytes per edge, before any reduction.
  const double start_bytes = 8.0 * static_cast<double>(n) * static_cast<double>(n) + 2.0 * static_cast<double>(n) * (n - 1);
  if (budget.memory_bytes > 0 && start_bytes > budget.memory_bytes) {
    char text[256];
    std::snprintf(text, sizeof text, "Rips persistence (H1) of %lld points needs %.3g GiB before it starts, over its budget (%s)%s",
                  static_cast<long long>(n), start_bytes / kBytesPerGiB, describe(budget).c_str(), kBudgetAdvice);
    throw PersistenceBudgetExceeded(text);
  }
  const auto x = distances.to(torch::kCPU, torch::kDouble).contiguous();
  const double* in = x.data_ptr<double>();

  double largest = 0;
  for (Index k = 0; k < n * n; ++k) {
    const double v = in[k];
    if (!std::isfinite(v)) throw std::invalid_argument("the distance matrix contains NaN or infinite entries");
    if (v < 0) throw std::invalid_argument("the distance matrix has a negative entry (" + std::to_string(v) + ")");
    largest = std::max(largest, v);
  }
  // Symmetric up to rounding (a matrix from products of floats rarely is exactly); the halves are averaged.
  const double tolerance = 1e-9 * largest;
  std::vector<double> dist(static_cast<size_t>(n * n));
  for (Index i = 0; i < n; ++i) {
    if (in[i * n + i] != 0) {
      throw std::invalid_argument("the distance matrix has a nonzero diagonal entry (" + std::to_string(in[i * n + i]) +
                                  " at " + std::to_string(i) + "); is it a distance matrix?");
    }
    dist[i * n + i] = 0;
    for (Index j = 0; j < i; ++j) {
      const double a = in[i * n + j], b = in[j * n + i];
      if (std::fabs(a - b) > tolerance) {
        throw std::invalid_argument("the distance matrix is not symmetric: entry (" + std::to_string(i) + ", " +
                                    std::to_string(j) + ") is " + std::to_string(a) + " but (" + std::to_string(j) +
                                    ", " + std::to_string(i) + ") is " + std::to_string(b));
      }
      dist[i * n + j] = dist[j * n + i] = a == b ? a : 0.5 * (a + b);
    }
  }
  if (n < 3) return {};

  // Above the enclosing radius the complex is a cone over the centre point, so nothing can change there.
  double enclosing = kInfinity;
  for (Index i = 0; i < n; ++i) {
    enclosing = std::min(enclosing, *std::max_element(dist.begin() + i * n, dist.begin() + (i + 1) * n));
  }
  return RipsH1(std::move(dist), n, std::min(threshold, enclosing), budget).compute();
}

}  // namespace ffnshape::geometry
