// safetensors.cpp — strict parsing: header length, JSON, dtypes, shapes, offsets, overlap.
#include "core/model/safetensors.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/json_error.h"
#include "core/base/file_io.h"

namespace statescope {

size_t dtype_size(DType d) {
  switch (d) {
    case DType::F32: case DType::I32: return 4;
    case DType::F16: case DType::BF16: return 2;
    case DType::F64: case DType::I64: return 8;
  }
  return 0;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
    case DType::F64: return "F64";
    case DType::I64: return "I64";
    case DType::I32: return "I32";
  }
  return "?";
}

int64_t TensorRecord::numel() const {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return n;
}

namespace {

DType parse_dtype(const std::string& s, const std::string& where) {
  if (s == "F32") return DType::F32;
  if (s == "F16") return DType::F16;
  if (s == "BF16") return DType::BF16;
  if (s == "F64") return DType::F64;
  if (s == "I64") return DType::I64;
  if (s == "I32") return DType::I32;
  throw Error(where + ": unsupported dtype \"" + s + "\" (supported: F32, F16, BF16, F64, I64, I32)");
}

}  // namespace

SafetensorsFile parse_safetensors(std::vector<char> bytes, const std::string& source) try {
  using nlohmann::json;
  if (bytes.size() < 8)
    throw Error(source + ": truncated safetensors file (" + std::to_string(bytes.size()) +
                " bytes, need at least 8 for the header length)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > bytes.size() - 8)
    throw Error(source + ": header length " + std::to_string(n) + " exceeds the file size (" +
                std::to_string(bytes.size()) + " bytes)");
  json header;
  try {
    header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(n));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
    throw Error(source + ": safetensors header is " + json_error_text(e));
  }
  if (!header.is_object()) throw Error(source + ": safetensors header is not a JSON object");

  SafetensorsFile f;
  f.path = source;
  const uint64_t buffer_size = bytes.size() - 8 - n;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (auto& [name, v] : header.items()) {
    const std::string where = source + ": tensor '" + name + "'";
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(source + ": '__metadata__' is not an object");
      for (auto& [k, mv] : v.items())
        f.metadata[k] = mv.is_string() ? mv.get<std::string>() : mv.dump();
      continue;
    }
    if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      throw Error(where + ": entry needs dtype, shape and data_offsets");
    if (!v["dtype"].is_string()) throw Error(where + ": dtype is not a string");
    TensorRecord r;
    r.dtype = parse_dtype(v["dtype"].get<std::string>(), where);
    if (!v["shape"].is_array()) throw Error(where + ": shape is not an array");
    for (auto& d : v["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        throw Error(where + ": shape has a non-integer or negative entry " + d.dump());
      r.shape.push_back(d.get<int64_t>());
    }
    const json& o = v["data_offsets"];
    if (!o.is_array() || o.size() != 2 || !o[0].is_number_unsigned() || !o[1].is_number_unsigned())
      throw Error(where + ": data_offsets must be two non-negative integers, got " + o.dump());
    r.begin = o[0].get<uint64_t>();
    r.end = o[1].get<uint64_t>();
    if (r.end < r.begin || r.end > buffer_size)
      throw Error(where + ": data_offsets [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                  "] lie outside the data buffer of " + std::to_string(buffer_size) + " bytes");
    const uint64_t want = static_cast<uint64_t>(r.numel()) * dtype_size(r.dtype);
    if (r.end - r.begin != want)
      throw Error(where + ": data_offsets span " + std::to_string(r.end - r.begin) +
                  " bytes but dtype and shape need " + std::to_string(want));
    spans.emplace_back(r.begin, r.end);
    f.tensors.emplace(name, std::move(r));
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second && spans[i].first != spans[i].second)
      throw Error(source + ": two tensors' data_offsets overlap at byte " + std::to_string(spans[i].first));
  bytes.erase(bytes.begin(), bytes.begin() + 8 + static_cast<int64_t>(n));
  f.data = std::move(bytes);
  return f;
} catch (const nlohmann::json::exception& e) {  // a header field of the wrong JSON type
  throw Error(source + ": safetensors header field of the wrong JSON type (" + e.what() + ")");
}

SafetensorsFile read_safetensors(const std::string& path) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open safetensors file");
  const auto size = static_cast<size_t>(in.tellg());
  std::vector<char> bytes(size);
  in.seekg(0);
  if (size && !in.read(bytes.data(), static_cast<std::streamsize>(size)))
    throw Error(path + ": read failed");
  return parse_safetensors(std::move(bytes), path);
}

void write_safetensors(const std::string& path, std::vector<TensorToWrite> tensors,
                       const std::map<std::string, std::string>& metadata) {
  using nlohmann::json;
  std::sort(tensors.begin(), tensors.end(), [](auto& a, auto& b) { return a.name < b.name; });
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (auto& t : tensors) {
    int64_t numel = 1;
    for (auto s : t.shape) numel *= s;
    const uint64_t nbytes = static_cast<uint64_t>(numel) * dtype_size(t.dtype);
    header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape},
                      {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string h = header.dump();
  while (h.size() % 8) h += ' ';
  FileWriter out(path);  // every write checked: a full disk is an Error naming the file, never a short file
  uint64_t n = h.size();
  char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out.write(len, 8);
  out.write(h);
  for (auto& t : tensors) {
    int64_t numel = 1;
    for (auto s : t.shape) numel *= s;
    out.write(t.data, static_cast<size_t>(numel) * dtype_size(t.dtype));
  }
  out.close();
}

}  // namespace statescope
