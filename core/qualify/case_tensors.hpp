// The tensors of one qualification case on an arm's device: each in its own allocation, between
// guard zones, at the case's offset and strides, with its own dtype and shape (several outputs
// for format-2 specs); host mirrors of everything for checking.
//
//   allocation = [guard][offset][span of the view's elements, gaps included][guard]
//
// Output 0 of an aliasing case has no allocation of its own: it lives in an input's.
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device/memory.hpp"
#include "kq/tensor.hpp"
#include "plan/case.hpp"
#include "spec/spec.hpp"
#include "util/host_buffer.hpp"

namespace kq {

class CaseDataLayout;

inline constexpr std::size_t kGuardBytes = 256;
inline constexpr unsigned char kGuardByte = 0xCD;
// Two output poisons: finite, normal, distinct (0xA5A5A5A5 = -2.87e-16f, 0x5A5A5A5A = 1.54e16f).
inline constexpr unsigned char kPoisonBytes[2] = {0xA5, 0x5A};

struct CaseTensor {
  std::string name;
  DeviceMemory memory;  // the allocation on the arm's device
  // Inputs: what the data region (the span) must hold, from data_begin to data_end of the
  // allocation; kGuardByte everywhere else. `pristine` points into `own` (drawn here) or into
  // the stage's shared, sealed copy of the case's data.
  HostBytes own;
  const unsigned char* pristine = nullptr;
  std::size_t view_offset = 0;  // bytes from the allocation start to the view's data
  std::int64_t min_elem = 0;    // lowest element offset the view reaches (<= 0)
  std::int64_t span_elems = 0;  // elements between the lowest and highest reached
  TensorView view;              // on the device
};

// Byte positions in t's allocation of the first and one past the last byte of its data region
// (the span of the view's elements, gaps included).
std::size_t data_begin(const CaseTensor& t);
std::size_t data_end(const CaseTensor& t);

// One output's tensor: an allocation of its own, or (output 0 of an aliasing case) a view on an
// input's allocation.
struct OutputTensor {
  std::optional<CaseTensor> own;  // absent when aliased
  TensorView view;
  std::vector<std::int64_t> shape, strides;
  std::size_t view_offset = 0;  // bytes from the owner allocation's start to the view
  bool contiguous = true;
};

class CaseTensors {
 public:
  // Case c's tensors as case_shapes(spec, c) gives them (plan/case_shapes.hpp).
  CaseTensors(const Spec& spec, const Case& c, Device device);

  const std::vector<TensorView>& input_views() const { return input_views_; }
  const std::vector<TensorView>& output_views() const { return output_views_; }

  // Draws input values (generation 0, 1, ...), uploads them, and records them as pristine.
  void load_inputs(const Case& c, std::uint64_t generation) {
    generate_inputs(c, generation);
    upload_inputs();
  }
  // The two halves of load_inputs: the host images, then their copy to the device.
  void generate_inputs(const Case& c, std::uint64_t generation);
  // generate_inputs from data computed already (qualify/case_data.hpp): the same images, read
  // where they are (`data` must outlive the use).
  void use_inputs(const CaseDataLayout& layout, const unsigned char* data, int generation);
  void upload_inputs();
  // Fills every output's allocation (data region and guards as they should be) with poison `k`.
  void poison_output(int k);
  // Fills the outputs' data regions alone with poison `k`, enqueued on `stream` (the timing
  // loop's re-poisoning: no host image, no wait). Out-of-place outputs only.
  void poison_output_data(int k, void* stream);

  // Host views of the pristine inputs, for the reference.
  std::vector<TensorView> pristine_input_views() const;

  // The checks. Each returns an empty string when fine, else one line saying what was wrong.
  // Input allocations (guards and data, gaps included) must equal their pristine copies: read
  // in place on the host, downloaded from a device.
  std::string check_inputs_unchanged() const;
  // An output's guard zones and the bytes of its allocation outside the view's elements.
  struct Finding {
    std::string check;    // output_guard or output_gaps; empty when fine
    std::string message;  // one line
  };
  // `out_alloc`: a host copy of output o's owner's whole allocation.
  Finding check_output_surroundings(const unsigned char* out_alloc, int poison,
                                    std::size_t o = 0) const;
  // Downloads output o's whole allocation into `into` (resized; its memory is reused, so that
  // a case's later runs touch no fresh pages).
  void download_output(HostBytes& into, std::size_t o = 0) const;

  struct Mismatch {
    std::size_t output = 0;   // which output
    std::int64_t index = -1;  // logical (row-major) index of the first bad element
    std::int64_t count = 0;   // how many elements are bad
    std::uint64_t want_bits = 0, got_bits = 0;
    std::int64_t sampled = 0;  // elements compared where the output is sampled, else 0 (all)
  };
  // Output o's elements in a downloaded allocation against `want` (dense, logical order, the
  // output's dtype) by `matches(i, want_bits, got_bits)`, i the element's logical index.
  template <typename Match>
  Mismatch compare_output(const unsigned char* out_alloc, const void* want, Match&& matches,
                          std::size_t o = 0) const;
  struct Difference {
    std::size_t output = 0;
    std::int64_t index = -1;  // -1: none
  };
  // The first element (logical index) at which two downloaded allocations of output o differ
  // in their bits, or -1. Two NaNs count as equal whatever their payloads and signs, as in the
  // comparison with the reference: IEEE leaves them to the implementation, and a library may
  // give different ones from one call to the next (numpy's vector loops do, with the
  // alignment of their temporaries).
  std::int64_t first_difference(const unsigned char* a, const unsigned char* b,
                                std::size_t o = 0) const;

  bool aliased() const { return alias_input_ >= 0; }
  int alias_input() const { return alias_input_; }
  std::size_t outputs() const { return outputs_.size(); }

  // For checks made elsewhere (qualify/case_checks.hpp): the tensors and the outputs' layouts.
  const std::vector<CaseTensor>& inputs() const { return inputs_; }
  const CaseTensor& output_owner(std::size_t o = 0) const;
  const TensorView& output_view(std::size_t o = 0) const { return outputs_[o].view; }
  bool output_contiguous(std::size_t o = 0) const { return outputs_[o].contiguous; }
  DType dtype(std::size_t o = 0) const { return outputs_[o].view.dtype; }
  const std::string& output_name(std::size_t o) const { return output_names_[o]; }
  // Byte position in output o's owner allocation of its element at logical index i.
  std::size_t output_byte(std::int64_t i, std::size_t o = 0) const;
  // The line check_inputs_unchanged gives for input i whose allocation holds `now` at byte k.
  std::string input_change(std::size_t i, std::size_t k, unsigned char now) const;
  // check_output_surroundings' guard findings from output o's allocation's head (the bytes
  // before its data) and tail (those after): where the data region stays on the device.
  Finding guard_finding(const unsigned char* head, const unsigned char* tail,
                        std::size_t o = 0) const;

 private:
  // Calls f(first, last) over chunks of logical indices, in parallel.
  void for_chunks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f) const;

  const Spec& spec_;
  std::vector<CaseTensor> inputs_;
  std::vector<OutputTensor> outputs_;
  std::vector<std::string> output_names_;
  int alias_input_ = -1;
  std::vector<TensorView> input_views_, output_views_;
  // Host scratch for the input checks of a device's tensors, reused by every check of the case:
  // large cases would otherwise fault in fresh pages for each (page faults were a quarter of a
  // 2^24-element case's time).
  mutable HostBytes scratch_;
};

template <typename Match>
CaseTensors::Mismatch CaseTensors::compare_output(const unsigned char* out_alloc, const void* want,
                                                  Match&& matches, std::size_t o) const {
  const std::size_t es = dtype_size(dtype(o));
  const std::int64_t n = output_view(o).numel();
  std::mutex mu;
  Mismatch m;
  m.output = o;
  for_chunks(n, [&](std::int64_t lo, std::int64_t hi) {
    // Equal bits always match, whatever the rule: a dense chunk equal to the reference byte
    // for byte is done with one memcmp, and only the others are read element by element.
    if (output_contiguous(o) && std::memcmp(out_alloc + output_byte(lo, o),
                                            static_cast<const unsigned char*>(want) + lo * es,
                                            static_cast<std::size_t>(hi - lo) * es) == 0)
      return;
    std::int64_t first = -1, count = 0;
    std::uint64_t wb = 0, gb = 0;
    for (std::int64_t i = lo; i < hi; ++i) {
      std::uint64_t w = 0, g = 0;
      std::memcpy(&w, static_cast<const unsigned char*>(want) + i * es, es);
      std::memcpy(&g, out_alloc + output_byte(i, o), es);
      if (!matches(i, w, g)) {
        if (first < 0) first = i, wb = w, gb = g;
        ++count;
      }
    }
    if (count == 0) return;
    std::lock_guard lock(mu);
    m.count += count;
    if (m.index < 0 || first < m.index) m.index = first, m.want_bits = wb, m.got_bits = gb;
  });
  return m;
}

}  // namespace kq
