// A small in-process CPU arm, relu(x + residual) over contiguous f32 views, with one known
// flaw (or none): for the qualification and timing tests.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "kq/arm.hpp"
#include "kq/contract.hpp"

namespace kq::test {

enum class Flaw {
  none,
  skip_tail,
  write_past_end,
  write_before,
  mutate_input,
  no_relu,
  pointer_cache,
  ignore_contract,
  error_status,
  reuse_output,      // after its first call, returns at once when given the same pointers again
  reads_output,      // element 0's low bit from the output's old contents: right on poison 0 alone
  nondeterministic,  // element 0's low bit flipped on every second call
};

// relu(x + residual) over contiguous f32 views, with one flaw.
class FakeArm : public kq::IKernelArm {
 public:
  explicit FakeArm(Flaw f) : flaw_(f) {}
  std::string name = "fake";
  kq::ArmIdentity identity() const override {
    return {name, "test", kq::Device::cpu, "1", {}, "", ""};
  }
  kq::Status supports(const kq::OpSpec&) const override { return kq::Status::ok(); }
  // Where set, each prepare() adds the arm's name (the order arms are set up in).
  std::vector<std::string>* prepared = nullptr;
  // prepare() fails at sizes above this many elements (as a set-up out of memory would).
  std::int64_t fails_above = -1;
  kq::Status prepare(const kq::Problem& p) override {
    spec_ = p.spec;
    if (prepared) prepared->push_back(name);
    if (fails_above >= 0 && !p.outputs.empty() && p.outputs[0].numel() > fails_above)
      return kq::Status::error("no memory for this size");
    return kq::Status::ok();
  }
  kq::Status run(std::span<const kq::TensorView> in, std::span<const kq::TensorView> out,
                 void*) override {
    if (flaw_ == Flaw::error_status) return kq::Status::error("out of cheese");
    if (flaw_ != Flaw::ignore_contract) {
      kq::Status s = kq::check_contract(*spec_, in, out, kq::Device::cpu);
      if (!s.is_ok()) return s;
    }
    if (flaw_ == Flaw::reuse_output) {  // an output it wrote once is taken as still right
      for (const void* p : seen_)
        if (p == out[0].data) return kq::Status::ok();
      seen_.push_back(out[0].data);
    }
    const std::int64_t n = out[0].numel();
    auto* x = static_cast<float*>(in[0].data);
    auto* r = static_cast<const float*>(in[1].data);
    auto* o = static_cast<float*>(out[0].data);
    if (flaw_ == Flaw::pointer_cache) {  // replays the first result for the same pointers
      if (o == last_out_ && x == last_x_) {
        std::memcpy(o, cache_.data(), cache_.size() * sizeof(float));
        return kq::Status::ok();
      }
      last_out_ = o;
      last_x_ = x;
    }
    std::uint32_t old0 = 0;  // the output's first element as the caller left it
    if (n > 0) std::memcpy(&old0, o, sizeof old0);
    std::int64_t end = n;
    if (flaw_ == Flaw::skip_tail) end = n - n % 4;
    if (flaw_ == Flaw::write_past_end && n > 0) o[n] = 1.0f;
    if (flaw_ == Flaw::write_before && n > 0) o[-1] = 1.0f;
    for (std::int64_t i = 0; i < end; ++i) {
      float s = x[i] + r[i];
      float v = flaw_ == Flaw::no_relu ? s : (s > 0 ? s : (std::isnan(s) ? s : 0.0f));
      o[i] = v;
    }
    if (n > 0 && flaw_ == Flaw::reads_output) o[0] = flip_low_bit(o[0], (~old0 & 1u) != 0);
    if (n > 0 && flaw_ == Flaw::nondeterministic) o[0] = flip_low_bit(o[0], ++calls_ % 2 == 0);
    if (flaw_ == Flaw::mutate_input && n > 1) x[n / 2] = 42.0f;
    if (flaw_ == Flaw::pointer_cache) cache_.assign(o, o + n);
    return kq::Status::ok();
  }

 private:
  static float flip_low_bit(float v, bool flip) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    b ^= flip ? 1u : 0u;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }

  Flaw flaw_;
  int calls_ = 0;
  const kq::OpSpec* spec_ = nullptr;
  const void* last_out_ = nullptr;
  const void* last_x_ = nullptr;
  std::vector<float> cache_;
  std::vector<const void*> seen_;
};

}  // namespace kq::test
