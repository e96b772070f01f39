#include "lockstep/builtin_scenes.h"

namespace lockstep {

std::shared_ptr<const Model> makeChain(int links) {
  if (links < 1) throw ModelError("chain: links: must be at least 1");
  ModelBuilder mb;
  mb.setGravity({{0, -9.81, 0}});
  for (int i = 1; i <= links; ++i) {
    BodyDesc b;
    b.name = "link" + std::to_string(i);
    b.parent = i == 1 ? "ground" : "link" + std::to_string(i - 1);
    b.jointName = "joint" + std::to_string(i);
    b.mobilizer = MobilizerType::Pin;
    b.X_PF = i == 1 ? Transformd::identity() : Transformd::translation({{0, -0.5, 0}});
    b.mass.mass = 1.0;
    b.mass.com = {{0, -0.25, 0}};
    b.mass.inertia = SymMat33d::diagonal(0.02, 0.005, 0.02);
    mb.addBody(b);
  }
  return mb.build();
}

std::vector<double> chainInitialQ(int links) { return std::vector<double>(links, 0.3); }

}  // namespace lockstep
