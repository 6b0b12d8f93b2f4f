// The clients of bench_serving, in a process of their own:
//   bench_serving_client ENDPOINT CLIENTS IN_FLIGHT REQUESTS GO OUT
// runs CLIENTS threads, each a ServingClient that, from the time GO (the
// monotonic clock, steady_clock's and Python's time.monotonic, in seconds)
// keeps IN_FLIGHT requests of f32[16] in flight (a request goes as soon as
// one of its replies came back) until REQUESTS were answered. Writes to the
// file OUT the time its last reply came (same clock), then each request's
// latency in seconds (its send to its reply), a line each. Exits 1 when a
// reply is missing (30 s), an error, or not f32[16].

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sluice/pipeline/serving.h>

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kWait{30000};

// One client's requests; its latencies appended to `out`. False on a wrong or missing reply.
bool run_client(const std::string& endpoint, int in_flight, int requests, unsigned seed, Clock::time_point go,
                std::vector<double>& out) {
  sluice::ServingClient client(endpoint);
  std::this_thread::sleep_until(go);
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(16);
  for (float& v : values) v = uniform(random);
  const sluice::Tensor x = sluice::tensor(values, sluice::Shape{16});
  std::map<uint64_t, Clock::time_point> asked;
  int sent = 0, answered = 0;
  while (answered < requests) {
    while (sent < requests && static_cast<int>(asked.size()) < in_flight) {
      asked[client.send({x}, kWait)] = Clock::now();
      ++sent;
    }
    std::optional<sluice::wire::Message> reply = client.receive(kWait);
    if (!reply || reply->header.kind != sluice::wire::Kind::Data || reply->tensors.size() != 1 ||
        reply->tensors[0].spec() != sluice::f32({16})) {
      std::fprintf(stderr, "bench_serving_client: request %d: %s\n", answered,
                   !reply                 ? "no reply within 30 s"
                   : reply->error.empty() ? "not an f32[16] reply"
                                          : reply->error.c_str());
      return false;
    }
    auto it = asked.find(reply->header.seq);
    if (it == asked.end()) {
      std::fprintf(stderr, "bench_serving_client: a reply to seq %llu, not asked or answered twice\n",
                   static_cast<unsigned long long>(reply->header.seq));
      return false;
    }
    out.push_back(std::chrono::duration<double>(Clock::now() - it->second).count());
    asked.erase(it);
    ++answered;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: bench_serving_client ENDPOINT CLIENTS IN_FLIGHT REQUESTS GO OUT\n");
    return 2;
  }
  const std::string endpoint = argv[1];
  const int clients = std::atoi(argv[2]), in_flight = std::atoi(argv[3]), requests = std::atoi(argv[4]);
  const Clock::time_point go{
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::atof(argv[5])))};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(clients));
  std::vector<int> ok(static_cast<size_t>(clients), 0);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c)
    threads.emplace_back([&, c] {
      try {
        ok[static_cast<size_t>(c)] = run_client(endpoint, in_flight, requests, static_cast<unsigned>(c) + 1,
                                                go, latencies[static_cast<size_t>(c)]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_serving_client: client %d: %s\n", c, e.what());
      }
    });
  for (std::thread& t : threads) t.join();
  std::ofstream out(argv[6]);
  out.precision(17);
  out << std::chrono::duration<double>(Clock::now().time_since_epoch()).count() << "\n";
  for (const auto& l : latencies)
    for (double s : l) out << s << "\n";
  for (int o : ok)
    if (!o) return 1;
  return out ? 0 : 1;
}
