// Tuning over MPI ranks: rank 0's Tuner hands rounds to the ranks that ask for work; each
// message is JSON text. Worker -> 0 (kTagAsk): {"tune", "device"} when it arrives, then
// {"tune", "id", "record"} per round, each also asking for the next. 0 -> worker: kTagWork
// {"tune", "id", "config", "round"}, or kTagEnd {"tune"} when the run is over; the worker
// answers kTagBye {"tune"}, and rank 0, once every living rank has (a rank that does not is
// dead, even one that died idle), sends kTagFinal {"tune", "rank_died"}: whether MPI_Finalize
// may wait for every rank.
// Rank 0 never blocks in MPI: it polls (MPI_Iprobe), so a dead rank is noticed by its silence.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/mpi.hpp"

namespace cachewise::tuner::mpi {
namespace {

constexpr int kTagAsk = 1;
constexpr int kTagWork = 2;
constexpr int kTagEnd = 3;
constexpr int kTagBye = 4;
constexpr int kTagFinal = 5;
constexpr int kDeviceSlotBytes = 1024; ///< one rank's device JSON in the start-up allgather
/// Beyond the candidate timeout (after which a live rank's child is killed and it answers),
/// what a rank may take to fork, report and send before it is taken for dead.
constexpr std::chrono::seconds kGrace{3};

using Clock = std::chrono::steady_clock;

struct Message {
  int source = 0;
  int tag = 0;
  nlohmann::json json;
};

void send_json(int to, int tag, const nlohmann::json& json) {
  const std::string text = json.dump();
  if (MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD) != MPI_SUCCESS) {
    throw std::runtime_error("MPI_Send to rank " + std::to_string(to) + " failed");
  }
}

std::optional<Message> poll_message(int source) {
  int arrived = 0;
  MPI_Status status;
  if (MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &arrived, &status) != MPI_SUCCESS || !arrived)
    return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_CHAR, &count);
  std::string text(static_cast<std::size_t>(count), '\0');
  MPI_Recv(text.data(), count, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return Message{status.MPI_SOURCE, status.MPI_TAG, nlohmann::json::parse(text)};
}

void pause_briefly() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

/// How long a rank may take over one round before it is taken for dead.
std::chrono::milliseconds round_limit(const Options& options) { return options.candidate_timeout + kGrace; }

/// Rank 0's executor: rounds go to idle ranks as they ask; contender rounds to the referee
/// (the lowest living rank) only.
class MpiExecutor final : public RoundExecutor {
public:
  MpiExecutor(Session& session, const Options& options, int tune)
      : session_(session),
        limit_(round_limit(options)),
        silence_limit_(limit_ * 2 + std::chrono::seconds(60)),
        tune_(tune) {}

  std::string model() const override { return session_.device().name; }

  void run(const std::vector<RoundRequest>& requests, bool referee,
           const std::function<void(std::size_t, RoundRecord)>& done) override {
    std::deque<std::size_t> pending;
    for (std::size_t i = 0; i < requests.size(); ++i) pending.push_back(i);
    std::size_t finished = 0;
    auto last_news = Clock::now();
    while (finished < requests.size()) {
      hand_out(requests, pending, referee);
      if (std::optional<Message> message = poll_message(MPI_ANY_SOURCE)) {
        last_news = Clock::now();
        if (receive(*message, requests, done)) ++finished;
        continue;
      }
      declare_silent_ranks_dead(pending);
      if (busy_.empty() && idle_.empty() && Clock::now() - last_news > silence_limit_) {
        throw std::runtime_error(
            "tune --mpi: no rank has asked for work for " +
            std::to_string(std::chrono::duration_cast<std::chrono::seconds>(silence_limit_).count()) + " s");
      }
      pause_briefly();
    }
  }

  /// Ends the run on every living rank; a rank that does not say goodbye in time is dead.
  void end() {
    std::set<int> waiting;
    for (int rank = 1; rank < session_.size(); ++rank) {
      if (session_.dead_ranks()[static_cast<std::size_t>(rank)]) continue;
      send_json(rank, kTagEnd, {{"tune", tune_}});
      waiting.insert(rank);
    }
    const auto deadline = Clock::now() + limit_;
    while (!waiting.empty() && Clock::now() < deadline) {
      if (std::optional<Message> message = poll_message(MPI_ANY_SOURCE)) {
        if (message->tag == kTagBye && message->json.value("tune", -1) == tune_) waiting.erase(message->source);
        continue; // anything else is late news of this run
      }
      pause_briefly();
    }
    for (const int rank : waiting) {
      std::cerr << "tune --mpi: rank " << rank << " did not answer the end of the run; taken for dead\n";
      session_.dead_ranks()[static_cast<std::size_t>(rank)] = true;
      session_.rank_died() = true;
    }
    for (int rank = 1; rank < session_.size(); ++rank) {
      if (!session_.dead_ranks()[static_cast<std::size_t>(rank)]) {
        send_json(rank, kTagFinal, {{"tune", tune_}, {"rank_died", session_.rank_died()}});
      }
    }
  }

private:
  struct InFlight {
    std::size_t request = 0;
    std::uint64_t id = 0;
    Clock::time_point deadline;
  };

  int referee() const {
    for (int rank = 1; rank < session_.size(); ++rank) {
      if (!session_.dead_ranks()[static_cast<std::size_t>(rank)]) return rank;
    }
    throw std::runtime_error("tune --mpi: every measuring rank has died");
  }

  void hand_out(const std::vector<RoundRequest>& requests, std::deque<std::size_t>& pending, bool referee_only) {
    while (!pending.empty()) {
      int rank = -1;
      if (referee_only) {
        const auto idle = std::ranges::find(idle_, referee());
        if (idle == idle_.end()) return;
        rank = *idle;
        idle_.erase(idle);
      } else {
        if (idle_.empty()) return;
        rank = idle_.front();
        idle_.pop_front();
      }
      const std::size_t request = pending.front();
      pending.pop_front();
      const std::uint64_t id = next_id_++;
      send_json(rank, kTagWork,
                {{"tune", tune_},
                 {"id", id},
                 {"config", requests[request].config.to_string()},
                 {"round", requests[request].round}});
      busy_[rank] = {request, id, Clock::now() + limit_};
    }
  }

  /// True when the message finished one of this run's requests.
  bool receive(const Message& message, const std::vector<RoundRequest>& requests,
               const std::function<void(std::size_t, RoundRecord)>& done) {
    const auto rank = static_cast<std::size_t>(message.source);
    if (message.tag != kTagAsk || session_.dead_ranks()[rank] || message.json.value("tune", -1) != tune_)
      return false; // late news
    bool finished_one = false;
    if (message.json.contains("record")) {
      const auto busy = busy_.find(message.source);
      if (busy != busy_.end() && busy->second.id == message.json.at("id").get<std::uint64_t>()) {
        RoundRecord record = round_from_json(message.json.at("record"));
        record.config = requests[busy->second.request].config;
        const std::size_t request = busy->second.request;
        busy_.erase(busy);
        done(request, std::move(record));
        finished_one = true;
      }
    }
    idle_.push_back(message.source);
    return finished_one;
  }

  void declare_silent_ranks_dead(std::deque<std::size_t>& pending) {
    const auto now = Clock::now();
    for (auto it = busy_.begin(); it != busy_.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      std::cerr << "tune --mpi: rank " << it->first << " is silent past " << limit_.count()
                << " ms; taken for dead, its candidate is handed out again\n";
      session_.dead_ranks()[static_cast<std::size_t>(it->first)] = true;
      session_.rank_died() = true;
      pending.push_front(it->second.request);
      it = busy_.erase(it);
    }
  }

  Session& session_;
  std::chrono::milliseconds limit_;
  std::chrono::milliseconds silence_limit_;
  int tune_;
  std::deque<int> idle_;
  std::map<int, InFlight> busy_;
  std::uint64_t next_id_ = 0;
};

/// A measuring rank: ask, measure what rank 0 sends (in a child process, on this rank's GPU),
/// answer, until rank 0 ends the run.
void serve(const Tuner& tuner, Session& session, int tune) {
  const Options& options = tuner.options();
  // Rank 0 may keep an idle rank waiting while the contenders run one by one on the referee.
  const auto silence_limit =
      round_limit(options) * (options.measurement.max_contenders + 2) + std::chrono::seconds(120);
  send_json(0, kTagAsk, {{"tune", tune}, {"device", device_to_json(session.device())}});
  auto last_news = Clock::now();
  while (true) {
    std::optional<Message> message = poll_message(0);
    if (!message) {
      if (Clock::now() - last_news > silence_limit)
        throw std::runtime_error("tune --mpi: rank 0 has been silent too long");
      pause_briefly();
      continue;
    }
    last_news = Clock::now();
    if (message->json.value("tune", -1) != tune) continue;
    if (message->tag == kTagEnd) {
      send_json(0, kTagBye, {{"tune", tune}});
      continue;
    }
    if (message->tag == kTagFinal) {
      session.rank_died() = message->json.value("rank_died", false);
      return;
    }
    const Config config = Config::parse(message->json.at("config").get<std::string>());
    const RoundRecord record =
        evaluate_round(tuner.measure(), config, message->json.at("round").get<int>(), options, session.device());
    send_json(0, kTagAsk, {{"tune", tune}, {"id", message->json.at("id")}, {"record", round_to_json(record)}});
  }
}

std::vector<MeasuringDevice> gather_devices(const MeasuringDevice& mine, int size) {
  std::string slot = device_to_json(mine).dump();
  slot.resize(kDeviceSlotBytes, '\0');
  std::vector<char> all(static_cast<std::size_t>(kDeviceSlotBytes) * static_cast<std::size_t>(size));
  MPI_Allgather(slot.data(), kDeviceSlotBytes, MPI_CHAR, all.data(), kDeviceSlotBytes, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<MeasuringDevice> devices;
  for (int rank = 0; rank < size; ++rank) {
    const char* text = all.data() + static_cast<std::size_t>(rank) * kDeviceSlotBytes;
    devices.push_back(device_from_json(nlohmann::json::parse(std::string(text, ::strnlen(text, kDeviceSlotBytes)))));
  }
  return devices;
}

/// Why these ranks cannot tune together, or empty.
std::string device_problem(const std::vector<MeasuringDevice>& devices) {
  for (std::size_t rank = 1; rank < devices.size(); ++rank) {
    if (devices[rank].name.empty())
      return "tune --mpi: rank " + std::to_string(rank) + " on " + devices[rank].host + " has no GPU";
    if (devices[rank].name != devices[1].name) {
      return "tune --mpi: rank " + std::to_string(rank) + " measures on a " + devices[rank].name + ", rank 1 on a " +
             devices[1].name + ": one GPU model per run (tune each model with its own mpirun)";
    }
  }
  return {};
}

} // namespace

bool built_with_mpi() { return true; }

Session::Session(const std::vector<MeasuringDevice>& host_devices) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (size_ < 2) {
    MPI_Finalize();
    throw InputError("tune --mpi: needs at least 2 ranks (rank 0 plans, the others measure); got 1");
  }
  MPI_Comm host_ranks;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host_ranks);
  int local_rank = 0;
  MPI_Comm_rank(host_ranks, &local_rank);
  MPI_Comm_free(&host_ranks);
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_length = 0;
  MPI_Get_processor_name(host, &host_length);

  MeasuringDevice mine;
  if (!host_devices.empty()) mine = host_devices[static_cast<std::size_t>(local_rank) % host_devices.size()];
  mine.host = std::string(host, static_cast<std::size_t>(host_length));
  mine.rank = rank_;
  const std::vector<MeasuringDevice> devices = gather_devices(mine, size_);
  if (const std::string problem = device_problem(devices); !problem.empty()) {
    MPI_Finalize();
    if (rank_ != 0) std::exit(2); // every rank found the same problem; rank 0 tells it, once
    throw InputError(problem);
  }
  device_ = rank_ == 0 ? devices[1] : mine;
  dead_.assign(static_cast<std::size_t>(size_), false);
}

Session::~Session() {
  if (rank_died_) {
    // Open MPI's MPI_Finalize waits for every rank, the dead one too: leave without it
    // (mpirun --enable-recovery then ends the job with this exit code).
    std::fflush(nullptr);
    ::_exit(std::uncaught_exceptions() > 0 ? 1 : 0);
  }
  MPI_Finalize();
}

void Session::abort(int code) {
  std::fflush(nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::optional<TuningResult> tune(Tuner& tuner, Session& session) {
  const int number = session.next_tune();
  if (!session.coordinator()) {
    serve(tuner, session, number);
    return std::nullopt;
  }
  auto executor = std::make_shared<MpiExecutor>(session, tuner.options(), number);
  tuner.set_executor(executor);
  TuningResult result = tuner.tune();
  executor->end();
  return result;
}

} // namespace cachewise::tuner::mpi
