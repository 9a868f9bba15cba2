// test_safetensors.cpp — round trip and every way a header can lie.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/model/safetensors.h"

using namespace statescope;

namespace {

std::vector<char> make_file(const std::string& header, size_t data_bytes) {
  std::vector<char> f(8 + header.size() + data_bytes, 0);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) f[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  std::memcpy(f.data() + 8, header.data(), header.size());
  return f;
}

void expect_error(std::vector<char> bytes, const std::string& fragment) {
  try {
    parse_safetensors(std::move(bytes), "w.safetensors");
    FAIL() << "no error, expected: " << fragment;
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("w.safetensors"), std::string::npos) << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << m;
  }
}

}  // namespace

TEST(Safetensors, RoundTrip) {
  const auto path = (std::filesystem::temp_directory_path() / "ss_rt.safetensors").string();
  std::vector<float> a{1, 2, 3, 4, 5, 6};
  std::vector<uint16_t> b{0x3f80, 0x4000};  // bf16 1.0, 2.0
  write_safetensors(path, {{"z.a", DType::F32, {2, 3}, a.data()}, {"b", DType::BF16, {2}, b.data()}},
                    {{"format", "pt"}});
  auto f = read_safetensors(path);
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.metadata.at("format"), "pt");
  const auto& ra = f.tensors.at("z.a");
  EXPECT_EQ(ra.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::memcmp(f.bytes(ra), a.data(), 24), 0);
  EXPECT_EQ(f.tensors.at("b").dtype, DType::BF16);
  // Header length is padded to a multiple of 8, as the reference writer does.
  std::ifstream in(path, std::ios::binary);
  uint64_t n = 0;
  in.read(reinterpret_cast<char*>(&n), 8);
  EXPECT_EQ(n % 8, 0u);
  std::filesystem::remove(path);
}

TEST(Safetensors, BadInputs) {
  expect_error({1, 2, 3}, "truncated");
  auto lying_len = make_file(R"({})", 0);
  lying_len[0] = 100;
  expect_error(lying_len, "exceeds the file size");
  expect_error(make_file("{nope", 0), "not valid JSON");
  expect_error(make_file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4),
               "outside the data buffer");
  expect_error(make_file(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8),
               "need 12");
  expect_error(make_file(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]}})", 8),
               "unsupported dtype \"Q4\"");
  expect_error(make_file(R"({"w": {"dtype": "F32", "shape": [2, -1], "data_offsets": [0, 8]}})", 8),
               "negative");
  expect_error(make_file(R"({"w": {"dtype": "F32", "shape": [2]}})", 8), "data_offsets");
  expect_error(make_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12),
               "overlap");
  expect_error(make_file(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})", 8),
               "outside the data buffer");
}

TEST(Safetensors, MissingFile) {
  EXPECT_THROW(read_safetensors("/nonexistent/x.safetensors"), Error);
}
