#include "optimal_transport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace ffnshape::geometry::detail {

TransportPlan uniform_transport(const double* cost, int64_t n, int64_t m) {
  if (n < 1 || m < 1) throw std::invalid_argument("optimal transport needs at least one row and one column");
  for (int64_t k = 0; k < n * m; ++k) {
    if (!std::isfinite(cost[k])) throw std::invalid_argument("optimal transport: the cost matrix has NaN or infinite entries");
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int64_t g = std::gcd(n, m);
  const int64_t supply = m / g, demand = n / g;  // integer units per row and per column; n * supply == m * demand

  std::vector<int64_t> flow(static_cast<size_t>(n * m), 0);
  std::vector<int64_t> rem_supply(n, supply), rem_demand(m, demand);
  std::vector<std::vector<int64_t>> rows_of_col(m);  // rows with positive flow into each column
  auto send = [&](int64_t i, int64_t j, int64_t amount) {
    int64_t& f = flow[i * m + j];
    if (f == 0) rows_of_col[j].push_back(i);
    f += amount;
  };
  auto take_back = [&](int64_t i, int64_t j, int64_t amount) {
    int64_t& f = flow[i * m + j];
    f -= amount;
    if (f == 0) {
      auto& rows = rows_of_col[j];
      rows.erase(std::find(rows.begin(), rows.end(), i));
    }
  };

  // Dual start: column reduction, then row reduction; then send flow greedily along tight edges (zero
  // reduced cost), which keeps complementary slackness.
  std::vector<double> u(n, 0.0), v(m, inf);
  std::vector<int64_t> argmin_row(m, 0);
  for (int64_t i = 0; i < n; ++i) {
    const double* ci = cost + i * m;
    for (int64_t j = 0; j < m; ++j) {
      if (ci[j] < v[j]) v[j] = ci[j], argmin_row[j] = i;
    }
  }
  for (int64_t j = 0; j < m; ++j) {
    const int64_t i = argmin_row[j];
    const int64_t amount = std::min(rem_supply[i], rem_demand[j]);
    if (amount > 0) send(i, j, amount), rem_supply[i] -= amount, rem_demand[j] -= amount;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (rem_supply[i] < supply) continue;  // has flow on a tight edge: u = 0 is its row minimum
    const double* ci = cost + i * m;
    double best = inf;
    int64_t best_j = 0;
    for (int64_t j = 0; j < m; ++j) {
      const double r = ci[j] - v[j];
      if (r < best) best = r, best_j = j;
    }
    u[i] = best;
    const int64_t amount = std::min(rem_supply[i], rem_demand[best_j]);
    if (amount > 0) send(i, best_j, amount), rem_supply[i] -= amount, rem_demand[best_j] -= amount;
  }

  // Successive shortest paths from one source row at a time; Dijkstra over reduced costs
  // c_ij - u_i - v_j >= 0 (forward edges) and backward edges along positive flow (reduced cost 0).
  // Dense: every pass runs over all columns contiguously (vectorisable); a settled column's tentative
  // distance is set to -inf, which no relaxation improves and the minimum search skips.
  std::vector<double> dist(m), dist_row(n), settled_dist;
  std::vector<int64_t> pred_col(m), pred_row(n), settled_rows, settled_cols;
  std::vector<char> row_done(n);
  settled_rows.reserve(n), settled_cols.reserve(m), settled_dist.reserve(m);
  // Relaxes the columns from row i reached at distance d_i; returns the open column of least distance.
  auto relax = [&](int64_t i, double d_i, bool find_min, int64_t& arg) {
    const double base = d_i - u[i];
    const double* ci = cost + i * m;
    double* d = dist.data();
    int64_t* pred = pred_col.data();
    const double* vv = v.data();
    for (int64_t j = 0; j < m; ++j) {
      const double nd = base + ci[j] - vv[j];
      if (nd < d[j]) d[j] = nd, pred[j] = i;
    }
    double best = inf;
    if (find_min) {
      for (int64_t j = 0; j < m; ++j) {
        if (d[j] < best && d[j] > -inf) best = d[j], arg = j;
      }
    }
    return best;
  };
  for (int64_t src = 0; src < n; ++src) {
    while (rem_supply[src] > 0) {
      std::fill(dist.begin(), dist.end(), inf);
      std::fill(row_done.begin(), row_done.end(), 0);
      settled_rows.clear(), settled_cols.clear(), settled_dist.clear();
      dist_row[src] = 0, pred_row[src] = -1, row_done[src] = 1;
      settled_rows.push_back(src);
      int64_t j = -1;
      double best = relax(src, 0.0, true, j);
      while (true) {
        if (!(best < inf)) throw std::logic_error("optimal transport: no augmenting path (internal error)");
        settled_cols.push_back(j), settled_dist.push_back(best);
        dist[j] = -inf;
        if (rem_demand[j] > 0) break;
        const double d_j = best;
        int64_t pending = -1;  // the last row reached: relaxed together with the next minimum search
        double pending_dist = 0;
        for (const int64_t i : rows_of_col[j]) {
          if (row_done[i]) continue;
          const double d_i = d_j - (cost[i * m + j] - u[i] - v[j]);
          dist_row[i] = d_i, pred_row[i] = j, row_done[i] = 1;
          settled_rows.push_back(i);
          if (pending >= 0) relax(pending, pending_dist, false, j);
          pending = i, pending_dist = d_i;
        }
        if (pending >= 0) {
          best = relax(pending, pending_dist, true, j);
        } else {
          best = inf;
          for (int64_t k = 0; k < m; ++k) {
            if (dist[k] < best && dist[k] > -inf) best = dist[k], j = k;
          }
        }
      }
      const int64_t target = j;
      const double reach = best;
      // New potentials from the distances (capped at the target's): reduced costs stay >= 0 and the
      // augmenting path becomes tight.
      for (const int64_t i : settled_rows) u[i] -= dist_row[i] - reach;
      for (size_t k = 0; k < settled_cols.size(); ++k) v[settled_cols[k]] += settled_dist[k] - reach;

      int64_t amount = std::min(rem_supply[src], rem_demand[target]);
      for (int64_t jj = target, i = pred_col[jj]; pred_row[i] >= 0; jj = pred_row[i], i = pred_col[jj]) {
        amount = std::min(amount, flow[i * m + pred_row[i]]);
      }
      for (int64_t jj = target;;) {
        const int64_t i = pred_col[jj];
        send(i, jj, amount);
        if (pred_row[i] < 0) break;
        jj = pred_row[i];
        take_back(i, jj, amount);
      }
      rem_supply[src] -= amount;
      rem_demand[target] -= amount;
    }
  }

  TransportPlan plan;
  plan.rows = n, plan.cols = m;
  plan.mass.resize(static_cast<size_t>(n * m));
  const double unit = 1.0 / static_cast<double>(n * supply);
  for (int64_t k = 0; k < n * m; ++k) {
    plan.mass[k] = static_cast<double>(flow[k]) * unit;
    plan.cost += cost[k] * plan.mass[k];
  }
  return plan;
}

namespace {

// North-west corner rule along the given orders of rows and columns: n + m - 1 cells, a spanning tree.
TransportBasis northwest_corner(const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  const auto n = static_cast<int64_t>(rows.size()), m = static_cast<int64_t>(cols.size());
  const int64_t g = std::gcd(n, m), supply = m / g, demand = n / g;
  TransportBasis basis;
  int64_t r = 0, c = 0, s = supply, d = demand;
  while (true) {
    const int64_t amount = std::min(s, d);
    basis.row.push_back(rows[r]), basis.col.push_back(cols[c]), basis.flow.push_back(amount);
    s -= amount, d -= amount;
    if (r == n - 1 && c == m - 1) break;
    if (s == 0 && r < n - 1) {
      ++r, s = supply;  // when both run out, the next cell (r + 1, c) carries 0: a degenerate basic cell
    } else {
      ++c, d = demand;
    }
  }
  return basis;
}

TransportPlan plan_of(const TransportBasis& basis, const double* cost, int64_t n, int64_t m) {
  TransportPlan plan;
  plan.rows = n, plan.cols = m;
  plan.mass.assign(static_cast<size_t>(n * m), 0.0);
  const double unit = 1.0 / static_cast<double>(n * (m / std::gcd(n, m)));
  for (size_t k = 0; k < basis.row.size(); ++k) {
    const int64_t cell = basis.row[k] * m + basis.col[k];
    plan.mass[cell] += static_cast<double>(basis.flow[k]) * unit;
    if (cost) plan.cost += cost[cell] * static_cast<double>(basis.flow[k]) * unit;
  }
  return plan;
}

}  // namespace

std::vector<int64_t> decreasing_order(const std::vector<double>& values, uint64_t tie_seed) {
  std::vector<int64_t> order(values.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return values[a] > values[b]; });
  if (tie_seed == 0) return order;
  std::mt19937_64 random(tie_seed);
  for (const auto& [begin, end] : tie_groups(values, order)) {
    std::shuffle(order.begin() + begin, order.begin() + end, random);
  }
  return order;
}

std::vector<std::pair<size_t, size_t>> tie_groups(const std::vector<double>& values, const std::vector<int64_t>& order) {
  double largest = 0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  const double tolerance = 1e-12 * largest;  // sums of the same terms in another order differ by rounding only
  std::vector<std::pair<size_t, size_t>> groups;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin + 1;
    while (end < order.size() && values[order[end - 1]] - values[order[end]] <= tolerance) ++end;
    if (end - begin > 1) groups.emplace_back(begin, end);
    begin = end;
  }
  return groups;
}

TransportPlan comonotone_transport(const std::vector<double>& x, const std::vector<double>& y, TransportBasis* basis,
                                   uint64_t tie_seed) {
  const auto n = static_cast<int64_t>(x.size()), m = static_cast<int64_t>(y.size());
  if (n < 1 || m < 1) throw std::invalid_argument("optimal transport needs at least one row and one column");
  // Distinct seeds for the two sides, so equal tie groups are not shuffled alike.
  auto corner = northwest_corner(decreasing_order(x, tie_seed), decreasing_order(y, tie_seed ? tie_seed + 1 : 0));
  auto plan = plan_of(corner, nullptr, n, m);
  if (basis) *basis = std::move(corner);
  return plan;
}

TransportPlan uniform_transport_simplex(const double* cost, int64_t n, int64_t m, TransportBasis& basis) {
  if (n < 1 || m < 1) throw std::invalid_argument("optimal transport needs at least one row and one column");
  const int64_t nodes = n + m, cells = n + m - 1;
  if (static_cast<int64_t>(basis.row.size()) != cells) {
    std::vector<int64_t> rows(n), cols(m);
    std::iota(rows.begin(), rows.end(), int64_t{0});
    std::iota(cols.begin(), cols.end(), int64_t{0});
    basis = northwest_corner(rows, cols);
  }
  double scale = 0;
  for (int64_t k = 0; k < n * m; ++k) {
    if (!std::isfinite(cost[k])) throw std::invalid_argument("optimal transport: the cost matrix has NaN or infinite entries");
    scale = std::max(scale, std::abs(cost[k]));
  }
  const double tolerance = 1e-12 * std::max(scale, 1e-300);
  // Nodes: rows 0..n-1, columns n..n+m-1. Tree arrays rebuilt after every pivot (O(n + m)).
  std::vector<int64_t> adj_start(nodes + 1), adj(2 * cells), parent(nodes), parent_cell(nodes), depth(nodes), queue(nodes);
  std::vector<double> potential(nodes);
  const int64_t block = std::max<int64_t>(static_cast<int64_t>(std::sqrt(static_cast<double>(n * m))), 16);
  const int64_t max_pivots = 200 * (n + m) + 100000;
  int64_t next_cell = 0;  // where pricing resumes (block search)
  for (int64_t pivot = 0;; ++pivot) {
    if (pivot > max_pivots) {
      basis = {};
      return uniform_transport(cost, n, m);
    }
    // Spanning tree: adjacency, parents, depths, potentials u_i + v_j = c_ij on basic cells (u_0 = 0).
    std::fill(adj_start.begin(), adj_start.end(), 0);
    for (int64_t k = 0; k < cells; ++k) ++adj_start[basis.row[k] + 1], ++adj_start[n + basis.col[k] + 1];
    for (int64_t x = 0; x < nodes; ++x) adj_start[x + 1] += adj_start[x];
    {
      std::vector<int64_t> fill(adj_start.begin(), adj_start.end() - 1);
      for (int64_t k = 0; k < cells; ++k) adj[fill[basis.row[k]]++] = k, adj[fill[n + basis.col[k]]++] = k;
    }
    std::fill(depth.begin(), depth.end(), -1);
    int64_t head = 0, tail = 0;
    queue[tail++] = 0, depth[0] = 0, parent[0] = -1, parent_cell[0] = -1, potential[0] = 0;
    while (head < tail) {
      const int64_t x = queue[head++];
      for (int64_t e = adj_start[x]; e < adj_start[x + 1]; ++e) {
        const int64_t k = adj[e];
        const int64_t y = x < n ? n + basis.col[k] : basis.row[k];
        if (depth[y] >= 0) continue;
        depth[y] = depth[x] + 1, parent[y] = x, parent_cell[y] = k;
        potential[y] = cost[basis.row[k] * m + basis.col[k]] - potential[x];
        queue[tail++] = y;
      }
    }
    if (tail != nodes) throw std::logic_error("optimal transport: the basis is not a spanning tree (internal error)");
    // Pricing: the most negative reduced cost within the first block that has one.
    int64_t enter = -1;
    double best = -tolerance;
    for (int64_t scanned = 0; scanned < n * m;) {
      const int64_t stop = std::min(scanned + block, n * m);
      for (; scanned < stop; ++scanned) {
        const int64_t cell = (next_cell + scanned) % (n * m);
        const int64_t i = cell / m, j = cell % m;
        const double r = cost[cell] - potential[i] - potential[n + j];
        if (r < best) best = r, enter = cell;
      }
      if (enter >= 0) break;
    }
    if (enter < 0) return plan_of(basis, cost, n, m);  // no negative reduced cost: optimal
    next_cell = (enter + 1) % (n * m);
    // The cycle: entering cell (+), then the tree path from its column up to the common ancestor and
    // down to its row, signs alternating -, +, -, ...
    const int64_t a = enter / m, b = n + enter % m;
    std::vector<int64_t> up_b, up_a;  // cells from b upwards, from a upwards
    for (int64_t x = b, y = a; x != y;) {
      if (depth[x] >= depth[y]) up_b.push_back(parent_cell[x]), x = parent[x];
      else up_a.push_back(parent_cell[y]), y = parent[y];
    }
    std::vector<int64_t> cycle(up_b);
    cycle.insert(cycle.end(), up_a.rbegin(), up_a.rend());
    int64_t theta = std::numeric_limits<int64_t>::max(), leave = -1;
    for (size_t k = 0; k < cycle.size(); k += 2) {  // the minus cells
      if (basis.flow[cycle[k]] < theta) theta = basis.flow[cycle[k]], leave = static_cast<int64_t>(k);
    }
    for (size_t k = 0; k < cycle.size(); ++k) basis.flow[cycle[k]] += (k % 2 == 0 ? -theta : theta);
    const int64_t out = cycle[leave];
    basis.row[out] = a, basis.col[out] = enter % m, basis.flow[out] = theta;
  }
}

}  // namespace ffnshape::geometry::detail
