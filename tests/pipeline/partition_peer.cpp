// One process of the partitioned test pipeline (partitioned_pipeline.h),
// started by mpirun or in a network namespace; without a placement it runs
// the whole pipeline here. The process running "results" writes every
// result's bytes to --out.
//
//   partition_peer --out whole.bin
//   mpirun -np 3 partition_peer --placement 'a=ipc:///tmp/x,b=ipc:///tmp/x,c=ipc:///tmp/x' --out parts.bin

#include <fstream>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "tests/pipeline/partitioned_pipeline.h"

int main(int argc, char** argv) {
  using namespace sluice;
  std::string placement_text, role, out;
  int64_t messages = 500;
  CLI::App app("one process of the partitioned test pipeline");
  app.add_option("--placement", placement_text,
                 "placement (text or file); default: SLUICE_PLACEMENT, else all here");
  app.add_option("--role", role, "this process; default: the launcher's rank");
  app.add_option("--out", out, "where the results' bytes go")->required();
  app.add_option("--messages", messages)->capture_default_str();
  int64_t width = 64;
  app.add_option("--width", width, "floats per message")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    PipelineOptions options;
    options.capacity = 8;
    if (std::optional<Placement> placement = find_placement(placement_text)) {
      std::optional<Role> r = find_role(*placement, role);
      if (!r) throw PipelineError("partition_peer: expected --role or a launcher's rank, found neither");
      std::cerr << "partition_peer: process '" << r->process << "' (from " << r->from << ")\n";
      options.partition = {.process = r->process,
                           .placement = *placement,
                           .meet_timeout = std::chrono::seconds(60),
                           .peer_timeout = std::chrono::seconds(30)};
    }
    testing::PartitionedPipeline built = testing::partitioned_pipeline(options, messages, width);
    PipelineResult result = built.pipeline->run();
    // Messages its edges to other processes of this host sent or took in shared memory.
    double shared = 0;
    for (const NodeMetrics& m : result.metrics)
      if (auto it = m.figures.find("channel_shared"); it != m.figures.end()) shared += it->second;
    if (!options.partition.process.empty()) std::cout << "shared " << shared << std::endl;
    if (options.partition.process.empty() || options.partition.process == "c") {
      std::ofstream file(out, std::ios::binary);
      const std::string bytes = testing::result_bytes(*built.results);
      file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      if (!file) throw PipelineError("partition_peer: could not write " + out);
      std::cerr << "partition_peer: " << built.results->results().size() << " results, " << bytes.size()
                << " bytes to " << out << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "partition_peer: " << e.what() << "\n";
    return 1;
  }
}
