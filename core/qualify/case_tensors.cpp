#include "qualify/case_tensors.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kq/half.hpp"
#include "plan/case_shapes.hpp"
#include "qualify/case_data.hpp"
#include "qualify/case_values.hpp"

namespace kq {
namespace {

// Allocates a tensor for `place` between guard zones.
CaseTensor make_tensor(const std::string& name, const std::vector<std::int64_t>& shape,
                       const Placement& place, DType dtype, Device device) {
  CaseTensor t;
  t.name = name;
  auto strides = place.strides.empty() ? row_major_strides(shape) : place.strides;
  const Span span = span_of(shape, place);
  t.min_elem = span.min_elem;
  t.span_elems = span.elems;
  const std::size_t es = dtype_size(dtype);
  // A fenced tensor has no guard zones: unmapped memory borders its data instead.
  const std::size_t guard = place.fence == Fence::none ? kGuardBytes : 0;
  t.view_offset = guard + static_cast<std::size_t>(place.offset_bytes) +
                  static_cast<std::size_t>(-span.min_elem) * es;
  const std::size_t bytes = guard + static_cast<std::size_t>(place.offset_bytes) +
                            static_cast<std::size_t>(t.span_elems) * es + guard;
  t.memory = DeviceMemory(device, bytes, place.fence);
  t.view =
      view_of(static_cast<char*>(t.memory.data()) + t.view_offset, dtype, device, shape, strides);
  return t;
}

}  // namespace

std::size_t data_begin(const CaseTensor& t) {
  return t.view_offset - static_cast<std::size_t>(-t.min_elem) * dtype_size(t.view.dtype);
}
std::size_t data_end(const CaseTensor& t) {
  return data_begin(t) + static_cast<std::size_t>(t.span_elems) * dtype_size(t.view.dtype);
}

CaseTensors::CaseTensors(const Spec& spec, const Case& c, Device device)
    : spec_(spec), alias_input_(c.alias_input) {
  const CaseShapes shapes = case_shapes(spec, c);
  for (const CaseTensorShape& t : shapes.inputs)
    inputs_.push_back(make_tensor(t.name, t.shape, t.place, t.dtype, device));
  for (std::size_t o = 0; o < shapes.outputs.size(); ++o) {
    const CaseTensorShape& t = shapes.outputs[o];
    OutputTensor out;
    out.shape = t.shape;
    if (o == 0 && alias_input_ >= 0) {
      const CaseTensor& owner = inputs_[static_cast<std::size_t>(alias_input_)];
      out.view_offset =
          owner.view_offset + static_cast<std::size_t>(c.alias_shift) * dtype_size(t.dtype);
      out.strides = std::vector<std::int64_t>(owner.view.strides.begin(),
                                              owner.view.strides.begin() + owner.view.rank);
      out.view = view_of(static_cast<char*>(owner.memory.data()) + out.view_offset, t.dtype, device,
                         t.shape, out.strides);
    } else {
      out.own = make_tensor(t.name, t.shape, t.place, t.dtype, device);
      out.view_offset = out.own->view_offset;
      out.view = out.own->view;
      out.strides = std::vector<std::int64_t>(out.view.strides.begin(),
                                              out.view.strides.begin() + out.view.rank);
    }
    out.contiguous = out.view.is_contiguous();
    output_views_.push_back(out.view);
    output_names_.push_back(t.name);
    outputs_.push_back(std::move(out));
  }
  for (const auto& t : inputs_) input_views_.push_back(t.view);
}

const CaseTensor& CaseTensors::output_owner(std::size_t o) const {
  const OutputTensor& out = outputs_[o];
  return out.own ? *out.own : inputs_[static_cast<std::size_t>(alias_input_)];
}

void CaseTensors::generate_inputs(const Case& c, std::uint64_t generation) {
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    CaseTensor& t = inputs_[i];
    t.own.resize(data_end(t) - data_begin(t));
    fill_case_input(spec_, c, static_cast<int>(i), t.own.data(), t.span_elems, generation);
    t.pristine = t.own.data();
  }
}

void CaseTensors::use_inputs(const CaseDataLayout& layout, const unsigned char* data,
                             int generation) {
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    inputs_[i].pristine = data + layout.input_offset(i, generation);
}

namespace {

// An input's whole allocation as it must be: guard zones, then its pristine data.
void upload_pristine(const CaseTensor& t) {
  DeviceMemory& m = const_cast<DeviceMemory&>(t.memory);
  const std::size_t b = data_begin(t), e = data_end(t);
  m.fill(0, b, kGuardByte);
  if (e > b) m.upload(t.pristine, b, e - b);
  m.fill(e, m.size() - e, kGuardByte);
}

}  // namespace

void CaseTensors::upload_inputs() {
  for (const CaseTensor& t : inputs_) upload_pristine(t);
}

void CaseTensors::poison_output(int k) {
  for (OutputTensor& out : outputs_) {
    if (!out.own) {  // in place: start again from the pristine input
      upload_pristine(inputs_[static_cast<std::size_t>(alias_input_)]);
      continue;
    }
    // Set where the output lives: no host image is built or copied.
    DeviceMemory& m = out.own->memory;
    const std::size_t b = data_begin(*out.own), e = data_end(*out.own);
    m.fill(0, b, kGuardByte);
    m.fill(b, e - b, kPoisonBytes[k]);
    m.fill(e, m.size() - e, kGuardByte);
  }
}

void CaseTensors::poison_output_data(int k, void* stream) {
  if (alias_input_ >= 0) throw std::logic_error("poison_output_data: the output is an input");
  for (OutputTensor& out : outputs_)
    out.own->memory.fill_async(data_begin(*out.own), data_end(*out.own) - data_begin(*out.own),
                               kPoisonBytes[k], stream);
}

std::vector<TensorView> CaseTensors::pristine_input_views() const {
  std::vector<TensorView> v;
  for (const auto& t : inputs_) {
    TensorView h = t.view;
    h.device = Device::cpu;
    h.data = const_cast<unsigned char*>(t.pristine) + (t.view_offset - data_begin(t));
    v.push_back(h);
  }
  return v;
}

namespace {

// The first byte in [begin, end) at which `now` differs from `was` (`was` indexed from
// `begin`), or `end`: chunks of 1 MiB in parallel, each passed with one memcmp when equal (the
// usual case), scanned when not.
std::size_t first_changed_byte(const unsigned char* now, const unsigned char* was,
                               std::size_t begin, std::size_t end) {
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::atomic<std::size_t> first{end};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end, kChunk),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      const unsigned char* w = was + (r.begin() - begin);
                      if (std::memcmp(now + r.begin(), w, r.end() - r.begin()) == 0) return;
                      std::size_t k = r.begin();
                      while (now[k] == was[k - begin]) ++k;
                      for (std::size_t f = first.load();
                           k < f && !first.compare_exchange_weak(f, k);) {
                      }
                    });
  return first.load();
}

// The first byte in [begin, end) of `now` that is not the guard byte, or `end`.
std::size_t first_off_guard(const unsigned char* now, std::size_t begin, std::size_t end) {
  for (std::size_t k = begin; k < end; ++k)
    if (now[k] != kGuardByte) return k;
  return end;
}

}  // namespace

std::string CaseTensors::check_inputs_unchanged() const {
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const CaseTensor& t = inputs_[i];
    const unsigned char* now = static_cast<const unsigned char*>(t.memory.data());
    if (t.memory.device() != Device::cpu) {
      scratch_.resize(t.memory.size());
      t.memory.download(scratch_.data(), 0, scratch_.size());
      now = scratch_.data();
    }
    const std::size_t b = data_begin(t), e = data_end(t), size = t.memory.size();
    // In place, the data region is the output's: only the guard zones must stay as they were.
    const bool in_place = static_cast<int>(i) == alias_input_;
    std::size_t k = first_off_guard(now, 0, b);
    if (k == b) k = in_place ? e : first_changed_byte(now, t.pristine, b, e);
    if (k == e) k = first_off_guard(now, e, size);
    if (k == size) continue;
    return input_change(i, k, now[k]);
  }
  return {};
}

std::string CaseTensors::input_change(std::size_t i, std::size_t k, unsigned char now) const {
  const CaseTensor& t = inputs_[i];
  const std::size_t b = data_begin(t), e = data_end(t);
  const unsigned char was = (k >= b && k < e) ? t.pristine[k - b] : kGuardByte;
  std::string where =
      k < b    ? std::to_string(b - k) + " bytes before its data (guard zone)"
      : k >= e ? std::to_string(k - e) + " bytes past its end (guard zone)"
               : "at storage element " + std::to_string((k - b) / dtype_size(t.view.dtype));
  char buf[48];
  std::snprintf(buf, sizeof buf, " (byte 0x%02x, was 0x%02x)", now, was);
  return "input " + t.name + " was modified " + where + buf;
}

void CaseTensors::download_output(HostBytes& into, std::size_t o) const {
  const CaseTensor& t = output_owner(o);
  into.resize(t.memory.size());
  t.memory.download(into.data(), 0, into.size());
}

std::size_t CaseTensors::output_byte(std::int64_t i, std::size_t o) const {
  const OutputTensor& out = outputs_[o];
  const std::size_t es = dtype_size(out.view.dtype);
  if (out.contiguous) return out.view_offset + static_cast<std::size_t>(i) * es;
  std::int64_t off = 0;
  for (std::size_t d = out.shape.size(); d-- > 0;) {
    off += (i % out.shape[d]) * out.strides[d];
    i /= out.shape[d];
  }
  return static_cast<std::size_t>(static_cast<std::int64_t>(out.view_offset) +
                                  off * static_cast<std::int64_t>(es));
}

void CaseTensors::for_chunks(std::int64_t n,
                             const std::function<void(std::int64_t, std::int64_t)>& f) const {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, 1 << 16),
                    [&](const tbb::blocked_range<std::int64_t>& r) { f(r.begin(), r.end()); });
}

CaseTensors::Finding CaseTensors::check_output_surroundings(const unsigned char* out_alloc,
                                                            int poison, std::size_t o) const {
  const OutputTensor& out = outputs_[o];
  if (!out.own) return {};  // the input checks cover the owner's guards
  const CaseTensor& t = *out.own;
  const std::size_t b = data_begin(t), e = data_end(t);
  if (Finding f = guard_finding(out_alloc, out_alloc + e, o); !f.check.empty()) return f;
  if (out.contiguous) return {};
  // Strided output: bytes between the view's elements must keep the poison.
  std::vector<char> mine(t.memory.size(), 0);
  const std::size_t es = dtype_size(out.view.dtype);
  for (std::int64_t i = 0; i < out.view.numel(); ++i)
    std::fill_n(mine.begin() + static_cast<std::ptrdiff_t>(output_byte(i, o)), es, 1);
  for (std::size_t k = b; k < e; ++k)
    if (!mine[k] && out_alloc[k] != kPoisonBytes[poison])
      return {"output_gaps", "wrote between the elements of strided output " + t.name + " (byte " +
                                 std::to_string(k - b) + " of its span)"};
  return {};
}

CaseTensors::Finding CaseTensors::guard_finding(const unsigned char* head,
                                                const unsigned char* tail, std::size_t o) const {
  const CaseTensor& t = *outputs_[o].own;
  const std::size_t b = data_begin(t), after = t.memory.size() - data_end(t);
  if (const std::size_t k = first_off_guard(head, 0, b); k < b)
    return {"output_guard",
            "wrote " + std::to_string(b - k) + " bytes before the start of output " + t.name};
  for (std::size_t k = after; k-- > 0;)
    if (tail[k] != kGuardByte)
      return {"output_guard", "wrote past the end of output " + t.name + " (byte " +
                                  std::to_string(k) + " after its last element)"};
  return {};
}

std::int64_t CaseTensors::first_difference(const unsigned char* a, const unsigned char* b,
                                           std::size_t o) const {
  const DType dt = dtype(o);
  const std::size_t es = dtype_size(dt);
  std::int64_t first = -1;
  std::mutex mu;
  for_chunks(output_view(o).numel(), [&](std::int64_t lo, std::int64_t hi) {
    // A dense chunk equal byte for byte (the usual case) is passed with one memcmp.
    if (output_contiguous(o) && std::memcmp(a + output_byte(lo, o), b + output_byte(lo, o),
                                            static_cast<std::size_t>(hi - lo) * es) == 0)
      return;
    for (std::int64_t i = lo; i < hi; ++i) {
      std::size_t p = output_byte(i, o);
      // Integer outputs have no NaN: their bits alone count.
      const bool both_nan = !is_integer(dt) && std::isnan(load_as_double(dt, a + p)) &&
                            std::isnan(load_as_double(dt, b + p));
      if (std::memcmp(a + p, b + p, es) != 0 && !both_nan) {
        std::lock_guard lock(mu);
        if (first < 0 || i < first) first = i;
        return;
      }
    }
  });
  return first;
}

}  // namespace kq
