// torch_pickle.cpp — a weights-only reader of torch.save archives (see torch_pickle.h). The pickle
// machine below knows the opcodes torch.save emits (protocol 2, plus the few newer ones a state
// dict may carry) and nothing that calls code: globals are looked up in a fixed table.
#include "core/model/torch_pickle.h"

#include <caffe2/serialize/inline_container.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include "core/base/error.h"
#include "core/base/file_io.h"

namespace statescope {
namespace {

constexpr size_t kMaxDepth = 64;  // a state dict nests 3 or 4 deep; deeper is not a state dict
constexpr size_t kMaxDims = 64;

struct Node;
using NodeRef = std::shared_ptr<Node>;
struct Node {
  enum class Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  std::string s;               // Str; Global: "module.name"
  std::vector<NodeRef> items;  // Tuple, List; Dict: key, value, key, value, ...
  torch::Tensor t;             // Storage: the whole storage, 1-D; Tensor: the tensor
  size_t depth = 1;
};

const char* kind_name(Node::Kind k) {
  static const char* names[] = {"None", "bool", "int", "float", "str", "tuple", "list", "dict", "global", "storage", "tensor"};
  return names[static_cast<int>(k)];
}

// The storage types a state dict may name, and their dtypes.
const std::map<std::string, torch::Dtype>& storage_types() {
  static const std::map<std::string, torch::Dtype> m = {
      {"torch.FloatStorage", torch::kFloat32}, {"torch.DoubleStorage", torch::kFloat64},
      {"torch.HalfStorage", torch::kFloat16},  {"torch.BFloat16Storage", torch::kBFloat16},
      {"torch.LongStorage", torch::kInt64},    {"torch.IntStorage", torch::kInt32},
      {"torch.ShortStorage", torch::kInt16},   {"torch.CharStorage", torch::kInt8},
      {"torch.ByteStorage", torch::kUInt8},    {"torch.BoolStorage", torch::kBool}};
  return m;
}

std::string shape_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

class Unpickler {
 public:
  Unpickler(const std::string& data, const StorageReader& storage, const std::string& src)
      : d_(data), storage_(storage), src_(src) {}
  // Every node is owned by the arena: links are cut here, so destruction never recurses and a
  // cyclic pickle (a list holding itself) leaks nothing.
  ~Unpickler() {
    for (auto& n : arena_) n->items.clear();
  }

  NodeRef run() {
    while (true) {
      if (pos_ >= d_.size()) fail("ends before STOP");
      const size_t at = pos_;
      const uint8_t op = u8();
      switch (op) {
        case 0x80: u8(); break;                       // PROTO
        case 0x95: u64(); break;                      // FRAME (a length hint)
        case '.':                                     // STOP
          if (stack_.size() != 1 || !marks_.empty()) fail("STOP with " + std::to_string(stack_.size()) + " values on the stack");
          return stack_.back();
        case '(': marks_.push_back(stack_.size()); break;
        case '}': push(make(Node::Kind::Dict)); break;
        case ']': push(make(Node::Kind::List)); break;
        case ')': push(make(Node::Kind::Tuple)); break;
        case 't': push(container(Node::Kind::Tuple, pop_mark())); break;
        case 0x85: case 0x86: case 0x87: {            // TUPLE1..3
          const size_t n = op - 0x84;
          if (stack_.size() < n + base()) fail("TUPLE" + std::to_string(n) + " on a short stack");
          std::vector<NodeRef> v(stack_.end() - n, stack_.end());
          stack_.resize(stack_.size() - n);
          push(container(Node::Kind::Tuple, std::move(v)));
          break;
        }
        case 'q': memo_[u8()] = top(); break;         // BINPUT
        case 'r': memo_[u32()] = top(); break;        // LONG_BINPUT
        case 0x94: memo_[static_cast<uint32_t>(memo_.size())] = top(); break;  // MEMOIZE
        case 'h': push(get(u8())); break;             // BINGET
        case 'j': push(get(u32())); break;            // LONG_BINGET
        case 'c': {                                   // GLOBAL
          const std::string module = line(), name = line();
          push(global(module, name));
          break;
        }
        case 0x93: {                                  // STACK_GLOBAL
          auto name = pop(), module = pop();
          if (module->kind != Node::Kind::Str || name->kind != Node::Kind::Str) fail("STACK_GLOBAL needs two strings");
          push(global(module->s, name->s));
          break;
        }
        case 'R': {                                   // REDUCE
          auto args = pop(), f = pop();
          push(reduce(f, args));
          break;
        }
        case 'b': build(pop()); break;                // BUILD
        case 's': {                                   // SETITEM
          auto v = pop(), k = pop();
          add_items(Node::Kind::Dict, {k, v});
          break;
        }
        case 'u': add_items(Node::Kind::Dict, pop_mark()); break;  // SETITEMS
        case 'a': add_items(Node::Kind::List, {pop()}); break;     // APPEND
        case 'e': add_items(Node::Kind::List, pop_mark()); break;  // APPENDS
        case 'J': push(integer(static_cast<int32_t>(u32()))); break;
        case 'K': push(integer(u8())); break;
        case 'M': {                                   // BININT2
          const int64_t lo = u8();
          push(integer(lo | static_cast<int64_t>(u8()) << 8));
          break;
        }
        case 0x8a: {                                  // LONG1
          const size_t n = u8();
          if (n > 8) fail("integer of " + std::to_string(n) + " bytes (more than 64 bits)");
          const std::string b = bytes(n);
          uint64_t v = 0;
          for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(b[k])) << (8 * k);
          if (n > 0 && n < 8 && (static_cast<uint8_t>(b[n - 1]) & 0x80)) v |= ~uint64_t{0} << (8 * n);  // sign
          push(integer(static_cast<int64_t>(v)));
          break;
        }
        case 'X': push(string(bytes(u32()))); break;    // BINUNICODE
        case 0x8c: push(string(bytes(u8()))); break;    // SHORT_BINUNICODE
        case 0x8d: push(string(bytes(u64()))); break;   // BINUNICODE8
        case 0x88: case 0x89: {                         // NEWTRUE, NEWFALSE
          auto n = make(Node::Kind::Bool);
          n->i = op == 0x88;
          push(n);
          break;
        }
        case 'N': push(make(Node::Kind::None)); break;
        case 'G': {                                     // BINFLOAT, big-endian
          const std::string b = bytes(8);
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = bits << 8 | static_cast<uint8_t>(b[k]);
          auto n = make(Node::Kind::Float);
          std::memcpy(&n->f, &bits, 8);
          push(n);
          break;
        }
        case 'Q': push(storage(pop())); break;          // BINPERSID
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          pos_ = at;
          fail(std::string("pickle opcode ") + hex + " is not one a state dict uses");
        }
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(src_ + ": " + why + " (data.pkl offset " + std::to_string(pos_) + ")");
  }
  uint8_t u8() {
    if (pos_ >= d_.size()) fail("ends inside an opcode");
    return static_cast<uint8_t>(d_[pos_++]);
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v |= static_cast<uint32_t>(u8()) << (8 * k);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(u8()) << (8 * k);
    return v;
  }
  std::string bytes(uint64_t n) {
    if (n > d_.size() - pos_) fail("a string of " + std::to_string(n) + " bytes runs past the end");
    std::string s = d_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::string line() {
    const size_t e = d_.find('\n', pos_);
    if (e == std::string::npos || e - pos_ > 256) fail("GLOBAL without a short name line");
    std::string s = d_.substr(pos_, e - pos_);
    pos_ = e + 1;
    return s;
  }

  NodeRef make(Node::Kind k) {
    auto n = std::make_shared<Node>();
    n->kind = k;
    arena_.push_back(n);
    return n;
  }
  NodeRef integer(int64_t v) {
    auto n = make(Node::Kind::Int);
    n->i = v;
    return n;
  }
  NodeRef string(std::string s) {
    auto n = make(Node::Kind::Str);
    n->s = std::move(s);
    return n;
  }
  NodeRef container(Node::Kind k, std::vector<NodeRef> items) {
    auto n = make(k);
    n->items = std::move(items);
    deepen(*n);
    return n;
  }
  void deepen(Node& n) {
    for (auto& c : n.items) n.depth = std::max(n.depth, c->depth + 1);
    if (n.depth > kMaxDepth) fail("values nested more than " + std::to_string(kMaxDepth) + " deep");
  }

  size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(NodeRef n) { stack_.push_back(std::move(n)); }
  NodeRef pop() {
    if (stack_.size() <= base()) fail("pops an empty stack");
    auto n = std::move(stack_.back());
    stack_.pop_back();
    return n;
  }
  const NodeRef& top() {
    if (stack_.size() <= base()) fail("memoizes an empty stack");
    return stack_.back();
  }
  std::vector<NodeRef> pop_mark() {
    if (marks_.empty()) fail("no MARK to pop to");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<NodeRef> v(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return v;
  }
  NodeRef get(uint32_t key) {
    auto it = memo_.find(key);
    if (it == memo_.end()) fail("memo entry " + std::to_string(key) + " was never stored");
    return it->second;
  }

  void add_items(Node::Kind k, std::vector<NodeRef> v) {
    auto target = pop();
    if (target->kind != k) fail(std::string("adds items to a ") + kind_name(target->kind) + ", expected a " + kind_name(k));
    if (k == Node::Kind::Dict && v.size() % 2) fail("SETITEMS with an odd number of values");
    for (auto& x : v) target->items.push_back(std::move(x));
    deepen(*target);
    push(target);
  }

  NodeRef global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    const bool known = full == "collections.OrderedDict" || full == "torch._utils._rebuild_tensor_v2" ||
                       full == "torch._utils._rebuild_parameter" || storage_types().count(full);
    if (!known)
      fail("refuses pickle global '" + full + "': a state dict holds only tensors, and nothing in the file is executed");
    auto n = make(Node::Kind::Global);
    n->s = full;
    return n;
  }

  NodeRef reduce(const NodeRef& f, const NodeRef& args) {
    if (f->kind != Node::Kind::Global) fail(std::string("calls a ") + kind_name(f->kind));
    if (args->kind != Node::Kind::Tuple) fail("calls " + f->s + " without an argument tuple");
    const auto& a = args->items;
    if (f->s == "collections.OrderedDict") {
      if (!a.empty()) fail("OrderedDict with arguments");
      return make(Node::Kind::Dict);
    }
    if (f->s == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(a);
    if (f->s == "torch._utils._rebuild_parameter") {
      if (a.size() != 3 || a[0]->kind != Node::Kind::Tensor) fail("_rebuild_parameter needs (tensor, requires_grad, hooks)");
      return a[0];
    }
    fail("calls " + f->s);
  }

  // BUILD sets an object's state: only an OrderedDict's (its _metadata) is accepted, and ignored.
  void build(const NodeRef& state) {
    const auto& obj = top();
    if (obj->kind != Node::Kind::Dict || (state->kind != Node::Kind::Dict && state->kind != Node::Kind::None))
      fail(std::string("sets the state of a ") + kind_name(obj->kind));
  }

  // ('storage', torch.<Type>Storage, key, location, numel) -> the whole storage as a 1-D tensor.
  NodeRef storage(const NodeRef& pid) {
    const auto& a = pid->items;
    if (pid->kind != Node::Kind::Tuple || a.size() != 5 || a[0]->kind != Node::Kind::Str || a[0]->s != "storage" ||
        a[1]->kind != Node::Kind::Global || !storage_types().count(a[1]->s) || a[2]->kind != Node::Kind::Str ||
        a[4]->kind != Node::Kind::Int)
      fail("persistent id is not ('storage', type, key, location, numel)");
    const std::string& key = a[2]->s;
    if (key.empty() || key.size() > 32 ||
        key.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") != std::string::npos)
      fail("storage key '" + key.substr(0, 40) + "' is not a record name");
    const torch::Dtype dtype = storage_types().at(a[1]->s);
    if (auto it = storages_.find(key); it != storages_.end()) {
      if (it->second->t.scalar_type() != dtype) fail("storage " + key + " is used with two dtypes");
      return it->second;
    }
    const int64_t numel = a[4]->i;
    const size_t elem = c10::elementSize(dtype);
    const size_t size = storage_(key, nullptr);  // the record's size in the archive
    if (numel < 0 || static_cast<uint64_t>(numel) > size / elem || static_cast<uint64_t>(numel) * elem != size)
      fail("storage " + key + " claims " + std::to_string(numel) + " elements of " + std::to_string(elem) +
           " bytes but its record data/" + key + " holds " + std::to_string(size) + " bytes");
    auto n = make(Node::Kind::Storage);
    n->t = torch::empty({numel}, torch::TensorOptions().dtype(dtype));
    if (size) storage_(key, n->t.data_ptr());
    storages_[key] = n;
    return n;
  }

  // _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]).
  NodeRef rebuild_tensor(const std::vector<NodeRef>& a) {
    if ((a.size() != 6 && a.size() != 7) || a[0]->kind != Node::Kind::Storage || a[1]->kind != Node::Kind::Int ||
        a[2]->kind != Node::Kind::Tuple || a[3]->kind != Node::Kind::Tuple || a[2]->items.size() != a[3]->items.size())
      fail("_rebuild_tensor_v2 needs (storage, offset, size, stride, requires_grad, hooks)");
    const torch::Tensor& st = a[0]->t;
    const int64_t offset = a[1]->i;
    if (a[2]->items.size() > kMaxDims) fail("a tensor with more than " + std::to_string(kMaxDims) + " dimensions");
    std::vector<int64_t> size, stride;
    unsigned __int128 last = offset < 0 ? 0 : static_cast<uint64_t>(offset);
    bool empty = false;
    for (size_t k = 0; k < a[2]->items.size(); ++k) {
      const auto& s = a[2]->items[k];
      const auto& r = a[3]->items[k];
      if (s->kind != Node::Kind::Int || r->kind != Node::Kind::Int || s->i < 0 || r->i < 0)
        fail("tensor sizes and strides must be integers >= 0");
      size.push_back(s->i);
      stride.push_back(r->i);
      if (s->i == 0) empty = true;
      else last += static_cast<unsigned __int128>(s->i - 1) * static_cast<uint64_t>(r->i);
    }
    if (offset < 0 || (!empty && last >= static_cast<uint64_t>(st.numel())) || (empty && offset > st.numel()))
      fail("a tensor of shape " + shape_text(size) + " at offset " + std::to_string(offset) + " runs past its storage of " +
           std::to_string(st.numel()) + " elements");
    auto n = make(Node::Kind::Tensor);
    n->t = st.as_strided(size, stride, offset);
    return n;
  }

  const std::string& d_;
  const StorageReader& storage_;
  const std::string& src_;
  size_t pos_ = 0;
  std::vector<NodeRef> stack_, arena_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, NodeRef> memo_;
  std::map<std::string, NodeRef> storages_;
};

}  // namespace

std::map<std::string, torch::Tensor> parse_state_dict_pickle(const std::string& pickle, const StorageReader& storage,
                                                             const std::string& source) {
  Unpickler u(pickle, storage, source);
  const NodeRef root = u.run();
  if (root->kind != Node::Kind::Dict)
    throw Error(source + ": holds a " + std::string(kind_name(root->kind)) + ", not a state dict (name -> tensor)");
  std::map<std::string, torch::Tensor> out;
  for (size_t k = 0; k + 1 < root->items.size(); k += 2) {
    const auto& key = root->items[k];
    const auto& val = root->items[k + 1];
    if (key->kind != Node::Kind::Str) throw Error(source + ": a state dict key is a " + kind_name(key->kind));
    if (val->kind != Node::Kind::Tensor)
      throw Error(source + ": entry '" + key->s + "' is a " + kind_name(val->kind) + ", not a tensor");
    if (!out.emplace(key->s, val->t.contiguous()).second) throw Error(source + ": tensor '" + key->s + "' appears twice");
  }
  return out;
}

std::map<std::string, torch::Tensor> read_torch_state_dict(const std::string& path) {
  require_regular_file(path);
  std::error_code ec;
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(path + ": cannot open");
  {
    std::ifstream in(path, std::ios::binary);
    char magic[2] = {0, 0};
    in.read(magic, 2);
    if (!in || magic[0] != 'P' || magic[1] != 'K')
      throw Error(path + ": not a torch.save zip archive (legacy non-zip .bin files are not supported)");
  }
  auto lib_error = [&](const std::exception& e) {
    const std::string m = e.what();
    return Error(path + ": not a readable torch.save archive (" + m.substr(0, m.find('\n')) + ")");
  };
  std::unique_ptr<caffe2::serialize::PyTorchStreamReader> zip;
  std::string pickle;
  try {
    zip = std::make_unique<caffe2::serialize::PyTorchStreamReader>(path);
    if (!zip->hasRecord("data.pkl")) throw Error(path + ": the archive has no data.pkl (not written by torch.save)");
    const size_t n = zip->getRecordSize("data.pkl");
    if (n > file_size) throw Error(path + ": data.pkl claims " + std::to_string(n) + " bytes, more than the whole file");
    pickle.resize(n);
    zip->getRecord("data.pkl", pickle.data(), n);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw lib_error(e);
  }
  StorageReader storage = [&](const std::string& key, void* bytes) -> size_t {
    const std::string name = "data/" + key;
    try {
      if (!zip->hasRecord(name)) throw Error(path + ": record " + name + " is missing from the archive");
      const size_t n = zip->getRecordSize(name);
      // torch.save stores records uncompressed: a record larger than the file is a zip bomb or a lie.
      if (n > file_size)
        throw Error(path + ": record " + name + " claims " + std::to_string(n) + " bytes, more than the whole file (" +
                    std::to_string(file_size) + ")");
      if (bytes) zip->getRecord(name, bytes, n);
      return n;
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw lib_error(e);
    }
  };
  return parse_state_dict_pickle(pickle, storage, path);
}

}  // namespace statescope
