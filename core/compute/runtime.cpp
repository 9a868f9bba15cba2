// runtime.cpp — thread and device settings.
#include "core/compute/runtime.h"

#include <ATen/cpu/Utils.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "core/base/error.h"

namespace statescope {
namespace {
Compute g_default;  // the process default; runs carry their own Compute
std::mutex g_isa_mutex;
std::optional<std::string> g_isa_override;  // tests: override_cpu_bf16_isa

bool capability(const std::unordered_map<std::string, c10::IValue>& caps, const char* key) {
  auto it = caps.find(key);
  return it != caps.end() && it->second.isBool() && it->second.toBool();
}

std::string detect_cpu_bf16_isa() {
  // STATESCOPE_BF16_ISA=none: act as a CPU without bf16 units (bf16 runs fp32); =emulated: run the bf16
  // path anyway (its numerics on any CPU, slow where the units are missing). Nothing else: the CPU
  // says what it has, and the record must not claim units it lacks.
  if (const char* env = std::getenv("STATESCOPE_BF16_ISA"); env && *env) {
    const std::string v = env;
    if (v == "none") return "";
    if (v == "emulated") return v;
    throw Error("STATESCOPE_BF16_ISA '" + v + "': expected none or emulated (or unset: what the CPU has)");
  }
  const auto caps = at::cpu::get_cpu_capabilities();
  // AMX needs the kernel's permission for its tile state (init_amx asks for it); without it oneDNN
  // falls back to the AVX-512 kernels.
  if (capability(caps, "amx_bf16") && capability(caps, "amx_tile") && at::cpu::init_amx()) return "AMX";
  if (capability(caps, "avx512_bf16")) return "AVX512-BF16";
  return "";
}
}  // namespace

std::string cpu_bf16_isa() {
  static const std::string detected = detect_cpu_bf16_isa();
  std::lock_guard<std::mutex> lock(g_isa_mutex);
  return g_isa_override ? *g_isa_override : detected;
}

void override_cpu_bf16_isa(const std::string& isa) {
  std::lock_guard<std::mutex> lock(g_isa_mutex);
  if (isa == "detect")
    g_isa_override.reset();
  else
    g_isa_override = isa;
}

int configure_threads(int requested) {
  if (requested > 1024 || requested < 0)
    throw Error("--threads " + std::to_string(requested) + ": expected 0 (the default) to 1024 intra-op threads");
  int n = requested;
  if (n <= 0) {
    const char* env = std::getenv("STATESCOPE_THREADS");
    n = 1;
    if (env && *env) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v <= 0 || v > 1024)
        throw Error(std::string("STATESCOPE_THREADS: expected a positive integer, got '") + env + "'");
      n = static_cast<int>(v);
    }
  }
  // More threads than 4x the CPUs only oversubscribe; thousands of them (each with its stack) hang
  // LibTorch's pool setup under a memory limit. Refused by name rather than started.
  const int cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (n > std::max(4 * cpus, 8))
    throw Error((requested > 0 ? "--threads " : "STATESCOPE_THREADS ") + std::to_string(n) + ": more than 4x this machine's " +
                std::to_string(cpus) + " CPUs (at most " + std::to_string(std::max(4 * cpus, 8)) + ")");
  torch::set_num_threads(n);
  return n;
}

std::string runtime_summary() {
  return std::string("torch ") + TORCH_VERSION + ", CUDA " +
         (torch::cuda::is_available() ? std::to_string(torch::cuda::device_count()) + " device(s)"
                                      : std::string("not available")) +
         ", threads " + std::to_string(torch::get_num_threads());
}

std::string resolve_device(const std::string& name) {
  const bool has_cuda = torch::cuda::is_available();
  const int64_t n = has_cuda ? static_cast<int64_t>(torch::cuda::device_count()) : 0;
  if (name == "cpu") return "cpu";
  if (name == "auto") return n > 0 ? "cuda:0" : "cpu";
  if (name == "cuda" || name.rfind("cuda:", 0) == 0) {
    int64_t idx = 0;
    if (name.size() > 5) {
      char* end = nullptr;
      idx = std::strtol(name.c_str() + 5, &end, 10);
      if (*end != '\0' || idx < 0) throw Error("device '" + name + "': expected cuda:N with N a GPU index");
    }
    if (n == 0)
      throw Error("device '" + name + "': no CUDA device is visible (this LibTorch " +
                  std::string(torch::cuda::is_available() ? "sees none" : "reports CUDA unavailable") +
                  "); use --device cpu");
    if (idx >= n)
      throw Error("device '" + name + "': only " + std::to_string(n) + " CUDA device(s) (0.." + std::to_string(n - 1) + ")");
    return "cuda:" + std::to_string(idx);
  }
  throw Error("device '" + name + "': expected cpu, cuda, cuda:N or auto");
}

void check_precision(const std::string& precision) {
  if (precision != "fp32" && precision != "bf16")
    throw Error("precision '" + precision + "': expected fp32 or bf16");
}

void check_scan_kernels(const std::string& mode) {
  if (mode != "auto" && mode != "aten" && mode != "fused")
    throw Error("scan '" + mode + "': expected auto, aten or fused");
}

bool Compute::bf16_fallback() const { return precision == "bf16" && device == "cpu" && cpu_bf16_isa().empty(); }

std::string Compute::effective_precision() const { return bf16_fallback() ? "fp32" : precision; }

std::string Compute::bf16_isa() const {
  return precision == "bf16" && device == "cpu" ? cpu_bf16_isa() : "";
}

std::string Compute::summary() const {
  const bool gpu = device.rfind("cuda", 0) == 0;
  const std::string isa = bf16_isa();
  return device + " " + effective_precision() + (isa.empty() ? "" : " " + isa) +
         (fused() ? (gpu ? " fused-scan" : " loop-scan") : "") +
         (bf16_fallback() ? " (bf16 asked: this CPU has neither AMX nor AVX512-BF16)" : "");
}

Compute make_compute(const std::string& device, const std::string& precision, const std::string& scan,
                     const Compute& base) {
  Compute c = base;
  if (!precision.empty()) check_precision(precision), c.precision = precision;
  if (!scan.empty()) check_scan_kernels(scan), c.scan = scan;
  if (!device.empty()) c.device = resolve_device(device);
  return c;
}

Compute default_compute() { return g_default; }

void set_compute(const std::string& device, const std::string& precision) {
  g_default = make_compute(device, precision, "", g_default);
}

std::string compute_device() { return g_default.device; }
std::string compute_precision() { return g_default.precision; }

void set_scan_kernels(const std::string& mode) { g_default = make_compute("", "", mode, g_default); }
std::string scan_kernels() { return g_default.scan; }

std::string compute_summary() { return g_default.summary(); }

}  // namespace statescope
