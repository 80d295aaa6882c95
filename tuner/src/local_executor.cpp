// Evaluation rounds on this host: each in a child process pinned to one GPU, as many at once
// as there are GPUs; contender rounds on the first GPU only.
#include <cmath>
#include <deque>
#include <map>

#include <nlohmann/json.hpp>

#include "cachewise/model/errors.hpp"
#include "cachewise/tuner/execution.hpp"
#include "cachewise/tuner/isolation.hpp"
#include "cachewise/tuner/statistics.hpp"

namespace cachewise::tuner {
namespace {

RoundRecord failed(const Config& config, int round, std::string failure) {
  return {config, round, false, std::move(failure), {}, false, {}};
}

RoundRecord measure_round(const Measure& measure, const Config& config, int round, const MeasurementPolicy& policy) {
  RoundRecord record{config, round, true, {}, {}, false, {}};
  std::int64_t iteration = 0;
  for (int i = 0; i < policy.warmup_runs; ++i) measure(config, iteration++);
  while (static_cast<int>(record.samples_ms.size()) < policy.max_repeats) {
    const double sample_ms = measure(config, iteration++);
    if (!std::isfinite(sample_ms) || sample_ms <= 0.0) {
      return failed(config, round, "returned a non-positive or non-finite time (" + std::to_string(sample_ms) + ")");
    }
    record.samples_ms.push_back(sample_ms);
    if (static_cast<int>(record.samples_ms.size()) >= policy.min_repeats &&
        estimate_median(record.samples_ms, policy.confidence).ci_width_fraction() <= policy.max_ci_width_fraction) {
      record.converged = true;
      break;
    }
  }
  return record;
}

/// The child's work: pin, measure, report the record as JSON.
std::function<std::string()> round_work(const Measure& measure, const Config& config, int round, const Options& options,
                                        const MeasuringDevice& device) {
  return [&measure, config, round, &options, device] {
    pin_to_device(device);
    return round_to_json(measure_round(measure, config, round, options.measurement)).dump();
  };
}

RoundRecord record_from(const ChildOutcome& outcome, const Config& config, int round, const MeasuringDevice& device) {
  RoundRecord record =
      outcome.ok ? round_from_json(nlohmann::json::parse(outcome.output)) : failed(config, round, outcome.failure);
  record.device = device;
  return record;
}

class LocalExecutor final : public RoundExecutor {
public:
  LocalExecutor(Measure measure, Options options) : measure_(std::move(measure)), options_(std::move(options)) {
    for (const MeasuringDevice& device : options_.devices) {
      if (device.name != options_.devices.front().name) {
        throw InputError("tuner: devices of different models (" + options_.devices.front().name + ", " + device.name +
                         ") in one run: tune each model on its own (group_by_model)");
      }
    }
    if (options_.devices.size() > 1 && options_.isolation == Isolation::in_process) {
      throw InputError("tuner: several devices need child-process isolation");
    }
  }

  std::string model() const override {
    return options_.devices.empty() ? std::string() : options_.devices.front().name;
  }

  void run(const std::vector<RoundRequest>& requests, bool referee,
           const std::function<void(std::size_t, RoundRecord)>& done) override {
    std::vector<MeasuringDevice> devices =
        options_.devices.empty() ? std::vector<MeasuringDevice>{{}} : options_.devices;
    if (referee) devices.resize(1);
    if (options_.isolation == Isolation::in_process) {
      for (std::size_t i = 0; i < requests.size(); ++i) {
        done(i, evaluate_round(measure_, requests[i].config, requests[i].round, options_, devices.front()));
      }
      return;
    }
    ChildProcesses children;
    std::map<std::uint64_t, std::pair<std::size_t, MeasuringDevice>> running; // ticket -> request, device
    std::deque<MeasuringDevice> idle(devices.begin(), devices.end());
    std::size_t next = 0;
    while (next < requests.size() || !running.empty()) {
      while (next < requests.size() && !idle.empty()) {
        const RoundRequest& request = requests[next];
        const std::uint64_t ticket = children.start(
            round_work(measure_, request.config, request.round, options_, idle.front()), options_.candidate_timeout);
        running[ticket] = {next++, idle.front()};
        idle.pop_front();
      }
      const auto [ticket, outcome] = children.wait_any();
      const auto [index, device] = running.at(ticket);
      running.erase(ticket);
      idle.push_back(device);
      done(index, record_from(outcome, requests[index].config, requests[index].round, device));
    }
  }

private:
  Measure measure_;
  Options options_;
};

} // namespace

RoundRecord evaluate_round(const Measure& measure, const Config& config, int round, const Options& options,
                           const MeasuringDevice& device) {
  if (options.isolation == Isolation::in_process) {
    RoundRecord record;
    try {
      record = measure_round(measure, config, round, options.measurement);
    } catch (const std::exception& e) {
      record = failed(config, round, std::string("threw: ") + e.what());
    }
    record.device = device;
    return record;
  }
  return record_from(
      run_in_child_process(round_work(measure, config, round, options, device), options.candidate_timeout), config,
      round, device);
}

std::unique_ptr<RoundExecutor> local_executor(Measure measure, Options options) {
  return std::make_unique<LocalExecutor>(std::move(measure), std::move(options));
}

} // namespace cachewise::tuner
