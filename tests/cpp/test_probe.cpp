// The ceiling probe (a benchmarking aid): both chain kinds run the arithmetic they claim. Each
// chain converges to b / (1 − a) = 1 whatever it starts from, so after enough steps the checksum
// of 12 chains × 4 lanes is 48, for mul+add and fused multiply-add alike; after one step it is
// the float64 value of one step of every lane.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <stdexcept>

#include "attnlens/probe.hpp"

TEST_CASE("ceiling probe: mul+add and fused chains compute x <- 0.999 x + 0.001") {
  using attnlens::ProbeOp;
  double one_step = 0;
  for (int c = 0; c < 12; ++c)
    for (int lane = 0; lane < 4; ++lane) one_step += 0.999 * (0.01 * c + lane) + 1e-3;
  for (ProbeOp op : {ProbeOp::mul_add, ProbeOp::fma}) {
    CAPTURE(static_cast<int>(op));
    CHECK(std::fabs(attnlens::ceiling_probe(1, op) - one_step) < 1e-3);
    CHECK(std::fabs(attnlens::ceiling_probe(30000, op) - 48.0) < 1e-2);
  }
  CHECK(attnlens::ceiling_probe_flops(10) == 960.0);
  // Every chain count runs that many chains (each converges to 4 lanes × 1).
  for (int chains : {8, 12, 16, 24}) {
    CAPTURE(chains);
    double first = 0;
    for (int c = 0; c < chains; ++c)
      for (int lane = 0; lane < 4; ++lane) first += 0.999 * (0.01 * c + lane) + 1e-3;
    for (ProbeOp op : {ProbeOp::mul_add, ProbeOp::fma}) {
      CHECK(std::fabs(attnlens::ceiling_probe(1, op, chains) - first) < 1e-3);
      CHECK(std::fabs(attnlens::ceiling_probe(30000, op, chains) - 4.0 * chains) < 1e-2);
    }
    CHECK(attnlens::ceiling_probe_flops(10, chains) == 80.0 * chains);
  }
  CHECK_THROWS_AS(attnlens::ceiling_probe(1, ProbeOp::mul_add, 10), std::invalid_argument);
#if defined(__wasm_relaxed_simd__)
  CHECK(attnlens::probe_has_fma());
#elif defined(__wasm__)
  CHECK_FALSE(attnlens::probe_has_fma());
#endif
}
