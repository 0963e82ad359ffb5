#include "shaped_run.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "fp_env.hpp"

namespace kq::cpu {
namespace {

// Operations per piece of lanes the runner aims at: enough to amortise a task.
constexpr double kPieceWork = 16384.0;
// Below this many operations a statement runs on the calling thread.
constexpr double kSerialWork = 65536.0;

std::int64_t extent_value(const ix::Extent& e, const std::vector<std::int64_t>& dims) {
  return e.is_dim() ? dims[static_cast<std::size_t>(e.dim)] : e.constant;
}

// The first error in piece order, whichever thread met it first.
class FirstError {
 public:
  void offer(std::int64_t at, std::string message) {
    std::lock_guard lock(mutex_);
    if (!at_ || at < *at_) {
      at_ = at;
      message_ = std::move(message);
    }
  }
  Status status() const { return at_ ? Status::error(message_) : Status::ok(); }

 private:
  std::mutex mutex_;
  std::optional<std::int64_t> at_;
  std::string message_;
};

}  // namespace

Status ShapedRunner::bind(const std::vector<std::int64_t>& dims) {
  const ix::Program& p = *plan_.program;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (dims[d] < 0)
      return Status::unsupported("dim '" + p.decls.dims[d].name +
                                 "' sizes no input or output: cpu_tbb learns dims from the views");
  if (dims == bound_.dims && !bound_.sources.empty()) return Status::ok();
  bound_.dims = dims;
  bound_.extents.clear();
  for (const ix::IndexVar& v : p.indices) bound_.extents.push_back(extent_value(v.extent, dims));
  const std::size_t tensors = p.decls.tensors.size();
  bound_.sources.assign(tensors, Source{});
  bound_.storage.assign(tensors, nullptr);
  bound_.views.assign(tensors, TensorView{});
  fstore_.assign(tensors, {});
  dstore_.assign(tensors, {});
  for (const StatementPlan& s : plan_.statements) {
    if (!s.to_storage) continue;
    const auto t = static_cast<std::size_t>(s.tensor);
    const ix::TensorDecl& d = p.decls.tensors[t];
    Source& src = bound_.sources[t];
    std::int64_t numel = 1;
    for (std::size_t k = d.shape.size(); k-- > 0;) {
      src.shape[k] = extent_value(d.shape[k], dims);
      src.stride[k] = numel;
      numel *= src.shape[k];
    }
    if (plan_.stored_wide[t]) {
      dstore_[t].assign(static_cast<std::size_t>(numel), 0.0);
      bound_.storage[t] = dstore_[t].data();
      src.dtype = DType::f64;
    } else {
      fstore_[t].assign(static_cast<std::size_t>(numel), 0.0f);
      bound_.storage[t] = fstore_[t].data();
      src.dtype = DType::f32;
    }
    src.data = bound_.storage[t];
  }
  return Status::ok();
}

Status ShapedRunner::run(std::span<const TensorView> inputs, std::span<const TensorView> outputs) {
  const ix::Program& p = *plan_.program;
  for (std::size_t t = 0; t < p.decls.tensors.size(); ++t) {
    const ix::TensorDecl& d = p.decls.tensors[t];
    const int slot = plan_.slot[t];
    if (d.role == ix::Role::input) {
      const TensorView& v = inputs[static_cast<std::size_t>(slot)];
      Source& src = bound_.sources[t];
      src.data = v.data;
      src.dtype = v.dtype;
      for (int k = 0; k < v.rank; ++k) {
        src.shape[k] = v.shape[k];
        src.stride[k] = v.strides[k];
      }
    } else if (d.role == ix::Role::output) {
      bound_.views[t] = outputs[static_cast<std::size_t>(slot)];
    }
  }
  IeeeFpEnv env;
  for (std::size_t k = 0; k < plan_.statements.size(); ++k) {
    const Status s = plan_.statements[k].wide ? run_statement<double>(static_cast<int>(k))
                                              : run_statement<float>(static_cast<int>(k));
    if (!s.is_ok()) return s;
  }
  return Status::ok();
}

template <class T>
Status ShapedRunner::run_statement(int k) {
  const StatementPlan& s = plan_.statements[static_cast<std::size_t>(k)];
  const ix::Statement& st = plan_.program->statements[static_cast<std::size_t>(k)];
  const std::vector<std::int64_t>& ext = bound_.extents;
  const std::int64_t lanes = s.lane >= 0 ? ext[static_cast<std::size_t>(s.lane)] : 1;
  std::int64_t rows = 1;
  for (int d : s.outer) rows *= ext[static_cast<std::size_t>(st.lhs[static_cast<std::size_t>(d)])];
  if (lanes == 0 || rows == 0) return Status::ok();
  const double cost = element_cost(plan_, s, ext);
  const bool scan = !s.scans.empty();
  const std::int64_t piece =
      scan ? lanes
           : std::clamp<std::int64_t>(static_cast<std::int64_t>(kPieceWork / cost), 1, kLanes);
  const std::int64_t per_row = (lanes + piece - 1) / piece;
  const std::int64_t pieces = rows * per_row;

  FirstError first;
  auto body = [&](std::int64_t p0, std::int64_t p1) {
    Evaluator<T> ev(plan_, bound_, workspaces_.local());
    ev.statement(k);
    for (std::int64_t q = p0; q < p1; ++q) {
      try {
        ev.set_row(q / per_row);
        if (scan) {
          ev.compute_scans();
          for (std::int64_t at = 0; at < lanes; at += kLanes)
            ev.emit(at, std::min(kLanes, lanes - at));
        } else {
          const std::int64_t at = (q % per_row) * piece;
          ev.emit(at, std::min(piece, lanes - at));
        }
      } catch (const ShapedError& e) {
        first.offer(q, e.what());
        return;
      }
    }
  };
  if (static_cast<double>(rows) * static_cast<double>(lanes) * cost < kSerialWork) {
    body(0, pieces);
    return first.status();
  }
  // fp_settings: the workers compute in this thread's (IeeeFpEnv) floating-point environment.
  tbb::task_group_context ctx(
      tbb::task_group_context::isolated,
      tbb::task_group_context::default_traits | tbb::task_group_context::fp_settings);
  ctx.capture_fp_settings();
  tbb::parallel_for(
      tbb::blocked_range<std::int64_t>(0, pieces, 1),
      [&](const tbb::blocked_range<std::int64_t>& r) { body(r.begin(), r.end()); },
      tbb::auto_partitioner(), ctx);
  return first.status();
}

std::string ShapedRunner::listing() const {
  const ix::Program& p = *plan_.program;
  std::string text = "# cpu_tbb: format-2 statements, in order; blocks of " +
                     std::to_string(kLanes) + " lanes, rows in parallel (TBB)\n";
  for (std::size_t k = 0; k < plan_.statements.size(); ++k) {
    const StatementPlan& s = plan_.statements[k];
    const ix::Statement& st = p.statements[k];
    text += st.text + "\n    in " + (s.wide ? "double" : "float");
    if (s.lane >= 0)
      text += ", along " + p.indices[static_cast<std::size_t>(s.lane)].name +
              (s.scans.empty() ? "" : " (scanned line by line)");
    else
      text += ", one element";
    if (s.to_storage) text += ", kept unrounded";
    if (s.to_view) text += ", rounded once into the output";
    text += "\n";
  }
  return text;
}

}  // namespace kq::cpu
