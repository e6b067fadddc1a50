// Writes model files for the tests, straight from the layout documented in
// cpp/src/model/model_file.cpp (a second, independent writer: web/model/pack.js is the first).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "attnlens/model/model_file.hpp"
#include "attnlens/span.hpp"

namespace model_support {

struct Tensor {
  std::string name;
  std::vector<std::uint32_t> shape;
  std::vector<float> values;
};

// Bytes in float storage, so that they are 4-byte aligned like a malloc'ed buffer.
struct FileBytes {
  std::vector<float> storage;
  std::size_t size = 0;
  std::uint8_t* data() { return reinterpret_cast<std::uint8_t*>(storage.data()); }
  attnlens::Span<const std::uint8_t> span() const {
    return {reinterpret_cast<const std::uint8_t*>(storage.data()), size};
  }
  void resize(std::size_t n) {
    storage.resize(n / 4 + 1);
    size = n;
  }
};

class ModelWriter {
 public:
  std::vector<std::string> pieces;
  std::vector<double> scores;
  std::vector<Tensor> tensors;

  void add(std::string name, std::vector<std::uint32_t> shape, std::vector<float> values) {
    tensors.push_back({std::move(name), std::move(shape), std::move(values)});
  }

  FileBytes write() const {
    auto align16 = [](std::size_t n) { return (n + 15) / 16 * 16; };
    std::size_t text = 0;
    for (const auto& p : pieces) text += p.size();
    const std::size_t scores_at = 32 + 64 * tensors.size();
    const std::size_t lengths_at = scores_at + 8 * pieces.size();
    const std::size_t text_at = lengths_at + 4 * pieces.size();
    std::vector<std::size_t> offsets;
    std::size_t at = text_at + text;
    for (const auto& t : tensors) {
      offsets.push_back(align16(at));
      at = offsets.back() + 4 * t.values.size();
    }
    FileBytes f;
    f.resize(at);
    std::uint8_t* b = f.data();
    std::memset(b, 0, at);
    auto put32 = [&](std::size_t o, std::uint32_t v) { std::memcpy(b + o, &v, 4); };  // little-endian hosts
    std::memcpy(b, "ATNLMODL", 8);
    put32(8, 1);
    put32(16, static_cast<std::uint32_t>(at));
    put32(20, static_cast<std::uint32_t>(tensors.size()));
    put32(24, static_cast<std::uint32_t>(pieces.size()));
    put32(28, static_cast<std::uint32_t>(text));
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::size_t r = 32 + 64 * i;
      std::memcpy(b + r, tensors[i].name.data(), tensors[i].name.size());
      put32(r + 40, static_cast<std::uint32_t>(tensors[i].shape.size()));
      for (std::size_t d = 0; d < tensors[i].shape.size(); ++d) put32(r + 44 + 4 * d, tensors[i].shape[d]);
      put32(r + 60, static_cast<std::uint32_t>(offsets[i]));
      std::memcpy(b + offsets[i], tensors[i].values.data(), 4 * tensors[i].values.size());
    }
    std::size_t t = text_at;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      std::memcpy(b + scores_at + 8 * i, &scores[i], 8);
      put32(lengths_at + 4 * i, static_cast<std::uint32_t>(pieces[i].size()));
      std::memcpy(b + t, pieces[i].data(), pieces[i].size());
      t += pieces[i].size();
    }
    seal(f);
    return f;
  }

  // Recomputes the checksum after a test edits the bytes on purpose.
  static void seal(FileBytes& f) {
    const std::uint32_t crc = attnlens::model::crc32(f.data() + 16, f.size - 16);
    std::memcpy(f.data() + 12, &crc, 4);
  }
};

}  // namespace model_support
