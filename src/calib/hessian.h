// calib/hessian.h: the input second-moment matrix H = X^T X / n of every
// linear of the decoder blocks over calibration rows: what GPTQ minimizes
// the layer output's error under (quant/gptq.h). Linears that read the same
// input in a row (Q/K/V, gate/up) share one matrix: the first of them
// accumulates it, the others only point at it (found on the first forward:
// consecutive observations of the same buffer and shape).
//
// Memory: cols^2 doubles per distinct input (SmolLM2-135M: ~0.8 GB).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/model.h"

namespace folio::calib {

class HessianCollector : public model::LinearInputObserver {
 public:
  void observe(std::string_view weight_name, const float* x, std::size_t rows,
               std::size_t cols) override;

  // H / n (cols x cols, symmetric, row-major) for `weight_name`; empty when
  // it was never observed.
  std::vector<double> hessian(std::string_view weight_name) const;
  // Rows seen by `weight_name`'s input (0 when never observed).
  std::uint64_t rows(std::string_view weight_name) const;
  // Per input column, mean |x| (AWQ's activation scale); empty when never observed.
  std::vector<float> mean_abs(std::string_view weight_name) const;
  std::size_t distinct_inputs() const { return groups_.size(); }

 private:
  struct Group {
    std::size_t cols = 0;
    std::vector<double> sum;      // upper triangle of sum x x^T
    std::vector<double> sum_abs;  // sum |x| per column
    std::uint64_t rows = 0;
  };
  struct Member {
    std::size_t group;
    bool leader;  // accumulates; the others share its input
  };
  std::vector<std::unique_ptr<Group>> groups_;
  std::map<std::string, Member, std::less<>> members_;
  const float* last_x_ = nullptr;
  std::size_t last_rows_ = 0, last_cols_ = 0, last_group_ = 0;
  std::vector<float> scratch_;  // one call's X^T X
};

}  // namespace folio::calib
