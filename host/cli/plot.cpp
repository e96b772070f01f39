// `lockstep plot FILE.npz`: PNG plots over time of a recording of `lockstep simulate --out FILE.npz`:
// coordinates, energies and their drift, constraint errors, or any recorded array, for chosen worlds.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>

#include "commands.h"
#include "npz.h"
#include "lockstep/report/png_plots.h"

namespace lockstep::cli {

namespace {

namespace fs = std::filesystem;

// ---- what to plot --------------------------------------------------------------------------------

struct PlotOptions {
  std::string file;
  std::string worlds = "0";
  std::string quantities = "q,energy,drift,constraints";
  std::string out;  // default: FILE without .npz, then "-plots"
};

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  for (char c : list + ",") {
    if (c != ',') {
      if (c != ' ') item += c;
    } else if (!item.empty()) {
      out.push_back(item);
      item.clear();
    }
  }
  return out;
}

class Plotter {
 public:
  Plotter(const PlotOptions& o) : o_(o), arrays_(readNpz(o.file)) {
    auto t = arrays_.find("time");
    if (t == arrays_.end()) throw std::runtime_error(o.file + ": no 'time' array; is it a recording of lockstep simulate?");
    time_ = &t->second;
    // Before the folder is made: a recording without frames has nothing to draw.
    if (time_->frames() == 0)
      throw std::runtime_error(o.file + ": the recording holds no frames (its 'time' array is empty): nothing to plot");
    for (const std::string& w : splitList(o.worlds)) {
      std::size_t used = 0;
      long long world = -1;
      try {
        world = std::stoll(w, &used);
      } catch (const std::exception&) {
      }
      if (used != w.size() || world < 0 || world >= time_->worlds())
        throw std::runtime_error("--worlds: '" + w + "' is not a world of " + o.file + " (it has worlds 0 to " +
                                 std::to_string(time_->worlds() - 1) + ")");
      worlds_.push_back(world);
    }
    if (worlds_.empty()) throw std::runtime_error("--worlds: no world given");
    dir_ = o.out.empty() ? o.file.substr(0, o.file.size() - 4) + "-plots" : o.out;
    fs::create_directories(dir_);
  }

  // Plots every name of --quantities; returns the files written.
  std::vector<std::string> run() {
    const bool byDefault = o_.quantities == PlotOptions().quantities;
    for (const std::string& q : splitList(o_.quantities)) {
      const std::size_t before = written_.size();
      if (q == "energy") energies();
      else if (q == "drift") drift();
      else if (q == "constraints") constraints();
      else if (arrays_.count(q) && q != "time" && !isNames(q)) array(q);
      else if (!byDefault) throw std::runtime_error("--quantities: '" + q + "' is not in " + o_.file + unknownHint());
      if (written_.size() == before && !byDefault)
        throw std::runtime_error("--quantities: " + o_.file + " holds nothing to plot for '" + q + "'" + unknownHint());
    }
    return written_;
  }

 private:
  static bool isNames(const std::string& name) {
    return name.size() > 6 && name.compare(name.size() - 6, 6, "_names") == 0;
  }
  std::string unknownHint() const {
    std::string all;
    for (const auto& [name, a] : arrays_)
      if (name != "time" && !isNames(name) && a.shape.size() >= 2) all += ", " + name;
    return " (it holds " + all.substr(std::min<std::size_t>(2, all.size())) + "; also: energy, drift, constraints)";
  }
  std::vector<double> times(std::int64_t w) const {
    std::vector<double> t(time_->frames());
    for (std::int64_t f = 0; f < time_->frames(); ++f) t[f] = time_->at(f, w, 0);
    return t;
  }
  std::vector<double> series(const NpyArray& a, std::int64_t w, std::int64_t c) const {
    std::vector<double> y(a.frames());
    for (std::int64_t f = 0; f < a.frames(); ++f) y[f] = a.at(f, w, c);
    return y;
  }
  std::vector<std::string> componentNames(const std::string& name) const {
    const NpyArray& a = arrays_.at(name);
    auto n = arrays_.find(name + "_names");
    std::vector<std::string> names = n != arrays_.end() ? n->second.strings() : std::vector<std::string>();
    if (static_cast<std::int64_t>(names.size()) != a.width()) {
      names.clear();
      for (std::int64_t c = 0; c < a.width(); ++c) names.push_back(a.width() == 1 ? name : name + "[" + std::to_string(c) + "]");
    }
    return names;
  }
  const NpyArray* find(const std::string& name) const {
    auto it = arrays_.find(name);
    return it == arrays_.end() ? nullptr : &it->second;
  }
  void write(LinePlot& p, const std::string& file) {
    p.xLabel = "time [s]";
    p.subtitle = o_.file;
    // Labels without the dotted head they share ("q.joint1" .. "q.joint7": "joint1" ..), named once above.
    std::string head = p.curves.size() > 1 ? p.curves[0].label : "";
    for (const LinePlot::Curve& c : p.curves) {
      std::size_t n = 0;
      while (n < head.size() && n < c.label.size() && head[n] == c.label[n]) ++n;
      head.resize(n);
    }
    head.resize(head.rfind('.') == std::string::npos ? 0 : head.rfind('.') + 1);
    if (!head.empty()) {
      for (LinePlot::Curve& c : p.curves) c.label.erase(0, head.size());
      p.subtitle += "; curves: " + head + "*";
    }
    const std::string path = (fs::path(dir_) / file).string();
    writeLinePlotPng(path, p);
    written_.push_back(path);
  }

  // Every component of one array, one image per world (and per 12 components).
  void array(const std::string& name) {
    const NpyArray& a = arrays_.at(name);
    const std::vector<std::string> names = componentNames(name);
    const std::int64_t pages = (a.width() + LinePlot::kMaxCurves - 1) / LinePlot::kMaxCurves;
    for (std::int64_t w : worlds_) {
      for (std::int64_t page = 0; page < pages; ++page) {
        LinePlot p;
        p.title = name + ", world " + std::to_string(w) + (pages > 1 ? " (" + std::to_string(page + 1) + " of " + std::to_string(pages) + ")" : "");
        p.yLabel = name;
        p.x = times(w);
        for (std::int64_t c = page * LinePlot::kMaxCurves; c < std::min(a.width(), (page + 1) * LinePlot::kMaxCurves); ++c)
          p.curves.push_back({names[c], series(a, w, c)});
        if (p.curves.empty()) continue;
        write(p, name + ".world" + std::to_string(w) + (pages > 1 ? "." + std::to_string(page + 1) : "") + ".png");
      }
    }
  }

  // Kinetic, potential and total energy: from the default recording's kinetic_energy and
  // potential_energy, or the recorded quantities energy, energy.total and energy.balance.
  struct Energies {
    std::vector<LinePlot::Curve> curves;
    std::vector<double> balance;  // KE + PE + dissipated energy, when the file has it
  };
  Energies energiesOf(std::int64_t w) const {
    Energies e;
    std::vector<double> ke, pe;
    if (const NpyArray* a = find("kinetic_energy")) ke = series(*a, w, 0);
    if (const NpyArray* a = find("potential_energy")) pe = series(*a, w, 0);
    if (const NpyArray* a = find("energy"); a && a->width() == 2) {
      ke = series(*a, w, 0);
      pe = series(*a, w, 1);
    }
    std::vector<double> total;
    if (!ke.empty() && !pe.empty()) {
      total.resize(ke.size());
      for (std::size_t f = 0; f < ke.size(); ++f) total[f] = ke[f] + pe[f];
    }
    if (const NpyArray* a = find("energy.total")) total = series(*a, w, 0);
    if (!ke.empty()) e.curves.push_back({"kinetic", ke});
    if (!pe.empty()) e.curves.push_back({"potential", pe});
    if (!total.empty()) e.curves.push_back({"KE + PE", total});
    if (const NpyArray* a = find("energy.balance")) {
      e.balance = series(*a, w, 0);
    } else if (const NpyArray* z = find("z"); z && !total.empty()) {
      e.balance = total;
      for (std::size_t f = 0; f < total.size(); ++f)
        for (std::int64_t c = 0; c < z->width(); ++c) e.balance[f] += z->at(static_cast<std::int64_t>(f), w, c);
    }
    if (!e.balance.empty()) e.curves.push_back({"KE+PE+dissipated", e.balance});
    return e;
  }

  void energies() {
    for (std::int64_t w : worlds_) {
      LinePlot p;
      p.curves = energiesOf(w).curves;
      if (p.curves.empty()) return;
      p.title = "energies, world " + std::to_string(w);
      p.yLabel = "energy [J]";
      p.x = times(w);
      write(p, "energy.world" + std::to_string(w) + ".png");
    }
  }

  // E(t) - E(0) of KE + PE + dissipated energy, one curve per world.
  void drift() {
    LinePlot p;
    for (std::int64_t w : worlds_) {
      std::vector<double> b = energiesOf(w).balance;
      if (b.empty()) return;
      const double e0 = b[0];
      for (double& x : b) x -= e0;
      if (static_cast<int>(p.curves.size()) < LinePlot::kMaxCurves) p.curves.push_back({"world " + std::to_string(w), b});
    }
    p.title = "energy drift: (KE + PE + dissipated)(t) - (KE + PE + dissipated)(0)";
    p.yLabel = "energy drift [J]";
    p.x = times(worlds_[0]);
    write(p, "energy_drift.png");
  }

  // The sphere contacts' errors recorded in the file, one image per world.
  void constraints() {
    for (std::int64_t w : worlds_) {
      LinePlot p;
      for (const char* name : {"contactError", "contact.separation", "contact.velocity_error", "contact.acceleration_error"}) {
        const NpyArray* a = find(name);
        if (!a) continue;
        const std::vector<std::string> names = componentNames(name);
        for (std::int64_t c = 0; c < a->width() && static_cast<int>(p.curves.size()) < LinePlot::kMaxCurves; ++c)
          p.curves.push_back({names[c], series(*a, w, c)});
      }
      if (p.curves.empty()) return;
      p.title = "constraint errors, world " + std::to_string(w);
      p.yLabel = "error [m, m/s, m/s^2]";
      p.x = times(w);
      write(p, "constraints.world" + std::to_string(w) + ".png");
    }
  }

  PlotOptions o_;
  std::map<std::string, NpyArray> arrays_;
  const NpyArray* time_ = nullptr;
  std::vector<std::int64_t> worlds_;
  std::string dir_;
  std::vector<std::string> written_;
};

int plot(const PlotOptions& o) {
  const std::vector<std::string> files = Plotter(o).run();
  if (files.empty()) throw std::runtime_error(o.file + ": nothing to plot (record q, energies or contact errors)");
  for (const std::string& f : files) std::printf("wrote         %s\n", f.c_str());
  return 0;
}

}  // namespace

Command addPlotCommand(CLI::App& parent) {
  auto o = std::make_shared<PlotOptions>();
  CLI::App* app = parent.add_subcommand("plot", "Plot a recording (simulate --out FILE.npz) over time as PNG images");
  app->add_option("file", o->file, "A .npz recording of lockstep simulate")
      ->required()
      ->check(CLI::ExistingFile)
      ->check(CLI::Validator(
          [](std::string& path) {
            return path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0 ? std::string()
                                                                                     : "the file name must end in .npz";
          },
          "FILE.npz"));
  app->add_option("--worlds", o->worlds, "Worlds to plot, comma-separated")->capture_default_str();
  app->add_option("--quantities", o->quantities,
                  "What to plot, comma-separated: energy, drift (of KE + PE + dissipated energy), constraints "
                  "(contact errors), or any array of the file (q, u, udot, bushing.X_FM, ...)")
      ->capture_default_str();
  app->add_option("--out", o->out, "Directory for the images (default: FILE without .npz, then -plots)");
  return {app, [o] { return plot(*o); }};
}

}  // namespace lockstep::cli
