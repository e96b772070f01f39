#include "lockstep/report/png_plots.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace lockstep {

namespace {

// PLplot ends the process when it cannot start a device: plinit -> plSelectDev asks on stdin for
// another device, then plexit("plSelectDev: Too many tries.") calls exit(1); a driver that does not
// load ends it the same way. That happens where the library is but its drivers are not (the GPU
// machine's pack carries libplplot, not the drivers folder it dlopens). A library must not end the
// process: the pngcairo device is looked for first (unavailableHere), and PLplot's calls that can
// end it run under an exit handler (plsexit) that jumps back into underExitHandler, whose frame
// holds no C++ object, before plexit's own exit (plexit calls the handler first). After such a
// jump PLplot's state is unknown: it is not called again in the process.
std::string gPlplotFailed;  // why PLplot failed to start, once it has
std::jmp_buf* gPlplotExit = nullptr;
char gPlplotExitMessage[512];
std::string gPlplotWarning;  // the last plabort message (e.g. the drivers folder cannot be read)

int jumpBackFromPlexit(const char* message) {
  std::snprintf(gPlplotExitMessage, sizeof gPlplotExitMessage, "%s", message ? message : "");
  std::longjmp(*gPlplotExit, 1);
}

void keepPlplotWarning(const char* message) { gPlplotWarning = message ? message : ""; }

std::string driversFolder() {
  const char* dir = std::getenv("PLPLOT_DRV_DIR");
  return dir && *dir ? std::string("PLPLOT_DRV_DIR=") + dir : std::string("the drivers folder PLplot was built with");
}

// Runs f(arg) under the exit handler; false when PLplot would have ended the process (its message
// in gPlplotExitMessage).
bool underExitHandler(void (*f)(void*), void* arg) {
  std::jmp_buf here;
  gPlplotExit = &here;
  plsexit(jumpBackFromPlexit);
  if (setjmp(here) == 0) {
    f(arg);
    plsexit(nullptr);
    gPlplotExit = nullptr;
    return true;
  }
  plsexit(nullptr);
  gPlplotExit = nullptr;
  return false;
}

struct DeviceList {
  const char* menus[256];
  const char* names[256];
  int count = 256;
};

// plgDevs reads the drivers folder; it ends the process when the folder holds no driver.
void listDevices(void* arg) {
  DeviceList& d = *static_cast<DeviceList*>(arg);
  const char** m = d.menus;
  const char** n = d.names;
  plgDevs(&m, &n, &d.count);
}

void startPlplot(void*) { plinit(); }

// Why PLplot cannot write PNGs ("" when it can): its drivers offer no pngcairo device, or it failed
// to start one before.
std::string unavailableHere() {
  if (!gPlplotFailed.empty()) return gPlplotFailed;
  static const std::string why = [] {
    DeviceList d;
    gPlplotWarning.clear();
    plsabort(keepPlplotWarning);  // an unreadable drivers folder: a warning on stderr otherwise
    const bool listed = underExitHandler(listDevices, &d);
    plsabort(nullptr);
    if (!listed) {
      gPlplotFailed = std::string("PLplot finds no device driver: ") + gPlplotExitMessage + " (" + driversFolder() + ")";
      return gPlplotFailed;
    }
    for (int i = 0; i < d.count; ++i)
      if (d.names[i] && std::strcmp(d.names[i], "pngcairo") == 0) return std::string();
    return "PLplot has no pngcairo device (" + driversFolder() + " holds no cairo driver" +
           (gPlplotWarning.empty() ? std::string() : ": " + gPlplotWarning) + ")";
  }();
  return why;
}

// Starts the device beginPng chose; throws PlotsUnavailable (and removes the file) when PLplot
// cannot.
void startDevice(const std::string& path) {
  if (!underExitHandler(startPlplot, nullptr)) {
    gPlplotFailed = std::string("PLplot could not start its pngcairo device: ") + gPlplotExitMessage + " (" +
                    driversFolder() + ")";
    std::remove(path.c_str());
    throw PlotsUnavailable(gPlplotFailed);
  }
}

// Starts a PNG of width x height pixels on a white page, black axes and labels (colour 1).
// PLplot reports an unwritable file only on stderr: it is checked here first. Throws
// PlotsUnavailable, before touching the file, when PLplot cannot write PNGs here.
void beginPng(const std::string& path, int width, int height, const char* what) {
  if (const std::string why = unavailableHere(); !why.empty()) throw PlotsUnavailable(why);
  {
    std::ofstream probe(path, std::ios::binary);
    if (!probe) throw std::runtime_error(std::string("cannot write the ") + what + " image '" + path + "'");
  }
  plsstrm(0);
  plsdev("pngcairo");
  plsfnam(path.c_str());
  plspage(0, 0, width, height, 0, 0);
  plscolbg(255, 255, 255);
  plscol0(1, 0, 0, 0);
}

}  // namespace

std::string pngPlotsUnavailable() { return unavailableHere(); }

void writeHistogramPng(const std::string& path, const HistogramPlot& s) {
  if (s.count == 0 || s.bins.empty())
    throw std::runtime_error("histogram '" + s.name + "': no healthy world to plot");
  const int bins = static_cast<int>(s.bins.size());
  double lo = s.min, hi = s.max;
  if (!(hi > lo)) {  // all values equal: a unit-wide window around them
    lo -= 0.5;
    hi += 0.5;
  }
  const double width = (hi - lo) / bins;
  std::vector<PLFLT> x(bins), y(bins);
  double ymax = 0;
  for (int i = 0; i < bins; ++i) {
    x[i] = lo + i * width;
    y[i] = double(s.bins[i]);
    ymax = std::max(ymax, y[i]);
  }
  beginPng(path, 1000, 640, "histogram");
  plscol0(2, 70, 110, 180);   // bars: blue
  plscol0(3, 200, 60, 40);    // mean: red
  plscol0(4, 120, 120, 120);  // quantiles: grey
  startDevice(path);
  pladv(0);
  plvpor(0.09, 0.97, 0.11, 0.84);
  plwind(lo - width, hi + width, 0, ymax * 1.12 + 1);
  plcol0(1);
  plbox("bcnst", 0, 0, "bcnstv", 0, 0);
  char sub[256];
  std::snprintf(sub, sizeof sub, "%lld worlds: mean %.6g (red), sd %.6g, min %.6g, max %.6g; dashed: quantiles",
                static_cast<long long>(s.count), s.mean, s.stddev, s.min, s.max);
  plmtex("t", 3.4, 0.5, 0.5, s.title.c_str());
  plschr(0, 0.75);
  plmtex("t", 1.6, 0.5, 0.5, sub);
  plschr(0, 1.0);
  plmtex("b", 3.0, 0.5, 0.5, s.name.c_str());
  plmtex("l", 4.0, 0.5, 0.5, "worlds");
  for (int i = 0; i < bins; ++i) {  // filled bars with outlines
    PLFLT bx[4] = {x[i], x[i], x[i] + width, x[i] + width}, by[4] = {0, y[i], y[i], 0};
    plcol0(2);
    plfill(4, bx, by);
    plcol0(1);
    plline(4, bx, by);
  }
  auto vline = [&](double at, int color, int style) {
    PLFLT lx[2] = {at, at}, ly[2] = {0, ymax * 1.12};
    plcol0(color);
    pllsty(style);
    plline(2, lx, ly);
  };
  for (double q : s.quantiles) vline(q, 4, 2);
  vline(s.mean, 3, 1);
  plend1();
}

namespace {

// The curves' colours, distinct on white (cmap0 entries 2 .. 13).
const unsigned char kCurveColors[LinePlot::kMaxCurves][3] = {
    {31, 119, 180}, {214, 39, 40}, {44, 160, 44}, {255, 127, 14}, {148, 103, 189}, {140, 86, 75},
    {227, 119, 194}, {90, 90, 90}, {188, 189, 34}, {23, 190, 207}, {0, 0, 128}, {128, 0, 0}};

// Axis labels as the shortest of %g, so that small values (energy drifts of 1e-9 J) read as
// themselves rather than under a separate "x10^-9" that PLplot would place over the title.
void shortLabel(PLINT, PLFLT value, char* label, PLINT length, PLPointer) {
  std::snprintf(label, static_cast<std::size_t>(length), "%.6g", std::abs(value) < 1e-300 ? 0.0 : value);
}

}  // namespace

void writeLinePlotPng(const std::string& path, const LinePlot& p) {
  const int n = static_cast<int>(p.curves.size());
  if (n == 0 || n > LinePlot::kMaxCurves)
    throw std::runtime_error("plot '" + path + "': " + std::to_string(n) + " curves (1 to " +
                             std::to_string(LinePlot::kMaxCurves) + " fit one plot)");
  if (p.x.empty()) throw std::runtime_error("plot '" + path + "': no points");
  double ylo = INFINITY, yhi = -INFINITY;
  for (const LinePlot::Curve& c : p.curves) {
    if (c.y.size() != p.x.size()) throw std::logic_error("plot '" + path + "': curve '" + c.label + "' has the wrong length");
    for (double y : c.y)
      if (std::isfinite(y)) {
        ylo = std::min(ylo, y);
        yhi = std::max(yhi, y);
      }
  }
  if (!std::isfinite(ylo)) ylo = yhi = 0;  // nothing finite: an empty window around 0
  const double ypad = yhi > ylo ? 0.05 * (yhi - ylo) : std::max(0.5, 0.05 * std::abs(ylo));
  double xlo = p.x.front(), xhi = p.x.back();
  if (!(xhi > xlo)) {
    xlo -= 0.5;
    xhi += 0.5;
  }
  beginPng(path, 1200, 700, "plot");
  for (int k = 0; k < LinePlot::kMaxCurves; ++k)
    plscol0(2 + k, kCurveColors[k][0], kCurveColors[k][1], kCurveColors[k][2]);
  plscol0(14, 235, 235, 235);  // grid
  startDevice(path);
  pladv(0);
  plvpor(0.12, 0.70, 0.11, 0.86);
  plwind(xlo, xhi, ylo - ypad, yhi + ypad);
  plcol0(14);
  plbox("g", 0, 0, "g", 0, 0);
  plcol0(1);
  plslabelfunc(shortLabel, nullptr);
  plbox("bcnst", 0, 0, "bcnstvo", 0, 0);
  plslabelfunc(nullptr, nullptr);
  plmtex("t", 3.2, 0.5, 0.5, p.title.c_str());
  plschr(0, 0.75);
  plmtex("t", 1.5, 0.5, 0.5, p.subtitle.c_str());
  plschr(0, 1.0);
  plmtex("b", 3.0, 0.5, 0.5, p.xLabel.c_str());
  plmtex("l", 7.0, 0.5, 0.5, p.yLabel.c_str());
  plwidth(2);
  for (int k = 0; k < n; ++k) {  // each curve in runs of finite points
    plcol0(2 + k);
    const std::vector<double>& y = p.curves[k].y;
    for (std::size_t i = 0; i < y.size();) {
      std::size_t j = i;
      while (j < y.size() && std::isfinite(y[j])) ++j;
      if (j - i == 1) plpoin(1, const_cast<double*>(&p.x[i]), const_cast<double*>(&y[i]), 1);
      if (j - i > 1) plline(static_cast<PLINT>(j - i), &p.x[i], &y[i]);
      i = std::max(j, i + 1);
    }
  }
  plwidth(1);
  std::vector<PLINT> opts(n, PL_LEGEND_LINE), colors(n), styles(n, 1), textColors(n, 1);
  std::vector<PLFLT> widths(n, 2.0);
  std::vector<const char*> labels(n);
  for (int k = 0; k < n; ++k) {
    colors[k] = 2 + k;
    labels[k] = p.curves[k].label.c_str();
  }
  PLFLT legendWidth = 0, legendHeight = 0;
  plschr(0, 0.8);
  pllegend(&legendWidth, &legendHeight, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.02, 0.0, 0.06, 0, 1, 1, n, 1, n, opts.data(),
           1.0, 1.0, 2.0, 0.0, textColors.data(), labels.data(), nullptr, nullptr, nullptr, nullptr, colors.data(),
           styles.data(), widths.data(), nullptr, nullptr, nullptr, nullptr);
  plend1();
}

}  // namespace lockstep

namespace lockstep {

namespace {

// A filled bar over [x0, x1] x [y0, y1] in colour `color`, outlined in black.
void drawBar(double x0, double x1, double y0, double y1, int color) {
  PLFLT bx[5] = {x0, x0, x1, x1, x0}, by[5] = {y0, y1, y1, y0, y0};
  plcol0(color);
  plfill(4, bx, by);
  plcol0(1);
  plline(5, bx, by);
}

// A legend of coloured boxes right of the viewport, one row per label, colours from cmap0.
void boxLegend(const std::vector<std::string>& labels, const std::vector<PLINT>& colorIndices) {
  const int n = static_cast<int>(labels.size());
  std::vector<PLINT> opts(n, PL_LEGEND_COLOR_BOX), textColors(n, 1), patterns(n, 0);
  std::vector<PLFLT> scales(n, 0.8), lineWidths(n, 1.0);
  std::vector<const char*> text(n);
  for (int k = 0; k < n; ++k) text[k] = labels[k].c_str();
  PLFLT w = 0, h = 0;
  plschr(0, 0.8);
  pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
           PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.02, 0.0, 0.05, 0, 1, 1, n, 1, n, opts.data(),
           1.0, 1.0, 2.0, 0.0, textColors.data(), text.data(), colorIndices.data(), patterns.data(), scales.data(),
           lineWidths.data(), nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  plschr(0, 1.0);
}

// The frame of a bar chart of `groups` named groups over [ylo, yhi]: axes, a line at 0, the group
// names under their groups, title, subtitle and y label.
void barFrame(const std::vector<std::string>& groups, double ylo, double yhi, const std::string& title,
              const std::string& subtitle, const char* yLabel) {
  const int n = static_cast<int>(groups.size());
  plvpor(0.09, 0.78, 0.14, 0.86);
  plwind(0, n, ylo, yhi);
  plcol0(14);
  plbox("", 0, 0, "g", 0, 0);
  plcol0(1);
  plbox("bc", 0, 0, "bcnstv", 0, 0);
  PLFLT zx[2] = {0, double(n)}, zy[2] = {0, 0};
  plline(2, zx, zy);
  plschr(0, n > 12 ? 0.6 : 0.85);
  for (int i = 0; i < n; ++i) plmtex("b", 1.5, (i + 0.5) / n, 0.5, groups[i].c_str());
  plschr(0, 1.0);
  plmtex("t", 3.2, 0.5, 0.5, title.c_str());
  plschr(0, 0.75);
  plmtex("t", 1.5, 0.5, 0.5, subtitle.c_str());
  plschr(0, 1.0);
  plmtex("l", 4.0, 0.5, 0.5, yLabel);
}

}  // namespace

void writeSobolPng(const std::string& path, const SobolPlot& s) {
  const std::vector<std::string>& names = s.names;
  const std::size_t k = names.size();
  if (k == 0 || s.first.size() != k || s.total.size() != k || s.firstLow.size() != k || s.firstHigh.size() != k ||
      s.totalLow.size() != k || s.totalHigh.size() != k)
    throw std::runtime_error("Sobol plot '" + path + "': " + std::to_string(k) + " names for " +
                             std::to_string(s.first.size()) + " indices");
  double ylo = 0, yhi = 1;  // [0, 1], widened to every finite estimate and interval end
  for (const std::vector<double>* v : {&s.first, &s.total, &s.firstLow, &s.firstHigh, &s.totalLow, &s.totalHigh})
    for (double x : *v)
      if (std::isfinite(x)) {
        ylo = std::min(ylo, x);
        yhi = std::max(yhi, x);
      }
  const double pad = 0.05 * (yhi - ylo);
  beginPng(path, 1100, 640, "Sobol");
  plscol0(2, 70, 110, 180);    // first-order: blue
  plscol0(3, 230, 140, 40);    // total: orange
  plscol0(14, 235, 235, 235);  // grid
  startDevice(path);
  pladv(0);
  char sub[256];
  std::snprintf(sub, sizeof sub, "%lld base rows; whiskers: 95%% bootstrap intervals (%d resamples)",
                static_cast<long long>(s.rows), s.resamples);
  barFrame(names, ylo - pad, yhi + pad, s.title, sub, "Sobol index");
  for (std::size_t i = 0; i < k; ++i) {
    const double c = double(i) + 0.5;
    const double est[2] = {s.first[i], s.total[i]}, lo[2] = {s.firstLow[i], s.totalLow[i]},
                 hi[2] = {s.firstHigh[i], s.totalHigh[i]};
    for (int j = 0; j < 2; ++j) {
      const double x0 = j == 0 ? c - 0.36 : c + 0.02, x1 = j == 0 ? c - 0.02 : c + 0.36;
      if (std::isfinite(est[j])) drawBar(x0, x1, 0, est[j], 2 + j);
      if (std::isfinite(lo[j]) && std::isfinite(hi[j])) {
        PLFLT wx = 0.5 * (x0 + x1), wlo = lo[j], whi = hi[j];
        plcol0(1);
        plwidth(2);
        plerry(1, &wx, &wlo, &whi);
        plwidth(1);
      }
    }
  }
  boxLegend({"first order S", "total ST"}, {2, 3});
  plend1();
}

void writeSpearmanPng(const std::string& path, const std::vector<std::string>& parameters,
                      const std::vector<std::string>& outcomes, const std::vector<std::vector<double>>& rho,
                      const std::string& title) {
  const std::size_t np = parameters.size(), no = outcomes.size();
  bool shaped = np > 0 && no > 0 && no <= std::size_t(LinePlot::kMaxCurves) && rho.size() == np;
  for (const std::vector<double>& row : rho) shaped = shaped && row.size() == no;
  if (!shaped)
    throw std::runtime_error("Spearman plot '" + path + "': needs a " + std::to_string(np) + " x " + std::to_string(no) +
                             " matrix, at least one parameter and 1 to " + std::to_string(LinePlot::kMaxCurves) +
                             " outcomes");
  beginPng(path, 1100, 640, "Spearman");
  for (int k = 0; k < LinePlot::kMaxCurves; ++k)
    plscol0(2 + k, kCurveColors[k][0], kCurveColors[k][1], kCurveColors[k][2]);
  plscol0(14, 235, 235, 235);
  startDevice(path);
  pladv(0);
  barFrame(parameters, -1.05, 1.05, title, "Spearman rank correlation of each parameter with each outcome",
           "Spearman rho");
  const double width = 0.8 / double(no);
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t o = 0; o < no; ++o) {
      const double x0 = double(p) + 0.1 + width * double(o);
      if (std::isfinite(rho[p][o])) drawBar(x0, x0 + width, 0, rho[p][o], 2 + int(o));
    }
  std::vector<PLINT> colors;
  for (std::size_t o = 0; o < no; ++o) colors.push_back(2 + PLINT(o));
  boxLegend(outcomes, colors);
  plend1();
}

}  // namespace lockstep
