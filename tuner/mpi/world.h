// World: this process's part in an MPI job, and the one way ktune's ranks
// talk: whole messages of bytes (payloads in the wire encoding of
// tuner/base/wire.h), each with a tag that says what it is. MPI carries them
// between hosts; nothing here opens a socket of its own.
//
// Only the thread that made the World calls MPI (MPI_THREAD_FUNNELED): the
// evaluator's local thread never does. Waiting polls with a short sleep
// rather than spinning in a blocking receive, so ranks oversubscribed on a
// few cores leave the cores to the ranks that work.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ktune::mpi {

// What a message is. Rank 0 sends Chunk, Stop and Shutdown; the others send
// Ready, Result and Done.
enum class Tag : int { Ready = 1, Chunk, Stop, Result, Done, Shutdown };

struct Message {
  int source = 0;
  Tag tag = Tag::Ready;
  std::vector<std::uint8_t> payload;
};

class World {
 public:
  // MPI_Init_thread; throws Error::failed when the library cannot give
  // MPI_THREAD_FUNNELED. One per process.
  World();
  ~World();  // MPI_Finalize, unless abandoned
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // The process ends without MPI_Finalize: the launcher then ends the other
  // ranks, where MPI_Finalize would wait for ranks still waiting for work.
  void abandon() { abandoned_ = true; }

  int rank() const { return rank_; }
  int size() const { return size_; }
  // This rank's index among the ranks of its host: which GPU it takes.
  int local_rank() const { return local_rank_; }
  // The ranks on this rank's host (this one included).
  int local_size() const { return local_size_; }

  void send(int dest, Tag tag, const std::vector<std::uint8_t>& payload) const;
  // A message from `source` (any rank when negative) if one has arrived.
  std::optional<Message> poll(int source = -1) const;
  // Only a message with this tag from `source`, if one has arrived.
  std::optional<Message> poll_tag(int source, Tag tag) const;
  // Waits for the next message from `source` (any rank when negative).
  Message wait(int source = -1) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool abandoned_ = false;
};

// Sleeps a little longer each time nothing came (20 us up to 1 ms).
class Backoff {
 public:
  void idle();
  void reset() { us_ = 20; }

 private:
  unsigned us_ = 20;
};

}  // namespace ktune::mpi
