// Internal to src/train: one process at a time per run directory. Two processes training the same
// run (an experiment started twice on one run root, a train command rerun while the first still
// runs) would interleave their checkpoints and metrics; the second is refused instead.
#pragma once

#include <string>

namespace ffnshape {

class RunLock {
 public:
  // Takes an exclusive flock on RUN_DIR/lock (which records the holder's pid). DataError naming the
  // holder when another process has it. The kernel releases the lock when the process ends, however
  // it ends, so a killed run leaves no stale lock.
  explicit RunLock(const std::string& run_dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace ffnshape
