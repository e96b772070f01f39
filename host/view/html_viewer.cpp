#include "lockstep/view/html_viewer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "../io/text_file.h"
#include "lockstep/viewer_js.h"  // generated from host/view/viewer.js

namespace lockstep {

namespace {

std::string base64(const void* data, std::size_t bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes; i += 3) {
    const unsigned n = p[i] << 16 | (i + 1 < bytes ? p[i + 1] << 8 : 0) | (i + 2 < bytes ? p[i + 2] : 0);
    out += digits[n >> 18 & 63];
    out += digits[n >> 12 & 63];
    out += i + 1 < bytes ? digits[n >> 6 & 63] : '=';
    out += i + 2 < bytes ? digits[n & 63] : '=';
  }
  return out;
}
template <class V>
std::string base64(const V& v) {
  return base64(v.data(), v.size() * sizeof(v[0]));
}

const char* roleName(ShapeRole r) {
  switch (r) {
    case ShapeRole::Visual: return "visual";
    case ShapeRole::Contact: return "contact";
    case ShapeRole::Inertia: return "inertia";
  }
  return "?";
}

nlohmann::json poseJson(const Transformd& X) {
  double q[4];
  X.R.toQuaternion(q);
  return {X.p[0], X.p[1], X.p[2], q[0], q[1], q[2], q[3]};
}

std::string readAsset(const std::filesystem::path& path) {
  try {
    return io::readTextFile(path.string());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) +
                             " (the viewer needs three.js: install Debian's libjs-three, or point LOCKSTEP_THREE_DIR at "
                             "a folder with three.min.js and examples/js/controls/OrbitControls.js of three.js r111)");
  }
}

// Text safe inside <script>: no "</" that would close it.
std::string scriptSafe(std::string s) {
  for (std::size_t i = 0; (i = s.find("</", i)) != std::string::npos; i += 3) s.replace(i, 2, "<\\/");
  return s;
}

}  // namespace

std::string threeJsSource() {
  const char* env = std::getenv("LOCKSTEP_THREE_DIR");
  const std::filesystem::path dir = env && *env ? env : LOCKSTEP_THREE_DIR;
  return readAsset(dir / "three.min.js") + "\n" + readAsset(dir / "examples" / "js" / "controls" / "OrbitControls.js");
}

std::string viewerHtml(const SceneVisuals& visuals, const ViewerFrames& frames, const ViewerOptions& options) {
  const std::size_t nf = frames.time.size(), nw = frames.worlds.size(), nb = visuals.bodies.size();
  if (nf == 0 || nw == 0) throw std::runtime_error("the viewer needs at least one frame and one world");
  if (frames.poses.size() != nf * nw * nb * 7)
    throw std::runtime_error("the recorded body poses (" + std::to_string(frames.poses.size()) + " numbers) are not " +
                             std::to_string(nf) + " frames x " + std::to_string(nw) + " worlds x " + std::to_string(nb) +
                             " bodies x 7: the recording is not of this scene");
  if (frames.contacts && frames.contactForces.size() != nf * nw * frames.contacts * 6)
    throw std::runtime_error("the recorded contact forces do not match the frames and worlds");
  if (!frames.colorValues.empty() && frames.colorValues.size() != nw)
    throw std::runtime_error("one colour value per shown world is needed");

  // The extent of one world's motion (body origins over every frame, relative to its first
  // frame's origin) and of its shapes: the spacing of the grid.
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (std::size_t f = 0; f < nf; ++f)
    for (std::size_t w = 0; w < nw; ++w)
      for (std::size_t b = 0; b < nb; ++b)
        for (int k = 0; k < 3; ++k) {
          const double x = frames.poses[((f * nw + w) * nb + b) * 7 + k];
          if (std::isfinite(x)) lo[k] = std::min(lo[k], x), hi[k] = std::max(hi[k], x);
        }
  const double reach = shapeReach(visuals);
  const double extentXY = nb && hi[0] >= lo[0] ? std::max(hi[0] - lo[0], hi[1] - lo[1]) : 0;
  const double extent = std::max({extentXY + 2 * reach, hi[2] >= lo[2] ? hi[2] - lo[2] : 0.0, 0.1});

  nlohmann::json data;
  data["title"] = options.title;
  data["bodies"] = visuals.bodies;
  data["worlds"] = frames.worlds;
  data["time"] = frames.time;
  data["poses"] = base64(frames.poses);
  data["ghosts"] = options.ghosts;
  data["spacing"] = 1.25 * extent;
  data["extent"] = extent;
  if (frames.contacts) {
    data["contacts"] = frames.contacts;
    data["contact_forces"] = base64(frames.contactForces);
  }
  if (!frames.colorValues.empty()) {
    data["color_by"] = frames.colorBy;
    nlohmann::json values = nlohmann::json::array();
    for (double v : frames.colorValues) values.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json());
    data["color_values"] = values;
  }
  nlohmann::json shapes = nlohmann::json::array();
  for (const DrawnShape& d : visuals.shapes) {
    const VisualShape& s = d.shape;
    nlohmann::json j = {{"kind", shapeKindName(s.kind)}, {"body", d.body}, {"role", roleName(d.role)},
                        {"pose", poseJson(s.X_BS)}, {"size", {s.size[0], s.size[1], s.size[2]}},
                        {"rgba", {s.rgba[0], s.rgba[1], s.rgba[2], s.rgba[3]}}, {"source", s.source}};
    if (s.kind == ShapeKind::Mesh) {
      j["vertices"] = base64(s.vertices);
      j["triangles"] = base64(s.triangles);
    }
    shapes.push_back(std::move(j));
  }
  data["shapes"] = std::move(shapes);

  std::string title = options.title;
  for (char& c : title)
    if (c == '<' || c == '>' || c == '&') c = ' ';
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + title +
          " - Lockstep</title>\n<style>\n"
          "html, body { margin: 0; height: 100%; overflow: hidden; font: 13px system-ui, sans-serif; }\n"
          "#panel { position: absolute; left: 10px; right: 10px; bottom: 10px; display: flex; gap: 10px; align-items: center;"
          " background: rgba(255,255,255,0.85); padding: 6px 10px; border-radius: 6px; }\n"
          "#slider { flex: 1; }\n#head { position: absolute; left: 12px; top: 10px; }\n"
          "#title { font-weight: 600; }\n.error { color: #b00; font-weight: 600; }\n"
          "#legend { position: absolute; right: 12px; top: 10px; display: none; background: rgba(255,255,255,0.85);"
          " padding: 6px 10px; border-radius: 6px; }\n"
          "#bar { width: 160px; height: 10px; background: linear-gradient(to right, #440154, #3b528b, #21918c, #5ec962, #fde725); }\n"
          "</style>\n</head>\n<body>\n"
          "<div id=\"head\"><div id=\"title\"></div><div id=\"worlds\"></div><div id=\"status\">loading</div></div>\n"
          "<div id=\"legend\"><div id=\"legend-name\"></div><div id=\"bar\"></div>"
          "<span id=\"legend-lo\"></span> <span style=\"float: right\" id=\"legend-hi\"></span></div>\n"
          "<div id=\"panel\"><button id=\"play\">play</button><input id=\"slider\" type=\"range\" min=\"0\" max=\"0\" value=\"0\">"
          "<span id=\"clock\"></span><select id=\"speed\" title=\"speed\">"
          "<option value=\"0.1\">0.1x</option><option value=\"0.25\">0.25x</option><option value=\"0.5\">0.5x</option>"
          "<option value=\"1\" selected>1x</option><option value=\"2\">2x</option><option value=\"4\">4x</option></select></div>\n"
          "<script type=\"application/json\" id=\"lockstep-data\">" + scriptSafe(data.dump()) + "</script>\n"
          "<script>\n" + scriptSafe(threeJsSource()) + "\n</script>\n"
          "<script>\n" + std::string(kViewerJs) + "\n</script>\n</body>\n</html>\n";
  return html;
}

void writeViewerHtml(const std::string& path, const SceneVisuals& visuals, const ViewerFrames& frames,
                     const ViewerOptions& options) {
  io::refuseSpecialFile(path);
  const std::string html = viewerHtml(visuals, frames, options);
  const std::string partial = path + ".partial";
  try {
    io::writeTextFile(partial, html);
  } catch (...) {
    std::remove(partial.c_str());
    throw;
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(partial.c_str());
    throw std::runtime_error(path + ": cannot write: " + std::strerror(error));
  }
}

}  // namespace lockstep
