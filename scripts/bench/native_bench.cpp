// Native build of the same kernels (AVX2/AVX-512 with -march=native): attention GFLOP/s for
// d = 64, h ∈ {1, 8}, n ∈ {128 … 2048}, output-only (streaming) and with weights, one thread.
// Built by CMake as .build/native/attnlens_bench_native; npm run bench runs it when present.
// Usage: attnlens_bench_native [runs] [n,n,...] [h,h,...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attnlens/attention.hpp"
#include "attnlens/kernel.hpp"

namespace {

std::vector<std::size_t> list(const char* s, std::vector<std::size_t> fallback) {
  if (!s) return fallback;
  std::vector<std::size_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoul(item));
  return out;
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x.size() % 2 ? x[x.size() / 2] : (x[x.size() / 2 - 1] + x[x.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 7;
  const auto sizes = list(argc > 2 ? argv[2] : nullptr, {128, 256, 512, 1024, 2048});
  const auto heads = list(argc > 3 ? argv[3] : nullptr, {1, 8});
  const std::size_t d = 64;
  std::printf("native (%s kernels, one thread), d = 64, median of %d runs\n\n",
              attnlens::simd_arch_name(), runs);
  std::printf("| h | n | output only ms | GFLOP/s | with weights ms | GFLOP/s |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  std::vector<std::string> json;
  for (std::size_t h : heads)
    for (std::size_t n : sizes) {
      std::mt19937 rng(unsigned(1000 * h + n));
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> q(h * n * d), k(q.size()), v(q.size()), o(q.size()), w(h * n * n);
      for (auto* x : {&q, &k, &v})
        for (auto& e : *x) e = dist(rng);
      const attnlens::AttentionShape shape{h, n, n, d, d};
      double ms[2];
      for (int with_weights = 0; with_weights < 2; ++with_weights) {
        const attnlens::AttentionOutputs out{o, with_weights ? attnlens::Span<float>(w)
                                                             : attnlens::Span<float>(), {}};
        std::vector<double> t;
        for (int r = 0; r < runs + 2; ++r) {
          const auto start = std::chrono::steady_clock::now();
          attnlens::attention(shape, {q, k, v}, {}, out);
          const std::chrono::duration<double, std::milli> took =
              std::chrono::steady_clock::now() - start;
          if (r >= 2) t.push_back(took.count());  // two warm-up calls
        }
        ms[with_weights] = median(t);
      }
      const double flops = 4.0 * h * n * n * d;
      std::printf("| %zu | %zu | %.2f | %.1f | %.2f | %.1f |\n", h, n, ms[0], flops / ms[0] / 1e6,
                  ms[1], flops / ms[1] / 1e6);
      char line[256];
      std::snprintf(line, sizeof line,
                    "{\"kind\":\"native\",\"arch\":\"%s\",\"h\":%zu,\"n\":%zu,\"d\":64,"
                    "\"ms_output_only\":%.4f,\"ms_with_weights\":%.4f,\"gflops_output_only\":%.3f,"
                    "\"gflops_with_weights\":%.3f,\"runs\":%d}",
                    attnlens::simd_arch_name(), h, n, ms[0], ms[1], flops / ms[0] / 1e6,
                    flops / ms[1] / 1e6, runs);
      json.push_back(line);
    }
  std::printf("\n");
  for (const auto& line : json) std::printf("%s\n", line.c_str());
}
