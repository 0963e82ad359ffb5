// Graph replay: `launches` calls of an arm captured in one CUDA graph, replayed as one launch;
// the time per call is kernel time without the launch gaps a caller's single calls pay. The
// captured graph's work nodes are counted, so that a capture holding less than the calls launch
// (nothing enqueued under capture, work left on another stream) can be told.
#pragma once
#include <functional>

namespace kq {

class GraphReplay {
 public:
  // Captures `call` (which enqueues on `stream`) `launches` times. Throws std::runtime_error
  // when the arm's work cannot be captured (it synchronises, or uses another stream...).
  GraphReplay(void* stream, const std::function<void()>& call, int launches);
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;
  ~GraphReplay();

  void launch();  // enqueues one replay on the stream
  int launches() const { return launches_; }
  // Nodes of the captured graph (child graphs included): kernels, and kernels plus memory
  // copies and sets.
  int kernel_nodes() const { return kernel_nodes_; }
  int work_nodes() const { return work_nodes_; }

 private:
  void* stream_;
  void* graph_ = nullptr;
  void* exec_ = nullptr;
  int launches_;
  int kernel_nodes_ = 0, work_nodes_ = 0;
};

}  // namespace kq
