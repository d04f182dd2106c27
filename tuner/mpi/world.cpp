#include "tuner/mpi/world.h"

#include <mpi.h>

#include <chrono>
#include <string>
#include <thread>

#include "ktune/error.h"

namespace ktune::mpi {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error::failed(std::string("MPI: ") + what + ": " + std::string(text, static_cast<size_t>(len)));
}

Message receive(const MPI_Status& st) {
  int count = 0;
  check(MPI_Get_count(&st, MPI_BYTE, &count), "message size");
  Message m;
  m.source = st.MPI_SOURCE;
  m.tag = static_cast<Tag>(st.MPI_TAG);
  m.payload.resize(static_cast<size_t>(count));
  check(MPI_Recv(m.payload.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "receive");
  return m;
}

}  // namespace

World::World() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw Error::failed("MPI: the library does not allow threads beside the one that calls it (MPI_THREAD_FUNNELED)");
  }
  // Errors come back as codes (and then as ktune::Error), not as an abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm host = MPI_COMM_NULL;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host), "ranks per host");
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
}

World::~World() {
  if (!abandoned_) MPI_Finalize();
}

void World::send(int dest, Tag tag, const std::vector<std::uint8_t>& payload) const {
  if (payload.size() > static_cast<size_t>(INT32_MAX)) throw Error::failed("MPI: a message over 2 GiB");
  check(MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_BYTE, dest, static_cast<int>(tag),
                 MPI_COMM_WORLD),
        "send");
}

std::optional<Message> World::poll(int source) const {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), "probe");
  if (!flag) return std::nullopt;
  return receive(st);
}

std::optional<Message> World::poll_tag(int source, Tag tag) const {
  int flag = 0;
  MPI_Status st;
  check(MPI_Iprobe(source, static_cast<int>(tag), MPI_COMM_WORLD, &flag, &st), "probe");
  if (!flag) return std::nullopt;
  return receive(st);
}

Message World::wait(int source) const {
  Backoff b;
  for (;;) {
    if (auto m = poll(source)) return std::move(*m);
    b.idle();
  }
}

void Backoff::idle() {
  std::this_thread::sleep_for(std::chrono::microseconds(us_));
  if (us_ < 1000) us_ *= 2;
}

}  // namespace ktune::mpi
