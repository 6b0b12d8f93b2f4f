// What a pipeline adds to its computations:
//   pipeline_overhead_4stage  4 tiny stages (each a compiled add on f32[4])
//                             vs a raw oneTBB graph of 4 function_nodes
//                             running the same compiled executables: the
//                             difference is the pipeline's machinery
//                             (messages, credit, metrics, checks). Reported
//                             as raw time / sluice time.
//   pipeline_fused_1MiB       1 MiB chunks through the fused chain then a sum,
//                             as a 2-stage pipeline vs one stream running both.
//   trace_overhead            the pipeline_overhead_4stage pipeline traced
//                             (PipelineOptions::trace, its file written at the
//                             end included) vs the same untraced: untraced
//                             time / traced time.
//   tags_overhead             the same pipeline, each message made with a
//                             timestamp (and its clock) and two tags, one at
//                             a row, carried through its stages to the sink,
//                             vs untagged: untagged time / tagged time.

#include <unistd.h>

#include <filesystem>
#include <string>

#include <benchmark/benchmark.h>
#include <tbb/flow_graph.h>

#include <sluice/pipeline/pipeline.h>
#include <sluice/stream/stream.h>
#include "bench/bench_report.h"
#include "bench/four_stages.h"

namespace sluice::bench {
namespace {

constexpr int kMessages = 2000;

std::shared_ptr<Source> repeat(Tensor t, int n) {
  auto i = std::make_shared<int>(0);
  return sources::generator({t.spec()}, [t, n, i]() -> std::optional<Tensors> {
    if ((*i)++ >= n) return std::nullopt;
    return Tensors{t};
  });
}

void BM_pipeline_overhead_4stage(benchmark::State& state) {
  Function add1 = trace({f32({4})}, [](Expr x) { return x + 1; });
  Executable exe = compile(add1, host());
  Tensor x = tensor<float>({1, 2, 3, 4});

  auto sluice_run = [&] { run_four_stages(add1, repeat(x, kMessages)); };
  auto raw_run = [&] {
    namespace flow = tbb::flow;
    flow::graph g;
    int produced = 0;
    flow::input_node<Tensor> in(g, [&](tbb::flow_control& fc) {
      if (produced++ >= kMessages) fc.stop();
      return x;
    });
    auto body = [&](const Tensor& t) { return exe.run({t})[0]; };
    flow::function_node<Tensor, Tensor> s0(g, flow::serial, body), s1(g, flow::serial, body),
        s2(g, flow::serial, body), s3(g, flow::serial, body);
    flow::function_node<Tensor> out(g, flow::serial, [](const Tensor& t) { benchmark::DoNotOptimize(t.host_data()); });
    flow::make_edge(in, s0);
    flow::make_edge(s0, s1);
    flow::make_edge(s1, s2);
    flow::make_edge(s2, s3);
    flow::make_edge(s3, out);
    in.activate();
    g.wait_for_all();
  };
  report_speedup("pipeline_overhead_4stage", interleave(state, timed(sluice_run), timed(raw_run)), 0.5);
}
BENCHMARK(BM_pipeline_overhead_4stage)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_trace_overhead(benchmark::State& state) {
  Function add1 = trace({f32({4})}, [](Expr x) { return x + 1; });
  Tensor x = tensor<float>({1, 2, 3, 4});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("sluice-bench-trace-" + std::to_string(getpid()) + ".json"))
          .string();
  auto traced = [&] { run_four_stages(add1, repeat(x, kMessages), {.trace = path}); };
  auto untraced = [&] { run_four_stages(add1, repeat(x, kMessages)); };
  report_speedup("trace_overhead", interleave(state, timed(traced), timed(untraced)), 0.85);
  std::filesystem::remove(path);
}
BENCHMARK(BM_trace_overhead)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_tags_overhead(benchmark::State& state) {
  Function add1 = trace({f32({4})}, [](Expr x) { return x + 1; });
  Tensor x = tensor<float>({1, 2, 3, 4});
  auto tagged_source = [&] {
    auto i = std::make_shared<int64_t>(0);
    return sources::generator({x.spec()}, [x, i]() -> std::optional<Chunk> {
      if (*i >= kMessages) return std::nullopt;
      Chunk c{{x}, {}};
      c.tags.set_time(1'000'000 * (*i)++, "sensor");
      c.tags.set("gain", 2.5);
      c.tags.set("event", int64_t{1}, 2);
      return c;
    });
  };
  auto tagged = [&] { run_four_stages(add1, tagged_source()); };
  auto untagged = [&] { run_four_stages(add1, repeat(x, kMessages)); };
  report_speedup("tags_overhead", interleave(state, timed(tagged), timed(untagged)), 0.9);
}
BENCHMARK(BM_tags_overhead)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_pipeline_fused_1MiB(benchmark::State& state) {
  constexpr int64_t kN = 262144;  // 1 MiB of f32
  constexpr int kChunks = 64;
  auto chain = [](Expr x) { return tanh(x * 2 + 1) * x - exp(-x); };
  std::vector<Tensor> chunks;
  for (int i = 0; i < kChunks; ++i)
    chunks.push_back(tensor(uniform_floats(kN, -2, 2, static_cast<unsigned>(i)), Shape{kN}));
  Function both = trace({f32({kN})}, [&](Expr x) { return sum(chain(x)); });

  auto two_stages = [&] {
    Pipeline p;
    auto in = p.source("chunks", sources::list(chunks));
    auto a = p.stage("chain", chain, {.input = {f32({kN})}});
    auto b = p.stage("sum", [](Expr y) { return sum(y); }, {.input = {f32({kN})}});
    p.connect(in, a);
    p.connect(a, b);
    p.connect(b, p.sink("out", [](const Tensor& t) { benchmark::DoNotOptimize(t.host_data()); }));
    p.run();
  };
  auto one_stream = [&] {
    Stream s = stream(both, {f32({kN})}, {});
    for (int i = 0; i < kChunks; ++i) {
      s.send(chunks[static_cast<size_t>(i)]);
      if (i >= 2) s.recv();
    }
    for (int i = 0; i < 2; ++i) s.recv();
    s.done();
  };
  report_speedup("pipeline_fused_1MiB", interleave(state, timed(two_stages), timed(one_stream)), 0.9);
}
BENCHMARK(BM_pipeline_fused_1MiB)->Iterations(15)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sluice::bench
