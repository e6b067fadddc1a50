// The model file parser: well-formed files are read in place; truncated, corrupt or malformed
// ones give a message saying what is wrong, never a crash.
#include <doctest/doctest.h>

#include <cstring>

#include "model_support.hpp"
#include "support.hpp"

using attnlens::model::ModelFile;
using attnlens::model::parse_model_file;
using model_support::FileBytes;
using model_support::ModelWriter;

namespace {

ModelWriter small_model() {
  ModelWriter w;
  w.pieces = {"\xEF\xBF\xBD", "<s>", "\xE2\x96\x81" "cat"};
  w.scores = {0, 0, -3.25};
  w.add("a", {2, 3}, {1, 2, 3, 4, 5, 6});
  w.add("b", {1}, {0.5f});
  return w;
}

std::string parse(const FileBytes& f) {
  ModelFile m;
  return parse_model_file(f.span(), m);
}

}  // namespace

TEST_CASE("crc32 is the zlib CRC-32") {
  const char* text = "123456789";
  CHECK(attnlens::model::crc32(reinterpret_cast<const std::uint8_t*>(text), 9) == 0xCBF43926u);
  // Continuing a CRC over a split buffer gives the same result (the 8-byte and 1-byte paths).
  const auto* p = reinterpret_cast<const std::uint8_t*>(text);
  CHECK(attnlens::model::crc32(p + 4, 5, attnlens::model::crc32(p, 4)) == 0xCBF43926u);
}

TEST_CASE("a well-formed file is read in place") {
  FileBytes f = small_model().write();
  ModelFile m;
  REQUIRE(parse_model_file(f.span(), m) == "");
  REQUIRE(m.pieces.size() == 3);
  CHECK(m.pieces[2] == "\xE2\x96\x81" "cat");
  CHECK(m.scores[2] == -3.25);
  const auto* a = m.find("a");
  REQUIRE(a != nullptr);
  CHECK(a->shape == std::vector<std::size_t>{2, 3});
  CHECK(a->size == 6);
  CHECK(a->data[5] == 6.0f);
  CHECK(reinterpret_cast<const std::uint8_t*>(a->data) >= f.span().data);
  CHECK(reinterpret_cast<const std::uint8_t*>(a->data + a->size) <= f.span().data + f.size);
  CHECK(m.find("b")->data[0] == 0.5f);
  CHECK(m.find("missing") == nullptr);
}

TEST_CASE("truncated, padded, corrupt or foreign bytes are reported") {
  const FileBytes good = small_model().write();
  SUBCASE("every truncation") {
    for (std::size_t n = 0; n < good.size; ++n) {
      FileBytes f = good;
      f.size = n;
      const std::string e = parse(f);
      CHECK_MESSAGE(!e.empty(), "length ", n);
      if (n >= 8) CHECK(support::contains(e, "truncated"));
    }
  }
  SUBCASE("extra bytes") {
    FileBytes f = good;
    f.resize(good.size + 3);
    CHECK(support::contains(parse(f), "unexpected bytes"));
  }
  SUBCASE("every single flipped byte after the signature") {
    for (std::size_t i = 8; i < good.size; ++i) {
      FileBytes f = good;
      f.data()[i] ^= 0x40;
      CHECK_MESSAGE(!parse(f).empty(), "byte ", i);
    }
  }
  SUBCASE("not a model file") {
    FileBytes f = good;
    std::memcpy(f.data(), "{\"forma", 7);
    CHECK(support::contains(parse(f), "not an attnlens model file"));
  }
  SUBCASE("another version") {
    FileBytes f = good;
    f.data()[8] = 2;
    CHECK(support::contains(parse(f), "version 2"));
  }
  SUBCASE("bytes not aligned for floats") {
    FileBytes f;
    f.resize(good.size + 1);
    std::memcpy(f.data() + 1, good.span().data, good.size);
    ModelFile m;
    CHECK(support::contains(parse_model_file({f.data() + 1, good.size}, m), "aligned"));
  }
}

TEST_CASE("a checksummed file with inconsistent contents is still rejected") {
  ModelWriter w = small_model();
  SUBCASE("a tensor that runs past the end") {
    FileBytes f = w.write();
    std::uint32_t rows = 1000;
    std::memcpy(f.data() + 32 + 44, &rows, 4);  // tensor 'a': [1000, 3]
    ModelWriter::seal(f);
    CHECK(support::contains(parse(f), "'a' lies outside"));
  }
  SUBCASE("overlapping tensors") {
    FileBytes f = w.write();
    std::uint32_t offset;
    std::memcpy(&offset, f.data() + 32 + 60, 4);
    std::memcpy(f.data() + 32 + 64 + 60, &offset, 4);  // 'b' starts where 'a' does
    ModelWriter::seal(f);
    CHECK(support::contains(parse(f), "'b' lies outside"));
  }
  SUBCASE("a duplicate name") {
    w.tensors[1].name = "a";
    CHECK(support::contains(parse(w.write()), "appears twice"));
  }
  SUBCASE("a huge vocabulary count") {
    FileBytes f = w.write();
    std::uint32_t huge = 0x40000000;
    std::memcpy(f.data() + 24, &huge, 4);
    ModelWriter::seal(f);
    CHECK(support::contains(parse(f), "vocabulary overruns"));
  }
  SUBCASE("a non-finite score") {
    w.scores[1] = std::numeric_limits<double>::infinity();
    CHECK(support::contains(parse(w.write()), "not a finite number"));
  }
  SUBCASE("a rank above 4") {
    w.tensors[0].shape = {1, 1, 1, 2, 3};
    CHECK(support::contains(parse(w.write()), "rank 5"));
  }
}
