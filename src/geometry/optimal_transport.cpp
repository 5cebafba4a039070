#include "optimal_transport.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
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

TransportPlan comonotone_transport(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<int64_t>(x.size()), m = static_cast<int64_t>(y.size());
  if (n < 1 || m < 1) throw std::invalid_argument("optimal transport needs at least one row and one column");
  auto decreasing = [](const std::vector<double>& values) {
    std::vector<int64_t> order(values.size());
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return values[a] > values[b]; });
    return order;
  };
  const auto rows = decreasing(x), cols = decreasing(y);
  const int64_t g = std::gcd(n, m);
  int64_t supply = m / g, demand = n / g;  // integer units, as in uniform_transport
  const double unit = 1.0 / static_cast<double>(n * (m / g));
  TransportPlan plan;
  plan.rows = n, plan.cols = m;
  plan.mass.assign(static_cast<size_t>(n * m), 0.0);
  for (int64_t r = 0, c = 0; r < n && c < m;) {
    const int64_t amount = std::min(supply, demand);
    plan.mass[rows[r] * m + cols[c]] += static_cast<double>(amount) * unit;
    supply -= amount, demand -= amount;
    if (supply == 0) ++r, supply = m / g;
    if (demand == 0) ++c, demand = n / g;
  }
  return plan;
}

}  // namespace ffnshape::geometry::detail
