// What MuJoCo's compiler lets through and the MJCF import cannot take (mjcf_compile.h,
// checkCompiledMjcf): names, the timestep, orientations and values, each named by its element.
#include <cmath>
#include <string>

#include "lockstep/io/input_error.h"
#include "message_text.h"
#include "mjcf_compile.h"

namespace lockstep::io {

namespace {

// Where the first byte that is not UTF-8 is (npos: none): overlong forms, surrogates and code
// points above U+10FFFF are not UTF-8 either.
std::size_t invalidUtf8At(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || (extra > 0 && i + extra >= s.size())) return i;
    std::uint32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1f) : extra == 2 ? (c & 0x0f) : (c & 0x07);
    for (int k = 1; k <= extra; ++k) {
      const unsigned char d = s[i + k];
      if ((d >> 6) != 2) return i;
      cp = (cp << 6) | (d & 0x3f);
    }
    const std::uint32_t least[] = {0, 0x80, 0x800, 0x10000};
    if (cp < least[extra] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += extra + 1;
  }
  return std::string::npos;
}

// A name for a message: printable ASCII as it is, every other byte as \xNN.
std::string escaped(const std::string& s) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 32 && c < 127) out += static_cast<char>(c);
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

class Checks {
 public:
  Checks(const mjModel* m, const std::string& source) : m_(m), source_(source) {}

  void run() {
    names();
    const mjtNum dt = m_->opt.timestep;
    if (!(dt > 0) || !std::isfinite(dt))
      fail("option", "timestep: must be a positive number of seconds (got " + numberText(dt) + ")");
    finite("option", "gravity", m_->opt.gravity, 3);
    for (int b = 1; b < m_->nbody; ++b) {
      const std::string e = "body " + inQuotes(name(mjOBJ_BODY, b, "body" + std::to_string(b)));
      finite(e, "pos", m_->body_pos + 3 * b, 3);
      orientation(e, "quat", m_->body_quat + 4 * b);
    }
    for (int j = 0; j < m_->njnt; ++j) {
      const std::string e = "joint " + inQuotes(name(mjOBJ_JOINT, j, "#" + std::to_string(j)));
      finite(e, "pos", m_->jnt_pos + 3 * j, 3);
      finite(e, "axis", m_->jnt_axis + 3 * j, 3);
    }
    for (int g = 0; g < m_->ngeom; ++g) {
      const std::string e = "geom " + inQuotes(name(mjOBJ_GEOM, g, "#" + std::to_string(g)));
      finite(e, "pos", m_->geom_pos + 3 * g, 3);
      orientation(e, "quat", m_->geom_quat + 4 * g);
      finite(e, "size", m_->geom_size + 3 * g, 3);
    }
    for (int s = 0; s < m_->nsite; ++s) {
      const std::string e = "site " + inQuotes(name(mjOBJ_SITE, s, "#" + std::to_string(s)));
      finite(e, "pos", m_->site_pos + 3 * s, 3);
      orientation(e, "quat", m_->site_quat + 4 * s);
    }
    // After the geoms: a body's inertial frame may come from them.
    for (int b = 1; b < m_->nbody; ++b) {
      const std::string e = "body " + inQuotes(name(mjOBJ_BODY, b, "body" + std::to_string(b)));
      finite(e, "inertial pos", m_->body_ipos + 3 * b, 3);
      orientation(e, "inertial quat", m_->body_iquat + 4 * b);
    }
    finite("model", "qpos0", m_->qpos0, m_->nq);
  }

 private:
  [[noreturn]] void fail(const std::string& element, const std::string& reason) const {
    throw InputError(source_ + ": " + element + ": " + reason);
  }
  std::string name(mjtObj type, int id, const std::string& fallback) const {
    const char* n = mj_id2name(m_, type, id);
    return n && *n ? escaped(n) : fallback;
  }

  // Every named element's name, and the model's.
  void names() const {
    const struct {
      mjtObj type;
      int count;
      const char* kind;
    } kinds[] = {{mjOBJ_BODY, m_->nbody, "body"},       {mjOBJ_JOINT, m_->njnt, "joint"},
                 {mjOBJ_GEOM, m_->ngeom, "geom"},       {mjOBJ_SITE, m_->nsite, "site"},
                 {mjOBJ_CAMERA, m_->ncam, "camera"},    {mjOBJ_LIGHT, m_->nlight, "light"},
                 {mjOBJ_MESH, m_->nmesh, "mesh"},       {mjOBJ_SKIN, m_->nskin, "skin"},
                 {mjOBJ_HFIELD, m_->nhfield, "hfield"}, {mjOBJ_TEXTURE, m_->ntex, "texture"},
                 {mjOBJ_MATERIAL, m_->nmat, "material"}, {mjOBJ_PAIR, m_->npair, "pair"},
                 {mjOBJ_EXCLUDE, m_->nexclude, "exclude"}, {mjOBJ_EQUALITY, m_->neq, "equality"},
                 {mjOBJ_TENDON, m_->ntendon, "tendon"}, {mjOBJ_ACTUATOR, m_->nu, "actuator"},
                 {mjOBJ_SENSOR, m_->nsensor, "sensor"}, {mjOBJ_NUMERIC, m_->nnumeric, "numeric"},
                 {mjOBJ_TEXT, m_->ntext, "text"},       {mjOBJ_TUPLE, m_->ntuple, "tuple"},
                 {mjOBJ_KEY, m_->nkey, "key"}};
    const std::string model = m_->nnames > 0 ? std::string(m_->names) : "";
    if (const std::size_t at = invalidUtf8At(model); at != std::string::npos)
      fail("mujoco model=" + inQuotes(escaped(model)), "the model's name is not UTF-8 (byte " + std::to_string(at + 1) +
                                                          "): names must be UTF-8 text");
    for (const auto& k : kinds)
      for (int i = 0; i < k.count; ++i) {
        const char* n = mj_id2name(m_, k.type, i);
        if (!n) continue;
        if (const std::size_t at = invalidUtf8At(n); at != std::string::npos)
          fail(std::string(k.kind) + " " + inQuotes(escaped(n)),
               "name: not UTF-8 (byte " + std::to_string(at + 1) + "): names must be UTF-8 text");
      }
  }

  void finite(const std::string& element, const std::string& attribute, const mjtNum* v, int n) const {
    for (int k = 0; k < n; ++k)
      if (!std::isfinite(v[k]))
        fail(element, attribute + ": must be finite (value " + std::to_string(k + 1) + " is " + numberText(v[k]) + ")");
  }
  // MuJoCo's compiler normalizes a quaternion unless its length is zero, which it keeps.
  void orientation(const std::string& element, const std::string& attribute, const mjtNum* q) const {
    finite(element, attribute, q, 4);
    if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] < 1e-20)
      fail(element, attribute + ": 0 0 0 0 is no orientation: give a quaternion of nonzero length (or axisangle, "
                                "euler, xyaxes, zaxis)");
  }

  const mjModel* m_;
  std::string source_;
};

}  // namespace

void checkCompiledMjcf(const mjModel* m, const std::string& source) { Checks(m, source).run(); }

}  // namespace lockstep::io
