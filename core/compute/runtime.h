// runtime.h — compute settings. A Compute value (device, precision, scan kernels) travels with each
// run: place_model gives it to the model, which keeps it, so the trainer and the analyses read it
// from the model, and two runs with different settings can execute at the same time in one process.
// The process default (CLI --device/--precision/--scan) is only what a run gets when nothing else
// is said. Threads stay process-wide (LibTorch's intra-op pool is).
#pragma once
#include <string>

namespace statescope {

// Number of intra-op threads. 0 means: $STATESCOPE_THREADS if set, else 1. One thread is the
// default because two OpenMP threads on two shared cores collapse (4-20x slower) when another
// process is busy (DESIGN.md §6); raise it explicitly on a quiet machine.
int configure_threads(int requested);

// Short description: torch version, CUDA availability, thread count.
std::string runtime_summary();

// Where and how a model runs.
struct Compute {
  std::string device = "cpu";      // canonical: "cpu" | "cuda:N"
  std::string precision = "fp32";  // "fp32" | "bf16" (mixed, see set_compute)
  // "auto" | "aten" | "fused": statescope's own scan instead of ATen's chunked one, i.e. the CUDA
  // kernels on a GPU and the plain-loop scan (core/model/cpu_scan.h) on the CPU. "auto": fused on the
  // CPU, ATen on a GPU (until the kernels have run on one: issue 16).
  std::string scan = "auto";
  bool fused() const { return scan == "fused" || (scan == "auto" && device == "cpu"); }
  // bf16 asked on a CPU that has neither AMX nor AVX512-BF16: the run goes in fp32 (bf16 there is
  // emulated and slower than fp32) and says so.
  bool bf16_fallback() const;
  // What the run's matmuls and convolutions compute in: "bf16" or "fp32" (precision, less the fallback).
  std::string effective_precision() const;
  // The CPU's bf16 units a CPU bf16 run uses ("AMX", "AVX512-BF16", "emulated"); "" otherwise.
  std::string bf16_isa() const;
  // What a result file records: "cpu fp32 loop-scan", "cpu fp32" (ATen), "cuda:0 bf16",
  // "cuda:0 fp32 fused-scan", "cpu bf16 AVX512-BF16 loop-scan",
  // "cpu fp32 loop-scan (bf16 asked: this CPU has neither AMX nor AVX512-BF16)".
  std::string summary() const;
};
// Checked and canonical: "" keeps that field of `base`; the device is resolved against the
// hardware. Throws Error naming the value (same messages as set_compute / set_scan_kernels).
Compute make_compute(const std::string& device, const std::string& precision, const std::string& scan,
                     const Compute& base = Compute{});
// The process default (what --device/--precision/--scan and the setters below change).
Compute default_compute();

// The process default device and precision (CLI --device/--precision). A model placed without a
// Compute of its own takes them (place_model in checkpoint.h); a spec's fields override them for
// its runs only, without touching the default.
//   device: "cpu", "cuda", "cuda:N", or "auto" (the first GPU when there is one, else the CPU).
//   precision: "fp32", or "bf16" (mixed: fp32 master weights; on a GPU bf16 matmuls and convolutions
//   under autocast; on a CPU the projections and LM head in bf16 from bf16 copies of the weights kept
//   once (core/model/dense.h), and fp32 with a note where the CPU has no bf16 units; the SSM state, A,
//   dt, norms, residual stream, logits and loss stay fp32).
// Throws Error naming the value when it is unknown or the GPU asked for is not there.
void set_compute(const std::string& device, const std::string& precision);
std::string compute_device();     // canonical: "cpu" or "cuda:N"
std::string compute_precision();  // "fp32" | "bf16"
// Canonical form of a device name, checked against the hardware (same errors as set_compute).
std::string resolve_device(const std::string& device);
// The bf16 matmul units of this CPU as oneDNN reaches them: "AMX" (AMX-BF16 tiles), "AVX512-BF16",
// or "" (neither: a bf16 matmul is emulated and slower than fp32). Detected once; the environment's
// STATESCOPE_BF16_ISA=none acts as a CPU without them, =emulated runs the bf16 path on any CPU (Error
// naming any other value).
std::string cpu_bf16_isa();
// Tests only: act as if the CPU had `isa` ("AMX", "AVX512-BF16", "" for neither, or "emulated" to
// run the bf16 path on any CPU so its numerics are tested everywhere); "detect" restores detection.
void override_cpu_bf16_isa(const std::string& isa);
// Throw Error naming the value unless it is a known precision ("fp32" | "bf16") / scan ("aten" | "fused").
void check_precision(const std::string& precision);
void check_scan_kernels(const std::string& mode);

// The scan used by training and the analyses on a GPU: "aten" (ATen's chunked SSD scan, the default)
// or "fused" (the CUDA kernels of kernels/, forward and backward). The kernels are tested against
// their CPU twins on every CI run but have not yet run on a GPU here, so they are opt-in (CLI --scan
// fused) until tools/gpu_check.sh passes on one. CPU runs always use ATen. Throws Error naming the value.
void set_scan_kernels(const std::string& mode);
std::string scan_kernels();
// default_compute().summary().
std::string compute_summary();

}  // namespace statescope
