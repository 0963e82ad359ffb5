// The campaign report's arm x spec table from a summary made here: an arm that some task's spec
// took has a row with every task's outcome; an arm that none took is named once, under the table.
// Past a dozen tasks the table turns: a row per task, a column per arm.
#include <doctest/doctest.h>

#include <string>

#include "campaign/merge.hpp"

namespace {

kq::campaign::TaskRow completed(int index, const std::string& op,
                                std::vector<kq::campaign::ArmOutcome> arms) {
  kq::campaign::TaskRow r;
  r.task.index = r.record.index = index;
  r.task.id = r.record.id = "00" + std::to_string(index) + "-" + op + "-local";
  r.task.op = op;
  r.task.gpu_type = "local";
  r.record.state = kq::campaign::TaskState::completed;
  r.arms = std::move(arms);
  return r;
}

}  // namespace

TEST_CASE("arms by task: a row for each arm some spec took, the others named once") {
  kq::campaign::CampaignSummary s;
  s.tasks = {completed(0, "tanh",
                       {{"torch_compile", "rejected (values)"},
                        {"nvrtc_jit", "baseline"},
                        {"cublaslt", "unsupported"},
                        {"cuda_softmax", "unsupported"}}),
             completed(1, "matmul",
                       {{"torch_compile", "baseline"},
                        {"cublaslt", "adopted"},
                        {"cuda_softmax", "unsupported"}})};
  s.completed = 2;
  const std::string md = kq::campaign::campaign_markdown(s);
  INFO(md);
  CHECK(md.find("| arm | tanh (local) | matmul (local) |") != std::string::npos);
  CHECK(md.find("| cublaslt | unsupported | adopted |") != std::string::npos);
  CHECK(md.find("| nvrtc_jit | baseline | - |") != std::string::npos);
  CHECK(md.find("| torch_compile | rejected (values) | baseline |") != std::string::npos);
  CHECK(md.find("| cuda_softmax |") == std::string::npos);
  CHECK(md.find("- unsupported by every task's spec: cuda_softmax\n") != std::string::npos);
  const std::string html = kq::campaign::campaign_html(s);
  CHECK(html.find("unsupported by every task's spec: cuda_softmax") != std::string::npos);
}

TEST_CASE("arms by task: a campaign of many tasks has a row per task, a column per arm") {
  kq::campaign::CampaignSummary s;
  for (int i = 0; i < 13; ++i)
    s.tasks.push_back(completed(i, "op" + std::to_string(i),
                                {{"torch_compile", i == 4 ? "rejected (values)" : "baseline"},
                                 {"cuda_softmax", i == 7 ? "adopted" : "unsupported"},
                                 {"cublaslt", "unsupported"}}));
  s.tasks.push_back(completed(13, "op13", {{"torch_compile", "baseline"}}));
  s.completed = 14;
  const std::string md = kq::campaign::campaign_markdown(s);
  INFO(md);
  CHECK(md.find("| task | cuda_softmax | torch_compile |") != std::string::npos);
  CHECK(md.find("| op4 (local) |  | rejected (values) |") != std::string::npos);
  CHECK(md.find("| op7 (local) | adopted | baseline |") != std::string::npos);
  CHECK(md.find("| op13 (local) | - | baseline |") != std::string::npos);
  CHECK(md.find("- unsupported by every task's spec: cublaslt\n") != std::string::npos);
}
