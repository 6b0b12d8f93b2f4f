#pragma once
// The pipeline the overhead rows share (pipeline_overhead_4stage,
// trace_overhead, metrics_overhead): a source, four stages each a compiled
// add on f32[4], and a sink that reads each result.

#include <memory>
#include <string>
#include <utility>

#include <benchmark/benchmark.h>

#include <sluice/pipeline/pipeline.h>

namespace sluice::bench {

inline void run_four_stages(const Function& add1, std::shared_ptr<Source> source,
                            PipelineOptions options = {}) {
  Pipeline p(std::move(options));
  NodeId prev = p.source("in", std::move(source));
  for (int s = 0; s < 4; ++s) {
    NodeId st = p.stage("add" + std::to_string(s), add1);
    p.connect(prev, st);
    prev = st;
  }
  p.connect(prev, p.sink("out", [](const Tensor& t) { benchmark::DoNotOptimize(t.host_data()); }));
  p.run();
}

}  // namespace sluice::bench
