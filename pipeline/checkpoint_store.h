#pragma once
// A checkpoint store on the local file system, as Flink's filesystem state
// backend keeps one: what a pipeline needs to resume after a crash, namely
// each stage's accumulator and how far each source had got.
//
//   DIR/chk-00000042/        one directory per complete checkpoint
//       acc-0.0.npy          accumulator tensor 0 of the manifest's stage 0 (numpy reads it)
//       plans-N.txt          a platform's plans (the host's FFTW wisdom), if any
//       manifest.json        number, source positions, node states, stages: names, specs, sizes, BLAKE2b
//       hashes; plans: platform, file, size, BLAKE2b
//
// Writing is atomic whatever moment a crash comes at: the files go into
// DIR/.chk-00000042.partial/, each one fsynced, the manifest last; then the
// directory is renamed into place and DIR fsynced. Reading walks from the
// newest checkpoint back and passes over each one whose manifest is missing
// or does not parse or whose files do not match their sizes and hashes,
// saying which and why, so a torn or corrupted checkpoint costs only the
// progress since the one before it.
//
// Thread safety: one writer per directory (a pipeline's checkpoint thread);
// reading while another process writes sees only complete checkpoints.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <sluice/devices/backend.h>
#include <sluice/stream/step.h>

namespace sluice {

struct Checkpoint {
  int64_t number = 0;                             // >= 1, increasing within a run
  std::map<std::string, int64_t> positions{};     // source name -> messages it had emitted
  std::map<std::string, Tensors> accumulators{};  // stage name -> its accumulator
  // Node name -> what a source or sink needs besides its position to resume
  // (a ZeroMQ node's stream sequence numbers): text of the node's own making.
  std::map<std::string, std::string> states{};
  // Platform -> the plans its results depended on (Client::plans: the
  // host's measured FFTW plans), which a restore takes before it computes.
  std::map<std::string, std::string> plans{};
};

struct CheckpointStoreOptions {
  int retain = 3;  // complete checkpoints kept, newest first (>= 1)
};

// What latest() found: the newest checkpoint that verified, if any, and a
// line for each newer one it passed over (number, file, what was wrong).
struct CheckpointLookup {
  std::optional<Checkpoint> checkpoint;
  std::vector<std::string> skipped;
};

class CheckpointStore {
 public:
  // Creates `directory` if missing. CheckpointError when it cannot be
  // created or is not a directory; retain < 1 is an Error naming it.
  explicit CheckpointStore(std::string directory, CheckpointStoreOptions options = {});

  // Writes c (its accumulators copied to the host) as checkpoint c.number
  // and returns the bytes written. Partial checkpoints a crashed writer left
  // are removed first, and so are checkpoints numbered c.number and above:
  // they belong to a run that a restore from an older one abandoned. Then only the newest `retain` are kept.
  // CheckpointError naming the file when one cannot be written (a full disk, say): the complete checkpoints
  // stay as they were.
  int64_t write(const Checkpoint& c);

  // The newest checkpoint whose manifest and files all verify.
  CheckpointLookup latest() const;

  // Numbers of the checkpoint directories present, ascending (complete or
  // not: latest() verifies them).
  std::vector<int64_t> numbers() const;

  const std::string& directory() const { return directory_; }

 private:
  std::string directory_;
  CheckpointStoreOptions options_;
};

}  // namespace sluice
