// The typed evaluator: a Program bound to T (float or double), run one block at a time.
//
// Every value of a block is an array of up to kBlock<T> elements of T. An instruction is one call
// through a function pointer to a kernel that loops over the whole block, so dispatch costs one
// indirect call per op per block, and the loop body is the inlined element function of ops.hpp,
// which the compiler vectorises (the output is __restrict: the compiler never writes a slot an
// instruction reads, see program.cpp). Contiguous inputs are read in place; strided ones are
// gathered into their slot first. The root writes straight into a contiguous output that shares
// memory with no input; otherwise it is computed into scratch and then stored.
//
// T is the type the program computes in (spec.compute), S the type of the elements in memory
// (spec.dtype). When they differ (a half dtype computed in float), every input is gathered,
// widened exactly, and the root is always stored through scratch, rounded once to S.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "ops.hpp"
#include "program.hpp"
#include "strided_io.hpp"

namespace kq::cpu {

// 8 KiB of T per value: several values plus the streams of a block fit in L1.
template <class T>
inline constexpr std::int64_t kBlock = 8192 / sizeof(T);
// Slots are spaced a little more than a block apart so that slots of one instruction do not sit at
// the same offset modulo 4 KiB (false store-to-load dependencies on x86).
template <class T>
inline constexpr std::int64_t kSlotStride = kBlock<T> + 128 / sizeof(T);

template <class T>
using Kernel = void (*)(T* __restrict dst, const T* const* src, std::int64_t n);

namespace detail {
template <class T, class F>
void unary_kernel(T* __restrict d, const T* const* s, std::int64_t n) {
  const T* __restrict a = s[0];
  for (std::int64_t i = 0; i < n; ++i) d[i] = F::f(a[i]);
}
template <class T, class F>
void binary_kernel(T* __restrict d, const T* const* s, std::int64_t n) {
  const T* __restrict a = s[0];
  const T* __restrict b = s[1];
  for (std::int64_t i = 0; i < n; ++i) d[i] = F::f(a[i], b[i]);
}
template <class T, class F>
void ternary_kernel(T* __restrict d, const T* const* s, std::int64_t n) {
  const T* __restrict a = s[0];
  const T* __restrict b = s[1];
  const T* __restrict c = s[2];
  for (std::int64_t i = 0; i < n; ++i) d[i] = F::f(a[i], b[i], c[i]);
}
}  // namespace detail

template <class T>
Kernel<T> kernel_for(Op op) {
  Kernel<T> k = nullptr;
  ops::visit_op(op, [&]<class F>() {
    if constexpr (requires(T x) { F::f(x); }) {
      k = &detail::unary_kernel<T, F>;
    } else if constexpr (requires(T x) { F::f(x, x); }) {
      k = &detail::binary_kernel<T, F>;
    } else {
      k = &detail::ternary_kernel<T, F>;
    }
  });
  return k;
}

template <class T>
struct TypedProgram {
  struct Step {
    Kernel<T> fn = nullptr;
    int dst = -1;
    int dst_slot = -1;
    int src[3] = {0, 0, 0};  // unused operands point at value 0; the kernel ignores them
  };
  struct Leaf {
    int value = -1;
    int input = -1;
    int slot = -1;
  };
  struct Const {
    int value = -1;
    int slot = -1;
    T v{};
  };
  std::vector<Step> steps;
  std::vector<Leaf> leaves;
  std::vector<Const> consts;
  int num_values = 0;
  int num_slots = 0;
  int root = -1;
  bool root_is_last_step = false;

  explicit TypedProgram(const Program& p) {
    num_values = static_cast<int>(p.values.size());
    num_slots = p.num_slots;
    root = p.root;
    for (int i = 0; i < num_values; ++i) {
      const Value& v = p.values[i];
      if (v.kind == ValueKind::input) leaves.push_back({i, v.input, v.slot});
      if (v.kind == ValueKind::constant) consts.push_back({i, v.slot, static_cast<T>(v.constant)});
    }
    for (const Instr& in : p.instrs) {
      Step s;
      s.fn = kernel_for<T>(in.op);
      s.dst = in.dst;
      s.dst_slot = p.values[in.dst].slot;
      for (int k = 0; k < arity(in.op); ++k) s.src[k] = in.src[k];
      steps.push_back(s);
    }
    root_is_last_step = !steps.empty() && steps.back().dst == root;
  }
};

// The tensors of one run, simplified (strided_io.hpp), with elements of type S.
template <class S>
struct RunViews {
  std::vector<StridedLayout<S>> inputs;
  StridedLayout<S> output;
  std::int64_t numel = 0;
  bool output_direct = false;  // the root may write straight into the output (S is then T)
};

// Per-thread state for a stretch of blocks: scratch slots and the pointer of every value.
template <class T, class S>
class BlockEvaluator {
 public:
  BlockEvaluator(const TypedProgram<T>& p, const RunViews<S>& v, T* scratch)
      : p_(p), v_(v), scratch_(scratch) {
    // Constants are the same in every block: broadcast once per stretch.
    for (const auto& c : p_.consts) {
      T* s = slot(c.slot);
      for (std::int64_t i = 0; i < kBlock<T>; ++i) s[i] = c.v;
      ptr_[c.value] = s;
    }
  }

  void run(std::int64_t start, std::int64_t n) {
    for (const auto& leaf : p_.leaves) {
      ptr_[leaf.value] = read(v_.inputs[leaf.input], leaf.slot, start, n);
    }
    const std::size_t count = p_.steps.size();
    const bool direct = v_.output_direct && p_.root_is_last_step;
    for (std::size_t i = 0; i < count; ++i) {
      const auto& st = p_.steps[i];
      T* d = (direct && i + 1 == count) ? output_block(start) : slot(st.dst_slot);
      const T* src[3] = {ptr_[st.src[0]], ptr_[st.src[1]], ptr_[st.src[2]]};
      st.fn(d, src, n);
      ptr_[st.dst] = d;
    }
    if (!direct) scatter(v_.output, start, n, ptr_[p_.root]);
  }

  static std::size_t scratch_elements(const TypedProgram<T>& p) {
    return static_cast<std::size_t>(p.num_slots) * kSlotStride<T>;
  }

 private:
  T* slot(int s) { return scratch_ + static_cast<std::int64_t>(s) * kSlotStride<T>; }

  // An input's block: in place when it is dense and already of type T, else gathered into its
  // slot.
  const T* read(const StridedLayout<S>& l, int s, std::int64_t start, std::int64_t n) {
    if constexpr (std::is_same_v<T, S>) {
      if (l.dense) return l.base + start;
    }
    T* d = slot(s);
    gather(l, start, n, d);
    return d;
  }

  // Where the root writes directly (output_direct): the output's block.
  T* output_block(std::int64_t start) {
    if constexpr (std::is_same_v<T, S>) {
      return v_.output.base + start;
    } else {
      return nullptr;  // not reached: output_direct is false when elements are converted
    }
  }

  const TypedProgram<T>& p_;
  const RunViews<S>& v_;
  T* scratch_;
  std::array<const T*, kMaxNodes> ptr_{};
};

}  // namespace kq::cpu
