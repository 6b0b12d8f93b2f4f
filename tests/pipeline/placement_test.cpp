// Placements and roles (pipeline/placement.h): the JSON and compact forms,
// endpoints, every malformed placement refused with a message that names
// its source and the problem, where the placement comes from, and which
// process this one is under --role, mpirun, srun, PMI and a StatefulSet.
#include <sluice/pipeline/placement.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <sluice/base/error.h>
#include "tests/pipeline/temp_dir.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

const char* kCompact = "source=tcp://10.0.0.1:47100,compute=tcp://10.0.0.2,monitor=ipc:///tmp/sluice";
const char* kJson = R"({"processes": [
    {"name": "source", "host": "10.0.0.1", "port": 47100},
    {"name": "compute", "host": "10.0.0.2"},
    {"name": "monitor", "ipc": "/tmp/sluice"}]})";

// The message of the PipelineError that f throws; a failure when it throws nothing or something else.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const PipelineError& e) { return e.what(); } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a PipelineError, caught another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a PipelineError, nothing was thrown";
  return {};
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Placement three() { return parse_placement(kCompact, "test"); }

// ---- the two forms

TEST(Placement, JsonAndCompactFormsParseAlike) {
  for (const Placement& p : {parse_placement(kCompact, "compact"), parse_placement(kJson, "json")}) {
    ASSERT_EQ(p.processes.size(), 3u) << p.source;
    EXPECT_EQ(p.processes[0].name, "source");
    EXPECT_EQ(p.processes[0].host, "10.0.0.1");
    EXPECT_EQ(p.processes[0].ipc_dir, "");
    EXPECT_EQ(p.processes[0].port, 47100);
    EXPECT_EQ(p.processes[1].name, "compute");
    EXPECT_EQ(p.processes[1].host, "10.0.0.2");
    EXPECT_EQ(p.processes[1].port, 0);  // the default, 47000
    EXPECT_EQ(p.processes[2].name, "monitor");
    EXPECT_EQ(p.processes[2].host, "");
    EXPECT_EQ(p.processes[2].ipc_dir, "/tmp/sluice");
    EXPECT_FALSE(p.curve());
  }
  EXPECT_EQ(parse_placement(kCompact, "compact").source, "compact");
}

TEST(Placement, CompactFormToleratesBlanksAroundEntries) {
  Placement p = parse_placement("  a = tcp://h1:5000 ,\n b=ipc://run/s  ", "test");
  ASSERT_EQ(p.processes.size(), 2u);
  EXPECT_EQ(p.processes[0].name, "a");
  EXPECT_EQ(p.processes[0].host, "h1");
  EXPECT_EQ(p.processes[0].port, 5000);
  EXPECT_EQ(p.processes[1].ipc_dir, "run/s");  // relative: ipc:// then the path as given
}

TEST(Placement, Ipv6AddressesInBrackets) {
  Placement p = parse_placement("a=tcp://[::1]:5000,b=tcp://[fe80::2]", "test");
  EXPECT_EQ(p.processes[0].host, "::1");
  EXPECT_EQ(p.processes[0].port, 5000);
  EXPECT_EQ(p.processes[1].host, "fe80::2");
  EXPECT_EQ(p.bind_endpoint("a", 1, "e"), "@tcp://[::1]:5001");
  EXPECT_EQ(
      parse_placement(R"({"processes": [{"name": "a", "host": "::1"}]})", "t").connect_endpoint("a", 0, "e"),
      ">tcp://[::1]:47000");
}

TEST(Placement, CurveWhenEveryProcessNamesBothCertificates) {
  Placement p = parse_placement(R"({"processes": [
      {"name": "a", "host": "h1", "curve_secret": "keys/a_secret", "curve_public": "keys/a_public"},
      {"name": "b", "ipc": "/tmp/s", "curve_secret": "keys/b_secret", "curve_public": "keys/b_public"}]})",
                                "test");
  EXPECT_TRUE(p.curve());
  EXPECT_EQ(p.at("a").curve_secret, "keys/a_secret");
  EXPECT_EQ(p.at("b").curve_public, "keys/b_public");
}

TEST(Placement, LooksUpProcessesByName) {
  Placement p = three();
  EXPECT_TRUE(p.has("compute"));
  EXPECT_FALSE(p.has("sink"));
  EXPECT_EQ(p.rank_of("source"), 0);
  EXPECT_EQ(p.rank_of("monitor"), 2);
  EXPECT_EQ(p.at("compute").host, "10.0.0.2");
  std::string message = error_of([&] { p.at("sink"); });
  EXPECT_THAT(message, HasSubstr("placement from test"));
  EXPECT_THAT(message, HasSubstr("\"sink\""));
  EXPECT_THAT(message, HasSubstr("source, compute, monitor"));
  EXPECT_THAT(error_of([&] { p.rank_of("sink"); }), HasSubstr("\"sink\""));
}

// ---- endpoints

TEST(Placement, TcpEndpointsTakeOnePortPerIncomingEdge) {
  Placement p = three();
  EXPECT_EQ(p.bind_endpoint("source", 0, "x"), "@tcp://10.0.0.1:47100");
  EXPECT_EQ(p.bind_endpoint("source", 3, "x"), "@tcp://10.0.0.1:47103");
  EXPECT_EQ(p.connect_endpoint("source", 3, "x"), ">tcp://10.0.0.1:47103");
  EXPECT_EQ(p.bind_endpoint("compute", 0, "x"), "@tcp://10.0.0.2:47000");  // port 0: the default
  EXPECT_EQ(p.connect_endpoint("compute", 2, "x"), ">tcp://10.0.0.2:47002");
  // A host by name (a StatefulSet pod's) is bound on every interface.
  Placement named = parse_placement("s=tcp://sensor-1.sensor:47100", "test");
  EXPECT_EQ(named.bind_endpoint("s", 1, "x"), "@tcp://*:47101");
  EXPECT_EQ(named.connect_endpoint("s", 1, "x"), ">tcp://sensor-1.sensor:47101");
}

TEST(Placement, IpcEndpointsNameOneFilePerEdge) {
  Placement p = three();
  EXPECT_EQ(p.bind_endpoint("monitor", 0, "compute.out"), "@ipc:///tmp/sluice/compute.out.ipc");
  EXPECT_EQ(p.connect_endpoint("monitor", 5, "compute.out"),
            ">ipc:///tmp/sluice/compute.out.ipc");  // k: no matter
  EXPECT_EQ(p.bind_endpoint("monitor", 1, "stage 1/out:a->b"), "@ipc:///tmp/sluice/stage_1_out_a-_b.ipc");
  EXPECT_EQ(p.bind_endpoint("monitor", 0, "A-z_0.9"), "@ipc:///tmp/sluice/A-z_0.9.ipc");
  Placement slash = parse_placement("m=ipc:///tmp/dir/", "test");
  EXPECT_EQ(slash.bind_endpoint("m", 0, "e"), "@ipc:///tmp/dir/e.ipc");
}

TEST(Placement, EndpointsRefuseWhatNoSocketCouldUse) {
  Placement p = parse_placement("a=tcp://h:65534,m=ipc:///tmp/s", "test");
  EXPECT_EQ(p.bind_endpoint("a", 1, "e"), "@tcp://*:65535");
  std::string beyond = error_of([&] { p.bind_endpoint("a", 2, "e"); });
  EXPECT_THAT(beyond, HasSubstr("placement from test"));
  EXPECT_THAT(beyond, HasSubstr("65536"));
  EXPECT_THAT(error_of([&] { p.connect_endpoint("a", -1, "e"); }), HasSubstr("found -1"));
  EXPECT_THAT(error_of([&] { p.bind_endpoint("m", 0, ""); }), HasSubstr("empty"));
  EXPECT_THAT(error_of([&] { p.bind_endpoint("nobody", 0, "e"); }), HasSubstr("\"nobody\""));
}

// ---- malformed placements

struct Malformed {
  std::string text;
  std::vector<std::string> says;  // besides "placement from test"
};

TEST(Placement, RefusesMalformedText) {
  const std::vector<Malformed> cases = {
      {"", {"found empty text"}},
      {"  \n ", {"found only blanks"}},
      // JSON
      {R"({"processes": [)", {"does not parse"}},
      {R"([{"name": "a", "ipc": "/t"}])", {"expected {\"processes\": [...]}"}},
      {R"({"procs": []})", {"expected {\"processes\": [...]}"}},
      {R"({"processes": [{"name": "a", "ipc": "/t"}], "extra": 1})", {"unknown key \"extra\""}},
      {R"({"processes": {"name": "a"}})", {"expected an array for \"processes\""}},
      {R"({"processes": []})", {"expected at least one process, found none"}},
      {R"({"processes": ["a"]})", {"process 0", "expected an object"}},
      {R"({"processes": [{"name": "a", "hots": "h"}]})", {"process 0 (\"a\")", "unknown key \"hots\""}},
      {R"({"processes": [{"name": "a", "ipc": "/t"}, {"name": "a", "host": "h"}]})",
       {"process 1 (\"a\")", "process 0"}},
      {R"({"processes": [{"name": "", "ipc": "/t"}]})", {"process 0", "expected a name, found an empty one"}},
      {R"({"processes": [{"ipc": "/t"}]})", {"process 0", "expected a name"}},
      {R"({"processes": [{"name": 3, "ipc": "/t"}]})", {"expected a string for \"name\", found 3"}},
      {R"({"processes": [{"name": "a", "host": "h", "ipc": "/t"}]})",
       {"process 0 (\"a\")", "expected \"host\" or \"ipc\", found both"}},
      {R"({"processes": [{"name": "a", "ipc": "/t"}, {"name": "b", "ipc": "/t"}, {"name": "c"}]})",
       {"process 2 (\"c\"): expected \"host\" or \"ipc\", found neither"}},
      {R"({"processes": [{"name": "a", "host": "h", "port": 0}]})", {"1..65535", "found 0"}},
      {R"({"processes": [{"name": "a", "host": "h", "port": 65536}]})", {"1..65535", "found 65536"}},
      {R"({"processes": [{"name": "a", "host": "h", "port": -1}]})", {"1..65535", "found -1"}},
      {R"({"processes": [{"name": "a", "host": "h", "port": "47000"}]})", {"1..65535", "found \"47000\""}},
      {R"({"processes": [{"name": "a", "host": "h", "port": 47000.5}]})", {"1..65535", "found 47000.5"}},
      {R"({"processes": [{"name": "a", "ipc": "/t", "port": 47000}]})", {"\"port\" only with \"host\""}},
      {R"({"processes": [{"name": "a", "host": ""}]})",
       {"expected an address for \"host\", found an empty one"}},
      {R"({"processes": [{"name": "a", "ipc": " "}]})",
       {"expected a directory for \"ipc\", found an empty one"}},
      {R"({"processes": [{"name": "a", "host": "10.0.0.1:47000"}]})",
       {"without a port", "found \"10.0.0.1:47000\""}},
      {R"({"processes": [{"name": "a", "ipc": "ipc:///tmp/s"}]})", {"without a scheme"}},
      {R"({"processes": [{"name": "a", "host": "h", "curve_secret": "a_secret"}]})",
       {"process 0 (\"a\")", "both \"curve_secret\" and \"curve_public\"", "found only \"curve_secret\""}},
      {R"({"processes": [{"name": "a", "host": "h", "curve_public": "a_public"}]})",
       {"found only \"curve_public\""}},
      {R"({"processes": [{"name": "a", "host": "h", "curve_secret": "a_secret", "curve_public": "a_public"},
                         {"name": "b", "host": "h2"}]})",
       {"for every process or for none", "1 of 2", "process 1 (\"b\")"}},
      // compact
      {"a=ipc:///t,a=tcp://h", {"process 1 (\"a\")", "process 0"}},
      {"=ipc:///t", {"process 0", "expected a name, found an empty one"}},
      {"a", {"process 0", "expected NAME=tcp://HOST[:PORT] or NAME=ipc://DIR", "found \"a\""}},
      {"a=udp://h:1", {"process 0 (\"a\")", "expected NAME=tcp://HOST[:PORT]", "found \"a=udp://h:1\""}},
      {"a=10.0.0.1:47000", {"process 0 (\"a\")", "found \"a=10.0.0.1:47000\""}},
      {"a=tcp://h:0", {"1..65535", "found \"0\""}},
      {"a=tcp://h:70000", {"1..65535", "found \"70000\""}},
      {"a=tcp://h:99999999999", {"1..65535", "found \"99999999999\""}},
      {"a=tcp://h:-5", {"1..65535", "found \"-5\""}},
      {"a=tcp://h:47x", {"1..65535", "found \"47x\""}},
      {"a=tcp://h:", {"after ':', found none"}},
      {"a=tcp://:47000", {"expected an address after tcp://"}},
      {"a=tcp://::1:47000", {"IPv6 address in brackets"}},
      {"a=tcp://[::1", {"expected tcp://[IPV6][:PORT]"}},
      {"a=ipc://", {"expected a directory after ipc://"}},
      {"a=ipc:///t,", {"process 1", "after the last ','"}},
      {"a=ipc:///t,,b=ipc:///t", {"process 1", "found \"\""}},
  };
  for (const Malformed& c : cases) {
    std::string message = error_of([&] { parse_placement(c.text, "test"); });
    EXPECT_THAT(message, HasSubstr("placement from test: ")) << c.text;
    for (const std::string& s : c.says) EXPECT_THAT(message, HasSubstr(s)) << c.text;
  }
}

TEST(Placement, MessagesNameTheSourceTheyCameFrom) {
  EXPECT_THAT(error_of([] { parse_placement("a=ipc:///t,b=ftp://x", "SLUICE_PLACEMENT"); }),
              HasSubstr("placement from SLUICE_PLACEMENT: process 1 (\"b\"): expected"));
}

// ---- files and where the placement comes from

TEST(Placement, LoadsFilesOfEitherForm) {
  TempDir dir;
  std::string json = write_file(dir, "p.json", kJson);
  std::string compact = write_file(dir, "p.txt", std::string(kCompact) + "\n");
  Placement a = load_placement(json);
  Placement b = load_placement(compact);
  EXPECT_EQ(a.source, json);
  EXPECT_EQ(b.source, compact);
  ASSERT_EQ(a.processes.size(), 3u);
  ASSERT_EQ(b.processes.size(), 3u);
  EXPECT_EQ(a.processes[2].ipc_dir, b.processes[2].ipc_dir);

  std::string bad = write_file(dir, "bad.json", R"({"processes": [{"name": "a"}]})");
  EXPECT_THAT(error_of([&] { load_placement(bad); }), HasSubstr("placement from " + bad + ": process 0"));
  std::string missing = dir.path() + "/missing.json";
  std::string message = error_of([&] { load_placement(missing); });
  EXPECT_THAT(message, HasSubstr(missing));
  EXPECT_THAT(message, HasSubstr("cannot be read"));
  EXPECT_THAT(error_of([&] { load_placement(dir.path()); }), HasSubstr("found a directory"));
}

TEST(FindPlacement, GivenTextIsParsed) {
  auto p = find_placement(kCompact, Environment::of({{"SLUICE_PLACEMENT", "other=ipc:///x"}}));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->source, "--placement");
  EXPECT_EQ(p->processes.size(), 3u);
  EXPECT_THAT(error_of([] { find_placement("a=ftp://x", Environment::of({})); }),
              HasSubstr("placement from --placement: process 0"));
}

TEST(FindPlacement, GivenPathOfAnExistingFileIsLoaded) {
  TempDir dir;
  std::string path = write_file(dir, "placement.json", kJson);
  auto p = find_placement(path, Environment::of({{"SLUICE_PLACEMENT", "other=ipc:///x"}}));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->source, path);
  EXPECT_EQ(p->processes.size(), 3u);
}

TEST(FindPlacement, GivenPathOfNoFileSaysSo) {
  std::string message = error_of([] { find_placement("/nonexistent/placement.json", Environment::of({})); });
  EXPECT_THAT(message, HasSubstr("placement from --placement"));
  EXPECT_THAT(message, HasSubstr("nor is it a file that exists"));
}

TEST(FindPlacement, EnvironmentVariableWhenNoneIsGiven) {
  auto p = find_placement("", Environment::of({{"SLUICE_PLACEMENT", "a=ipc:///x,b=tcp://h"}}));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->source, "SLUICE_PLACEMENT");
  EXPECT_EQ(p->processes[1].name, "b");

  TempDir dir;
  std::string path = write_file(dir, "p.json", kJson);
  auto q = find_placement("", Environment::of({{"SLUICE_PLACEMENT", path}}));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->source, path);

  EXPECT_THAT(error_of([] {
                find_placement("", Environment::of({{"SLUICE_PLACEMENT", "a=ipc://"}}));
              }),
              HasSubstr("placement from SLUICE_PLACEMENT: process 0 (\"a\")"));
}

TEST(FindPlacement, NoneWithoutEitherOrWithAnEmptyVariable) {
  EXPECT_FALSE(find_placement("", Environment::of({})).has_value());
  EXPECT_FALSE(find_placement("", Environment::of({{"SLUICE_PLACEMENT", ""}})).has_value());
  EXPECT_FALSE(find_placement("", Environment::of({{"OTHER", "a=ipc:///x"}})).has_value());
}

TEST(LocalPlacement, EveryProcessOverIpcInOneDirectory) {
  Placement p = local_placement({"source", "compute", "sink"}, "/tmp/demo");
  EXPECT_EQ(p.source, "default");
  ASSERT_EQ(p.processes.size(), 3u);
  for (const ProcessPlace& q : p.processes) {
    EXPECT_EQ(q.ipc_dir, "/tmp/demo");
    EXPECT_EQ(q.host, "");
  }
  EXPECT_EQ(p.rank_of("sink"), 2);
  EXPECT_EQ(p.bind_endpoint("compute", 0, "source->compute"), "@ipc:///tmp/demo/source-_compute.ipc");
  EXPECT_FALSE(p.curve());
  EXPECT_THAT(error_of([] {
                local_placement({"a", "a"}, "/tmp/demo");
              }),
              HasSubstr("placement from default: process 1 (\"a\")"));
  EXPECT_THAT(error_of([] { local_placement({"a"}, ""); }), HasSubstr("placement from default"));
  EXPECT_THAT(error_of([] { local_placement({}, "/tmp/demo"); }), HasSubstr("found none"));
}

// ---- roles

TEST(FindRole, GivenRoleWins) {
  auto r =
      find_role(three(), "compute", Environment::of({{"OMPI_COMM_WORLD_RANK", "0"}, {"POD_NAME", "x-2"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->process, "compute");
  EXPECT_EQ(r->from, "--role");
}

TEST(FindRole, GivenRoleMustBeAProcessOfThePlacement) {
  std::string message = error_of([] { find_role(three(), "sink", Environment::of({})); });
  EXPECT_THAT(message, HasSubstr("--role sink"));
  EXPECT_THAT(message, HasSubstr("placement from test"));
  EXPECT_THAT(message, HasSubstr("source, compute, monitor"));
}

TEST(FindRole, EachLauncherRankVariable) {
  struct Case {
    const char* variable;
    const char* rank;
    const char* process;
  };
  for (Case c : {Case{"OMPI_COMM_WORLD_RANK", "1", "compute"}, Case{"SLURM_PROCID", "2", "monitor"},
                 Case{"PMI_RANK", "0", "source"}}) {
    auto r = find_role(three(), "", Environment::of({{c.variable, c.rank}}));
    ASSERT_TRUE(r.has_value()) << c.variable;
    EXPECT_EQ(r->process, c.process);
    EXPECT_EQ(r->from, std::string(c.variable) + "=" + c.rank);
  }
}

TEST(FindRole, LaunchersInOrderOmpiSlurmPmiThenPod) {
  std::map<std::string, std::string> all = {
      {"OMPI_COMM_WORLD_RANK", "0"}, {"SLURM_PROCID", "1"}, {"PMI_RANK", "2"}, {"POD_NAME", "web-1"}};
  EXPECT_EQ(find_role(three(), "", Environment::of(all))->from, "OMPI_COMM_WORLD_RANK=0");
  all.erase("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(find_role(three(), "", Environment::of(all))->from, "SLURM_PROCID=1");
  all.erase("SLURM_PROCID");
  EXPECT_EQ(find_role(three(), "", Environment::of(all))->from, "PMI_RANK=2");
  all.erase("PMI_RANK");
  EXPECT_EQ(find_role(three(), "", Environment::of(all))->from, "pod name web-1");
}

TEST(FindRole, StatefulSetPodOrdinal) {
  auto r = find_role(three(), "", Environment::of({{"POD_NAME", "sensor-2"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->process, "monitor");
  EXPECT_EQ(r->from, "pod name sensor-2");
  EXPECT_EQ(find_role(three(), "", Environment::of({{"POD_NAME", "my-app-0"}}))->process, "source");
  // POD_NAME (the downward API) before HOSTNAME.
  EXPECT_EQ(
      find_role(three(), "",
                Environment::of(
                    {{"POD_NAME", "s-1"}, {"HOSTNAME", "s-2"}, {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}))
          ->process,
      "compute");
}

TEST(FindRole, HostnameOnlyInsideKubernetes) {
  EXPECT_FALSE(find_role(three(), "", Environment::of({{"HOSTNAME", "node-1"}})).has_value());
  auto r = find_role(three(), "",
                     Environment::of({{"HOSTNAME", "sensor-1"}, {"KUBERNETES_SERVICE_HOST", "10.96.0.1"}}));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->process, "compute");
  EXPECT_THAT(r->from, HasSubstr("pod name sensor-1"));
}

TEST(FindRole, PodNameWithoutOrdinalSaysNothing) {
  EXPECT_FALSE(find_role(three(), "", Environment::of({{"POD_NAME", "web-7d9f8-xk2p4"}})).has_value());
  EXPECT_FALSE(find_role(three(), "", Environment::of({{"POD_NAME", "web"}})).has_value());
  EXPECT_FALSE(find_role(three(), "", Environment::of({{"POD_NAME", "web-"}})).has_value());
}

TEST(FindRole, NoneWithoutAnyOfThem) {
  EXPECT_FALSE(find_role(three(), "", Environment::of({})).has_value());
  EXPECT_FALSE(find_role(three(), "", Environment::of({{"OMPI_COMM_WORLD_RANK", ""}})).has_value());
  EXPECT_FALSE(
      find_role(three(), "", Environment::of({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}})).has_value());
}

TEST(FindRole, RankBeyondThePlacement) {
  EXPECT_EQ(error_of([] {
              find_role(three(), "", Environment::of({{"OMPI_COMM_WORLD_RANK", "3"}}));
            }),
            "OMPI_COMM_WORLD_RANK=3, but the placement from test has 3 processes: source, compute, monitor");
  EXPECT_THAT(error_of([] {
                find_role(three(), "", Environment::of({{"SLURM_PROCID", "99999999999999"}}));
              }),
              HasSubstr("SLURM_PROCID=99999999999999, but the placement from test has 3 processes"));
  EXPECT_THAT(error_of([] {
                find_role(three(), "", Environment::of({{"POD_NAME", "sensor-5"}}));
              }),
              HasSubstr("pod name sensor-5, but the placement from test has 3 processes"));
}

TEST(FindRole, RankThatIsNoNonNegativeInteger) {
  for (const char* rank : {"-1", "1a", " 1", "one", "+1", "1.0"}) {
    std::string message = error_of([&] { find_role(three(), "", Environment::of({{"PMI_RANK", rank}})); });
    EXPECT_THAT(message, HasSubstr(std::string("PMI_RANK=") + rank)) << rank;
    EXPECT_THAT(message, HasSubstr("expected a non-negative integer rank")) << rank;
  }
}

TEST(LauncherSize, FirstOfOmpiSlurmPmi) {
  EXPECT_FALSE(launcher_size(Environment::of({})).has_value());
  EXPECT_EQ(launcher_size(Environment::of({{"PMI_SIZE", "4"}})), 4);
  EXPECT_EQ(launcher_size(Environment::of({{"SLURM_NTASKS", "3"}, {"PMI_SIZE", "4"}})), 3);
  EXPECT_EQ(launcher_size(Environment::of({{"OMPI_COMM_WORLD_SIZE", "2"}, {"SLURM_NTASKS", "3"}})), 2);
  EXPECT_THAT(error_of([] {
                launcher_size(Environment::of({{"SLURM_NTASKS", "0"}}));
              }),
              HasSubstr("SLURM_NTASKS=0: expected a positive integer"));
  EXPECT_THAT(error_of([] {
                launcher_size(Environment::of({{"PMI_SIZE", "many"}}));
              }),
              HasSubstr("found \"many\""));
}

TEST(Environment, FixedSetAndEmptyValuesUnset) {
  Environment env = Environment::of({{"A", "1"}, {"EMPTY", ""}});
  EXPECT_EQ(env.get("A"), "1");
  EXPECT_FALSE(env.get("EMPTY").has_value());
  EXPECT_FALSE(env.get("B").has_value());
}

TEST(Environment, ProcessReadsGetenvWhenAsked) {
  std::string name = "SLUICE_PLACEMENT_TEST_" + std::to_string(::getpid());
  Environment env = Environment::process();
  EXPECT_FALSE(env.get(name).has_value());
  ASSERT_EQ(::setenv(name.c_str(), "sensor-1", 1), 0);
  EXPECT_EQ(env.get(name), "sensor-1");  // read at get(), not when made
  ASSERT_EQ(::setenv(name.c_str(), "", 1), 0);
  EXPECT_FALSE(env.get(name).has_value());
  ASSERT_EQ(::unsetenv(name.c_str()), 0);
  EXPECT_FALSE(env.get(name).has_value());
}

}  // namespace
}  // namespace sluice
