// The compile pool (tuner/compile/pool.h): worker processes give the same
// results as an in-process Compiler, failures and crashed children are data,
// cache hits need no child, and results come back per ticket.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"
#include "ktune/error.h"
#include "tuner/compile/pool.h"

namespace ktune {
namespace {

using testing::kernels_dir;
using testing::ScopedEnv;
using testing::TempDir;

constexpr const char* kCrashVariable = "KTUNE_COMPILE_TEST_CRASH";
constexpr const char* kCrashDefine = "KTUNE_TEST_CRASH_HERE";
constexpr const char* kHangVariable = "KTUNE_COMPILE_TEST_HANG";
constexpr const char* kHangDefine = "KTUNE_TEST_HANG_HERE";

CompileRequest vector_add(int elems) {
  CompileRequest r;
  r.source_path = kernels_dir() / "vector_add.cu";
  r.kernel_name = "vector_add";
  r.defines = {{"ELEMS_PER_THREAD", std::to_string(elems)}};
  r.block_threads = 256;
  return r;
}

CompilePoolOptions options(const TempDir& cache, unsigned workers) {
  CompilePoolOptions o;
  o.workers = workers;
  o.compiler.cache_dir = cache.path();
  return o;
}

std::vector<CompileRequest> distinct_configs(int n) {
  std::vector<CompileRequest> out;
  for (int e = 1; e <= n; ++e) out.push_back(vector_add(e));
  return out;
}

// The children must be processes unless a test asks otherwise.
class CompilePoolTest : public ::testing::Test {
 protected:
  ScopedEnv in_process_{"KTUNE_COMPILE_IN_PROCESS", nullptr};
  ScopedEnv crash_{kCrashVariable, nullptr};
  ScopedEnv hang_{kHangVariable, nullptr};
  TempDir cache_;
};

void expect_same(const CompileResult& got, const CompileResult& want) {
  ASSERT_TRUE(got.ok) << got.log;
  EXPECT_EQ(got.cache_key, want.cache_key);
  EXPECT_EQ(got.lowered_name, want.lowered_name);
  EXPECT_TRUE(got.cubin == want.cubin) << "cubins differ";
  EXPECT_EQ(got.resources, want.resources);
  ASSERT_TRUE(got.occupancy && want.occupancy);
  EXPECT_EQ(got.occupancy->fraction, want.occupancy->fraction);
  EXPECT_GT(got.compile_ms, 0);
}

TEST_F(CompilePoolTest, ProcessesMatchTheInProcessCompilerInInputOrder) {
  const std::vector<CompileRequest> requests = distinct_configs(6);
  CompilePool pool(options(cache_, 2));
  EXPECT_EQ(pool.workers(), 2u);
  const std::vector<CompileResult> got = pool.compile(requests);
  EXPECT_FALSE(pool.in_process());
  EXPECT_EQ(pool.deaths(), 0);
  TempDir other;
  CompilerOptions co;
  co.cache_dir = other.path();
  const Compiler reference(co);
  ASSERT_EQ(got.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE("ELEMS_PER_THREAD=" + requests[i].defines[0].second);
    EXPECT_FALSE(got[i].cache_hit);
    expect_same(got[i], reference.compile(requests[i]));
  }

  // A second pass is all cache hits, with the same results.
  const std::vector<CompileResult> again = pool.compile(requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_TRUE(again[i].cache_hit);
    expect_same(again[i], got[i]);
  }
}

TEST_F(CompilePoolTest, CacheHitsNeedNoChild) {
  const std::vector<CompileRequest> requests = distinct_configs(3);
  CompilerOptions co;
  co.cache_dir = cache_.path();
  const Compiler warm(co);
  for (const CompileRequest& r : requests) ASSERT_TRUE(warm.compile(r).ok);
  // Any request reaching a child now kills it: none may.
  ScopedEnv crash(kCrashVariable, "ELEMS_PER_THREAD");
  CompilePool pool(options(cache_, 1));
  for (const CompileResult& r : pool.compile(requests)) {
    EXPECT_TRUE(r.ok) << r.log;
    EXPECT_TRUE(r.cache_hit);
  }
  EXPECT_EQ(pool.deaths(), 0);
}

TEST_F(CompilePoolTest, CompileErrorComesBackWithTheLog) {
  CompileRequest bad;
  bad.source_path = kernels_dir() / "syntax_error.cu";
  bad.kernel_name = "broken";
  CompilePool pool(options(cache_, 1));
  const CompileResult r = pool.take(pool.submit(bad));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("undeclared_identifier"), std::string::npos) << r.log;
  EXPECT_NE(r.error_line().find("error"), std::string::npos) << r.error_line();
  EXPECT_EQ(pool.deaths(), 0);
  // The pool goes on.
  EXPECT_TRUE(pool.take(pool.submit(vector_add(2))).ok);
}

TEST_F(CompilePoolTest, DeadChildIsACompileErrorAndTheNextChildGoesOn) {
  ScopedEnv crash(kCrashVariable, kCrashDefine);  // before the pool: children inherit it
  std::vector<CompileRequest> requests = distinct_configs(4);
  requests[1].defines.emplace_back(kCrashDefine, "1");
  CompilePool pool(options(cache_, 1));
  const std::vector<CompileResult> got = pool.compile(requests);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_FALSE(got[1].ok);
  EXPECT_EQ(got[1].log.rfind("compiler process died: signal 11", 0), 0u) << got[1].log;
  EXPECT_EQ(got[1].error_line().rfind("compiler process died: signal 11", 0), 0u);
  for (size_t i : {0u, 2u, 3u}) EXPECT_TRUE(got[i].ok) << i << ": " << got[i].log;
  EXPECT_EQ(pool.deaths(), 1);
  EXPECT_FALSE(pool.in_process());
  // A crash is not cached: the same request is compiled (and crashes) again.
  EXPECT_FALSE(pool.take(pool.submit(requests[1])).ok);
  EXPECT_EQ(pool.deaths(), 2);
}

// A compile that never ends (NVRTC looping on a pathological template) is
// killed at the time limit and fails with a reason; the slot's next request
// gets a fresh child, and the timed-out one is tried again next time.
TEST_F(CompilePoolTest, HangingCompileTimesOutAndTheNextChildGoesOn) {
  ScopedEnv hang(kHangVariable, kHangDefine);
  std::vector<CompileRequest> requests = distinct_configs(3);
  requests[0].defines.emplace_back(kHangDefine, "1");
  CompilePoolOptions o = options(cache_, 1);
  o.time_limit_s = 1;
  CompilePool pool(o);
  const std::vector<CompileResult> got = pool.compile(requests);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_FALSE(got[0].ok);
  EXPECT_EQ(got[0].error_line().rfind("compile timed out after 1 s", 0), 0u) << got[0].log;
  EXPECT_GE(got[0].compile_ms, 1000);
  EXPECT_TRUE(got[1].ok) << got[1].log;
  EXPECT_TRUE(got[2].ok) << got[2].log;
  EXPECT_EQ(pool.timeouts(), 1);
  EXPECT_EQ(pool.deaths(), 0);
  EXPECT_FALSE(pool.take(pool.submit(requests[0])).ok);  // not cached
  EXPECT_EQ(pool.timeouts(), 2);
}

TEST_F(CompilePoolTest, TakeAnyHandsOutEveryTicketOnce) {
  const std::vector<CompileRequest> requests = distinct_configs(5);
  std::ifstream in(requests[0].source_path);
  const std::string source{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  CompilePool pool(options(cache_, 3));
  std::vector<CompilePool::Ticket> tickets;
  for (const CompileRequest& r : requests) tickets.push_back(pool.submit(r));
  const std::vector<CompilePool::Ticket> all = tickets;
  std::set<CompilePool::Ticket> seen;
  std::set<std::string> keys;
  while (!tickets.empty()) {
    auto [t, r] = pool.take_any(tickets);
    EXPECT_TRUE(seen.insert(t).second);
    EXPECT_TRUE(r.ok) << r.log;
    // The result belongs to its ticket's request.
    const size_t i = static_cast<size_t>(std::find(all.begin(), all.end(), t) - all.begin());
    ASSERT_LT(i, requests.size());
    EXPECT_EQ(r.cache_key, compile_cache_key(requests[i], source));
    keys.insert(r.cache_key);
  }
  EXPECT_EQ(seen.size(), requests.size());
  EXPECT_EQ(keys.size(), requests.size());
  EXPECT_THROW(pool.take(all[0]), Error);  // taken already
}

TEST_F(CompilePoolTest, InProcessFallbackOnRequest) {
  ScopedEnv in_process("KTUNE_COMPILE_IN_PROCESS", "1");
  CompilePool pool(options(cache_, 2));
  EXPECT_TRUE(pool.in_process());
  for (const CompileResult& r : pool.compile(distinct_configs(3))) EXPECT_TRUE(r.ok) << r.log;
}

TEST_F(CompilePoolTest, CancelStopsTheWaitAndThePoolRecovers) {
  Cancel cancel;
  cancel.request();
  CompilePoolOptions o = options(cache_, 1);
  o.cancel = cancel.token();
  CompilePool pool(o);
  const CompilePool::Ticket t = pool.submit(vector_add(3));
  EXPECT_THROW(pool.take(t), Cancelled);
  pool.cancel();
  cancel.clear();
  EXPECT_TRUE(pool.take(pool.submit(vector_add(4))).ok);
}

TEST_F(CompilePoolTest, UnreadableSourceIsBadInputEitherSide) {
  CompileRequest missing = vector_add(1);
  missing.source_path = cache_.path() / "no_such_kernel.cu";
  {
    // With a cache, the lookup in this process finds out.
    CompilePool pool(options(cache_, 1));
    try {
      pool.submit(missing);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    }
  }
  // Without one, the child does, and its Error is rethrown here.
  CompilePoolOptions o = options(cache_, 1);
  o.compiler.use_cache = false;
  CompilePool pool(o);
  const CompilePool::Ticket t = pool.submit(missing);
  try {
    pool.take(t);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::BadInput);
    EXPECT_EQ(e.where().file, missing.source_path.string());
  }
  EXPECT_EQ(pool.deaths(), 0);
  EXPECT_TRUE(pool.take(pool.submit(vector_add(5))).ok);
}

// The host's compile slots: as many holders at once as slots, each holder
// independent (threads of one process too), a slot freed when its holder
// goes and when its process dies.
TEST(HostSlots, AsManyHoldersAsSlotsAndADeadProcessFreesItsSlot) {
  TempDir dir;
  const HostSlots slots((dir.path() / "slots").string(), 2);
  std::optional<HostSlots::Held> a = slots.try_acquire();
  std::optional<HostSlots::Held> b = slots.try_acquire();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(slots.try_acquire());
  EXPECT_EQ(slots.held(), 2u);
  a.reset();
  EXPECT_EQ(slots.held(), 1u);
  b.reset();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::optional<HostSlots::Held> mine = slots.try_acquire();
    const char c = mine ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    for (;;) pause();  // killed holding it
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  close(ready[1]);
  EXPECT_EQ(c, 'y');
  EXPECT_EQ(slots.held(), 1u);
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(slots.held(), 0u);
  std::atomic<bool> stopping{true};
  EXPECT_TRUE(slots.acquire(stopping));  // free: no wait, whatever `stopping` says
}

// Two pools of one host's slot: while one compiles (its compile hangs), the
// other's request stays queued; once the first pool is gone, it compiles.
TEST_F(CompilePoolTest, PoolsOfOneHostShareItsSlots) {
  ScopedEnv hang(kHangVariable, kHangDefine);
  TempDir dir;
  CompilePoolOptions o = options(cache_, 2);
  o.host_slots_path = (dir.path() / "slots").string();
  o.host_slots = 1;
  auto first = std::make_unique<CompilePool>(o);
  CompileRequest stuck = vector_add(3);
  stuck.defines.emplace_back(kHangDefine, "1");
  first->submit(stuck);
  const HostSlots view(o.host_slots_path, 1);
  for (int i = 0; i < 2000 && view.held() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(view.held(), 1u);
  CompilePool second(o);
  std::vector<CompilePool::Ticket> waiting{second.submit(vector_add(4))};
  EXPECT_FALSE(second.take_any_for(waiting, std::chrono::milliseconds(300)));  // no slot for it
  first.reset();  // its compile killed, its slot freed
  const CompileResult r = second.take(waiting.front());
  EXPECT_TRUE(r.ok) << r.log;
}

}  // namespace
}  // namespace ktune

// The pool's default size follows the CPUs this process may run on, not the
// machine's: a process bound to one core (as Open MPI binds each of 2 or
// fewer ranks) sees one. Checked in a forked child, so that the binding does
// not outlive the test.
TEST(UsableCpus, FollowTheAffinityMask) {
  const unsigned all = ktune::usable_cpus();
  EXPECT_GE(all, 1u);
  EXPECT_LE(all, std::max(1u, std::thread::hardware_concurrency()));
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) _exit(2);
    _exit(ktune::usable_cpus() == 1 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}
