#include "reference_dynamics.h"

#include "dual.h"
#include "lockstep/physics/inertia.h"

namespace lockstep::test {

namespace {

using Mat6 = Eigen::Matrix<double, 6, 6>;

template <class S>
struct TreeJacobians {
  std::vector<Transform<S>> X_GB;
  std::vector<std::vector<SpatialVec<S>>> J;  // J[b][k]: velocity of body b (at Bo, in G) per unit u_k
};

// Poses by direct composition X_GB = X_GP X_PF X_FM ~X_BM, and Jacobians by moving every ancestor
// mobilizer's H columns to each body origin.
template <class S>
TreeJacobians<S> bodyJacobians(const Model& m, const std::vector<S>& q) {
  TreeJacobians<S> t;
  const int nb = m.numBodies(), nu = m.nu();
  t.X_GB.resize(nb);
  t.J.assign(nb, std::vector<SpatialVec<S>>(nu, SpatialVec<S>{{{S(0), S(0), S(0)}}, {{S(0), S(0), S(0)}}}));
  for (int b = 0; b < nb; ++b) {
    const Body& body = m.body(b);
    const Transform<S> X_GP = body.parent >= 0 ? t.X_GB[body.parent] : castTransform<S>(Transformd::identity());
    const Transform<S> X_GF = X_GP * castTransform<S>(body.X_PF);
    const Transform<S> X_GM = X_GF * mobilizerX_FM<S>(body.mobilizer, &q[body.qOffset]);
    t.X_GB[b] = X_GM * castTransform<S>(body.X_BM).inverse();
    if (body.parent >= 0) {
      const Vec3<S> l = t.X_GB[b].p - X_GP.p;
      for (int k = 0; k < nu; ++k) {
        const SpatialVec<S>& Jp = t.J[body.parent][k];
        t.J[b][k] = {Jp.ang, Jp.lin + cross(Jp.ang, l)};
      }
    }
    SpatialVec<S> H[kMaxMobilizerU];
    mobilizerH_FM<S>(body.mobilizer, &q[body.qOffset], H);
    const Vec3<S> r = t.X_GB[b].p - X_GM.p;
    for (int j = 0; j < body.nu; ++j) {
      const Vec3<S> w = X_GF.R * H[j].ang;
      t.J[b][body.uOffset + j] = {w, X_GF.R * H[j].lin + cross(w, r)};
    }
  }
  return t;
}

Eigen::Matrix<double, 6, Eigen::Dynamic> toEigen(const std::vector<SpatialVec<double>>& cols) {
  Eigen::Matrix<double, 6, Eigen::Dynamic> J(6, cols.size());
  for (std::size_t k = 0; k < cols.size(); ++k)
    for (int i = 0; i < 6; ++i) J(i, k) = cols[k][i];
  return J;
}
Eigen::Vector3d e3(const Vec3d& v) { return {v[0], v[1], v[2]}; }
Eigen::Matrix3d e33(const Mat33<double>& m) {
  Eigen::Matrix3d r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r(i, j) = m(i, j);
  return r;
}
Eigen::Matrix3d skew(const Eigen::Vector3d& v) {
  Eigen::Matrix3d r;
  r << 0, -v.z(), v.y(), v.z(), 0, -v.x(), -v.y(), v.x(), 0;
  return r;
}
// Phi for l = p_PB: moves forces from B to P.
Mat6 phi(const Eigen::Vector3d& l) {
  Mat6 m = Mat6::Identity();
  m.topRightCorner<3, 3>() = skew(l);
  return m;
}

}  // namespace

DenseDynamics denseForwardDynamics(const Model& m, const std::vector<double>& q, const std::vector<double>& u,
                                   const std::vector<double>& tau) {
  const int nb = m.numBodies(), nu = m.nu();
  const TreeJacobians<double> kin = bodyJacobians<double>(m, q);
  const Eigen::VectorXd eu = Eigen::Map<const Eigen::VectorXd>(u.data(), nu);
  const Eigen::Vector3d g = e3(m.gravity());

  // Exact Jdot*u: differentiate J(q + t*qdot)*u at t = 0 with dual numbers.
  std::vector<double> qdot(m.nq());
  for (const Body& b : m.bodies()) {
    double* qd = &qdot[b.qOffset];
    mobilizerQdot<double>(b.mobilizer, &q[b.qOffset], &u[b.uOffset], qd);
  }
  std::vector<Dual> qd(m.nq());
  for (int i = 0; i < m.nq(); ++i) qd[i] = Dual(q[i], qdot[i]);
  const TreeJacobians<Dual> dkin = bodyJacobians<Dual>(m, qd);

  // Body inertias about Bo in G, dense.
  std::vector<Mat6> I(nb);
  std::vector<Eigen::Vector3d> c(nb);
  std::vector<Eigen::Matrix3d> Jo(nb);
  DenseDynamics out;
  out.bias = Eigen::VectorXd::Zero(nu);
  for (int b = 0; b < nb; ++b) {
    const MassProperties& mp = m.body(b).mass;
    const Eigen::Matrix3d R = e33(kin.X_GB[b].R.R);
    c[b] = R * e3(mp.com);
    Jo[b] = R * e33(mp.inertia.toMat33()) * R.transpose() +
            mp.mass * (c[b].squaredNorm() * Eigen::Matrix3d::Identity() - c[b] * c[b].transpose());
    I[b] << Jo[b], mp.mass * skew(c[b]), -mp.mass * skew(c[b]), mp.mass * Eigen::Matrix3d::Identity();

    const Eigen::Matrix<double, 6, Eigen::Dynamic> J = toEigen(kin.J[b]);
    const Eigen::Matrix<double, 6, 1> V = J * eu;
    Eigen::Matrix<double, 6, 1> Jdotu = Eigen::Matrix<double, 6, 1>::Zero();
    for (int k = 0; k < nu; ++k)
      for (int i = 0; i < 6; ++i) Jdotu(i) += dkin.J[b][k][i].d * u[k];
    const Eigen::Vector3d w = V.head<3>();
    Eigen::Matrix<double, 6, 1> gyro, Fg;
    gyro << w.cross(Jo[b] * w), mp.mass * w.cross(w.cross(c[b]));
    Fg << c[b].cross(mp.mass * g), mp.mass * g;
    out.bias += J.transpose() * (I[b] * Jdotu + gyro - Fg);
    out.kinetic += 0.5 * V.dot(I[b] * V);
    out.potential -= mp.mass * g.dot(e3(kin.X_GB[b].p) + c[b]);
  }

  // Composite-rigid-body algorithm.
  std::vector<Mat6> Ic = I;
  for (int b = nb - 1; b >= 0; --b) {
    const int p = m.body(b).parent;
    if (p >= 0) {
      const Mat6 P = phi(e3(kin.X_GB[b].p - kin.X_GB[p].p));
      Ic[p] += P * Ic[b] * P.transpose();
    }
  }
  out.M = Eigen::MatrixXd::Zero(nu, nu);
  auto Hof = [&](int b) {
    const Body& body = m.body(b);
    Eigen::Matrix<double, 6, Eigen::Dynamic> H(6, body.nu);
    for (int j = 0; j < body.nu; ++j)
      for (int i = 0; i < 6; ++i) H(i, j) = kin.J[b][body.uOffset + j][i];
    return H;
  };
  for (int b = 0; b < nb; ++b) {
    const Body& body = m.body(b);
    if (body.nu == 0) continue;
    const Eigen::Matrix<double, 6, Eigen::Dynamic> Hb = Hof(b);
    Eigen::Matrix<double, 6, Eigen::Dynamic> F = Ic[b] * Hb;
    out.M.block(body.uOffset, body.uOffset, body.nu, body.nu) = Hb.transpose() * F;
    int j = b;
    while (m.body(j).parent >= 0) {
      const int p = m.body(j).parent;
      F = phi(e3(kin.X_GB[j].p - kin.X_GB[p].p)) * F;
      j = p;
      const Body& bj = m.body(j);
      if (bj.nu == 0) continue;
      const Eigen::MatrixXd Mjb = Hof(j).transpose() * F;
      out.M.block(bj.uOffset, body.uOffset, bj.nu, body.nu) = Mjb;
      out.M.block(body.uOffset, bj.uOffset, body.nu, bj.nu) = Mjb.transpose();
    }
  }

  Eigen::VectorXd rhs = Eigen::Map<const Eigen::VectorXd>(tau.data(), nu) - out.bias;
  for (int i = 0; i < nu; ++i) rhs(i) -= m.damping()[i] * u[i];
  out.udot = out.M.ldlt().solve(rhs);
  return out;
}

}  // namespace lockstep::test
