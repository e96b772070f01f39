#include "lockstep/engine/compiled_model.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "lockstep/engine/fields.h"

namespace lockstep {

namespace {

bool isIdentity(const Mat33<double>& R) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (R(i, j) != (i == j ? 1.0 : 0.0)) return false;
  return true;
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
  // Each tree's speeds: [the least, one past the last) of its bodies' (speeds are numbered in body
  // order, so a tree whose bodies another tree's interleave holds those speeds too).
  std::vector<int> root(nb);
  std::vector<std::int32_t> treeU0(nb, std::numeric_limits<std::int32_t>::max()), treeU1(nb, 0);
  for (int i = 0; i < nb; ++i) {
    const Body& b = m.body(i);
    root[i] = b.parent < 0 ? i : root[b.parent];
    treeU0[root[i]] = std::min(treeU0[root[i]], b.uOffset);
    treeU1[root[i]] = std::max(treeU1[root[i]], b.uOffset + b.nu);
  }
  for (int i = 0; i < nb; ++i) {
    const Body& b = m.body(i);
    const bool pfTranslation = isIdentity(b.X_PF.R.R);
    const bool mbIdentity = isIdentity(b.X_BM.R.R) && b.X_BM.p[0] == 0 && b.X_BM.p[1] == 0 && b.X_BM.p[2] == 0;
    body.push_back({b.mobilizer, b.parent, b.qOffset, b.uOffset, b.nq, b.nu, dOffset,
                    (pfTranslation ? kPFTranslationOnly : 0) | (mbIdentity ? kMBIdentity : 0) |
                        (hasChildren[i] ? kHasChildren : 0) | (firstChildInward[i] ? kFirstChildInward : 0),
                    treeU0[root[i]], treeU1[root[i]]});
    dOffset += b.nu * b.nu;
    X_PF.push_back(castTransform<T>(b.X_PF));
    X_MB.push_back(castTransform<T>(b.X_BM.inverse()));
  }
  // Each body element's bodies and flags, as its kind defines them (elementTopology, model.h).
#define LOCKSTEP_X(Kind, list, count, per, array, ...) \
  for (const Kind& e : m.list()) array.push_back(elementTopology(m, e));
  LOCKSTEP_BODY_ELEMENTS(LOCKSTEP_X)
#undef LOCKSTEP_X
}

template struct CompiledModel<float>;
template struct CompiledModel<double>;

}  // namespace lockstep
