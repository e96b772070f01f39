// URDF import (urdf.h): urdfdom parses the XML; this file maps links and joints onto bodies and
// mobilizers, welds fixed joints and checks every number.
#include "lockstep/io/urdf.h"

#include <Eigen/Dense>
#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "message_text.h"
#include "text_file.h"

namespace lockstep {

namespace {

using io::inQuotes;
using io::numberText;

// Collects what urdfdom logs while it parses (it reports problems through console_bridge instead
// of exceptions) so that they become one error message instead of lines on stderr.
class LogCapture : public console_bridge::OutputHandler {
 public:
  LogCapture() { console_bridge::useOutputHandler(this); }
  ~LogCapture() override { console_bridge::restorePreviousOutputHandler(); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors.push_back(text);
  }
  std::vector<std::string> errors;
};

// urdfdom's links own their children (shared pointers): a cycle of joints would never be freed,
// and a long chain would be freed by one nested destructor call per link. Dropping every link's
// children before the robot is freed frees each link on its own, whatever the joints are.
class LinkUntier {
 public:
  explicit LinkUntier(const urdf::ModelInterfaceSharedPtr& robot) : robot_(robot) {}
  LinkUntier(const LinkUntier&) = delete;
  LinkUntier& operator=(const LinkUntier&) = delete;
  ~LinkUntier() {
    if (!robot_) return;
    for (auto& [name, link] : robot_->links_) {
      link->child_links.clear();
      link->child_joints.clear();
    }
  }

 private:
  const urdf::ModelInterfaceSharedPtr& robot_;
};

// The deepest nesting of XML elements in `xml` as TinyXML (urdfdom's parser) reads it, counting
// only until it exceeds `limit`: start tags open a level unless they end in "/>", end tags close
// one (at the top level TinyXML skips them), comments, CDATA, declarations and <!...> open none.
int xmlNestingDepth(const std::string& xml, int limit) {
  const std::size_t n = xml.size();
  std::size_t i = 0;
  int depth = 0, deepest = 0;
  auto skipPast = [&](const char* end) {
    const std::size_t e = xml.find(end, i);
    i = e == std::string::npos ? n : e + std::char_traits<char>::length(end);
  };
  while ((i = xml.find('<', i)) != std::string::npos) {
    if (xml.compare(i, 4, "<!--") == 0) {
      i += 4;
      skipPast("-->");
      continue;
    }
    if (xml.compare(i, 9, "<![CDATA[") == 0) {
      i += 9;
      skipPast("]]>");
      continue;
    }
    if (xml.compare(i, 2, "</") == 0) {
      i += 2;
      skipPast(">");
      if (depth > 0) --depth;
      continue;
    }
    // TinyXML starts an element at '<' and a letter, '_' or any byte from 127 on.
    const unsigned char c = i + 1 < n ? static_cast<unsigned char>(xml[i + 1]) : 0;
    i += 1;
    if (!(c >= 127 || std::isalpha(c) || c == '_')) {
      skipPast(">");
      continue;
    }
    // A start tag: attribute values are quoted right after '=' and may hold '>'.
    while (i < n && xml[i] != '>') {
      if (xml[i++] != '=') continue;
      while (i < n && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i < n && (xml[i] == '"' || xml[i] == '\'')) {
        const char quote = xml[i++];
        const std::size_t e = xml.find(quote, i);
        i = e == std::string::npos ? n : e + 1;
      }
    }
    const bool empty = i < n && xml[i - 1] == '/';
    ++i;
    if (!empty && ++depth > deepest) {
      deepest = depth;
      if (deepest > limit) break;
    }
  }
  return deepest;
}

class Importer {
 public:
  Importer(const std::string& source, const UrdfOptions& options)
      : source_(source), baseDirectory_(std::filesystem::path(source).parent_path().string()), options_(options) {}

  UrdfImport run(const std::string& xml) {
    // urdfdom reads the XML with TinyXML, which descends one C++ call per nested element: refuse
    // deep nesting before it does.
    if (xmlNestingDepth(xml, kMaxUrdfNestingDepth) > kMaxUrdfNestingDepth)
      fail("invalid URDF: XML elements nested deeper than " + std::to_string(kMaxUrdfNestingDepth) +
           " levels (the limit of URDF files)");
    urdf::ModelInterfaceSharedPtr robot;
    const LinkUntier untie(robot);  // (declared after robot: unties it before it is freed)
    {
      LogCapture log;
      try {
        robot = urdf::parseURDF(xml);
      } catch (const std::exception& e) {
        fail("invalid URDF: " + std::string(e.what()));
      }
      if (!log.errors.empty()) {
        // urdfdom logs from the most specific problem to the element that contains it.
        std::string all;
        for (const std::string& e : log.errors) all += (all.empty() ? "" : "; ") + e;
        fail("invalid URDF: " + all);
      }
    }
    if (!robot) fail("invalid URDF: urdfdom could not parse it");
    checkOneParentPerLink(*robot);
    for (const auto& [name, link] : robot->links_) {
      if (!link->inertial) continue;
      const double trace = link->inertial->ixx + link->inertial->iyy + link->inertial->izz;
      if (std::isfinite(trace)) inertiaScale_ = std::max(inertiaScale_, std::abs(trace));
    }
    const urdf::LinkConstSharedPtr root = robot->getRoot();
    if (!root) fail("invalid URDF: no root link");
    out_.robotName = robot->getName();

    // The root link: welded to Ground or free.
    BodyDesc rootBody;
    rootBody.name = root->name;
    rootBody.parent = "ground";
    rootBody.jointName = "root";
    while (robot->getJoint(rootBody.jointName)) rootBody.jointName += "_";
    rootBody.mobilizer = options_.rootJoint == UrdfRootJoint::Free ? MobilizerType::Free : MobilizerType::Weld;
    rootBody.mass = linkMassProperties(*root);
    out_.links[root->name] = {root->name, Transformd::identity()};
    out_.bodies.push_back(rootBody);
    addDescendants(*root);
    // urdfdom accepts links whose joints form a cycle apart from the tree (a link that is its own
    // parent, two links parents of each other): they are not reached from the root.
    std::vector<urdf::LinkSharedPtr> all;
    robot->getLinks(all);
    for (const urdf::LinkSharedPtr& link : all)
      if (!out_.links.count(link->name))
        fail(linkName(link->name) + ": not connected to the root link " + inQuotes(root->name) +
             " (the joints through it form a cycle)");
    for (const urdf::LinkSharedPtr& link : all) {
      const UrdfLinkPlacement& placement = out_.links.at(link->name);
      for (const urdf::CollisionSharedPtr& c : link->collision_array) {
        if (!c || !c->geometry || c->geometry->type != urdf::Geometry::SPHERE) continue;
        const std::string where = linkName(link->name) + ": collision sphere";
        const double radius = static_cast<const urdf::Sphere&>(*c->geometry).radius;
        checkFinite(radius, where, "radius");
        if (!(radius > 0)) fail(where + ": radius: must be > 0");
        const Transformd X_LC = toTransform(c->origin, where, "origin");
        out_.collisionSpheres.push_back({link->name, placement.body, placement.X_BL * X_LC.p, radius});
      }
    }
    for (const urdf::LinkSharedPtr& link : all) addVisuals(*link);
    return std::move(out_);
  }

 private:
  // The link's <visual> elements, placed on the body that carries it. Mesh files are named, not
  // read (lockstep/view/visuals.h reads them when they are drawn).
  void addVisuals(const urdf::Link& link) {
    const UrdfLinkPlacement& placement = out_.links.at(link.name);
    for (std::size_t i = 0; i < link.visual_array.size(); ++i) {
      const urdf::VisualSharedPtr& v = link.visual_array[i];
      if (!v || !v->geometry) continue;
      VisualShape shape;
      shape.source = linkName(link.name) + " visual " + std::to_string(i);
      shape.body = placement.body;
      shape.X_BS = placement.X_BL * toTransform(v->origin, shape.source, "origin");
      if (v->material && v->material->color.a > 0) {
        const urdf::Color& c = v->material->color;
        shape.rgba = {{c.r, c.g, c.b, c.a}};
      }
      switch (v->geometry->type) {
        case urdf::Geometry::BOX: {
          const urdf::Vector3& d = static_cast<const urdf::Box&>(*v->geometry).dim;
          shape.kind = ShapeKind::Box;
          shape.size = {{d.x / 2, d.y / 2, d.z / 2}};
          break;
        }
        case urdf::Geometry::SPHERE:
          shape.kind = ShapeKind::Sphere;
          shape.size = {{static_cast<const urdf::Sphere&>(*v->geometry).radius, 0, 0}};
          break;
        case urdf::Geometry::CYLINDER: {
          const auto& c = static_cast<const urdf::Cylinder&>(*v->geometry);
          shape.kind = ShapeKind::Cylinder;
          shape.size = {{c.radius, c.length / 2, 0}};
          break;
        }
        case urdf::Geometry::MESH: {
          const auto& m = static_cast<const urdf::Mesh&>(*v->geometry);
          shape.kind = ShapeKind::Mesh;
          shape.size = {{m.scale.x, m.scale.y, m.scale.z}};
          shape.meshFile = m.filename;
          shape.meshBase = baseDirectory_;
          break;
        }
        default: continue;
      }
      for (int k = 0; k < 3; ++k) checkFinite(shape.size[k], shape.source, "size");
      out_.visuals.push_back(std::move(shape));
    }
  }

  [[noreturn]] void fail(const std::string& what) const { throw InputError(source_ + ": " + what); }

  static std::string linkName(const std::string& name) { return "link " + inQuotes(name); }
  static std::string jointName(const std::string& name) { return "joint " + inQuotes(name); }

  void checkFinite(double x, const std::string& element, const std::string& field) const {
    if (!std::isfinite(x)) fail(element + ": " + field + ": must be a finite number");
  }

  Transformd toTransform(const urdf::Pose& pose, const std::string& element, const std::string& field) const {
    const urdf::Vector3& p = pose.position;
    const urdf::Rotation& r = pose.rotation;
    for (double x : {p.x, p.y, p.z}) checkFinite(x, element, field + " xyz");
    for (double x : {r.x, r.y, r.z, r.w}) checkFinite(x, element, field + " rpy");
    const double n = std::sqrt(r.x * r.x + r.y * r.y + r.z * r.z + r.w * r.w);
    if (!(n > 0.5)) fail(element + ": " + field + ": not a rotation");
    return {Rotationd::fromQuaternion(r.w / n, r.x / n, r.y / n, r.z / n), {{p.x, p.y, p.z}}};
  }

  // The link's own mass properties in its frame L: center of mass at the inertial origin, central
  // inertia re-expressed from the inertial frame into L. Checked, and repaired if asked.
  MassProperties linkMassProperties(const urdf::Link& link) {
    MassProperties mp;
    if (!link.inertial) return mp;
    const urdf::Inertial& in = *link.inertial;
    const std::string where = linkName(link.name);
    checkFinite(in.mass, where, "mass");
    if (in.mass < 0) fail(where + ": mass: must be >= 0 (got " + numberText(in.mass) + ")");
    for (double x : {in.ixx, in.iyy, in.izz, in.ixy, in.ixz, in.iyz}) checkFinite(x, where, "inertia");
    const Transformd X_LI = toTransform(in.origin, where, "inertial origin");
    mp.mass = in.mass;
    mp.com = X_LI.p;
    mp.inertia = reexpressSym(X_LI.R.R, SymMat33d{in.ixx, in.iyy, in.izz, in.ixy, in.ixz, in.iyz});
    try {
      validateMassProperties(mp, where, inertiaScale_);
    } catch (const ModelError& e) {
      // Mass and numbers are checked above: what remains is an inertia that is not physical.
      if (!options_.repairInertia) {
        fail(std::string(e.what()) +
             "; fix the file, or load it with --repair-inertia (in a scene: \"repair_inertia\": true) to use the "
             "nearest valid inertia");
      }
      const SymMat33d repaired = nearestValidInertia(mp.inertia);
      std::ostringstream os;
      os.precision(6);
      os << source_ << ": " << where << ": inertia repaired (" << e.what() << "): (xx, yy, zz, xy, xz, yz) = ("
         << mp.inertia.xx << ", " << mp.inertia.yy << ", " << mp.inertia.zz << ", " << mp.inertia.xy << ", "
         << mp.inertia.xz << ", " << mp.inertia.yz << ") -> (" << repaired.xx << ", " << repaired.yy << ", "
         << repaired.zz << ", " << repaired.xy << ", " << repaired.xz << ", " << repaired.yz << ")";
      out_.warnings.push_back(os.str());
      mp.inertia = repaired;
    }
    return mp;
  }

  // The joint's unit axis, or a clear error for a zero or non-finite one.
  Vec3d jointAxis(const urdf::Joint& joint) const {
    const Vec3d a = {{joint.axis.x, joint.axis.y, joint.axis.z}};
    const std::string where = jointName(joint.name);
    for (int i = 0; i < 3; ++i) checkFinite(a[i], where, "axis");
    const double n = norm(a);
    if (!(n > 1e-12)) fail(where + ": axis: must not be zero");
    return a / n;
  }

  // Refuses a link that is the child of two joints (urdfdom then lists it among the children of
  // both parents, which makes the links a graph instead of a tree), naming the link and the joints.
  void checkOneParentPerLink(const urdf::ModelInterface& robot) const {
    std::map<std::string, std::string> parentJoint;  // by child link
    for (const auto& [name, joint] : robot.joints_) {
      auto [it, first] = parentJoint.emplace(joint->child_link_name, name);
      if (!first)
        fail(linkName(joint->child_link_name) + ": is the child of two joints, " + inQuotes(it->second) + " and " +
             inQuotes(name) + " (a URDF link has at most one parent joint)");
    }
  }

  // Adds every link below `root` (carried by bodies_[0]), depth first in urdfdom's order of
  // children, parents before children, without recursion (chains may be as long as the file).
  void addDescendants(const urdf::Link& root) {
    struct Visit {
      const urdf::Link* link;  // its children are being added
      std::size_t bodyIndex;   // the body carrying it
      std::size_t next;        // its next child
    };
    std::vector<Visit> stack = {{&root, 0, 0}};
    while (!stack.empty()) {
      Visit& top = stack.back();
      if (top.next == top.link->child_links.size()) {
        stack.pop_back();
        continue;
      }
      const urdf::Link& child = *top.link->child_links[top.next++];
      const std::size_t childBody = addLink(child, *top.link, top.bodyIndex);
      stack.push_back({&child, childBody, 0});  // (invalidates top)
    }
  }

  // Adds `link`, a child of `parentLink` (carried by bodies_[bodyIndex]): welded into that body by
  // a fixed joint, else as a new body. Returns the index of the body that carries it.
  std::size_t addLink(const urdf::Link& link, const urdf::Link& parentLink, std::size_t bodyIndex) {
    if (out_.links.count(link.name)) fail(linkName(link.name) + ": reached twice from the root link");
    const UrdfLinkPlacement parent = out_.links.at(parentLink.name);
    const urdf::Joint& joint = *link.parent_joint;
    const std::string where = jointName(joint.name);
    const Transformd X_PJ = toTransform(joint.parent_to_joint_origin_transform, where, "origin");
    const Transformd X_BJ = parent.X_BL * X_PJ;  // joint frame on the parent's body
    if (joint.mimic)
      out_.warnings.push_back(source_ + ": " + where + ": mimic ignored (the joint moves independently)");
    if (joint.dynamics && joint.dynamics->friction != 0)
      out_.warnings.push_back(source_ + ": " + where + ": friction ignored (only viscous damping is modeled)");

    if (joint.type == urdf::Joint::FIXED) {
      // Weld: the child link joins the parent's body; its frame is the joint frame.
      out_.links[link.name] = {parent.body, X_BJ};
      BodyDesc& body = out_.bodies[bodyIndex];
      body.mass = combineMassProperties(body.mass, reexpressMassProperties(X_BJ, linkMassProperties(link)));
      return bodyIndex;
    }
    BodyDesc b;
    b.name = link.name;
    b.parent = parent.body;
    b.jointName = joint.name;
    Rotationd R = Rotationd::identity();  // takes the mobilizer's own axis onto the joint axis
    switch (joint.type) {
      case urdf::Joint::REVOLUTE:
      case urdf::Joint::CONTINUOUS:
        b.mobilizer = MobilizerType::Pin;
        R = rotationTaking(Vec3d::unit(2), jointAxis(joint), 0);
        break;
      case urdf::Joint::PRISMATIC:
        b.mobilizer = MobilizerType::Slider;
        R = rotationTaking(Vec3d::unit(0), jointAxis(joint), 2);
        break;
      case urdf::Joint::PLANAR:
        b.mobilizer = MobilizerType::Planar;
        R = rotationTaking(Vec3d::unit(2), jointAxis(joint), 0);
        break;
      case urdf::Joint::FLOATING: b.mobilizer = MobilizerType::Free; break;
      default: fail(where + ": type: unsupported joint type");
    }
    b.X_PF = X_BJ * Transformd{R, Vec3d::zero()};
    b.X_BM = Transformd{R, Vec3d::zero()};
    const int nu = mobilizerNu(b.mobilizer);
    if (joint.dynamics) {
      checkFinite(joint.dynamics->damping, where, "damping");
      if (joint.dynamics->damping < 0)
        fail(where + ": damping: must be >= 0 (got " + numberText(joint.dynamics->damping) + ")");
      if (joint.dynamics->damping > 0) b.damping.assign(nu, joint.dynamics->damping);
    }
    if (joint.limits) {
      checkFinite(joint.limits->effort, where, "limit effort");
      if (joint.limits->effort < 0)
        fail(where + ": limit effort: must be >= 0 (got " + numberText(joint.limits->effort) + ")");
      if (joint.limits->effort > 0) b.effortLimit.assign(nu, joint.limits->effort);
      if (joint.type == urdf::Joint::REVOLUTE || joint.type == urdf::Joint::PRISMATIC) {
        checkFinite(joint.limits->lower, where, "limit lower");
        checkFinite(joint.limits->upper, where, "limit upper");
        if (joint.limits->lower > joint.limits->upper)
          fail(where + ": limit lower: must be <= upper (got " + numberText(joint.limits->lower) + " > " +
               numberText(joint.limits->upper) + ")");
        if (joint.limits->lower < joint.limits->upper)  // equal (both 0, urdfdom's default): no range given
          out_.limits.push_back({joint.name, joint.limits->lower, joint.limits->upper, 0.0, 0.0});
      }
    }
    b.mass = linkMassProperties(link);
    out_.links[link.name] = {link.name, Transformd::identity()};
    out_.bodies.push_back(b);
    return out_.bodies.size() - 1;
  }

  std::string source_;
  std::string baseDirectory_;  // relative mesh files resolve against the file's folder
  UrdfOptions options_;
  UrdfImport out_;
  double inertiaScale_ = 0;  // the largest trace of a link's inertia (validateMassProperties)
};

}  // namespace

std::shared_ptr<const Model> UrdfImport::buildModel() const {
  ModelBuilder mb;
  mb.setGravity(gravity);
  for (const BodyDesc& b : bodies) mb.addBody(b);
  std::shared_ptr<const Model> model = mb.build();
  validateJointInertias(*model);
  return model;
}

UrdfRootJoint parseUrdfRootJoint(const std::string& name) {
  if (name == "fixed") return UrdfRootJoint::Fixed;
  if (name == "free") return UrdfRootJoint::Free;
  throw InputError("must be \"fixed\" or \"free\" (got " + inQuotes(name) + ")");
}

UrdfImport importUrdf(const std::string& xml, const std::string& source, const UrdfOptions& options) {
  return Importer(source, options).run(xml);
}

UrdfImport importUrdfFile(const std::string& path, const UrdfOptions& options) {
  return importUrdf(io::readTextFile(path), path, options);
}

Rotationd rotationTaking(const Vec3d& from, const Vec3d& to, int halfTurnAxis) {
  const Vec3d v = cross(from, to);
  const double s = norm(v), c = dot(from, to);
  if (s < 1e-15) return c > 0 ? Rotationd::identity() : Rotationd::aboutAxis(halfTurnAxis, M_PI);
  return Rotationd::aboutUnitVector(v / s, std::atan2(s, c));
}

MassProperties reexpressMassProperties(const Transformd& X_BC, const MassProperties& inC) {
  MassProperties inB;
  inB.mass = inC.mass;
  inB.com = X_BC * inC.com;
  inB.inertia = reexpressSym(X_BC.R.R, inC.inertia);
  return inB;
}

MassProperties combineMassProperties(const MassProperties& a, const MassProperties& b) {
  MassProperties c;
  c.mass = a.mass + b.mass;
  c.inertia = a.inertia + b.inertia;
  if (!(c.mass > 0)) return c;
  c.com = (a.mass / c.mass) * a.com + (b.mass / c.mass) * b.com;
  // Parallel axis: a part of mass m whose center is at d from the common center adds
  // m (|d|^2 1 - d d^T).
  for (const MassProperties* part : {&a, &b}) {
    const Vec3d d = part->com - c.com;
    const double m = part->mass;
    c.inertia += SymMat33d{m * (d[1] * d[1] + d[2] * d[2]), m * (d[0] * d[0] + d[2] * d[2]),
                           m * (d[0] * d[0] + d[1] * d[1]), -m * d[0] * d[1], -m * d[0] * d[2], -m * d[1] * d[2]};
  }
  return c;
}

SymMat33d nearestValidInertia(const SymMat33d& I) {
  Eigen::Matrix3d E;
  E << I.xx, I.xy, I.xz, I.xy, I.yy, I.yz, I.xz, I.yz, I.zz;
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(E);
  const Eigen::Vector3d p = eig.eigenvalues();  // ascending
  // The valid principal moments form the convex cone {A p >= 0}: p_i >= 0 and p_i + p_j - p_k >= 0.
  Eigen::Matrix<double, 6, 3> A;
  A << 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, -1, 1, -1, 1, -1, 1, 1;
  auto feasible = [&](const Eigen::Vector3d& x) { return ((A * x).array() >= -1e-14 * x.cwiseAbs().maxCoeff()).all(); };
  if (feasible(p)) return I;
  // The projection lies in the relative interior of some face of the cone: project p onto the
  // null space of every subset of constraints and keep the nearest feasible result.
  Eigen::Vector3d best = Eigen::Vector3d::Zero();
  double bestDistance = (p - best).norm();  // the apex, always feasible
  for (int subset = 1; subset < 64; ++subset) {
    Eigen::MatrixXd As(0, 3);
    for (int k = 0; k < 6; ++k) {
      if (!(subset & (1 << k))) continue;
      As.conservativeResize(As.rows() + 1, Eigen::NoChange);
      As.row(As.rows() - 1) = A.row(k);
    }
    // p minus its component in the row space of As.
    const Eigen::Vector3d x = p - As.transpose() * (As * As.transpose()).completeOrthogonalDecomposition().solve(As * p);
    if (feasible(x) && (p - x).norm() < bestDistance) {
      best = x;
      bestDistance = (p - x).norm();
    }
  }
  const Eigen::Matrix3d V = eig.eigenvectors();
  const Eigen::Matrix3d R = V * best.asDiagonal() * V.transpose();
  return {R(0, 0), R(1, 1), R(2, 2), 0.5 * (R(0, 1) + R(1, 0)), 0.5 * (R(0, 2) + R(2, 0)), 0.5 * (R(1, 2) + R(2, 1))};
}

}  // namespace lockstep
