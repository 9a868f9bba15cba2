// progress.h — one-line progress for long CLI work: step, rate, ETA; redrawn in place on a terminal,
// printed every few seconds otherwise (logs stay readable).
#pragma once
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace statescope::cli {

class ProgressLine {
 public:
  void update(const std::string& text, bool force = false) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (!force && since < (tty_ ? 0.1 : 5.0)) return;
    last_ = now;
    if (tty_) std::fprintf(stderr, "\r\033[K%s", text.c_str());
    else std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
    dirty_ = tty_;
  }
  void done() {
    if (dirty_) std::fprintf(stderr, "\n");
    dirty_ = false;
  }
  ~ProgressLine() { done(); }

 private:
  bool tty_ = isatty(2);
  // A data-parallel job's ranks other than 0 stay silent (rank 0 speaks for the job).
  bool quiet_ = [] {
    const char* r = std::getenv("RANK");
    const char* w = std::getenv("WORLD_SIZE");
    return r && w && std::string(r) != "0" && std::string(w) != "1";
  }();
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Progress of several jobs at once on one line: "[elapsed] job A ... | job B ...", each job's entry
// replaced by its next update and dropped when it ends; cut to the terminal's width on a TTY.
class ProgressBoard {
 public:
  void update(const std::string& job, const std::string& text) {
    if (job != "data") remove("data");  // tokenizing happens once, before any run
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const auto& r) { return r.first == job; });
    if (it == rows_.end()) rows_.emplace_back(job, text);
    else it->second = text;
    draw(false);
  }
  void remove(const std::string& job) {
    rows_.erase(std::remove_if(rows_.begin(), rows_.end(), [&](const auto& r) { return r.first == job; }), rows_.end());
  }
  void done() { line_.done(); }

 private:
  void draw(bool force) {
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::string s = "[" + fmt(el) + "] ";
    for (size_t i = 0; i < rows_.size(); ++i) s += (i ? " | " : "") + rows_[i].second;
    if (isatty(2)) {
      struct winsize w {};
      const size_t cols = ioctl(2, TIOCGWINSZ, &w) == 0 && w.ws_col > 10 ? w.ws_col - 1 : 159;
      if (s.size() > cols) s = s.substr(0, cols);
    }
    line_.update(s, force);
  }
  static std::string fmt(double s) {
    char b[32];
    std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
    return b;
  }
  ProgressLine line_;
  std::vector<std::pair<std::string, std::string>> rows_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};

// "1h05m", "3m07s"; "?" when there is no estimate yet (not finite, negative, or beyond 100 days,
// which printed -2147483648h after an int overflow).
inline std::string fmt_eta(double s) {
  char b[32];
  if (!(s >= 0) || s > 100.0 * 86400) return "?";
  if (s >= 3600) std::snprintf(b, sizeof b, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  else std::snprintf(b, sizeof b, "%dm%02ds", int(s / 60), int(s) % 60);
  return b;
}

// Progress of first-time tokenization (a DataProgressFn): MB done, MB/s, ETA on `line`; sets
// *called when preparation actually ran (not when the token cache was reused).
inline std::function<bool(int64_t, int64_t)> tokenize_progress(ProgressLine& line, const std::string& label,
                                                                bool* called = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  return [&line, label, called, t0](int64_t done, int64_t total) {
    if (called) *called = true;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char buf[200];
    std::snprintf(buf, sizeof buf, "tokenizing %s: %.1f/%.1f MB  %.1f MB/s  ETA %s", label.c_str(), done / 1e6,
                  total / 1e6, done / 1e6 / std::max(el, 1e-9),
                  fmt_eta(el / std::max<int64_t>(done, 1) * (total - done)).c_str());
    line.update(buf, done == total);
    return true;
  };
}

}  // namespace statescope::cli
