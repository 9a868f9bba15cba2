// test_torch_pickle.cpp — the weights-only state-dict reader (core/model/torch_pickle.h): what a
// state dict holds is read (OrderedDict, shared storages, views, every dtype), anything else is
// refused by name before it can cost memory or run code, and hostile archives end in a named error.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "core/base/error.h"
#include "core/model/torch_pickle.h"

using namespace statescope;
namespace fs = std::filesystem;

namespace {

const std::string kGolden = std::string(STATESCOPE_SOURCE_DIR) + "/tests/golden/";

// A pickle as torch.save writes one (protocol 2), assembled by hand for hostile variants.
struct Pickle {
  std::string b = std::string("\x80\x02", 2);
  Pickle& op(char c) { b += c; return *this; }
  Pickle& str(const std::string& s) {  // BINUNICODE
    b += 'X';
    const uint32_t n = static_cast<uint32_t>(s.size());
    b.append(reinterpret_cast<const char*>(&n), 4);
    b += s;
    return *this;
  }
  Pickle& int1(uint8_t v) { b += 'K'; b += static_cast<char>(v); return *this; }
  Pickle& global(const std::string& module, const std::string& name) { b += 'c' + module + '\n' + name + '\n'; return *this; }
  // _rebuild_tensor_v2(('storage', <type>, key, 'cpu', numel), offset, size, stride, False, OrderedDict())
  Pickle& tensor(const std::string& type, const std::string& key, uint8_t numel, uint8_t offset,
                 std::vector<uint8_t> size, std::vector<uint8_t> stride) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    op('(').str("storage").global("torch", type).str(key).str("cpu").int1(numel).op('t').op('Q');
    int1(offset).op('(');
    for (auto s : size) int1(s);
    op('t').op('(');
    for (auto s : stride) int1(s);
    op('t').op('\x89').global("collections", "OrderedDict").op(')').op('R').op('t').op('R');
    return *this;
  }
  std::string done() { return b + '.'; }
};

// Storages as records data/<key>: key -> bytes.
StorageReader records(std::map<std::string, std::string> r) {
  return [r](const std::string& key, void* bytes) -> size_t {
    auto it = r.find(key);
    if (it == r.end()) throw Error("record data/" + key + " is missing");
    if (bytes) std::memcpy(bytes, it->second.data(), it->second.size());
    return it->second.size();
  };
}

std::string floats(std::vector<float> v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

std::string why(const std::string& pickle, StorageReader r = records({})) {
  try {
    parse_state_dict_pickle(pickle, r, "x.bin");
    return "read";
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace

TEST(TorchPickle, ReadsAnOrderedDictWithSharedStoragesAndViews) {
  // OrderedDict{'a': storage 0 as [2, 3], 'b': the same storage transposed, 'c': a view at offset 4}.
  Pickle p;
  p.global("collections", "OrderedDict").op(')').op('R').op('(');
  p.str("a").tensor("FloatStorage", "0", 6, 0, {2, 3}, {3, 1});
  p.str("b").tensor("FloatStorage", "0", 6, 0, {3, 2}, {1, 3});
  p.str("c").tensor("FloatStorage", "0", 6, 4, {2}, {1});
  p.op('u');
  p.op('}').str("_metadata").op('}').op('s').op('b');  // BUILD with {'_metadata': {}}: accepted, ignored
  auto sd = parse_state_dict_pickle(p.done(), records({{"0", floats({0, 1, 2, 3, 4, 5})}}), "x.bin");
  ASSERT_EQ(sd.size(), 3u);
  EXPECT_TRUE(torch::equal(sd["a"], torch::arange(6, torch::kFloat32).view({2, 3})));
  EXPECT_TRUE(torch::equal(sd["b"], sd["a"].t()));
  EXPECT_TRUE(torch::equal(sd["c"], torch::tensor({4.0f, 5.0f})));
  EXPECT_TRUE(sd["b"].is_contiguous());
}

TEST(TorchPickle, EveryStorageDtypeReads) {
  const std::vector<std::pair<std::string, torch::Dtype>> types = {
      {"FloatStorage", torch::kFloat32}, {"DoubleStorage", torch::kFloat64}, {"HalfStorage", torch::kFloat16},
      {"BFloat16Storage", torch::kBFloat16}, {"LongStorage", torch::kInt64}, {"IntStorage", torch::kInt32},
      {"ShortStorage", torch::kInt16}, {"CharStorage", torch::kInt8}, {"ByteStorage", torch::kUInt8},
      {"BoolStorage", torch::kBool}};
  for (auto& [type, dtype] : types) {
    SCOPED_TRACE(type);
    auto ref = torch::arange(4).to(dtype);
    const std::string bytes(static_cast<const char*>(ref.data_ptr()), ref.nbytes());
    Pickle p;
    p.op('}').str("w").tensor(type, "0", 4, 0, {4}, {1}).op('s');
    auto sd = parse_state_dict_pickle(p.done(), records({{"0", bytes}}), "x.bin");
    ASSERT_EQ(sd.at("w").scalar_type(), dtype);
    EXPECT_TRUE(torch::equal(sd.at("w"), ref));
  }
}

TEST(TorchPickle, RefusesWhatIsNotAStateDictByName) {
  // A pickle that would run os.system on an unguarded unpickler: refused, naming the global.
  const std::string evil = Pickle().global("posix", "system").str("touch /tmp/pwned").op('\x85').op('R').done();
  EXPECT_NE(why(evil).find("refuses pickle global 'posix.system'"), std::string::npos) << why(evil);
  EXPECT_NE(why(Pickle().global("builtins", "eval").done()).find("'builtins.eval'"), std::string::npos);
  // Nested a million deep: refused at the bound, no stack overflow.
  std::string deep = "\x80\x02";
  for (int i = 0; i < 1000000; ++i) deep += ']';
  for (int i = 0; i < 1000000; ++i) deep += 'a';
  EXPECT_NE(why(deep + ".").find("nested more than 64 deep"), std::string::npos);
  std::string marks = "\x80\x02";
  for (int i = 0; i < 1000000; ++i) marks += '(';
  EXPECT_NE(why(marks + ".").find("STOP"), std::string::npos);
  // A storage that claims more than its record holds, a view past its storage, a missing record.
  auto one = [](uint8_t numel, uint8_t offset, uint8_t size) {
    Pickle p;
    p.op('}').str("w").tensor("FloatStorage", "0", numel, offset, {size}, {1}).op('s');
    return p.done();
  };
  const auto four = records({{"0", floats({1, 2, 3, 4})}});
  EXPECT_NE(why(one(200, 0, 4), four).find("claims 200 elements"), std::string::npos) << why(one(200, 0, 4), four);
  EXPECT_NE(why(one(4, 2, 3), four).find("runs past its storage of 4 elements"), std::string::npos);
  EXPECT_NE(why(one(4, 0, 4), records({})).find("data/0 is missing"), std::string::npos);
  EXPECT_EQ(why(one(4, 0, 4), four), "read");
  // Not a dict of tensors; truncated; unknown opcode; a memo entry never stored.
  EXPECT_NE(why(Pickle().op(']').done()).find("holds a list, not a state dict"), std::string::npos);
  EXPECT_NE(why(Pickle().op('}').str("w").int1(3).op('s').done()).find("entry 'w' is a int, not a tensor"), std::string::npos);
  EXPECT_NE(why(std::string("\x80\x02}X\xff\xff\xff\x7f", 8)).find("runs past the end"), std::string::npos);
  EXPECT_NE(why(Pickle().op('}').done().substr(0, 3)).find("ends before STOP"), std::string::npos);
  EXPECT_NE(why(Pickle().op('S').done()).find("opcode 0x53"), std::string::npos);
  EXPECT_NE(why(Pickle().op('h').op('\x07').done()).find("memo entry 7"), std::string::npos);
  for (const auto& w : {why(evil), why(deep + "."), why(one(200, 0, 4), four)}) EXPECT_EQ(w.rfind("x.bin: ", 0), 0u) << w;
}

TEST(TorchPickle, HostileArchivesEndInANamedError) {
  const auto d = fs::temp_directory_path() / "statescope_pickle";
  fs::create_directories(d);
  const std::string real = kGolden + "ssm-tied/pytorch_model.bin";
  std::ifstream in(real, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  ASSERT_EQ(read_torch_state_dict(real).count("backbone.embedding.weight"), 1u);  // the real file reads
  // Truncations and flipped bytes anywhere: an Error naming the file, never a crash.
  int named = 0, tries = 0;
  for (size_t cut : {size_t{2}, size_t{30}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 30}) {
    std::ofstream(d / "cut.bin", std::ios::binary) << bytes.substr(0, cut);
    ++tries;
    try {
      read_torch_state_dict((d / "cut.bin").string());
    } catch (const Error& e) {
      named += std::string(e.what()).find("cut.bin") != std::string::npos;
    }
  }
  EXPECT_EQ(named, tries);
  for (size_t k = 0; k < 200; ++k) {
    std::string b = bytes;
    const size_t at = (k * 7919) % b.size();
    b[at] = static_cast<char>(b[at] ^ 0x5a);
    std::ofstream(d / "flip.bin", std::ios::binary) << b;
    try {
      read_torch_state_dict((d / "flip.bin").string());  // may still read (a flipped weight byte)
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("flip.bin"), std::string::npos) << e.what();
    }
  }
}
