// The Unicode data behind nfkc(), generated at build time by scripts/model/gen_nfkc.py into the
// build tree (third-party data is never committed). Every table is sorted by its first field.
#pragma once
#include <cstddef>
#include <cstdint>

namespace attnlens::model::nfkc_tables {

struct Decomposition {
  char32_t code_point;
  std::uint16_t offset;  // into decomposition_data
  std::uint8_t length;
};

struct CombiningClass {
  char32_t code_point;
  std::uint8_t ccc;
};

struct Composition {
  char32_t first, second, composite;
};

extern const char unicode_version[];
extern const Decomposition decompositions[];
extern const std::size_t decomposition_count;
extern const char32_t decomposition_data[];
extern const CombiningClass combining_classes[];
extern const std::size_t combining_class_count;
extern const Composition compositions[];
extern const std::size_t composition_count;

}  // namespace attnlens::model::nfkc_tables
