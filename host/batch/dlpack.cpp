// A batch's per-world fields as raw views (pointer, shape, strides) and as DLPack tensors.
#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <type_traits>

#include "batch_backend.h"

namespace lockstep {

namespace {

template <class U>
FieldView::Type fieldType() {
  if (std::is_same<U, float>::value) return FieldView::Type::Float32;
  if (std::is_same<U, double>::value) return FieldView::Type::Float64;
  return FieldView::Type::Int32;
}

// A DLPack tensor and the shape and strides it points to, freed together by its deleter.
struct DLPackHolder {
  DLManagedTensor tensor;
  std::int64_t shape[2];
  std::int64_t strides[2];
};

}  // namespace

template <class T>
std::vector<std::string> Batch<T>::fieldNames() {
  std::vector<std::string> names;
#define LOCKSTEP_X(type, name, per, role, prefix, parts, doc) names.push_back(#name);
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  return names;
}

template <class T>
FieldView Batch<T>::field(const std::string& name, MemorySpace space) {
  const BatchView<T> fields = space == MemorySpace::Backend ? backend_->view(hostView()) : hostView();
  FieldView v;
  v.name = name;
  v.onDevice = space == MemorySpace::Backend && backend_->onDevice();
  v.worlds = nWorlds_;
  v.worldStride = 1;
  v.componentStride = nWorlds_;
#define LOCKSTEP_X(type, fname, per, role, prefix, parts, doc)                                            \
  if (name == #fname) {                                                                                  \
    v.data = static_cast<void*>(fields.fname);                                                           \
    v.elementType = fieldType<type>();                                                                   \
    v.components = fieldCount(sizes_, per, parts);                                                       \
    return v;                                                                                            \
  }
  LOCKSTEP_WORLD_FIELDS(LOCKSTEP_X)
#undef LOCKSTEP_X
  std::string all;
  for (const std::string& n : fieldNames()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("no per-world field named '" + name + "' (fields: " + all + ")");
}

template <class T>
DLManagedTensor* Batch<T>::toDLPack(const std::string& name, MemorySpace space) {
  const FieldView v = field(name, space);
  auto* h = new DLPackHolder{};
  DLTensor& t = h->tensor.dl_tensor;
  t.data = v.data;
  int device = 0;
  if (v.onDevice) cudaGetDevice(&device);
  t.device = {v.onDevice ? kDLCUDA : kDLCPU, device};
  t.ndim = v.components == 1 ? 1 : 2;
  t.dtype = v.elementType == FieldView::Type::Int32
                ? DLDataType{kDLInt, 32, 1}
                : DLDataType{kDLFloat, std::uint8_t(v.elementType == FieldView::Type::Float32 ? 32 : 64), 1};
  h->shape[0] = v.worlds;
  h->shape[1] = v.components;
  h->strides[0] = v.worldStride;
  h->strides[1] = v.componentStride;
  t.shape = h->shape;
  t.strides = h->strides;
  t.byte_offset = 0;
  h->tensor.manager_ctx = h;
  h->tensor.deleter = [](DLManagedTensor* self) { delete static_cast<DLPackHolder*>(self->manager_ctx); };
  return &h->tensor;
}

#define LOCKSTEP_INSTANTIATE(T)                                                 \
  template std::vector<std::string> Batch<T>::fieldNames();                     \
  template FieldView Batch<T>::field(const std::string&, MemorySpace);          \
  template DLManagedTensor* Batch<T>::toDLPack(const std::string&, MemorySpace);
LOCKSTEP_INSTANTIATE(float)
LOCKSTEP_INSTANTIATE(double)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep
