// A running pipeline's run log (PipelineOptions::run_log): the graph when
// the run starts, then a thread that appends a snapshot of every node's
// metrics at a steady pace, until wait() writes the last one.

#include <sluice/base/detail/error_format.h>
#include <sluice/base/detail/log.h>
#include <sluice/pipeline/detail/pipeline_impl.h>

#include <nlohmann/json.hpp>

namespace sluice {

std::shared_ptr<RunLog> Pipeline::run_log() const { return impl_->run_log; }

void Pipeline::Impl::open_run_log() {
  if (options.run_log.empty()) return;
  if (options.run_log_every.count() <= 0)
    throw PipelineError(error_message("pipeline", "run_log_every", "a positive interval",
                                      fmt::format("{} ms", options.run_log_every.count())));
  run_log = std::make_shared<RunLog>(options.run_log, options.partition.process, options.name);
}

void Pipeline::Impl::log_metrics() {
  // The same snapshot and fields as metrics_json(), on one line.
  run_log->write(RunRecord("metrics").json("nodes", sluice::metrics_json(owner->metrics(), -1)));
}

void Pipeline::Impl::log_graph() {
  if (!run_log) return;
  nlohmann::json nodes = nlohmann::json::array(), edges = nlohmann::json::array();
  const std::vector<DrawnNode> drawn = drawing();
  for (size_t i = 0; i < drawn.size(); ++i) {
    nodes.push_back({{"name", drawn[i].name}, {"kind", drawn[i].kind}, {"process", drawn[i].process}});
    for (int to : drawn[i].outputs) edges.push_back({{"from", i}, {"to", to}, {"specs", drawn[i].carries}});
  }
  run_log->write(RunRecord("graph").json("nodes", nodes.dump()).json("edges", edges.dump()));
}

void Pipeline::Impl::start_run_log() {
  if (!run_log) return;
  run_log_thread = std::thread([this] {
    try {
      std::unique_lock lock(run_log_mutex);
      while (!run_log_stop) {
        lock.unlock();
        log_metrics();
        lock.lock();
        run_log_wake.wait_for(lock, options.run_log_every, [this] { return run_log_stop; });
      }
    } catch (const std::exception& e) {
      // A log that cannot be written is a run that does not do what was
      // asked: it stops, and wait() throws this.
      logger().warn("{}: cancelling the run", e.what());
      run_log_failure = std::current_exception();
      owner->cancel();
    }
  });
}

void Pipeline::Impl::stop_run_log(bool last) {
  if (!run_log_thread.joinable()) return;
  {
    std::lock_guard lock(run_log_mutex);
    run_log_stop = true;
  }
  run_log_wake.notify_all();
  run_log_thread.join();
  if (!last || run_log_failure) return;
  try {
    log_metrics();
  } catch (const std::exception&) { run_log_failure = std::current_exception(); }
}

}  // namespace sluice
