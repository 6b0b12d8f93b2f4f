#pragma once
// One pipeline over three processes, "a", "b" and "c", for the tests of
// partitioning: in threads of one test (partition_test.cpp) and as real
// processes under mpirun or in two network namespaces (partition_peer.cpp).
//
//   numbers (a) ──> running (b, acc) ──> mix (b) ──> joined (c) ──> results (c)
//        └──────────────────────────────────────────────┘

#include <memory>
#include <string>

#include <sluice/pipeline/pipeline.h>

namespace sluice::testing {

struct PartitionedPipeline {
  std::unique_ptr<Pipeline> pipeline;
  std::shared_ptr<Collector> results;  // what "results" took (in process "c")
};

// `options.partition` as given (empty process: all here); `width`: the
// elements of each message, which a test changes to build "another version
// of the program".
PartitionedPipeline partitioned_pipeline(PipelineOptions options, int64_t messages, int64_t width = 64);

// Options for process `me` of a partitioned pipeline whose processes are
// threads of one test: a small capacity, and 20 s to meet and for a silent peer.
PipelineOptions thread_process_options(const std::string& me, const Placement& placement);
// Every result's bytes, in order: what "the same results, bit for bit" compares.
std::string result_bytes(const Collector& results);

}  // namespace sluice::testing
