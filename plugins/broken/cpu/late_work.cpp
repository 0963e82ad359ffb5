// Flaw: returns before its work is done. run() hands the work to a thread and returns at once,
// so the output the caller reads afterwards is still the poison. Caught by: values.
//
// The thread does not write on a timer: the host frees a case's buffers right after a failed
// check, and a write 50 ms later would land in freed memory (and turn a values verdict into a
// crash or a corrupt heap). So the pending work runs when the arm is next called for the same
// problem (run()), and is dropped by prepare() and the destructor, when the buffers may be gone.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cpu_common.hpp"

namespace kq::broken::cpu {
namespace {

class LateWork final : public CpuArm {
 public:
  LateWork() : CpuArm("late_work", "values") {}
  ~LateWork() override {
    try {
      settle(false);
    } catch (...) {
    }
  }

 protected:
  Status on_prepare(const Problem&) override {
    settle(false);
    return Status::ok();
  }

  Status compute(std::span<const TensorView> in, std::span<const TensorView> out, void*) override {
    settle(true);  // the previous call's work: same problem, its buffers are still there
    const Dense2 d = dense2(in, out);
    state_ = State::pending;
    worker_ = std::thread([this, d] {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return state_ != State::pending; });
      if (state_ != State::finish) return;
      for (std::int64_t i = 0; i < d.n; ++i) d.out[i] = relu(d.x[i] + d.r[i]);
    });
    return Status::ok();  // without waiting for the worker
  }

 private:
  enum class State { idle, pending, finish, drop };

  // Lets the pending work run (finish) or drops it, and joins the worker.
  void settle(bool finish) {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mu_);
      state_ = finish ? State::finish : State::drop;
    }
    cv_.notify_all();
    worker_.join();
    state_ = State::idle;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::idle;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<IKernelArm> make_late_work() { return std::make_unique<LateWork>(); }

}  // namespace kq::broken::cpu
