// The field registry at run time: the per-world fields and parameters of views.h as a list that
// host code walks (names, public names of every component, descriptions), so that accessors,
// study names, recorded outputs and `lockstep info` are generated from the one list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "lockstep/engine/model.h"
#include "lockstep/physics/views.h"

namespace lockstep {

struct FieldInfo {
  const char* name;                // the C++ name: "q", "bodyPose", "springParams"
  Per per;                         // what its components are counted per
  Role role;
  const char* prefix;              // first part of its components' public names
  std::vector<std::string> parts;  // component names per element (empty: one unnamed component)
  const char* doc;
  bool integer;                    // std::int32_t values (status bits) rather than the batch's scalar

  int width() const { return parts.empty() ? 1 : static_cast<int>(parts.size()); }
  std::int64_t count(const Sizes& s) const { return perCount(per, s) * width(); }
};

// The number of components of a per-world field per world, the field named by its WorldView
// member (&WorldView<T>::energy: 2), from its line in the registry.
template <class T, class F>
std::int64_t componentCount(const Sizes& s, Strided<F> WorldView<T>::*field) {
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc)                  \
  if constexpr (std::is_same_v<type, F>) {                                    \
    if (field == &WorldView<T>::name) return fieldCount(s, per, parts);       \
  }
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return 0;
}

// LOCKSTEP_WORLD_FIELDS and LOCKSTEP_PARAM_FIELDS, in declaration order.
const std::vector<FieldInfo>& worldFields();
const std::vector<FieldInfo>& parameterFields();
// The field (either list) with this C++ name, or null.
const FieldInfo* findField(const std::string& name);

// The names of the elements a field is counted per: coordinates, speeds, auxiliary states and
// bodies by their model names, force elements and contacts by theirs, constraint equations as
// "<contact>.<axis>"; one empty name for Per::World.
std::vector<std::string> elementNames(const Model& model, Per per);
// What one element of a Per is called in messages ("generalized speed", "spring-damper"), and in
// name patterns ("speed", "spring": `lockstep info`'s "body.<body>.x").
const char* elementWord(Per per);
const char* elementPlaceholder(Per per);
// Elements of a Per in the plural, for messages: "generalized speeds", "spring-dampers", "bodies".
std::string elementsWord(Per per);
// Every Per, in order.
std::vector<Per> everyPer();
Sizes sizesOf(const Model& model);

// The public name of component c of a field: prefix[.element][.part], e.g. "q.joint7",
// "body.link7.x", "spring.spring.stiffness", "gravity.z".
std::string publicName(const Model& model, const FieldInfo& field, std::int64_t component);
std::vector<std::string> publicNames(const Model& model, const FieldInfo& field);

// A component of a field found by its public name.
struct FieldComponent {
  const FieldInfo* field;
  std::int64_t component;
};
// Looks a public name up among the given fields; nullopt when none has it.
std::optional<FieldComponent> findPublicName(const Model& model, const std::vector<FieldInfo>& fields,
                                             const std::string& name);

}  // namespace lockstep
