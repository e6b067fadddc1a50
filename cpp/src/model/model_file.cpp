// Layout of a model file (little-endian; every offset from the start of the file):
//   0   char[8]  magic "ATNLMODL"
//   8   u32      format version (1)
//   12  u32      CRC-32 of bytes [16, size)
//   16  u32      size of the whole file in bytes
//   20  u32      T, number of tensors
//   24  u32      V, vocabulary size
//   28  u32      B, bytes of vocabulary text
//   32  T records of 64 bytes: char name[40] (NUL-padded), u32 rank (0..4), u32 dims[4],
//       u32 offset of the float32 data (a multiple of 16)
//   then f64 scores[V], u32 piece_bytes[V], the V pieces' UTF-8 text (B bytes),
//   then the tensor data, in record order, each 16-byte aligned, up to the end of the file.
#include "attnlens/model/model_file.hpp"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace attnlens::model {

namespace {

constexpr std::size_t kHeaderBytes = 32, kRecordBytes = 64, kNameBytes = 40, kMaxRank = 4;

using CrcTables = std::array<std::array<std::uint32_t, 256>, 8>;

constexpr CrcTables make_crc_tables() {
  CrcTables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s)
    for (std::size_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}
constexpr CrcTables kCrc = make_crc_tables();

std::uint32_t u32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16 |
         std::uint32_t(p[3]) << 24;
}

double f64(const std::uint8_t* p) {
  std::uint64_t bits = 0;
  for (int i = 7; i >= 0; --i) bits = bits << 8 | p[i];
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

std::string num(std::size_t n) { return std::to_string(n); }

}  // namespace

// Slicing-by-8: eight table lookups per 8 bytes, fast enough to check 28 MB on every load.
std::uint32_t crc32(const std::uint8_t* p, std::size_t n, std::uint32_t crc) {
  crc = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    const std::uint32_t a = crc ^ u32(p), b = u32(p + 4);
    crc = kCrc[7][a & 0xFF] ^ kCrc[6][(a >> 8) & 0xFF] ^ kCrc[5][(a >> 16) & 0xFF] ^
          kCrc[4][a >> 24] ^ kCrc[3][b & 0xFF] ^ kCrc[2][(b >> 8) & 0xFF] ^
          kCrc[1][(b >> 16) & 0xFF] ^ kCrc[0][b >> 24];
  }
  for (; n > 0; --n, ++p) crc = kCrc[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

const TensorView* ModelFile::find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

std::string parse_model_file(Span<const std::uint8_t> bytes, ModelFile& out) {
  out = {};
  const std::uint8_t* b = bytes.data;
  const std::size_t size = bytes.size;
  if (size < sizeof kModelFileMagic || std::memcmp(b, kModelFileMagic, sizeof kModelFileMagic) != 0)
    return "not an attnlens model file (" + num(size) +
           " bytes without the ATNLMODL signature): pass the file written by the build "
           "(web/dist/use-lite.bin) or the model's TF.js files";
  if (size < kHeaderBytes)
    return "the model file is truncated: " + num(size) + " bytes, not even its header";
  if (reinterpret_cast<std::uintptr_t>(b) % alignof(float) != 0)
    return "the model file's bytes must be 4-byte aligned in memory (the weights are read in place)";
  if (u32(b + 8) != kModelFileVersion)
    return "unsupported model file version " + num(u32(b + 8)) + " (this build reads version " +
           num(kModelFileVersion) + ")";
  const std::size_t declared = u32(b + 16);
  if (size < declared)
    return "the model file is truncated: " + num(size) + " of " + num(declared) + " bytes";
  if (size > declared)
    return "the model file has " + num(size - declared) + " unexpected bytes after its end (" +
           num(declared) + " bytes)";
  if (crc32(b + 16, size - 16) != u32(b + 12))
    return "the model file is corrupt: its checksum does not match its contents";

  const std::size_t tensors = u32(b + 20), vocab = u32(b + 24), text_bytes = u32(b + 28);
  // Sizes come from a checksummed header, but a well-formed file from a buggy writer must still
  // not make us read out of bounds: check every extent against the file size.
  auto fits = [&](std::size_t offset, std::size_t count, std::size_t unit) {
    return offset <= size && count <= (size - offset) / unit;
  };
  if (!fits(kHeaderBytes, tensors, kRecordBytes)) return "the model file's tensor table overruns it";
  const std::size_t scores_at = kHeaderBytes + tensors * kRecordBytes;
  if (!fits(scores_at, vocab, 12)) return "the model file's vocabulary overruns it";
  const std::size_t lengths_at = scores_at + 8 * vocab, text_at = lengths_at + 4 * vocab;
  if (!fits(text_at, text_bytes, 1)) return "the model file's vocabulary text overruns it";

  out.pieces.reserve(vocab);
  out.scores.reserve(vocab);
  std::size_t text_used = 0;
  for (std::size_t i = 0; i < vocab; ++i) {
    const std::size_t length = u32(b + lengths_at + 4 * i);
    if (length > text_bytes - text_used) return "the model file's vocabulary pieces overrun their text";
    out.pieces.emplace_back(reinterpret_cast<const char*>(b + text_at + text_used), length);
    text_used += length;
    const double score = f64(b + scores_at + 8 * i);
    if (!std::isfinite(score)) return "vocabulary score " + num(i) + " is not a finite number";
    out.scores.push_back(score);
  }
  if (text_used != text_bytes) return "the model file's vocabulary text has unused bytes";

  std::size_t data_end = text_at + text_bytes;
  for (std::size_t i = 0; i < tensors; ++i) {
    const std::uint8_t* r = b + kHeaderBytes + i * kRecordBytes;
    TensorView t;
    const char* name = reinterpret_cast<const char*>(r);
    t.name.assign(name, strnlen(name, kNameBytes));
    if (t.name.empty() || t.name.size() == kNameBytes) return "tensor " + num(i) + " has a bad name";
    if (out.find(t.name)) return "tensor '" + t.name + "' appears twice";
    const std::size_t rank = u32(r + 40);
    if (rank > kMaxRank) return "tensor '" + t.name + "' has rank " + num(rank);
    t.size = 1;
    for (std::size_t d = 0; d < rank; ++d) {
      const std::size_t dim = u32(r + 44 + 4 * d);
      if (dim == 0 || t.size > std::numeric_limits<std::uint32_t>::max() / dim)
        return "tensor '" + t.name + "' has a bad shape";
      t.shape.push_back(dim);
      t.size *= dim;
    }
    const std::size_t offset = u32(r + 60);
    if (offset % 16 != 0 || offset < data_end || !fits(offset, t.size, sizeof(float)))
      return "tensor '" + t.name + "' lies outside its place in the model file";
    t.data = reinterpret_cast<const float*>(b + offset);
    data_end = offset + t.size * sizeof(float);
    out.tensors.push_back(std::move(t));
  }
  return {};
}

}  // namespace attnlens::model
