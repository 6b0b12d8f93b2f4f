// Pipeline::to_dot and to_mermaid: nodes, edges with the specs they carry
// (a stage's traced when drawn), processes boxed; the same checks start()
// makes; and a pipeline drawn still runs as it would have.

#include <gtest/gtest.h>

#include <string>

#include <sluice/pipeline/pipeline.h>

#include "tests/pipeline/partitioned_pipeline.h"

namespace sluice {
namespace {

// numbers f32[4] -> running (acc f32[4]) -> {sum f32[], running f32[4]} -> results
struct Small {
  Pipeline p;
  std::shared_ptr<Collector> results = sinks::collector();
  Small() {
    NodeId numbers =
        p.source("numbers", sources::list({tensor<float>({1, 2, 3, 4}), tensor<float>({5, 6, 7, 8})}));
    NodeId running = p.stage("running", [](Expr x, Expr acc) { return tuple(sum(x), acc + x, acc + x); },
                             {.acc = {zeros(f32({4}))}});
    NodeId out = p.sink("results", results);
    p.connect(numbers, running);
    p.connect(running, out);
  }
};

TEST(PipelinePicture, DotShowsNodesAndTheSpecsOnEachEdge) {
  Small s;
  EXPECT_EQ(s.p.to_dot(),
            "digraph pipeline {\n"
            "  rankdir=LR;\n"
            "  node [shape=box, style=rounded];\n"
            "  n0 [label=\"source\\nnumbers\"];\n"
            "  n1 [label=\"stage\\nrunning\"];\n"
            "  n2 [label=\"sink\\nresults\"];\n"
            "  n0 -> n1 [label=\"f32[4]\"];\n"
            "  n1 -> n2 [label=\"f32, f32[4]\"];\n"
            "}\n");
}

TEST(PipelinePicture, MermaidShowsTheSameGraph) {
  Small s;
  EXPECT_EQ(s.p.to_mermaid(),
            "flowchart LR\n"
            "  n0(\"source numbers\")\n"
            "  n1(\"stage running\")\n"
            "  n2(\"sink results\")\n"
            "  n0 -->|\"f32[4]\"| n1\n"
            "  n1 -->|\"f32, f32[4]\"| n2\n");
}

TEST(PipelinePicture, APipelineDrawnRunsAsItWould) {
  Small s;
  s.p.to_dot();
  PipelineResult r = s.p.run();
  ASSERT_EQ(s.results->results().size(), 2u);
  EXPECT_EQ(s.results->results()[1][0].to_vector<float>(), std::vector<float>{26});
  EXPECT_EQ(r.accumulators.at("running")[0].to_vector<float>(), (std::vector<float>{6, 8, 10, 12}));
}

TEST(PipelinePicture, EachProcessIsABoxOfItsNodes) {
  // The partition tests' pipeline, drawn whole by the process "a" of it.
  testing::PartitionedPipeline t = testing::partitioned_pipeline({}, 4, 8);
  const std::string dot = t.pipeline->to_dot();
  for (const char* process : {"a", "b", "c"})
    EXPECT_NE(dot.find(std::string("label=\"process ") + process + "\""), std::string::npos) << dot;
  // Each box holds its own nodes and no other: the text between one
  // cluster's opening and its closing brace.
  auto box = [&](const std::string& process) {
    const size_t at = dot.find("label=\"process " + process + "\"");
    return dot.substr(at, dot.find("  }", at) - at);
  };
  EXPECT_NE(box("a").find("numbers"), std::string::npos) << dot;
  EXPECT_EQ(box("a").find("running"), std::string::npos) << dot;
  EXPECT_NE(box("b").find("running"), std::string::npos) << dot;
  EXPECT_NE(box("c").find("results"), std::string::npos) << dot;
  EXPECT_NE(t.pipeline->to_mermaid().find("subgraph p0[\"process a\"]"), std::string::npos);
}

TEST(PipelinePicture, ItRefusesWhatStartWouldRefuse) {
  Pipeline p;
  p.source("lonely", sources::list({tensor<float>({1})}));
  EXPECT_THROW(
      {
        try {
          p.to_dot();
        } catch (const PipelineError& e) {
          EXPECT_NE(std::string(e.what()).find("source 'lonely': not connected to anything"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      PipelineError);
}

}  // namespace
}  // namespace sluice
