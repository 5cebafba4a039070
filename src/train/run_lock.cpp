#include "run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "ffnshape/train/data_error.h"

namespace ffnshape {

RunLock::RunLock(const std::string& run_dir) {
  const auto path = run_dir + "/lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw DataError("cannot open '" + path + "': " + std::strerror(errno) + "\n  fix: check the run directory's permissions");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    char holder[32] = {0};
    const auto n = ::pread(fd_, holder, sizeof holder - 1, 0);
    ::close(fd_);
    fd_ = -1;
    throw DataError("'" + run_dir + "' is being trained by another process (pid " +
                    (n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("unknown")) +
                    "); nothing was written\n  fix: wait for that process to finish, or stop it (it checkpoints on "
                    "SIGINT), then rerun");
  }
  // The pid serves only the message above: a failed write leaves the lock itself intact.
  const auto pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace ffnshape
