// test_util.h — comparisons that print the worst difference (llm.c style).
#pragma once
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <sstream>

namespace statescope::test {

// Passes when |a - b| <= tol * (1 + |b|) everywhere; reports the worst absolute difference.
inline ::testing::AssertionResult close(const torch::Tensor& a, const torch::Tensor& b, double tol,
                                        const std::string& what = "") {
  if (!a.sizes().equals(b.sizes())) {
    std::ostringstream s;
    s << what << ": shape " << a.sizes() << " vs " << b.sizes();
    return ::testing::AssertionFailure() << s.str();
  }
  if (a.numel() == 0) return ::testing::AssertionSuccess();
  auto A = a.detach().to(torch::kFloat64), B = b.detach().to(torch::kFloat64);
  auto diff = (A - B).abs();
  auto bound = tol * (1 + B.abs());
  const double worst = diff.max().item<double>();
  const double excess = (diff - bound).max().item<double>();
  if (!std::isfinite(worst) || excess > 0)
    return ::testing::AssertionFailure() << what << ": worst |diff| " << worst << " exceeds tol " << tol
                                         << " (max |ref| " << B.abs().max().item<double>() << ")";
  return ::testing::AssertionSuccess() << what << ": worst |diff| " << worst;
}

}  // namespace statescope::test
