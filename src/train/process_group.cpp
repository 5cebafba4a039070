#include "ffnshape/train/process_group.h"

#include <string>

#ifdef FFNSHAPE_WITH_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace ffnshape {

#ifdef FFNSHAPE_WITH_GLOO

struct ProcessGroup::Impl {
  int rank = 0, world_size = 1;
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
};

namespace {

// c10d's message without the C++ backtrace c10::Error appends.
std::string reason(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

// Runs a collective and waits for it; c10d's errors (a peer that died, a timeout) become one message
// that says which rank saw it and what to check.
template <typename Launch>
void run_collective(int rank, int world_size, std::chrono::milliseconds timeout, const char* what, Launch&& launch) {
  try {
    launch()->wait(timeout);
  } catch (const std::exception& e) {
    throw DistributedError(std::string(what) + " failed on rank " + std::to_string(rank) + " of " +
                           std::to_string(world_size) + ": " + reason(e) +
                           "\n  fix: look for the rank that stopped first (its own message says why)");
  }
}

}  // namespace

ProcessGroup::ProcessGroup(const DistributedEnv& env, std::chrono::milliseconds timeout) : impl_(std::make_unique<Impl>()) {
  impl_->rank = env.rank;
  impl_->world_size = env.world_size;
  impl_->timeout = timeout;
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0 && !env.agent_store;
  options.numWorkers = env.agent_store ? std::nullopt : std::optional<std::size_t>(env.world_size);
  options.waitWorkers = !env.agent_store;
  options.timeout = timeout;
  try {
    impl_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
    auto gloo_options = c10d::ProcessGroupGloo::Options::create(timeout);
    gloo_options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    impl_->gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, env.rank, env.world_size, gloo_options);
  } catch (const std::exception& e) {
    throw DistributedError("rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) +
                           " could not join the job at " + env.master_addr + ":" + std::to_string(env.master_port) +
                           " within " + std::to_string(timeout.count() / 1000) + " s: " + reason(e) +
                           "\n  fix: check that every rank was started and that the port is free and reachable");
  }
}

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::world_size() const { return impl_->world_size; }

void ProcessGroup::all_reduce_sum(std::vector<torch::Tensor>& tensors) {
  run_collective(impl_->rank, impl_->world_size, impl_->timeout, "all-reduce", [&] { return impl_->gloo->allreduce(tensors); });
}

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  c10d::BroadcastOptions options;
  options.rootRank = root;
  run_collective(impl_->rank, impl_->world_size, impl_->timeout, "broadcast", [&] { return impl_->gloo->broadcast(tensors, options); });
}

void ProcessGroup::barrier() {
  run_collective(impl_->rank, impl_->world_size, impl_->timeout, "barrier", [&] { return impl_->gloo->barrier(); });
}

#else  // built without Gloo's headers

struct ProcessGroup::Impl {};

ProcessGroup::ProcessGroup(const DistributedEnv&, std::chrono::milliseconds) {
  throw DistributedError("this ffnshape was built without Gloo's headers, so it cannot join a process group\n"
                         "  fix: install libgloo-dev (scripts/setup.sh does) and rebuild");
}
int ProcessGroup::rank() const { return 0; }
int ProcessGroup::world_size() const { return 1; }
void ProcessGroup::all_reduce_sum(std::vector<torch::Tensor>&) {}
void ProcessGroup::broadcast(std::vector<torch::Tensor>&, int) {}
void ProcessGroup::barrier() {}

#endif

ProcessGroup::~ProcessGroup() = default;

}  // namespace ffnshape
