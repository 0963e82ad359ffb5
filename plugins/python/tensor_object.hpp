// kq.Tensor: one of kq's tensor views as a Python object that owns nothing. It exposes the
// protocols other libraries read a foreign buffer through, so that an arm's tensors are kq's
// own memory, never a copy:
//   __dlpack__ / __dlpack_device__   DLPack (torch.from_dlpack, CuPy, JAX); a capsule named
//                                    "dltensor" whose byte_offset is 0, the view's offset being
//                                    in its data pointer (torch ignores byte_offset);
//   __cuda_array_interface__         version 3, CUDA views (CuPy, numba, cuda-python);
//   __array_interface__              version 3, CPU views (numpy.asarray), read-only for inputs;
// and data_ptr, shape, strides (in elements), dtype ("f32", "f64", "f16", "bf16", "i32", "i64",
// "bool"), device ("cpu", "cuda"), device_id, read_only and key (what identifies the view:
// pointer, layout, dtype, device). DLPack gives f16 as kDLFloat/16, bf16 as kDLBfloat/16, i32
// and i64 as kDLInt/32 and /64, bool as kDLBool/8 (DLPack 0.8); the array interfaces give f16 as
// "<f2", i32 "<i4", i64 "<i8", bool "|b1" and have no form for bf16 (numpy has no bfloat16): on
// a bf16 tensor both raise AttributeError, so hasattr() is false and numpy-only code can decline.
#pragma once
#include <pybind11/pybind11.h>

#include "kq/tensor.hpp"

namespace kq::python {

struct TensorObject {
  TensorView view;
  bool read_only = false;
  int device_id = 0;  // the CUDA device the memory is on
};

// Adds kq.Tensor to the module.
void define_tensor_class(pybind11::module_& m);
// A kq.Tensor over the view (the device of CUDA memory is asked of the driver).
pybind11::object tensor_object(const TensorView& v, bool read_only);

}  // namespace kq::python
