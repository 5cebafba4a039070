#include "side_by_side.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "../common/log.h"
#include "ffnshape/config/config_error.h"
#include "ffnshape/experiment/report.h"
#include "ffnshape/train/data_error.h"
#include "ffnshape/train/trainer.h"
#include "profiles.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace ffnshape::experiment {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(200);
constexpr auto kProgressEvery = std::chrono::seconds(60);

struct Running {
  pid_t pid = -1;
  size_t job = 0;
  Clock::time_point started;
  std::string log;
};

std::string label(const std::vector<Job>& jobs, size_t i) {
  return "[" + std::to_string(i + 1) + "/" + std::to_string(jobs.size()) + "] " + jobs[i].plan->spec.name + " seed " +
         std::to_string(jobs[i].seed);
}

std::string minutes(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return std::to_string(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60);
}

// The process of one run: the experiment's own command with --job, and with the cores shared out
// when the arm leaves train.threads automatic.
std::vector<std::string> job_argv(const ExperimentRun& run, const Job& job, int64_t parallel) {
  auto argv = run.options.job_command;
  argv.insert(argv.end(), {"--job", job.plan->spec.name + ":" + std::to_string(job.seed)});
  if (job.plan->config.train.threads == 0) {
    argv.insert(argv.end(), {"--set", "train.threads=" + std::to_string(run_threads(job.plan->config.train, parallel))});
  }
  return argv;
}

// fork + exec with stdout and stderr appended to `log_path`. The child asks for SIGTERM when the
// parent dies, so that a killed experiment does not leave runs training unseen (they checkpoint).
pid_t spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  const int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw DataError("cannot open '" + log_path + "': " + std::strerror(errno) + "\n  fix: check the run root's permissions");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    // A stop that comes before the run installs its handlers waits (blocked) instead of killing it:
    // install_stop_handlers() unblocks, and the run then stops after its first step with a checkpoint.
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &stops, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(log_fd);
  if (pid < 0) throw std::runtime_error(std::string("cannot start a run's process: ") + std::strerror(errno));
  return pid;
}

// The last `count` lines of a log that hold `needle` (all lines when it is empty), read from its tail.
std::vector<std::string> last_lines(const std::string& path, size_t count, const std::string& needle = "") {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::streamoff>(in.tellg());
  const std::streamoff from = std::max<std::streamoff>(0, size - 8192);
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  size_t end = text.size();
  while (end > 0 && lines.size() < count) {
    const auto begin = text.rfind('\n', end - 1);
    const auto start = begin == std::string::npos ? 0 : begin + 1;
    auto line = text.substr(start, end - start);
    if (!line.empty() && (needle.empty() || line.find(needle) != std::string::npos)) lines.insert(lines.begin(), line);
    if (begin == std::string::npos) break;
    end = begin;
  }
  return lines;
}

// A finished run with its profiles taken and no tasks to score needs no process.
bool nothing_left(const ExperimentRun& run, const Job& job) {
  if (!run.spec.tasks.empty()) return false;
  if (!read_run_record(job.plan->spec.name, job.seed, run_dir(run.root, job.plan->spec.name, job.seed)).complete) return false;
  if (!job.profiled) return true;
  const auto samples = profile_samples(run.root, *run.spec.profile);
  return std::all_of(samples.begin(), samples.end(), [&](const ProfileSample& s) { return s.seed != job.seed || fs::exists(s.path); });
}

class Scheduler {
 public:
  Scheduler(const ExperimentRun& run, const std::vector<Job>& jobs, int64_t parallel)
      : run_(run), jobs_(jobs), parallel_(parallel), pending_(jobs.size(), true) {}

  SideBySideOutcome run() {
    auto last_progress = Clock::now();
    while (true) {
      if (!stopping_ && stop_pending()) stop_all();
      pool_once_profiled();
      if (!stopping_) launch_ready();
      if (running_.empty() && !fail_blocked()) break;
      reap();
      if (Clock::now() - last_progress >= kProgressEvery) {
        show_progress();
        last_progress = Clock::now();
      }
      std::this_thread::sleep_for(kPoll);
    }
    outcome_.interrupted = stopping_;
    return outcome_;
  }

 private:
  bool profiled_runs_done() const {
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (jobs_[i].profiled && (pending_[i] || is_running(i))) return false;
    }
    return true;
  }
  bool is_running(size_t i) const {
    return std::any_of(running_.begin(), running_.end(), [&](const Running& r) { return r.job == i; });
  }
  bool ready(size_t i) const { return !jobs_[i].needs_profile || fs::exists(run_.profile_path); }

  void pool_once_profiled() {
    if (pooled_ || !run_.spec.profile || !profiled_runs_done()) return;
    pooled_ = true;
    try {
      pool_when_complete(run_.root, *run_.spec.profile, run_.plans);
    } catch (const std::exception& e) {
      log::error("pooling the profiles failed: {}", e.what());
    }
  }

  void launch_ready() {
    for (size_t i = 0; i < jobs_.size() && static_cast<int64_t>(running_.size()) < parallel_; ++i) {
      if (!pending_[i] || !ready(i)) continue;
      pending_[i] = false;
      if (nothing_left(run_, jobs_[i])) {
        log::info("{}: finished earlier, skipped", label(jobs_, i));
        continue;
      }
      const auto dir = run_dir(run_.root, jobs_[i].plan->spec.name, jobs_[i].seed);
      fs::create_directories(dir);
      if (!read_run_record(jobs_[i].plan->spec.name, jobs_[i].seed, dir).complete) ++outcome_.trained;
      Running r{-1, i, Clock::now(), (fs::path(dir) / "train.log").string()};
      r.pid = spawn(job_argv(run_, jobs_[i], parallel_), r.log);
      log::info("{} -> {} (process {}, log {})", label(jobs_, i), dir, r.pid, r.log);
      running_.push_back(r);
    }
  }

  // Jobs that wait for a profile that can no longer come (a profiled run failed): counted as
  // failures. Returns whether any job is still to run.
  bool fail_blocked() {
    const bool any_pending = std::find(pending_.begin(), pending_.end(), true) != pending_.end();
    if (!any_pending || stopping_) return false;
    if (!profiled_runs_done() || fs::exists(run_.profile_path)) return true;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      if (!pending_[i]) continue;
      pending_[i] = false;
      ++outcome_.failures;
      log::error("{}: not started: its schedule needs {}, which a failed reference run never gave", label(jobs_, i),
                 run_.profile_path);
    }
    return false;
  }

  void reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      int status = 0;
      const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
      if (done == 0 || (done < 0 && errno == EINTR)) {
        ++it;
        continue;
      }
      report_exit(*it, done < 0 ? -1 : status);
      it = running_.erase(it);
    }
  }

  void report_exit(const Running& r, int status) {
    const auto& job = jobs_[r.job];
    const double seconds = std::chrono::duration<double>(Clock::now() - r.started).count();
    const auto record = read_run_record(job.plan->spec.name, job.seed, run_dir(run_.root, job.plan->spec.name, job.seed));
    if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      log::info("{}: done in {} (val_loss {:.4f})", label(jobs_, r.job), minutes(seconds), record.val_loss);
      return;
    }
    if (stopping_) {
      log::warn("{}: stopped after {}; its checkpoint is saved", label(jobs_, r.job), minutes(seconds));
      return;
    }
    ++outcome_.failures;
    const auto why = status < 0 ? std::string("lost") : WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status))
                                                                        : "signal " + std::to_string(WTERMSIG(status));
    std::string tail;
    for (const auto& line : last_lines(r.log, 3)) tail += "\n    " + line;
    log::error("{}: failed ({}) after {}; the other runs go on. The end of {}:{}", label(jobs_, r.job), why,
               minutes(seconds), r.log, tail);
  }

  void stop_all() {
    stopping_ = true;
    log::warn("stop requested: each running run checkpoints and stops; rerun the same command to continue");
    for (const auto& r : running_) ::kill(r.pid, SIGTERM);
  }

  void show_progress() const {
    for (const auto& r : running_) {
      const auto lines = last_lines(r.log, 1, "| loss ");
      if (lines.empty()) continue;
      const auto at = lines.back().find("step");
      log::info("{}: {}", label(jobs_, r.job), at == std::string::npos ? lines.back() : lines.back().substr(at));
    }
  }

  const ExperimentRun& run_;
  const std::vector<Job>& jobs_;
  const int64_t parallel_;
  std::vector<bool> pending_;
  std::vector<Running> running_;
  bool stopping_ = false;
  bool pooled_ = false;
  SideBySideOutcome outcome_;
};

}  // namespace

SideBySideOutcome run_side_by_side(const ExperimentRun& run, const std::vector<Job>& jobs, int64_t parallel) {
  if (run.options.job_command.empty()) {
    throw ConfigError("parallel", "needs the command that trains one run (ExperimentOptions::job_command)",
                      "run the experiment with the ffnshape CLI, or set job_command");
  }
  return Scheduler(run, jobs, parallel).run();
}

}  // namespace ffnshape::experiment
