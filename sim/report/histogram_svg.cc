// Log-scale length histograms as SVG (see histogram_svg.h). Plain SVG 1.1
// with no scripts, fonts or external references, so it opens anywhere.
#include "sim/report/histogram_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace servesim {
namespace {

constexpr double kWidth = 720, kPanelHeight = 250;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 50;
constexpr int kBinsPerDecade = 10;

struct Axis {
  int lo_decade = 0, hi_decade = 1;  // x spans [10^lo, 10^hi]
  int bins() const { return (hi_decade - lo_decade) * kBinsPerDecade; }
};

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", x);
  return buf;
}

// 1, 10, 100, 1k, ... for decade labels.
std::string DecadeLabel(int decade) {
  static const char* kSuffix[] = {"", "k", "M", "G"};
  if (decade < 0) return "1e" + std::to_string(decade);
  const int group = std::min(decade / 3, 3);
  std::string digits = "1" + std::string(decade - 3 * group, '0');
  return digits + kSuffix[group];
}

Axis MakeAxis(const std::vector<double>& a, const std::vector<double>& b) {
  double lo = INFINITY, hi = -INFINITY;
  for (const auto* v : {&a, &b}) {
    for (double x : *v) {
      const double t = std::max(x, 1.0);
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
  }
  Axis axis;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return axis;
  // Bounded so that absurd inputs still make a small picture.
  axis.lo_decade =
      std::clamp(static_cast<int>(std::floor(std::log10(lo))), 0, 12);
  axis.hi_decade =
      std::clamp(static_cast<int>(std::ceil(std::log10(hi))), 0, 12);
  if (axis.hi_decade <= axis.lo_decade) axis.hi_decade = axis.lo_decade + 1;
  return axis;
}

// A tick step of 1, 2 or 5 times a power of ten giving at most 5 ticks.
double NiceStep(double top) {
  const double raw = top / 5;
  const double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10 * p;
}

void Text(std::ostream& os, double x, double y, const std::string& s,
          const char* anchor, const char* extra = "") {
  os << "<text x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" text-anchor=\""
     << anchor << "\"" << extra << ">" << s << "</text>\n";
}

void Line(std::ostream& os, double x1, double y1, double x2, double y2) {
  os << "<line x1=\"" << Num(x1) << "\" y1=\"" << Num(y1) << "\" x2=\""
     << Num(x2) << "\" y2=\"" << Num(y2) << "\"/>\n";
}

void Panel(std::ostream& os, const std::vector<double>& values,
           const char* name, const char* color, const Axis& axis, double y0) {
  const double plot_w = kWidth - kLeft - kRight;
  const double plot_h = kPanelHeight - kTop - kBottom;
  const double base = y0 + kTop + plot_h;
  const double span = axis.hi_decade - axis.lo_decade;
  auto x_of = [&](double log10x) {
    return kLeft + (log10x - axis.lo_decade) / span * plot_w;
  };
  Text(os, kLeft, y0 + kTop - 12,
       std::string(name) + " tokens (n=" + std::to_string(values.size()) + ")",
       "start", " font-weight=\"bold\"");
  std::vector<double> share(axis.bins(), 0.0);
  for (double v : values) {
    const double t =
        (std::log10(std::max(v, 1.0)) - axis.lo_decade) * kBinsPerDecade;
    const int bin =
        std::clamp(static_cast<int>(std::floor(t)), 0, axis.bins() - 1);
    share[bin] += 100.0 / static_cast<double>(values.size());
  }
  // An empty sample still gets a readable 0-10% axis.
  const double peak =
      values.empty() ? 10.0 : *std::max_element(share.begin(), share.end());
  const double step = NiceStep(peak);
  const double top = std::ceil(peak / step) * step;
  os << "<g fill=\"" << color << "\">\n";
  for (int i = 0; i < axis.bins(); ++i) {
    if (share[i] <= 0) continue;
    const double h = share[i] / top * plot_h;
    const double x1 =
        x_of(axis.lo_decade + static_cast<double>(i) / kBinsPerDecade);
    const double x2 =
        x_of(axis.lo_decade + static_cast<double>(i + 1) / kBinsPerDecade);
    os << "<rect x=\"" << Num(x1) << "\" y=\"" << Num(base - h) << "\" width=\""
       << Num(std::max(x2 - x1 - 1, 0.5)) << "\" height=\"" << Num(h)
       << "\"/>\n";
  }
  os << "</g>\n<g stroke=\"black\">\n";
  Line(os, kLeft, base, kLeft + plot_w, base);
  Line(os, kLeft, base, kLeft, y0 + kTop);
  for (int d = axis.lo_decade; d <= axis.hi_decade; ++d) {
    Line(os, x_of(d), base, x_of(d), base + 6);
    for (int m = 2; m <= 9 && d < axis.hi_decade; ++m) {
      const double x = x_of(d + std::log10(m));
      Line(os, x, base, x, base + 3);
    }
  }
  for (double y = 0; y <= top + step / 2; y += step) {
    Line(os, kLeft - 5, base - y / top * plot_h, kLeft,
         base - y / top * plot_h);
  }
  os << "</g>\n";
  for (int d = axis.lo_decade; d <= axis.hi_decade; ++d) {
    Text(os, x_of(d), base + 20, DecadeLabel(d), "middle");
  }
  for (double y = 0; y <= top + step / 2; y += step) {
    char label[32];
    std::snprintf(label, sizeof label, "%g%%", y);
    Text(os, kLeft - 8, base - y / top * plot_h + 4, label, "end");
  }
  if (values.empty()) {
    Text(os, kLeft + plot_w / 2, base - plot_h / 2, "no data", "middle");
  }
  Text(os, kLeft + plot_w / 2, base + 40, "tokens (log scale)", "middle");
  const double mid = y0 + kTop + plot_h / 2;
  Text(os, 16, mid, "share of requests", "middle",
       (" transform=\"rotate(-90 16 " + Num(mid) + ")\"").c_str());
}

}  // namespace

void WriteLengthHistogramSvg(const std::vector<double>& prompt,
                             const std::vector<double>& completion,
                             std::ostream& os) {
  const Axis axis = MakeAxis(prompt, completion);
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(kWidth)
     << "\" height=\"" << Num(2 * kPanelHeight) << "\" viewBox=\"0 0 "
     << Num(kWidth) << " " << Num(2 * kPanelHeight) << "\""
     << " font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<title>Request length distributions</title>\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  Panel(os, prompt, "prompt", "#4c72b0", axis, 0);
  Panel(os, completion, "completion", "#dd8452", axis, kPanelHeight);
  os << "</svg>\n";
}

}  // namespace servesim
