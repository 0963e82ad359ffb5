// cpu_tbb: evaluates any spec's expression on the CPU in the spec's compute type (float32 or
// float64 arithmetic), block-wise and in parallel with TBB, over elements of the spec's dtype
// (f32, f64, f16 or bf16: half elements are widened exactly on load and each result rounded once
// to nearest even on store). prepare() compiles the expression (program.hpp); run() checks the
// views (validate.hpp) and executes (executor.hpp). Format-2 (shaped) specs are computed from
// their indexed statements instead (shaped_plan.hpp, shaped_run.hpp), their views checked by
// kq::check_shaped_contract. No exception crosses the plugin boundary: every interface method
// catches and returns a Status.
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "executor.hpp"
#include "kq/half.hpp"
#include "kq/plugin_api.hpp"
#include "kq/shaped_contract.hpp"
#include "program.hpp"
#include "shaped_plan.hpp"
#include "shaped_run.hpp"
#include "validate.hpp"

#ifndef KQ_CPU_EXTRA_FLAGS
#define KQ_CPU_EXTRA_FLAGS ""
#endif

namespace kq::cpu {
namespace {

Status check_spec(const OpSpec& spec) {
  if (dtype_size(spec.dtype) == 0) return Status::unsupported("unknown dtype");
  if (spec.compute != DType::f32 && spec.compute != DType::f64) {
    return Status::unsupported("compute " + std::string(to_string(spec.compute)) +
                               ": cpu_tbb computes in float32 or float64 only");
  }
  if (spec.dtype == DType::f64 && spec.compute != DType::f64) {
    return Status::unsupported("compute is narrower than dtype f64");
  }
  if (spec.inputs.size() > static_cast<std::size_t>(kMaxInputs)) {
    return Status::unsupported("the spec has " + std::to_string(spec.inputs.size()) +
                               " inputs; cpu_tbb handles at most " + std::to_string(kMaxInputs));
  }
  if (spec.outputs.size() != 1) {
    return Status::unsupported("the spec has " + std::to_string(spec.outputs.size()) +
                               " outputs; cpu_tbb computes exactly one (the semantics expression)");
  }
  if (std::string err = check_expr(spec.semantics, static_cast<int>(spec.inputs.size()));
      !err.empty()) {
    return Status::unsupported("cannot compile the semantics: " + err);
  }
  return Status::ok();
}

// The views with elements of type S, for a program computing in T.
template <class T, class S>
RunViews<S> make_views(std::span<const TensorView> inputs, const TensorView& output,
                       const CheckedViews& checked) {
  RunViews<S> v;
  v.numel = checked.numel;
  v.inputs.reserve(inputs.size());
  for (const TensorView& in : inputs) v.inputs.push_back(simplify<S>(in));
  v.output = simplify<S>(output);
  // An exactly aliased input may be read in place by the root instruction itself; then the root
  // goes through scratch, keeping the kernels' __restrict promise. Converted elements always do.
  v.output_direct = std::is_same_v<T, S> && v.output.dense && !checked.any_alias;
  return v;
}

// Runs `p` over views whose elements are of `dtype`.
template <class T>
void execute_on(const TypedProgram<T>& p, DType dtype, std::span<const TensorView> inputs,
                const TensorView& output, const CheckedViews& checked, ScratchPool& pool) {
  with_dtype(dtype,
             [&]<class S>(S) { execute(p, make_views<T, S>(inputs, output, checked), pool); });
}

// The listing's first line when the elements in memory are not of the arithmetic type.
std::string element_note(DType elements, DType arithmetic) {
  if (elements == arithmetic) return "";
  return "# elements: " + std::string(to_string(elements)) + ", widened exactly to " +
         std::string(to_string(arithmetic)) + " on load, rounded once to nearest even on store\n";
}

// A format-2 problem's views against the contract (check_shaped_contract's message when not),
// outputs whose elements share memory refused too; `dims` gets the values they bind.
Status check_shaped_views(const OpSpec& spec, std::span<const TensorView> inputs,
                          std::span<const TensorView> outputs, std::vector<std::int64_t>& dims) {
  if (Status s = check_shaped_contract(spec, inputs, outputs, Device::cpu); !s.is_ok()) return s;
  for (std::size_t o = 0; o < outputs.size(); ++o)
    if (view_self_overlaps(outputs[o]))
      return Status::unsupported("output " + spec.outputs[o].name +
                                 ": a view whose elements share memory");
  return bind_dims(spec, inputs, outputs, dims);
}

class CpuTbbArm final : public IKernelArm {
 public:
  ArmIdentity identity() const override {
    return build::identity("cpu_tbb", "cpu", Device::cpu, "1");
  }

  Status supports(const OpSpec& spec) const override {
    try {
      if (spec.program) {
        ShapedPlan plan;
        return make_shaped_plan(spec, plan);
      }
      return check_spec(spec);
    } catch (...) {
      return status_from_current_exception("cpu_tbb");
    }
  }

  Status prepare(const Problem& problem) override {
    try {
      prepared_.reset();
      shaped_.reset();
      if (problem.spec == nullptr) return Status::error("prepare: the problem has no spec");
      const OpSpec& spec = *problem.spec;
      if (spec.program) return prepare_shaped(problem);
      if (Status s = check_spec(spec); !s.is_ok()) return s;
      auto state = std::make_unique<Prepared>();
      if (Status s = make_spec_facts(spec, state->facts); !s.is_ok()) return s;
      CheckedViews checked;
      if (Status s = check_views(state->facts, problem.inputs, problem.outputs, checked);
          !s.is_ok()) {
        return s;
      }
      CompileResult c = compile(spec.semantics, static_cast<int>(spec.inputs.size()), spec.compute);
      if (!c.program) return Status::error("compile: " + c.error);
      state->program = std::move(*c.program);
      if (spec.compute == DType::f32) {
        state->typed.emplace<TypedProgram<float>>(state->program);
      } else {
        state->typed.emplace<TypedProgram<double>>(state->program);
      }
      prepared_ = std::move(state);
      return Status::ok();
    } catch (...) {
      prepared_.reset();
      shaped_.reset();
      return status_from_current_exception("cpu_tbb");
    }
  }

  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs,
             void* /*stream: CPU arms get nullptr and finish before returning*/) override {
    try {
      if (shaped_) return run_shaped(inputs, outputs);
      if (!prepared_) return Status::error("run: called before a successful prepare()");
      const Prepared& st = *prepared_;
      CheckedViews checked;
      if (Status s = check_views(st.facts, inputs, outputs, checked); !s.is_ok()) return s;
      if (checked.numel == 0) return Status::ok();
      if (const auto* p = std::get_if<TypedProgram<float>>(&st.typed)) {
        execute_on(*p, st.facts.dtype, inputs, outputs[0], checked, pool_);
      } else if (const auto* p = std::get_if<TypedProgram<double>>(&st.typed)) {
        execute_on(*p, st.facts.dtype, inputs, outputs[0], checked, pool_);
      } else {
        return Status::error("run: no typed program");
      }
      return Status::ok();
    } catch (...) {
      return status_from_current_exception("cpu_tbb");
    }
  }

  std::vector<Artifact> artifacts() const override {
    std::vector<Artifact> out;
    try {
      if (shaped_) out.push_back({"source", "program.txt", shaped_->runner->listing()});
      if (prepared_) {
        const std::int64_t block =
            prepared_->program.dtype == DType::f32 ? kBlock<float> : kBlock<double>;
        out.push_back({"source", "program.txt",
                       element_note(prepared_->facts.dtype, prepared_->program.dtype) +
                           prepared_->program.listing(prepared_->facts.input_names, block)});
      }
      out.push_back(
          {"flags", "flags.txt",
           std::string(build::compile_flags()) + "\ntarget options: " + KQ_CPU_EXTRA_FLAGS + "\n"});
    } catch (...) {
      // artifacts() cannot report a Status; return what was gathered.
    }
    return out;
  }

 private:
  // The host owns the OpSpec: the shaped state keeps its own copy (the program is shared).
  struct Shaped {
    OpSpec spec;
    std::unique_ptr<ShapedRunner> runner;
  };

  Status prepare_shaped(const Problem& problem) {
    auto state = std::make_unique<Shaped>();
    state->spec = *problem.spec;
    ShapedPlan plan;
    if (Status s = make_shaped_plan(state->spec, plan); !s.is_ok()) return s;
    std::vector<std::int64_t> dims;
    if (Status s = check_shaped_views(state->spec, problem.inputs, problem.outputs, dims);
        !s.is_ok()) {
      return s;
    }
    state->runner = std::make_unique<ShapedRunner>(std::move(plan));
    if (Status s = state->runner->bind(dims); !s.is_ok()) return s;
    shaped_ = std::move(state);
    return Status::ok();
  }

  Status run_shaped(std::span<const TensorView> inputs, std::span<const TensorView> outputs) {
    std::vector<std::int64_t> dims;
    if (Status s = check_shaped_views(shaped_->spec, inputs, outputs, dims); !s.is_ok()) return s;
    if (Status s = shaped_->runner->bind(dims); !s.is_ok()) return s;
    return shaped_->runner->run(inputs, outputs);
  }

  struct Prepared {
    SpecFacts facts;
    Program program;
    std::variant<std::monostate, TypedProgram<float>, TypedProgram<double>> typed;
  };
  std::unique_ptr<Prepared> prepared_;
  std::unique_ptr<Shaped> shaped_;
  ScratchPool pool_;
};

void make_arms(ArmList& out) { out.push_back(std::make_unique<CpuTbbArm>()); }

}  // namespace
}  // namespace kq::cpu

KQ_EXPORT_ARMS(kq::cpu::make_arms)
