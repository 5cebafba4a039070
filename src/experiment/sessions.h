// Internal: each invocation of an experiment appends a line to RUN_ROOT/sessions.jsonl (when it
// started, its wall time, the host, runs side by side, threads per run, runs trained), so that the
// report can give the hardware and the wall time of a study that was trained over several sessions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ffnshape::experiment {

struct Session {
  std::string run_root;
  std::string started;  // UTC, ISO 8601
  std::chrono::steady_clock::time_point clock;
  std::string host;
  int64_t parallel = 1;
  int64_t threads_per_run = 0;  // 0: the arms differ
};

Session start_session(const std::string& run_root, int64_t parallel, int64_t threads_per_run);
// Appends the session's line (its wall time up to now, and how many runs it trained).
void finish_session(const Session& session, int64_t runs_trained);

struct SessionLine {
  std::string started, host;
  double wall_s = 0;
  int64_t parallel = 1, threads_per_run = 0, runs_trained = 0;
};
// The sessions recorded so far (malformed lines are skipped: the file is a record, not an input).
std::vector<SessionLine> read_sessions(const std::string& run_root);

}  // namespace ffnshape::experiment
