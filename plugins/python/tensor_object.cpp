#include "tensor_object.hpp"

#include <dlfcn.h>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

namespace py = pybind11;

namespace kq::python {
namespace {

// The CUDA device a pointer's memory is on, asked of the driver the host has loaded (this plugin
// links no CUDA library); 0 when it cannot tell.
int device_of(const void* p) {
  using GetAttribute = int (*)(void*, int, unsigned long long);
  static GetAttribute get = [] {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return cuda ? reinterpret_cast<GetAttribute>(dlsym(cuda, "cuPointerGetAttribute")) : nullptr;
  }();
  constexpr int kDeviceOrdinal = 9;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
  int ordinal = 0;
  if (get && get(&ordinal, kDeviceOrdinal, reinterpret_cast<std::uintptr_t>(p)) == 0)
    return ordinal;
  return 0;
}

std::uintptr_t address(const TensorView& v) { return reinterpret_cast<std::uintptr_t>(v.data); }

// numpy's name of the dtype; bf16 has none (numpy has no bfloat16), so a bf16 tensor has no
// array interface: numpy arms decline bf16 specs, other libraries read it through DLPack.
const char* typestr(DType t) {
  switch (t) {
    case DType::f32:
      return "<f4";
    case DType::f64:
      return "<f8";
    case DType::f16:
      return "<f2";
    case DType::i32:
      return "<i4";
    case DType::i64:
      return "<i8";
    case DType::boolean:
      return "|b1";
    case DType::bf16:
      break;
  }
  throw py::attribute_error(
      "a bf16 tensor has no array interface (numpy has no bfloat16): see __dlpack__");
}

// DLPack's kDLBool (DLPack 0.8), which older headers (Debian's 0.6) do not name: one byte per
// element, 0 or 1. torch reads it as torch.bool from 2.1 on; kq_api.py reads bool tensors
// through the array interfaces where the torch is older.
constexpr std::uint8_t kDLPackBool = 6;

// DLPack's code of the dtype: bf16 is a type of its own, not a 16-bit kDLFloat; i32 and i64 are
// kDLInt, bool kDLBool.
std::uint8_t dlpack_code(DType t) {
  switch (t) {
    case DType::bf16:
      return kDLBfloat;
    case DType::i32:
    case DType::i64:
      return kDLInt;
    case DType::boolean:
      return kDLPackBool;
    case DType::f32:
    case DType::f64:
    case DType::f16:
      break;
  }
  return kDLFloat;
}

py::tuple shape_of(const TensorView& v) {
  py::tuple t(v.rank);
  for (int i = 0; i < v.rank; ++i) t[i] = v.shape[i];
  return t;
}

py::tuple strides_of(const TensorView& v, std::int64_t scale) {
  py::tuple t(v.rank);
  for (int i = 0; i < v.rank; ++i) t[i] = v.strides[i] * scale;
  return t;
}

// The array interface both protocols share (numpy's __array_interface__, CUDA's v3).
py::dict array_interface(const TensorObject& t) {
  py::dict d;
  d["shape"] = shape_of(t.view);
  d["typestr"] = typestr(t.view.dtype);
  d["data"] = py::make_tuple(address(t.view), t.read_only);
  d["strides"] = strides_of(t.view, static_cast<std::int64_t>(dtype_size(t.view.dtype)));
  d["version"] = 3;
  return d;
}

// A DLManagedTensor with its shape and strides beside it; the deleter frees the whole.
struct Managed {
  DLManagedTensor tensor{};
  std::vector<std::int64_t> shape, strides;
};

void delete_managed(DLManagedTensor* self) { delete static_cast<Managed*>(self->manager_ctx); }

// A capsule still named "dltensor" when it dies was never consumed: its tensor is freed here.
void delete_unconsumed(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (t && t->deleter) t->deleter(t);
}

py::object dlpack_capsule(const TensorObject& t) {
  auto* m = new Managed;
  const TensorView& v = t.view;
  m->shape.assign(v.shape.begin(), v.shape.begin() + v.rank);
  m->strides.assign(v.strides.begin(), v.strides.begin() + v.rank);
  DLTensor& d = m->tensor.dl_tensor;
  d.data = v.data;
  d.device = {v.device == Device::cuda ? kDLCUDA : kDLCPU, t.device_id};
  d.ndim = v.rank;
  d.dtype = {dlpack_code(v.dtype), static_cast<std::uint8_t>(8 * dtype_size(v.dtype)), 1};
  d.shape = m->shape.data();
  d.strides = m->strides.data();
  d.byte_offset = 0;
  m->tensor.manager_ctx = m;
  m->tensor.deleter = delete_managed;
  PyObject* capsule = PyCapsule_New(&m->tensor, "dltensor", delete_unconsumed);
  if (!capsule) {
    delete m;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

}  // namespace

void define_tensor_class(py::module_& m) {
  py::class_<TensorObject>(m, "Tensor", "One of kq's tensor views (see kq.__doc__)")
      .def_property_readonly("data_ptr", [](const TensorObject& t) { return address(t.view); })
      .def_property_readonly("shape", [](const TensorObject& t) { return shape_of(t.view); })
      .def_property_readonly("strides", [](const TensorObject& t) { return strides_of(t.view, 1); })
      .def_property_readonly(
          "dtype", [](const TensorObject& t) { return std::string(to_string(t.view.dtype)); })
      .def_property_readonly(
          "device", [](const TensorObject& t) { return std::string(to_string(t.view.device)); })
      .def_readonly("device_id", &TensorObject::device_id)
      .def_readonly("read_only", &TensorObject::read_only)
      .def_property_readonly("key",
                             [](const TensorObject& t) {
                               return py::make_tuple(address(t.view), shape_of(t.view),
                                                     strides_of(t.view, 1),
                                                     static_cast<int>(t.view.dtype),
                                                     static_cast<int>(t.view.device), t.read_only);
                             })
      .def(
          "__dlpack__",
          [](const TensorObject& t, py::object /*stream*/, py::object /*max_version*/,
             py::object /*dl_device*/, py::object copy) {
            if (!copy.is_none() && copy.cast<bool>())
              throw py::buffer_error("kq.Tensor views kq's memory: it cannot be copied here");
            return dlpack_capsule(t);
          },
          py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none())
      .def("__dlpack_device__",
           [](const TensorObject& t) {
             return py::make_tuple(
                 static_cast<int>(t.view.device == Device::cuda ? kDLCUDA : kDLCPU), t.device_id);
           })
      .def_property_readonly("__cuda_array_interface__",
                             [](const TensorObject& t) {
                               if (t.view.device != Device::cuda)
                                 throw py::attribute_error("a CPU tensor: see __array_interface__");
                               py::dict d = array_interface(t);
                               d["stream"] = py::none();  // work goes on kq.stream()
                               return d;
                             })
      .def_property_readonly("__array_interface__", [](const TensorObject& t) {
        if (t.view.device != Device::cpu)
          throw py::attribute_error("a CUDA tensor: see __cuda_array_interface__");
        return array_interface(t);
      });
}

py::object tensor_object(const TensorView& v, bool read_only) {
  TensorObject t{v, read_only, v.device == Device::cuda ? device_of(v.data) : 0};
  return py::cast(std::move(t));
}

}  // namespace kq::python
