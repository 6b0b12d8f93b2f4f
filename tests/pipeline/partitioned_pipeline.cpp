#include "tests/pipeline/partitioned_pipeline.h"

#include <cmath>

namespace sluice::testing {

PartitionedPipeline partitioned_pipeline(PipelineOptions options, int64_t messages, int64_t width) {
  PartitionedPipeline out;
  out.pipeline = std::make_unique<Pipeline>(std::move(options));
  out.results = sinks::collector();
  Pipeline& p = *out.pipeline;
  auto numbers = p.source(
      "numbers",
      sources::indexed({f32({width})},
                       [messages, width](uint64_t i) -> std::optional<Tensors> {
                         if (static_cast<int64_t>(i) >= messages) return std::nullopt;
                         std::vector<float> v(static_cast<size_t>(width));
                         for (size_t j = 0; j < v.size(); ++j)
                           v[j] = std::sin(0.37f * static_cast<float>(i) + 0.11f * static_cast<float>(j));
                         return Tensors{tensor<float>(v, {width})};
                       }),
      {.process = "a"});
  auto running =
      p.stage("running",
              [](Expr x, Expr acc) {
                Expr next = acc * 0.9f + x;
                return tuple(tanh(next), next);
              },
              {.acc = {tensor<float>(std::vector<float>(static_cast<size_t>(width), 0.0f), {width})},
               .process = "b"});
  auto mix = p.stage("mix", [](Expr x) { return tuple(x * 3.0f - 1.0f, sum(x * x)); }, {.process = "b"});
  auto joined = p.stage("joined", [](Expr y, Expr energy, Expr raw) { return tuple(y + raw, energy); },
                        {.process = "c"});
  auto results = p.sink("results", out.results, {.process = "c"});
  p.connect(numbers, running);
  p.connect(running, mix);
  p.connect(mix, joined);
  p.connect(numbers, joined);
  p.connect(joined, results);
  return out;
}

PipelineOptions thread_process_options(const std::string& me, const Placement& placement) {
  PipelineOptions o;
  o.capacity = 8;
  o.partition = {.process = me,
                 .placement = placement,
                 .meet_timeout = std::chrono::seconds(20),
                 .peer_timeout = std::chrono::seconds(20)};
  return o;
}

std::string result_bytes(const Collector& results) {
  std::string bytes;
  for (const Tensors& message : results.results())
    for (const Tensor& t : message) {
      Tensor h = t.to_host();
      bytes.append(static_cast<const char*>(h.host_data()), static_cast<size_t>(h.spec().bytes()));
    }
  return bytes;
}

}  // namespace sluice::testing
