// config_json.cpp — field readers shared by the architectures' config parsers.
#include "core/model/config_json.h"

#include <cmath>

#include "core/base/error.h"
#include "core/base/json_error.h"

namespace statescope {
namespace {

using nlohmann::json;

// Hugging Face writes time_step_limit as [0.0, Infinity], which is not JSON. Outside string
// literals, rewrite the bare words Infinity / -Infinity / NaN as quoted strings; number() below
// turns them back into doubles.
std::string quote_nonfinite_literals(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') { in_string = true; out += c; continue; }
    bool replaced = false;
    for (const char* word : {"-Infinity", "Infinity", "NaN"}) {
      const size_t n = std::char_traits<char>::length(word);
      if (text.compare(i, n, word) == 0) {
        out += '"'; out += word; out += '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

double number(const json& v, const std::string& source, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  // transformers >= 5 writes non-finite floats as {"__float__": "Infinity"}.
  const json& w = (v.is_object() && v.contains("__float__")) ? v["__float__"] : v;
  if (w.is_string()) {
    const auto s = w.get<std::string>();
    if (s == "Infinity") return INFINITY;
    if (s == "-Infinity") return -INFINITY;
  }
  if (&w != &v && w.is_number()) return w.get<double>();
  throw Error(source + ": field '" + field + "' must be a number, got " + v.dump());
}

int64_t integer(const json& v, const std::string& source, const std::string& field) {
  if (!v.is_number_integer())
    throw Error(source + ": field '" + field + "' must be an integer, got " + v.dump());
  return v.get<int64_t>();
}

}  // namespace

json parse_config_text(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(quote_nonfinite_literals(text));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers like 3e477
    throw Error(source + ": " + json_error_text(e));
  }
  if (!j.is_object()) throw Error(source + ": expected a JSON object at the top level");
  return j;
}

bool ConfigReader::has(const char* key) const { return obj.contains(key) && !obj[key].is_null(); }

int64_t ConfigReader::req_int(const char* key) const {
  if (!has(key)) throw Error(source + ": required field '" + prefix + key + "' is missing");
  return integer(obj[key], source, prefix + key);
}

int64_t ConfigReader::opt_int(const char* key, int64_t dflt) const {
  return has(key) ? integer(obj[key], source, prefix + key) : dflt;
}

double ConfigReader::opt_num(const char* key, double dflt) const {
  if (!has(key)) return dflt;
  const double v = number(obj[key], source, prefix + key);
  // Only a pair's upper end (time_step_limit) may be Infinity; an Infinity or NaN anywhere else (a
  // norm epsilon of Infinity zeroes every logit) is refused by name.
  if (!std::isfinite(v))
    throw Error(source + ": field '" + prefix + key + "' must be a finite number, got " + obj[key].dump());
  return v;
}

bool ConfigReader::opt_bool(const char* key, bool dflt) const {
  if (!has(key)) return dflt;
  if (!obj[key].is_boolean())
    throw Error(source + ": field '" + prefix + key + "' must be true or false, got " + obj[key].dump());
  return obj[key].get<bool>();
}

std::string ConfigReader::opt_string(const char* key, const std::string& dflt) const {
  if (!has(key)) return dflt;
  if (!obj[key].is_string())
    throw Error(source + ": field '" + prefix + key + "' must be a string, got " + obj[key].dump());
  return obj[key].get<std::string>();
}

void ConfigReader::opt_pair(const char* key, double& lo, double& hi) const {
  if (!has(key)) return;
  const json& v = obj[key];
  if (!v.is_array() || v.size() != 2)
    throw Error(source + ": field '" + prefix + key + "' must be a pair [lo, hi], got " + v.dump());
  lo = number(v[0], source, prefix + key + "[0]");
  hi = number(v[1], source, prefix + key + "[1]");
}

void ConfigReader::fail(const char* key, const std::string& what) const {
  throw Error(source + ": field '" + prefix + key + "' " + what);
}

void require_size(int64_t v, int64_t limit, const std::string& source, const char* field) {
  if (v <= 0) throw Error(source + ": field '" + field + "' must be positive, got " + std::to_string(v));
  if (v > limit)
    throw Error(source + ": field '" + field + "' is " + std::to_string(v) + ", above statescope's limit of " +
                std::to_string(limit));
}

void require_sizes(const std::string& source, std::initializer_list<SizeField> fields) {
  for (const auto& f : fields) require_size(f.value, f.limit, source, f.field);
}

std::string dump_with_infinity(const json& j) {
  std::string s = j.dump(2);
  const std::string ph = "\"__INF__\"";
  for (auto p = s.find(ph); p != std::string::npos; p = s.find(ph)) s.replace(p, ph.size(), "Infinity");
  return s + "\n";
}

int64_t fla_mlp_size(int64_t d_model, int64_t hidden_ratio, int64_t intermediate_size) {
  if (intermediate_size > 0) return intermediate_size;
  const auto m = static_cast<int64_t>(static_cast<double>(d_model * hidden_ratio) * 2.0 / 3.0);  // fla: int(h * r * 2 / 3)
  return 256 * ((m + 255) / 256);
}

void refuse_fla_extras(const ConfigReader& r, const std::string& title, const std::vector<std::string>& modes) {
  if (r.has("attn"))
    r.fail("attn", "is set: hybrid " + title + " models with softmax attention layers are not supported "
                   "(statescope loads pure recurrent models)");
  if (r.has("attnres_block_size")) r.fail("attnres_block_size", "is set: attention residuals are not supported");
  if (r.opt_bool("use_l2warp", false)) r.fail("use_l2warp", "is true: the L2-warp training loss is not supported");
  const std::string act = r.opt_string("hidden_act", "swish");
  if (act != "swish") r.fail("hidden_act", "is \"" + act + "\"; only swish is supported");
  const std::string mode = r.opt_string("attn_mode", "chunk");
  std::string known;
  for (const auto& m : modes) {
    if (m == mode) return;
    known += (known.empty() ? "" : ", ") + m;
  }
  r.fail("attn_mode", "is \"" + mode + "\"; fla's " + title + " knows " + known);
}

}  // namespace statescope
