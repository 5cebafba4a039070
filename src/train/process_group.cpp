#include "ffnshape/train/process_group.h"

#include <algorithm>
#include <string>
#include <thread>

#ifdef FFNSHAPE_WITH_GLOO
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
// Set by CMake, with nccl.h on this file's include path, when LibTorch carries CUDA.
#ifdef FFNSHAPE_WITH_NCCL
#ifndef USE_C10D_NCCL  // LibTorch's CMake usually defines it already
#define USE_C10D_NCCL
#endif
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace ffnshape {

#ifdef FFNSHAPE_WITH_GLOO

namespace {

// c10d's message without the C++ backtrace c10::Error appends.
std::string reason(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

}  // namespace

struct ProcessGroup::Impl {
  int rank = 0, world_size = 1;
  bool store_on_rank0 = true;
  std::chrono::milliseconds timeout{0};
  torch::Device device{torch::kCPU};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> backend;  // Gloo, or NCCL for CUDA tensors

  // After a failed collective, the ranks still alive check in at the store; the ones that do not
  // within a few seconds are those that died or hang. A store that cannot be reached means its host,
  // rank 0, is gone.
  std::string who_stopped() {
    const auto wait = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
    try {
      store->set("alive/" + std::to_string(rank), "1");
      const auto deadline = std::chrono::steady_clock::now() + wait;
      std::vector<int> silent;
      do {
        silent.clear();
        for (int r = 0; r < world_size; ++r) {
          if (!store->check({"alive/" + std::to_string(r)})) silent.push_back(r);
        }
        if (silent.empty()) return "every rank still answers";
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      } while (std::chrono::steady_clock::now() < deadline);
      return rank_list(silent) + " stopped or hangs (no answer within " + std::to_string(wait.count() / 1000) + " s)";
    } catch (const std::exception&) {
      return store_on_rank0 ? "rank 0 stopped (the job's store, which it hosts, is gone)"
                            : "the launcher's store cannot be reached";
    }
  }

  // Waits for a collective; c10d's errors (a peer that died, a timeout) become one message that says
  // which rank saw it, which ranks stopped, and what to check.
  void wait(const char* what, const c10::intrusive_ptr<c10d::Work>& work) {
    try {
      work->wait(timeout);
    } catch (const std::exception& e) {
      const auto cause = reason(e);
      throw DistributedError(std::string(what) + " failed on rank " + std::to_string(rank) + " of " +
                             std::to_string(world_size) + ": " + who_stopped() + "\n  c10d: " + cause +
                             "\n  fix: read the output of the rank that stopped first; its own message says why");
    }
  }

  // Starts a collective now; the handle waits for it with the error handling above.
  template <typename Launch>
  PendingCollective start(const char* what, Launch&& launch) {
    c10::intrusive_ptr<c10d::Work> work;
    try {
      work = launch();
    } catch (const std::exception& e) {
      throw DistributedError(std::string(what) + " could not start on rank " + std::to_string(rank) + ": " + reason(e));
    }
    return PendingCollective([this, what, work] { wait(what, work); });
  }

  template <typename Launch>
  void run(const char* what, Launch&& launch) {
    start(what, std::forward<Launch>(launch)).wait();
  }
};

namespace {

// The backend for tensors on `device`: NCCL for CUDA tensors where it is compiled in, else Gloo.
c10::intrusive_ptr<c10d::Backend> make_backend(const c10::intrusive_ptr<c10d::Store>& store, const DistributedEnv& env,
                                               torch::Device device, std::chrono::milliseconds timeout) {
#ifdef FFNSHAPE_WITH_NCCL
  if (device.is_cuda()) {
    c10::cuda::set_device(device.index());  // NCCL binds each rank's communicator to its current GPU
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
  }
#endif
  if (device.is_cuda()) throw std::runtime_error("this build has no NCCL for CUDA tensors; rebuild with nccl.h found");
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
}

struct Cancelled {};

// Every rank checks in at the store and waits until all have, for up to `limit`: the one wait that
// may be long (the ranks of an experiment meet again while rank 0 profiles or scores), so that the
// backend's own setup, bounded by the collective timeout, starts with every rank present.
void wait_for_all_ranks(c10d::Store& store, int world_size, std::chrono::milliseconds limit,
                        const std::function<bool()>& cancelled) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int64_t present = store.add("joined", 1);
  while (present < world_size) {
    if (cancelled && cancelled()) throw Cancelled();
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(std::to_string(present) + " of " + std::to_string(world_size) + " ranks arrived");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    present = store.add("joined", 0);
  }
}

// The store of the job. The server does not wait for the workers here (wait_for_all_ranks does, and
// can be cancelled); a client tries to connect in attempts of at most 5 s, so that a stop request
// is seen while rank 0, which hosts the store, is still busy between an experiment's runs.
c10::intrusive_ptr<c10d::TCPStore> connect_store(const std::string& address, c10d::TCPStoreOptions options,
                                                  std::chrono::milliseconds limit, const std::function<bool()>& cancelled) {
  options.waitWorkers = false;
  options.timeout = limit;
  if (options.isServer) return c10::make_intrusive<c10d::TCPStore>(address, options);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    options.timeout = std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(5000));
    try {
      return c10::make_intrusive<c10d::TCPStore>(address, options);
    } catch (const std::exception&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
      if (cancelled && cancelled()) throw Cancelled();
    }
  }
}

// c10d logs a lost store connection as a warning, and a client's connection attempt that times out
// as an error, each with a C++ backtrace, before it throws. While a rank joins both are expected (a
// client retries in 5 s attempts while rank 0 is busy; see join_store), and a real failure is
// reported by the join's own message, so only fatal lines pass meanwhile. The threshold is c10's one
// process-wide log level: c10's MessageLogger (c10/util/logging_common.h) compares each line with
// FLAGS_caffe2_log_level and writes it to stderr, with no per-thread level, handler or sink to
// hook, so the join cannot silence its own lines alone. Another thread's c10 warnings and errors in
// those seconds (the trainer starts no other work before the join) are silenced too.
class QuietStoreWarnings {
 public:
  QuietStoreWarnings() : previous_(FLAGS_caffe2_log_level) { FLAGS_caffe2_log_level = std::max(previous_, 3); }
  ~QuietStoreWarnings() { FLAGS_caffe2_log_level = previous_; }
  QuietStoreWarnings(const QuietStoreWarnings&) = delete;
  QuietStoreWarnings& operator=(const QuietStoreWarnings&) = delete;

 private:
  int previous_;  // c10's levels: 0 info, 1 warning, 2 error, 3 fatal
};

// The job's store, under `prefix`, once every rank has checked in. A client can reach the store of
// the job that rank 0 is still finishing on the same port (an experiment's previous run, while rank 0
// profiles it) and lose it when rank 0 closes it: it then connects again, until the join deadline.
c10::intrusive_ptr<c10d::Store> join_store(const DistributedEnv& env, const c10d::TCPStoreOptions& options,
                                           const std::string& prefix, std::chrono::milliseconds timeout,
                                           std::chrono::milliseconds join_timeout,
                                           const std::function<bool()>& cancelled) {
  const QuietStoreWarnings quiet;
  const auto deadline = std::chrono::steady_clock::now() + join_timeout;
  for (;;) {
    const auto left = std::max(std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                 deadline - std::chrono::steady_clock::now()));
    auto tcp = connect_store(env.master_addr, options, left, cancelled);
    tcp->setTimeout(timeout);
    auto store = c10::make_intrusive<c10d::PrefixStore>(prefix, tcp);
    store->setTimeout(timeout);  // a silent peer is an error after the collective timeout
    try {
      wait_for_all_ranks(*store, env.world_size, left, cancelled);
      return store;
    } catch (const c10::DistNetworkError&) {
      if (options.isServer || std::chrono::steady_clock::now() >= deadline) throw;
    }
  }
}

}  // namespace

ProcessGroup::ProcessGroup(const DistributedEnv& env, std::chrono::milliseconds timeout, torch::Device device,
                           std::chrono::milliseconds join_timeout, const std::function<bool()>& cancelled)
    : impl_(std::make_unique<Impl>()) {
  if (join_timeout.count() <= 0) join_timeout = timeout;
  impl_->device = device;
  impl_->rank = env.rank;
  impl_->world_size = env.world_size;
  impl_->store_on_rank0 = !env.agent_store;
  impl_->timeout = timeout;
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0 && !env.agent_store;
  options.numWorkers = env.agent_store ? std::nullopt : std::optional<std::size_t>(env.world_size);
  try {
    // Keys of each group under their own prefix: a process may join several jobs in turn (an
    // experiment's runs), and torchrun's agent store outlives them all.
    static int generation = 0;
    const auto prefix = "ffnshape/" + std::to_string(generation++);
    impl_->store = join_store(env, options, prefix, timeout, join_timeout, cancelled);
    impl_->backend = make_backend(impl_->store, env, device, timeout);
  } catch (const Cancelled&) {
    throw DistributedError("rank " + std::to_string(env.rank) + " was stopped (SIGINT / SIGTERM) while it waited for the "
                           "other ranks to join; nothing was trained\n  fix: rerun the same command to continue");
  } catch (const std::exception& e) {
    throw RendezvousError("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                           " could not join the job at " + env.master_addr + ":" + std::to_string(env.master_port) +
                           " within " + std::to_string(join_timeout.count() / 1000) + " s: " + reason(e) +
                           "\n  fix: check that every rank was started and that the port is free and reachable");
  }
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::world_size() const { return impl_->world_size; }
torch::Device ProcessGroup::device() const { return impl_->device; }

void ProcessGroup::all_reduce_sum(std::vector<torch::Tensor>& tensors) {
  impl_->run("all-reduce", [&] { return impl_->backend->allreduce(tensors); });
}

PendingCollective ProcessGroup::all_reduce_sum_async(std::vector<torch::Tensor>& tensors) {
  return impl_->start("all-reduce", [&] { return impl_->backend->allreduce(tensors); });
}

PendingCollective ProcessGroup::reduce_scatter_sum_async(torch::Tensor& output, torch::Tensor& input) {
  return impl_->start("reduce-scatter", [&] { return impl_->backend->_reduce_scatter_base(output, input); });
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  impl_->run("broadcast", [&] { return impl_->backend->broadcast(tensors, options); });
}

void ProcessGroup::reduce_scatter_sum(torch::Tensor& output, torch::Tensor& input) {
  impl_->run("reduce-scatter", [&] { return impl_->backend->_reduce_scatter_base(output, input); });
}

void ProcessGroup::all_gather(torch::Tensor& output, torch::Tensor& input) {
  impl_->run("all-gather", [&] { return impl_->backend->_allgather_base(output, input); });
}

void ProcessGroup::barrier() {
  impl_->run("barrier", [&] { return impl_->backend->barrier(); });
}

double ProcessGroup::sum(double value) {
  std::vector<torch::Tensor> one{torch::full({1}, value, torch::TensorOptions(torch::kDouble).device(impl_->device))};
  all_reduce_sum(one);
  return one[0].item<double>();
}

#else  // built without Gloo's headers

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const DistributedEnv&, std::chrono::milliseconds, torch::Device) {
  throw RendezvousError("this ffnshape was built without Gloo's headers, so it cannot join a process group\n"
                         "  fix: install libgloo-dev (scripts/setup.sh does) and rebuild");
}
int ProcessGroup::rank() const { return 0; }
int ProcessGroup::world_size() const { return 1; }
torch::Device ProcessGroup::device() const { return torch::kCPU; }
void ProcessGroup::all_reduce_sum(std::vector<torch::Tensor>&) {}
PendingCollective ProcessGroup::all_reduce_sum_async(std::vector<torch::Tensor>&) { return {}; }
PendingCollective ProcessGroup::reduce_scatter_sum_async(torch::Tensor& output, torch::Tensor& input) {
  output.copy_(input);
  return {};
}
void ProcessGroup::broadcast(std::vector<torch::Tensor>&, int) {}
void ProcessGroup::reduce_scatter_sum(torch::Tensor& output, torch::Tensor& input) { output.copy_(input); }
void ProcessGroup::all_gather(torch::Tensor& output, torch::Tensor& input) { output.copy_(input); }
void ProcessGroup::barrier() {}
double ProcessGroup::sum(double value) { return value; }

#endif

ProcessGroup::~ProcessGroup() = default;

}  // namespace ffnshape
