#include "sessions.h"

#include <ctime>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../common/host_info.h"
#include "../common/log.h"

namespace fs = std::filesystem;

namespace ffnshape::experiment {
namespace {

std::string sessions_path(const std::string& run_root) { return (fs::path(run_root) / "sessions.jsonl").string(); }

std::string utc_now() {
  const auto now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

Session start_session(const std::string& run_root, int64_t parallel, int64_t threads_per_run) {
  return {run_root, utc_now(), std::chrono::steady_clock::now(), describe_host(), parallel, threads_per_run};
}

void finish_session(const Session& session, int64_t runs_trained) {
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - session.clock).count();
  const nlohmann::json line = {{"started", session.started},   {"wall_s", wall_s},
                               {"host", session.host},         {"parallel", session.parallel},
                               {"threads_per_run", session.threads_per_run}, {"runs_trained", runs_trained}};
  // A record of time spent: failing to append it must not fail the experiment.
  std::ofstream out(sessions_path(session.run_root), std::ios::app);
  out << line.dump() << "\n";
  if (!out) log::warn("could not append to {}; the report's wall time will miss this session", sessions_path(session.run_root));
}

std::vector<SessionLine> read_sessions(const std::string& run_root) {
  std::vector<SessionLine> sessions;
  std::ifstream in(sessions_path(run_root));
  for (std::string text; std::getline(in, text);) {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;
    SessionLine s;
    try {
      s.started = j.value("started", "");
      s.host = j.value("host", "");
      s.wall_s = j.value("wall_s", 0.0);
      s.parallel = j.value("parallel", int64_t{1});
      s.threads_per_run = j.value("threads_per_run", int64_t{0});
      s.runs_trained = j.value("runs_trained", int64_t{0});
    } catch (const nlohmann::json::exception&) {
      continue;  // a field of the wrong type
    }
    sessions.push_back(s);
  }
  return sessions;
}

}  // namespace ffnshape::experiment
