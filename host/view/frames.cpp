#include "lockstep/view/frames.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <GL/osmesa.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace lockstep {

namespace {

// One frame at a time in the whole process: OSMesa's current context is per thread, MuJoCo's
// renderer state per context.
std::mutex& renderMutex() {
  static std::mutex m;
  return m;
}

// The OpenGL the process draws with, chosen once (MuJoCo's renderer loads its GL functions from it):
// EGL on a GPU when there is one, else OSMesa; LOCKSTEP_GL=egl or osmesa chooses (egl then also
// takes Mesa's software device).
// libEGL is opened at run time, not linked (and so is libOSMesa, below): MuJoCo's renderer takes EGL's function loader
// whenever libEGL's symbols are in the process, which would break drawing on OSMesa.
struct GlChoice {
  bool egl = false;
  EGLDisplay display = EGL_NO_DISPLAY;
  std::string description;
  PFNEGLGETERRORPROC getError = nullptr;
  PFNEGLCHOOSECONFIGPROC chooseConfig = nullptr;
  PFNEGLBINDAPIPROC bindApi = nullptr;
  PFNEGLCREATECONTEXTPROC createContext = nullptr;
  PFNEGLMAKECURRENTPROC makeCurrent = nullptr;
  PFNEGLDESTROYCONTEXTPROC destroyContext = nullptr;
};

template <class F>
F eglFunction(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

const GlChoice& glChoice() {
  static const GlChoice choice = [] {
    const char* env = std::getenv("LOCKSTEP_GL");
    const std::string asked = env && *env ? env : "auto";
    if (asked != "auto" && asked != "egl" && asked != "osmesa")
      throw std::runtime_error("LOCKSTEP_GL=" + asked + ": give egl, osmesa or auto");
    GlChoice c;
    c.description = "OSMesa (Mesa's off-screen OpenGL on the CPU)";
    if (asked == "osmesa") return c;
    void* library = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      if (asked == "egl") throw std::runtime_error(std::string("LOCKSTEP_GL=egl: cannot open libEGL.so.1: ") + dlerror());
      return c;
    }
    const auto getProcAddress = eglFunction<PFNEGLGETPROCADDRESSPROC>(library, "eglGetProcAddress");
    const auto initialize = eglFunction<PFNEGLINITIALIZEPROC>(library, "eglInitialize");
    const auto queryString = eglFunction<PFNEGLQUERYSTRINGPROC>(library, "eglQueryString");
    c.getError = eglFunction<PFNEGLGETERRORPROC>(library, "eglGetError");
    c.chooseConfig = eglFunction<PFNEGLCHOOSECONFIGPROC>(library, "eglChooseConfig");
    c.bindApi = eglFunction<PFNEGLBINDAPIPROC>(library, "eglBindAPI");
    c.createContext = eglFunction<PFNEGLCREATECONTEXTPROC>(library, "eglCreateContext");
    c.makeCurrent = eglFunction<PFNEGLMAKECURRENTPROC>(library, "eglMakeCurrent");
    c.destroyContext = eglFunction<PFNEGLDESTROYCONTEXTPROC>(library, "eglDestroyContext");
    const bool complete = getProcAddress && initialize && queryString && c.getError && c.chooseConfig && c.bindApi &&
                          c.createContext && c.makeCurrent && c.destroyContext;
    const auto queryDevices = complete ? reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(getProcAddress("eglQueryDevicesEXT")) : nullptr;
    const auto deviceString = complete ? reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(getProcAddress("eglQueryDeviceStringEXT")) : nullptr;
    const auto platformDisplay = complete ? reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(getProcAddress("eglGetPlatformDisplayEXT")) : nullptr;
    EGLDeviceEXT devices[16];
    EGLint count = 0;
    if (queryDevices && deviceString && platformDisplay && queryDevices(16, devices, &count)) {
      for (EGLint i = 0; i < count; ++i) {
        const char* extensions = deviceString(devices[i], EGL_EXTENSIONS);
        const bool software = extensions && std::strstr(extensions, "EGL_MESA_device_software");
        if (software && asked != "egl") continue;
        EGLDisplay display = platformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
        EGLint major = 0, minor = 0;
        if (display == EGL_NO_DISPLAY || !initialize(display, &major, &minor)) continue;
        // Now MuJoCo's renderer may see libEGL: it draws with it.
        dlopen("libEGL.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
        c.egl = true;
        c.display = display;
        const char* vendor = queryString(display, EGL_VENDOR);
        c.description = std::string("EGL ") + std::to_string(major) + "." + std::to_string(minor) + " on " +
                        (vendor ? vendor : "?") + (software ? "'s software device" : "'s GPU device " + std::to_string(i));
        return c;
      }
    }
    if (asked == "egl") throw std::runtime_error("LOCKSTEP_GL=egl: no EGL device could be initialized");
    dlclose(library);
    return c;
  }();
  return choice;
}

// libOSMesa is opened at run time as well, not linked: it brings LLVM, z3 and ICU (about 170 MB),
// which a binary that never draws, and a GPU machine that draws with EGL, need not carry. Opened
// with its symbols local: LLVM's must not become the process's (triton, which torch imports on its
// first optimizer, links its own LLVM and crashed on Mesa's). MuJoCo's renderer draws with a local
// OSMesa all the same, as it did when OSMesa was linked into the Python module.
struct OsMesa {
  decltype(&OSMesaCreateContextExt) createContextExt = nullptr;
  decltype(&OSMesaMakeCurrent) makeCurrent = nullptr;
  decltype(&OSMesaDestroyContext) destroyContext = nullptr;
  std::string error;  // why OSMesa cannot be used ("" when it can)
};

const OsMesa& osMesa() {
  static const OsMesa o = [] {
    OsMesa m;
    void* library = nullptr;
    std::string why;
    for (const char* name : {"libOSMesa.so.8", "libOSMesa.so"}) {
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      const char* e = dlerror();
      if (why.empty() && e) why = e;
    }
    if (!library) {
      m.error = "cannot open libOSMesa.so.8 (" + why + "): install Mesa's off-screen OpenGL (Debian's libosmesa6), or draw with EGL on a GPU";
      return m;
    }
    m.createContextExt = reinterpret_cast<decltype(&OSMesaCreateContextExt)>(dlsym(library, "OSMesaCreateContextExt"));
    m.makeCurrent = reinterpret_cast<decltype(&OSMesaMakeCurrent)>(dlsym(library, "OSMesaMakeCurrent"));
    m.destroyContext = reinterpret_cast<decltype(&OSMesaDestroyContext)>(dlsym(library, "OSMesaDestroyContext"));
    if (!m.createContextExt || !m.makeCurrent || !m.destroyContext)
      m.error = "libOSMesa.so.8 lacks OSMesaCreateContextExt, OSMesaMakeCurrent or OSMesaDestroyContext";
    return m;
  }();
  return o;
}

// How far the shapes reach from their bodies' origins, at least 0.1 m (the camera's scale).
double reachOf(const SceneVisuals& v) { return std::max(0.1, shapeReach(v)); }

void offsetOf(int world, int worlds, double spacing, double out[2]) {
  const int cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(worlds))));
  out[0] = (world % cols) * spacing;
  out[1] = -(world / cols) * spacing;
}

void geomXml(std::ostringstream& x, const DrawnShape& d, int meshIndex) {
  const VisualShape& s = d.shape;
  double q[4];
  s.X_BS.R.toQuaternion(q);
  x << "<geom contype=\"0\" conaffinity=\"0\" pos=\"" << s.X_BS.p[0] << ' ' << s.X_BS.p[1] << ' ' << s.X_BS.p[2]
    << "\" quat=\"" << q[0] << ' ' << q[1] << ' ' << q[2] << ' ' << q[3] << "\" rgba=\"" << s.rgba[0] << ' ' << s.rgba[1]
    << ' ' << s.rgba[2] << ' ' << s.rgba[3] << '"';
  const Vec3d& z = s.size;
  switch (s.kind) {
    case ShapeKind::Box: x << " type=\"box\" size=\"" << z[0] << ' ' << z[1] << ' ' << z[2] << '"'; break;
    case ShapeKind::Sphere: x << " type=\"sphere\" size=\"" << z[0] << '"'; break;
    case ShapeKind::Cylinder: x << " type=\"cylinder\" size=\"" << z[0] << ' ' << z[1] << '"'; break;
    case ShapeKind::Capsule: x << " type=\"capsule\" size=\"" << z[0] << ' ' << z[1] << '"'; break;
    case ShapeKind::Ellipsoid: x << " type=\"ellipsoid\" size=\"" << z[0] << ' ' << z[1] << ' ' << z[2] << '"'; break;
    case ShapeKind::Mesh: x << " type=\"mesh\" mesh=\"m" << meshIndex << '"'; break;
    case ShapeKind::Plane: break;
  }
  x << "/>";
}

}  // namespace

std::string FrameRenderer::context() { return glChoice().description; }

// The geom group of the ground planes: drawn with the first world only.
constexpr int kGroundGroup = 3;

std::string visualsMjcf(const SceneVisuals& v, int width, int height, int worlds, double spacing) {
  std::ostringstream x;
  x.precision(9);
  const double reach = reachOf(v);
  if (!(spacing > 0)) spacing = 3 * reach;
  double corner[2];
  offsetOf(worlds - 1, worlds, spacing, corner);
  const double groundHalf = 10 * reach + std::abs(corner[0]) + std::abs(corner[1]);
  x << "<mujoco model=\"lockstep\">\n<compiler inertiafromgeom=\"false\"/>\n<visual><global offwidth=\"" << width
    << "\" offheight=\"" << height << "\"/><quality shadowsize=\"2048\"/>"
    << "<headlight ambient=\"0.45 0.45 0.45\" diffuse=\"0.45 0.45 0.45\"/><map znear=\"0.001\" zfar=\"1000\"/></visual>\n<asset>"
    << "<texture type=\"skybox\" builtin=\"gradient\" rgb1=\"0.86 0.90 0.95\" rgb2=\"0.98 0.98 0.99\" width=\"256\" height=\"256\"/>"
    << "<texture name=\"grid\" type=\"2d\" builtin=\"checker\" rgb1=\"0.80 0.82 0.85\" rgb2=\"0.70 0.73 0.77\" width=\"256\" height=\"256\"/>"
    << "<material name=\"grid\" texture=\"grid\" texrepeat=\"" << groundHalf / reach << ' ' << groundHalf / reach
    << "\" reflectance=\"0\"/>\n";
  std::vector<int> meshIndex(v.shapes.size(), -1);
  int meshes = 0;
  for (std::size_t i = 0; i < v.shapes.size(); ++i) {
    const VisualShape& s = v.shapes[i].shape;
    if (s.kind != ShapeKind::Mesh) continue;
    meshIndex[i] = meshes++;
    x << "<mesh name=\"m" << meshIndex[i] << "\" vertex=\"";
    for (float f : s.vertices) x << f << ' ';
    x << "\" face=\"";
    for (std::int32_t t : s.triangles) x << t << ' ';
    x << "\"/>\n";
  }
  x << "</asset>\n<worldbody>\n<light directional=\"true\" castshadow=\"true\" pos=\"0 0 10\" dir=\"-0.3 0.4 -1\" diffuse=\"0.5 0.5 0.5\"/>\n";
  bool ground = false;
  for (std::size_t i = 0; i < v.shapes.size(); ++i) {
    const DrawnShape& d = v.shapes[i];
    if (d.body >= 0) continue;
    if (d.shape.kind == ShapeKind::Plane) {
      ground = true;
      double q[4];
      d.shape.X_BS.R.toQuaternion(q);
      const double hx = d.shape.size[0] > 0 ? d.shape.size[0] : groundHalf, hy = d.shape.size[1] > 0 ? d.shape.size[1] : groundHalf;
      x << "<geom type=\"plane\" group=\"" << kGroundGroup << "\" material=\"grid\" contype=\"0\" conaffinity=\"0\" size=\"" << hx << ' ' << hy
        << " 0.1\" pos=\"" << d.shape.X_BS.p[0] << ' ' << d.shape.X_BS.p[1] << ' ' << d.shape.X_BS.p[2] << "\" quat=\""
        << q[0] << ' ' << q[1] << ' ' << q[2] << ' ' << q[3] << "\"/>\n";
      continue;
    }
  }
  if (!ground)  // a reference floor at z = 0, below everything
    x << "<geom type=\"plane\" group=\"" << kGroundGroup << "\" material=\"grid\" contype=\"0\" conaffinity=\"0\" size=\""
      << groundHalf << ' ' << groundHalf << " 0.1\" rgba=\"1 1 1 0.6\"/>\n";
  // One world: a mocap body per body, then one per shape fixed on Ground (at the world's offset).
  for (std::size_t b = 0; b < v.bodies.size(); ++b) {
    x << "<body mocap=\"true\" name=\"b" << b << "\">";
    for (std::size_t i = 0; i < v.shapes.size(); ++i)
      if (v.shapes[i].body == static_cast<int>(b)) geomXml(x, v.shapes[i], meshIndex[i]);
    x << "</body>\n";
  }
  for (std::size_t i = 0; i < v.shapes.size(); ++i) {
    if (v.shapes[i].body >= 0 || v.shapes[i].shape.kind == ShapeKind::Plane) continue;
    x << "<body mocap=\"true\" name=\"s" << i << "\">";
    geomXml(x, v.shapes[i], meshIndex[i]);
    x << "</body>\n";
  }
  x << "</worldbody>\n</mujoco>\n";
  return x.str();
}

struct FrameRenderer::Gl {
  OSMesaContext context = nullptr;
  std::vector<unsigned char> buffer;  // OSMesa's window buffer (MuJoCo draws into its own offscreen one)
  EGLContext egl = EGL_NO_CONTEXT;
  mjModel* model = nullptr;
  mjData* data = nullptr;
  mjvScene scene;
  mjrContext render;
  mjvOption option;
  double reach = 1;
  bool made = false;  // the scene and the renderer's context exist

  // Makes this renderer's context the thread's current one; throws saying why not.
  void makeCurrent() {
    const GlChoice& gl = glChoice();
    if (gl.egl) {
      if (!gl.makeCurrent(gl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl))
        throw std::runtime_error("EGL could not make its context current (error " + std::to_string(gl.getError()) + ")");
    } else if (!osMesa().makeCurrent(context, buffer.data(), GL_UNSIGNED_BYTE, 1, 1)) {
      throw std::runtime_error("OSMesa could not make its context current");
    }
  }
  ~Gl() {
    if (context || egl != EGL_NO_CONTEXT) {  // glChoice() succeeded then
      const GlChoice& gl = glChoice();
      try {
        makeCurrent();
      } catch (const std::exception&) {  // freed below all the same
      }
      if (made) {
        mjr_freeContext(&render);
        mjv_freeScene(&scene);
      }
      if (context) osMesa().destroyContext(context);
      if (egl != EGL_NO_CONTEXT) {
        gl.makeCurrent(gl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        gl.destroyContext(gl.display, egl);
      }
    }
    if (data) mj_deleteData(data);
    if (model) mj_deleteModel(model);
  }
};

FrameRenderer::FrameRenderer(const SceneVisuals& visuals, int width, int height, int worlds, double spacing)
    : gl_(std::make_unique<Gl>()), width_(width), height_(height), worlds_(worlds),
      bodies_(static_cast<int>(visuals.bodies.size())), spacing_(spacing > 0 ? spacing : 3 * reachOf(visuals)) {
  if (width < 1 || height < 1 || width > 8192 || height > 8192)
    throw std::runtime_error("frame size " + std::to_string(width) + "x" + std::to_string(height) +
                             ": must be between 1x1 and 8192x8192 pixels");
  if (worlds < 1 || worlds > 4096) throw std::runtime_error("worlds in one frame: must be between 1 and 4096");
  gl_->reach = reachOf(visuals);
  mjcf_ = visualsMjcf(visuals, width, height, worlds, spacing_);
  char error[1000] = "";
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  if (mj_makeEmptyFileVFS(&vfs, "lockstep.xml", static_cast<int>(mjcf_.size())) != 0)
    throw std::runtime_error("the model to draw is too large for MuJoCo's virtual file system");
  std::memcpy(vfs.filedata[mj_findFileVFS(&vfs, "lockstep.xml")], mjcf_.data(), mjcf_.size());
  {
    std::lock_guard<std::mutex> lock(renderMutex());
    gl_->model = mj_loadXML("lockstep.xml", &vfs, error, sizeof error);
  }
  mj_deleteVFS(&vfs);
  if (!gl_->model) throw std::runtime_error(std::string("MuJoCo refused the shapes to draw: ") + error);
  gl_->data = mj_makeData(gl_->model);
  std::lock_guard<std::mutex> lock(renderMutex());
  const GlChoice& gl = glChoice();
  if (gl.egl) {
    const EGLint attributes[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
                                 EGL_ALPHA_SIZE, 8, EGL_DEPTH_SIZE, 24, EGL_STENCIL_SIZE, 8, EGL_RENDERABLE_TYPE,
                                 EGL_OPENGL_BIT, EGL_NONE};
    EGLConfig config;
    EGLint configs = 0;
    if (!gl.chooseConfig(gl.display, attributes, &config, 1, &configs) || configs < 1)
      throw std::runtime_error("EGL has no configuration for off-screen OpenGL drawing");
    gl.bindApi(EGL_OPENGL_API);
    gl_->egl = gl.createContext(gl.display, config, EGL_NO_CONTEXT, nullptr);
    if (gl_->egl == EGL_NO_CONTEXT) throw std::runtime_error("EGL could not create an OpenGL context");
  } else {
    const OsMesa& mesa = osMesa();
    if (!mesa.error.empty()) throw std::runtime_error("OSMesa: " + mesa.error);
    gl_->context = mesa.createContextExt(OSMESA_RGBA, 24, 8, 8, nullptr);
    if (!gl_->context) throw std::runtime_error("OSMesa could not create an off-screen OpenGL context");
    gl_->buffer.assign(4, 0);
  }
  gl_->makeCurrent();
  gl_->made = true;
  mjv_defaultScene(&gl_->scene);
  // Every world's geoms in one scene (the model holds one world's, drawn once per world).
  mjv_makeScene(gl_->model, &gl_->scene, 2000 + worlds * gl_->model->ngeom);
  mjr_defaultContext(&gl_->render);
  mjr_makeContext(gl_->model, &gl_->render, mjFONTSCALE_100);
  mjr_setBuffer(mjFB_OFFSCREEN, &gl_->render);
  if (gl_->render.currentBuffer != mjFB_OFFSCREEN || gl_->render.offWidth < width || gl_->render.offHeight < height)
    throw std::runtime_error("MuJoCo's renderer has no off-screen buffer of " + std::to_string(width) + "x" +
                             std::to_string(height) + " pixels");
  mjv_defaultOption(&gl_->option);
  gl_->option.geomgroup[kGroundGroup] = 1;
}

FrameRenderer::~FrameRenderer() {
  std::lock_guard<std::mutex> lock(renderMutex());
  gl_.reset();
}

std::vector<std::uint8_t> FrameRenderer::render(const double* poses, const RenderCamera& camera) {
  mjModel* m = gl_->model;
  mjData* d = gl_->data;
  const bool finiteCamera = std::isfinite(camera.lookAt[0]) && std::isfinite(camera.lookAt[1]) &&
                            std::isfinite(camera.lookAt[2]) && std::isfinite(camera.distance) && camera.distance >= 0 &&
                            std::isfinite(camera.azimuth) && std::isfinite(camera.elevation);
  if (!finiteCamera)
    throw std::invalid_argument("camera: lookat, distance (>= 0), azimuth and elevation must be finite numbers");
  // World w's mocap poses (its bodies, then its shapes fixed on Ground) into d; a body whose pose
  // is not finite is drawn at the origin.
  auto place = [&](int w, double lo[3], double hi[3]) {
    double o[2];
    offsetOf(w, worlds_, spacing_, o);
    for (int b = 0; b < bodies_; ++b) {
      const double* p = poses + (static_cast<std::size_t>(w) * bodies_ + b) * 7;
      const double x[3] = {p[0] + o[0], p[1] + o[1], p[2]};
      const bool finite = std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]) && std::isfinite(p[3]) &&
                          std::isfinite(p[4]) && std::isfinite(p[5]) && std::isfinite(p[6]);
      for (int k = 0; k < 3; ++k) d->mocap_pos[3 * b + k] = finite ? x[k] : 0;
      for (int k = 0; k < 4; ++k) d->mocap_quat[4 * b + k] = finite ? p[3 + k] : (k == 0 ? 1 : 0);
      if (finite && lo)
        for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], x[k]), hi[k] = std::max(hi[k], x[k]);
    }
    for (int i = bodies_; i < m->nmocap; ++i) {
      const double x[3] = {o[0], o[1], 0};
      for (int k = 0; k < 3; ++k) d->mocap_pos[3 * i + k] = x[k];
      for (int k = 0; k < 4; ++k) d->mocap_quat[4 * i + k] = k == 0 ? 1 : 0;
    }
  };
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (int w = 0; w < worlds_; ++w) place(w, lo, hi);
  mjvCamera cam;
  mjv_defaultCamera(&cam);
  cam.type = mjCAMERA_FREE;
  if (camera.automatic) {
    const bool any = hi[0] >= lo[0];
    for (int k = 0; k < 3; ++k) cam.lookat[k] = any ? 0.5 * (lo[k] + hi[k]) : 0;
    const double span = any ? std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}) : 0;
    cam.distance = camera.distance > 0 ? camera.distance : 1.6 * span + 2.5 * gl_->reach;
  } else {
    for (int k = 0; k < 3; ++k) cam.lookat[k] = camera.lookAt[k];
    cam.distance = camera.distance > 0 ? camera.distance : 3;
  }
  cam.azimuth = camera.azimuth;
  cam.elevation = camera.elevation;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(width_) * height_ * 3), out(rgb.size());
  {
    std::lock_guard<std::mutex> lock(renderMutex());
    gl_->makeCurrent();
    // The first world with the ground, lights and camera; the others' geoms added to its scene.
    mjvOption others = gl_->option;
    others.geomgroup[kGroundGroup] = 0;
    for (int w = 0; w < worlds_; ++w) {
      place(w, nullptr, nullptr);
      mj_kinematics(m, d);
      if (w == 0) mjv_updateScene(m, d, &gl_->option, nullptr, &cam, mjCAT_ALL, &gl_->scene);
      else mjv_addGeoms(m, d, &others, nullptr, mjCAT_ALL, &gl_->scene);
    }
    const mjrRect viewport = {0, 0, width_, height_};
    mjr_setBuffer(mjFB_OFFSCREEN, &gl_->render);
    mjr_render(viewport, &gl_->scene, &gl_->render);
    mjr_readPixels(rgb.data(), nullptr, viewport, &gl_->render);
  }
  const std::size_t row = static_cast<std::size_t>(width_) * 3;
  for (int y = 0; y < height_; ++y)  // OpenGL's rows start at the bottom
    std::memcpy(out.data() + y * row, rgb.data() + (height_ - 1 - y) * row, row);
  return out;
}

}  // namespace lockstep
