// html.h — small text helpers the report's sections share (html_report.cpp and every analysis's
// report.cpp). No Qt, no LibTorch.
#pragma once
#include <string>
#include <vector>

namespace statescope::report {

std::string esc(const std::string& s);                       // &, <, >, " escaped
std::string fmt(double v, const char* f = "%.3f");           // "–" when not finite
std::string section(const std::string& id, const std::string& title, const std::string& body);
// Log-spaced averages of a per-position curve (positions 1..L on a log axis), at most ~n points.
void log_binned(const std::vector<double>& v, std::vector<double>& x, std::vector<double>& y, int n = 240);

}  // namespace statescope::report
