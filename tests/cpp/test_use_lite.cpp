// The USE-lite forward pass on a small random model with the real model's structure (two layers,
// four heads, a projected residual in layer 0), against a float64 reference written out plainly
// here. The JavaScript golden test checks the real weights against TF.js.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attnlens/model/use_lite.hpp"
#include "model_support.hpp"
#include "support.hpp"

using attnlens::model::ModelFile;
using attnlens::model::UseLite;
using attnlens::model::UseLiteOutput;
using model_support::FileBytes;
using model_support::ModelWriter;
using Matrix = std::vector<double>;

namespace {

const std::string M = "\xE2\x96\x81";
constexpr std::size_t kEmbed = 8, kVocabRows = 16;
struct Dims {
  std::size_t in, attn, out, ff;
};
constexpr Dims kLayers[2] = {{8, 8, 12, 10}, {12, 12, 12, 6}};

ModelWriter random_model() {
  ModelWriter w;
  w.pieces = {"\xEF\xBF\xBD", "<s>", "</s>", "x1", "x2", "x3", M, "a", "b", M + "a", M + "b", "c"};
  w.scores = {0, 0, 0, 0, 0, 0, -1, -2, -2, -1.5, -1.5, -3};
  std::uint32_t seed = 1;
  auto add = [&](const std::string& name, std::vector<std::uint32_t> shape, float lo = -0.5f,
                 float hi = 0.5f) {
    std::size_t n = 1;
    for (auto d : shape) n *= d;
    w.add(name, shape, support::uniform(n, seed++, lo, hi));
  };
  add("embed", {kVocabRows, kEmbed});
  add("timing.inv", {kEmbed / 2}, 0.01f, 1.0f);
  w.add("ln.eps", {1}, {1e-6f});
  w.add("l2.eps", {1}, {1e-12f});
  for (std::size_t l = 0; l < 2; ++l) {
    const Dims d = kLayers[l];
    const auto u = [](std::size_t x) { return static_cast<std::uint32_t>(x); };
    const std::string p = "l" + std::to_string(l) + ".";
    add(p + "ln1.scale", {u(d.in)}, 0.5f, 1.5f);
    add(p + "ln1.bias", {u(d.in)});
    add(p + "qkv.w", {u(d.in), u(3 * d.attn)});
    add(p + "qkv.b", {u(3 * d.attn)});
    w.add(p + "q.scale", {1}, {1.0f / std::sqrt(static_cast<float>(d.attn / 4))});
    add(p + "out.w", {u(d.attn), u(d.out)});
    add(p + "out.b", {u(d.out)});
    if (l == 0) {
      add(p + "res.w", {u(d.in), u(d.out)});
      add(p + "res.b", {u(d.out)});
    }
    add(p + "ln2.scale", {u(d.out)}, 0.5f, 1.5f);
    add(p + "ln2.bias", {u(d.out)});
    add(p + "ffn1.w", {u(d.out), u(d.ff)});
    add(p + "ffn1.b", {u(d.ff)});
    add(p + "ffn2.w", {u(d.ff), u(d.out)});
    add(p + "ffn2.b", {u(d.out)});
  }
  add("pool.w", {static_cast<std::uint32_t>(kLayers[1].out), 512});
  add("pool.b", {512});
  return w;
}

// ---- float64 reference ----------------------------------------------------------------------

struct Reference {
  const ModelFile& f;
  const float* t(const std::string& name) const { return f.find(name)->data; }

  Matrix dense(const Matrix& x, std::size_t rows, std::size_t in, std::size_t out,
               const std::string& w, const std::string& b) const {
    Matrix y(rows * out);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < out; ++j) {
        double s = t(b)[j];
        for (std::size_t k = 0; k < in; ++k) s += x[i * in + k] * t(w)[k * out + j];
        y[i * out + j] = s;
      }
    return y;
  }
  Matrix norm(const Matrix& x, std::size_t rows, std::size_t d, const std::string& p) const {
    Matrix y(x.size());
    for (std::size_t i = 0; i < rows; ++i) {
      double mean = 0, var = 0;
      for (std::size_t j = 0; j < d; ++j) mean += x[i * d + j] / d;
      for (std::size_t j = 0; j < d; ++j) var += (x[i * d + j] - mean) * (x[i * d + j] - mean) / d;
      for (std::size_t j = 0; j < d; ++j)
        y[i * d + j] = (x[i * d + j] - mean) / std::sqrt(var + 1e-6) * t(p + ".scale")[j] + t(p + ".bias")[j];
    }
    return y;
  }

  // Returns the embedding; fills `attention` per layer [heads, n, n].
  Matrix run(const std::vector<std::int32_t>& ids, std::vector<Matrix>& attention) const {
    const std::size_t n = ids.size();
    Matrix x(n * kEmbed);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < kEmbed; ++j) {
        const std::size_t half = kEmbed / 2, k = j % half;
        const double angle = double(i) * t("timing.inv")[k];
        x[i * kEmbed + j] = 2 * t("embed")[ids[i] * kEmbed + j] + (j < half ? std::sin(angle) : std::cos(angle));
      }
    for (std::size_t l = 0; l < 2; ++l) {
      const Dims d = kLayers[l];
      const std::string p = "l" + std::to_string(l) + ".";
      const Matrix qkv = dense(norm(x, n, d.in, p + "ln1"), n, d.in, 3 * d.attn, p + "qkv.w", p + "qkv.b");
      const std::size_t dh = d.attn / 4;
      Matrix heads(n * d.attn), w(4 * n * n);
      for (std::size_t h = 0; h < 4; ++h)
        for (std::size_t i = 0; i < n; ++i) {
          double mx = -1e300;
          for (std::size_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::size_t c = 0; c < dh; ++c)
              s += qkv[i * 3 * d.attn + h * dh + c] * qkv[j * 3 * d.attn + d.attn + h * dh + c];
            w[(h * n + i) * n + j] = s * t(p + "q.scale")[0];
            mx = std::max(mx, w[(h * n + i) * n + j]);
          }
          double sum = 0;
          for (std::size_t j = 0; j < n; ++j) sum += (w[(h * n + i) * n + j] = std::exp(w[(h * n + i) * n + j] - mx));
          for (std::size_t j = 0; j < n; ++j) w[(h * n + i) * n + j] /= sum;
          for (std::size_t c = 0; c < dh; ++c) {
            double o = 0;
            for (std::size_t j = 0; j < n; ++j)
              o += w[(h * n + i) * n + j] * qkv[j * 3 * d.attn + 2 * d.attn + h * dh + c];
            heads[i * d.attn + h * dh + c] = o;
          }
        }
      attention.push_back(w);
      Matrix y = dense(heads, n, d.attn, d.out, p + "out.w", p + "out.b");
      const Matrix r = l == 0 ? dense(x, n, d.in, d.out, p + "res.w", p + "res.b") : x;
      for (std::size_t i = 0; i < y.size(); ++i) y[i] += r[i];
      Matrix h1 = dense(norm(y, n, d.out, p + "ln2"), n, d.out, d.ff, p + "ffn1.w", p + "ffn1.b");
      for (double& v : h1) v = std::max(v, 0.0);
      x = dense(h1, n, d.ff, d.out, p + "ffn2.w", p + "ffn2.b");
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += y[i];
    }
    const std::size_t dl = kLayers[1].out;
    Matrix mean(dl, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < dl; ++j) mean[j] += x[i * dl + j] / n;
    Matrix e = dense(mean, 1, dl, 512, "pool.w", "pool.b");
    double norm2 = 0;
    for (double& v : e) {
      v = std::tanh(v);
      norm2 += v * v;
    }
    for (double& v : e) v /= std::sqrt(norm2);
    return e;
  }
};

double max_abs(const std::vector<float>& got, const Matrix& want) {
  REQUIRE(got.size() == want.size());
  double m = 0;
  for (std::size_t i = 0; i < got.size(); ++i) m = std::max(m, std::abs(got[i] - want[i]));
  return m;
}

}  // namespace

TEST_CASE("the forward pass matches a float64 reference") {
  const FileBytes bytes = random_model().write();
  ModelFile file;
  REQUIRE(attnlens::model::parse_model_file(bytes.span(), file) == "");
  UseLite model;
  REQUIRE(model.load(file) == "");
  const Reference ref{file};
  for (const char* text : {"a", "ab ba", "abcab cc a b", "ba ab ba ab ba ab ba ab ba ab c"}) {
    for (auto kernel : support::kernels()) {
      CAPTURE(text);
      CAPTURE(support::name(kernel));
      UseLiteOutput out;
      REQUIRE(model.run(text, out, kernel) == "");
      const std::size_t n = out.tokens;
      REQUIRE(n == out.encoding.ids.size());
      std::vector<Matrix> attention;
      const Matrix e = ref.run(out.encoding.ids, attention);
      for (std::size_t l = 0; l < 2; ++l) {
        CHECK(max_abs(out.attention[l], attention[l]) < 1e-5);
        for (std::size_t r = 0; r < 4 * n; ++r) {
          double sum = 0;
          for (std::size_t j = 0; j < n; ++j) sum += out.attention[l][r * n + j];
          CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }
      }
      CHECK(max_abs(out.embedding, e) < 1e-5);
    }
  }
}

TEST_CASE("runs are repeatable and reuse their buffers") {
  const FileBytes bytes = random_model().write();
  ModelFile file;
  REQUIRE(attnlens::model::parse_model_file(bytes.span(), file) == "");
  UseLite model;
  REQUIRE(model.load(file) == "");
  UseLiteOutput a, b;
  REQUIRE(model.run("ab ab c", a) == "");
  REQUIRE(model.run("a much longer text: ab ab ab ab ab ab", b) == "");  // other sizes between
  REQUIRE(model.run("ab ab c", b) == "");
  CHECK(a.encoding.ids == b.encoding.ids);
  CHECK(a.attention == b.attention);
  CHECK(a.embedding == b.embedding);
}

TEST_CASE("empty text is an error; long text is clipped to 128 tokens") {
  const FileBytes bytes = random_model().write();
  ModelFile file;
  REQUIRE(attnlens::model::parse_model_file(bytes.span(), file) == "");
  UseLite model;
  REQUIRE(model.load(file) == "");
  UseLiteOutput out;
  CHECK(support::contains(model.run("", out), "empty"));
  std::string text = "a";
  for (int i = 0; i < 200; ++i) text += " a";
  REQUIRE(model.run(text, out) == "");
  CHECK(out.tokens == 128);
  CHECK(out.encoding.clipped);
  CHECK(out.encoding.total == 201);
  CHECK(out.attention[1].size() == 4 * 128 * 128);
}

TEST_CASE("a model file without the expected tensors is rejected with a message") {
  auto load = [](const ModelWriter& w) {
    const FileBytes bytes = w.write();
    ModelFile file;
    REQUIRE(attnlens::model::parse_model_file(bytes.span(), file) == "");
    UseLite model;
    return model.load(file);
  };
  CHECK(load(random_model()) == "");
  SUBCASE("missing") {
    ModelWriter w = random_model();
    for (std::size_t i = 0; i < w.tensors.size(); ++i)
      if (w.tensors[i].name == "l1.ffn2.b") w.tensors.erase(w.tensors.begin() + long(i));
    CHECK(support::contains(load(w), "no tensor 'l1.ffn2.b'"));
  }
  SUBCASE("wrong shape") {
    ModelWriter w = random_model();
    for (auto& t : w.tensors)
      if (t.name == "l0.out.b") t = {t.name, {13}, std::vector<float>(13, 0.0f)};
    CHECK(support::contains(load(w), "'l0.out.b' has shape [13], expected [12]"));
  }
  SUBCASE("not finite") {
    ModelWriter w = random_model();
    for (auto& t : w.tensors)
      if (t.name == "pool.w") t.values[7] = std::nanf("");
    CHECK(support::contains(load(w), "'pool.w' holds a non-finite value at index 7"));
  }
  SUBCASE("a vocabulary larger than the embedding table") {
    ModelWriter w = random_model();
    for (int i = 0; i < 10; ++i) {
      w.pieces.push_back("z" + std::to_string(i));
      w.scores.push_back(-9);
    }
    CHECK(support::contains(load(w), "embedding table has 16 rows"));
  }
}
