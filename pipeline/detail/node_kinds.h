#pragma once
// The node kinds Pipeline::stage and Pipeline::sink make (sources make
// their own: Source::make_node). Internal: pipeline*.cpp and the kinds' files.

#include <functional>
#include <memory>
#include <string>

#include <sluice/pipeline/node.h>
#include <sluice/pipeline/pipeline.h>

namespace sluice {

std::unique_ptr<PipelineNode> stage_node(std::string name,
                                         std::function<Function(const std::vector<Spec>&)> tracer,
                                         StageOptions options);
// A stage with options.batch.size > 0 (pipeline.h, BatchOptions).
std::unique_ptr<PipelineNode> batched_stage_node(std::string name,
                                                 std::function<Function(const std::vector<Spec>&)> tracer,
                                                 StageOptions options);
std::unique_ptr<PipelineNode> sink_node(std::string name, std::shared_ptr<Sink> sink);
// Pipeline::zip_by_time and Pipeline::window (pipeline/event_time.h).
std::unique_ptr<PipelineNode> zip_by_time_node(std::string name, ZipOptions options);
std::unique_ptr<PipelineNode> event_window_node(std::string name, EventWindowOptions options);

}  // namespace sluice
