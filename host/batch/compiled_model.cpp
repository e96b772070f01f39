#include "lockstep/engine/compiled_model.h"

#include "lockstep/engine/fields.h"

namespace lockstep {

namespace {

bool isIdentity(const Mat33<double>& R) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (R(i, j) != (i == j ? 1.0 : 0.0)) return false;
  return true;
}

// The nearest common ancestor of two bodies (-1: Ground), by walking up from the deeper one.
int commonAncestor(const Model& m, int a, int b) {
  auto depth = [&](int x) {
    int d = 0;
    for (; x >= 0; x = m.body(x).parent) ++d;
    return d;
  };
  int da = depth(a), db = depth(b);
  for (; da > db; --da) a = m.body(a).parent;
  for (; db > da; --db) b = m.body(b).parent;
  while (a != b) {
    a = m.body(a).parent;
    b = m.body(b).parent;
  }
  return a;
}

}  // namespace

template <class T>
CompiledModel<T>::CompiledModel(const Model& m) : sizes(sizesOf(m)), layout(WorkspaceLayout::of(sizes)) {
  std::int32_t dOffset = 0;
  // Bodies are numbered parents first, so an inward pass (from the last body down) meets a body's
  // children before it, the highest-numbered child first.
  const int nb = static_cast<int>(m.bodies().size());
  std::vector<bool> hasChildren(nb, false), firstChildInward(nb, false);
  for (int b = nb - 1; b >= 0; --b) {
    const int p = m.body(b).parent;
    if (p >= 0 && !hasChildren[p]) firstChildInward[b] = true;
    if (p >= 0) hasChildren[p] = true;
  }
  for (int i = 0; i < nb; ++i) {
    const Body& b = m.body(i);
    const bool pfTranslation = isIdentity(b.X_PF.R.R);
    const bool mbIdentity = isIdentity(b.X_BM.R.R) && b.X_BM.p[0] == 0 && b.X_BM.p[1] == 0 && b.X_BM.p[2] == 0;
    body.push_back({b.mobilizer, b.parent, b.qOffset, b.uOffset, b.nq, b.nu, dOffset,
                    (pfTranslation ? kPFTranslationOnly : 0) | (mbIdentity ? kMBIdentity : 0) |
                        (hasChildren[i] ? kHasChildren : 0) | (firstChildInward[i] ? kFirstChildInward : 0)});
    dOffset += b.nu * b.nu;
    X_PF.push_back(castTransform<T>(b.X_PF));
    X_MB.push_back(castTransform<T>(b.X_BM.inverse()));
  }
  for (const LinearBushing& e : m.bushings()) bushing.push_back({e.body1, e.body2, 0, -1});
  for (const SpringDamper& e : m.springs()) spring.push_back({e.bodyA, e.bodyB, 0, -1});
  for (const SphereContact& e : m.contacts())
    contact.push_back({e.bodyF, e.bodyB, e.desc.enforceRolling ? kContactRolling : 0,
                       commonAncestor(m, e.bodyF, e.bodyB)});
  for (const GroundContact& e : m.groundContacts()) ground.push_back({e.body, -1, 0, -1});
}

template struct CompiledModel<float>;
template struct CompiledModel<double>;

}  // namespace lockstep
