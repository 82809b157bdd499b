// calib/hessian.cpp: per-input second-moment matrices (see hessian.h).
#include "calib/hessian.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "base/error.h"

namespace folio::calib {

void HessianCollector::observe(std::string_view weight_name, const float* x, std::size_t rows,
                               std::size_t cols) {
  auto it = members_.find(weight_name);
  if (it == members_.end()) {
    const bool shares =
        x == last_x_ && rows == last_rows_ && cols == last_cols_ && !groups_.empty();
    if (shares) {
      it = members_.emplace(std::string(weight_name), Member{last_group_, false}).first;
    } else {
      groups_.push_back(std::make_unique<Group>());
      groups_.back()->cols = cols;
      groups_.back()->sum.assign(cols * cols, 0.0);
      groups_.back()->sum_abs.assign(cols, 0.0);
      it = members_.emplace(std::string(weight_name), Member{groups_.size() - 1, true}).first;
    }
  }
  last_x_ = x;
  last_rows_ = rows;
  last_cols_ = cols;
  last_group_ = it->second.group;
  if (!it->second.leader) return;
  Group& g = *groups_[it->second.group];
  if (g.cols != cols) {
    throw Error("hessian: " + std::string(weight_name) + " had " + std::to_string(g.cols) +
                " input columns, now " + std::to_string(cols));
  }
  // Upper triangle of X^T X for this call in float (at most a batch of rows,
  // so float sums are exact enough), rows of it split over threads, then
  // added into the double totals. Interleaved rows balance the triangle.
  const std::size_t n_threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  scratch_.assign(cols * cols, 0.0f);
  const auto work = [&](std::size_t t) {
    for (std::size_t i = t; i < cols; i += n_threads) {
      float* s = &scratch_[i * cols];
      for (std::size_t r = 0; r < rows; ++r) {
        const float* row = x + r * cols;
        const float xi = row[i];
        if (xi == 0.0f) continue;
        for (std::size_t j = i; j < cols; ++j) s[j] += xi * row[j];
      }
      double* h = &g.sum[i * cols];
      for (std::size_t j = i; j < cols; ++j) h[j] += static_cast<double>(s[j]);
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < n_threads; ++t) pool.emplace_back(work, t);
    work(0);
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    for (std::size_t j = 0; j < cols; ++j) g.sum_abs[j] += std::fabs(static_cast<double>(row[j]));
  }
  g.rows += rows;
}

std::vector<double> HessianCollector::hessian(std::string_view weight_name) const {
  const auto it = members_.find(weight_name);
  if (it == members_.end()) return {};
  const Group& g = *groups_[it->second.group];
  if (g.rows == 0) return {};
  const std::size_t n = g.cols;
  std::vector<double> h(n * n);
  const double inv = 1.0 / static_cast<double>(g.rows);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i; j < n; ++j) {
      h[i * n + j] = g.sum[i * n + j] * inv;
      h[j * n + i] = h[i * n + j];
    }
  }
  return h;
}

std::vector<float> HessianCollector::mean_abs(std::string_view weight_name) const {
  const auto it = members_.find(weight_name);
  if (it == members_.end() || groups_[it->second.group]->rows == 0) return {};
  const Group& g = *groups_[it->second.group];
  std::vector<float> out(g.cols);
  for (std::size_t j = 0; j < g.cols; ++j) {
    out[j] = static_cast<float>(g.sum_abs[j] / static_cast<double>(g.rows));
  }
  return out;
}

std::uint64_t HessianCollector::rows(std::string_view weight_name) const {
  const auto it = members_.find(weight_name);
  return it == members_.end() ? 0 : groups_[it->second.group]->rows;
}

}  // namespace folio::calib
