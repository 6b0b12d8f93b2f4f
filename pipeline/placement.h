#pragma once
// Where each process of a partitioned pipeline runs (README, "One program,
// several processes"), and which of them this process is. Every process
// runs the same program with the same placement; each finds its own role
// from --role or from what its launcher (mpirun, srun, any PMI launcher, a
// Kubernetes StatefulSet) put in its environment, so one command line
// serves them all.
//
//   mpirun -n 2 ./my_pipeline --placement 'source=tcp://10.0.0.1,compute=tcp://10.0.0.2'
//
// Processes are numbered from 0 in the placement's order, as launchers
// number ranks: messages say "process 2" for processes[2].

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sluice {

// The environment, injectable for tests. A variable set to the empty
// string counts as unset throughout (as `VAR= cmd` is the shell's way to
// clear one for a command).
class Environment {
 public:
  static Environment process();                                      // reads ::getenv lazily
  static Environment of(std::map<std::string, std::string> values);  // a fixed set, for tests
  std::optional<std::string> get(const std::string& name) const;

 private:
  std::optional<std::map<std::string, std::string>> fixed_;  // nullopt: the process's own
};

struct ProcessPlace {
  std::string name;     // the process name nodes give in their options' `process`
  // tcp: the address this process binds and others connect to ("10.0.0.2"),
  // or a name others connect to ("sensor-1.sensor"), bound on every
  // interface (ZeroMQ binds addresses only); empty: ipc
  std::string host;
  std::string ipc_dir;  // ipc: a local directory for its sockets; empty: tcp
  uint16_t port = 0;    // tcp: first port; the k-th edge this process receives uses port + k. 0 -> 47000
  // Optional, CurveZMQ certificates as `sluice keygen` writes them: this
  // process's secret one (NAME_secret) and its public one (NAME_public),
  // which the others need too.
  std::string curve_secret;
  std::string curve_public;
};

struct Placement {
  std::vector<ProcessPlace> processes;  // in rank order: launcher rank r runs processes[r]
  // Where it came from, for messages: "--placement", "SLUICE_PLACEMENT", a file path, "default".
  std::string source;

  // PipelineError naming the process, the placement's source and the known names.
  const ProcessPlace& at(const std::string& process) const;
  bool has(const std::string& process) const;
  int rank_of(const std::string& process) const;  // index; PipelineError when unknown

  // The endpoint on which `consumer` receives its k-th incoming
  // cross-process edge, named `edge` (k from 0). Over ipc the file is
  // <ipc_dir>/<edge>.ipc with characters other than [A-Za-z0-9_.-] replaced
  // by '_', so any edge name makes one file name. Bind form
  // "@tcp://<host>:<port+k>" (a host name: "@tcp://*:<port+k>") /
  // "@ipc://<dir>/<edge>.ipc"; connect form
  // ">tcp://..." / ">ipc://...". PipelineError for an unknown consumer, a
  // negative k, an empty edge name or a port + k beyond 65535.
  std::string bind_endpoint(const std::string& consumer, int k, const std::string& edge) const;
  std::string connect_endpoint(const std::string& consumer, int k, const std::string& edge) const;

  // Every process names both certificates (parse allows all or none).
  bool curve() const;
};

// Parses a placement: either JSON
//   {"processes": [{"name": "source", "host": "10.0.0.1", "port": 47000, "curve_secret": "...",
//                   "curve_public": "..."},
//                  {"name": "compute", "ipc": "/tmp/sluice"}]}
// or the compact form used on command lines and in environment variables
// (no certificates):
//   "source=tcp://10.0.0.1:47000,compute=tcp://10.0.0.2,monitor=ipc:///tmp/sluice"
// (tcp without a port -> port 0 = default 47000; an IPv6 address in
// brackets, "tcp://[::1]:47000"). Text whose first non-blank character is
// '{' or '[' is JSON. PipelineError for anything malformed, naming `source`, what
// was expected and what was found: empty text, unknown keys, duplicate
// names, empty names, both host and ipc or neither, a port out of
// 1..65535, a bad scheme, a partial curve set, no processes.
Placement parse_placement(const std::string& text, const std::string& source);

// Reads a file (JSON or compact) -> parse_placement(text, path).
// PipelineError when it cannot be read.
Placement load_placement(const std::string& path);

// The placement to use: `given` when not empty (a path to an existing file
// is loaded, otherwise the text is parsed, source "--placement"); else the
// environment variable SLUICE_PLACEMENT (same rule, source
// "SLUICE_PLACEMENT"); else std::nullopt.
std::optional<Placement> find_placement(const std::string& given,
                                        const Environment& env = Environment::process());

// All processes on this host over ipc in `dir`, in the order given (what
// `sluice demo` uses by default); source "default". PipelineError for an
// empty dir, or empty or duplicate names.
Placement local_placement(const std::vector<std::string>& processes, const std::string& dir);

// Which process this one is, and what said so.
struct Role {
  std::string process;
  std::string from;  // "--role", "OMPI_COMM_WORLD_RANK=1", "SLURM_PROCID=2", "PMI_RANK=0", "pod name web-2"
};

// The role: `given` when not empty (must be a process of the placement);
// else the launcher's rank, first found of OMPI_COMM_WORLD_RANK (Open MPI's
// mpirun), SLURM_PROCID (Slurm's srun), PMI_RANK (any PMI launcher), then a
// Kubernetes StatefulSet pod's ordinal: the trailing "-<n>" of POD_NAME, or
// of HOSTNAME when KUBERNETES_SERVICE_HOST is set (outside Kubernetes a
// host name ending in a number says nothing); rank r ->
// placement.processes[r]. std::nullopt when none of these is present, or
// the pod's name has no ordinal (a Deployment's pod). PipelineError when the
// rank is not a non-negative integer, or >= the number of processes
// ("OMPI_COMM_WORLD_RANK=3, but the placement from X has 3 processes: a, b,
// c"), or `given` names no process of it.
std::optional<Role> find_role(const Placement& placement, const std::string& given,
                              const Environment& env = Environment::process());

// The launcher's world size when one is present, first found of
// OMPI_COMM_WORLD_SIZE, SLURM_NTASKS, PMI_SIZE; else std::nullopt.
// PipelineError when it is not a positive integer.
std::optional<int> launcher_size(const Environment& env = Environment::process());

}  // namespace sluice
