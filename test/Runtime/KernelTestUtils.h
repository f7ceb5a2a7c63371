// Helpers of the kernel tests: seeded random tensors and a central finite-difference check.
#ifndef ZRT_TEST_KERNELTESTUTILS_H
#define ZRT_TEST_KERNELTESTUTILS_H

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace zrt::test {

using Vec = std::vector<double>;

inline Vec randomVec(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Vec v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

template <class T> std::vector<T> convert(const Vec &v) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = T(static_cast<float>(v[i]));
  return out;
}

template <class T> Vec toDouble(const std::vector<T> &v) {
  Vec out(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = static_cast<double>(static_cast<float>(v[i]));
  return out;
}

/// Checks `grads` (the backward kernel's d loss / d inputs[which] with
/// d loss / d output = weights) against central differences of
/// loss(inputs) = sum(weights * forward(inputs)), in f64, on up to
/// `maxProbes` elements of each input spread over the whole tensor.
inline void expectGradientsMatch(const std::string &what, std::vector<Vec> inputs,
                                 const std::function<Vec(const std::vector<Vec> &)> &forward,
                                 const Vec &weights, const std::vector<Vec> &grads,
                                 const std::vector<int> &which, size_t maxProbes = 48,
                                 double h = 1e-5, double tol = 1e-6) {
  auto loss = [&](const std::vector<Vec> &in) {
    Vec y = forward(in);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i)
      s += weights[i] * y[i];
    return s;
  };
  ASSERT_EQ(grads.size(), which.size());
  for (size_t g = 0; g < which.size(); ++g) {
    Vec &x = inputs[which[g]];
    ASSERT_EQ(grads[g].size(), x.size()) << what << ": gradient size of input " << which[g];
    size_t stride = std::max<size_t>(1, x.size() / maxProbes);
    for (size_t j = 0; j < x.size(); j += stride) {
      double saved = x[j];
      x[j] = saved + h;
      double up = loss(inputs);
      x[j] = saved - h;
      double down = loss(inputs);
      x[j] = saved;
      double numeric = (up - down) / (2 * h);
      EXPECT_NEAR(grads[g][j], numeric, tol + 1e-5 * std::fabs(numeric))
          << what << ": d/d input " << which[g] << "[" << j << "]";
    }
  }
}

/// Largest |a - b| / (atol + rtol |b|); <= 1 means within tolerance everywhere.
inline double worstRelativeError(const Vec &a, const Vec &b, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::fabs(a[i] - b[i]) / (atol + rtol * std::fabs(b[i])));
  return worst;
}

} // namespace zrt::test

#endif // ZRT_TEST_KERNELTESTUTILS_H
