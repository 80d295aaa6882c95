// Device profile <-> JSON, schema v1. Every rejection names the JSON path of the bad value.
#include <charconv>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cachewise/model/pattern/pattern.hpp"
#include "cachewise/model/profile/profile_json.hpp"
#include "json_node.hpp"

namespace cachewise {
namespace {

using detail::describe;
using detail::Node;
using detail::type_name;
using nlohmann::json;

bool is_power_of_two(double value) {
  if (value < 1 || value != std::floor(value) || value > 9.0e15) return false;
  const auto whole = static_cast<std::uint64_t>(value);
  return (whole & (whole - 1)) == 0;
}

// ----- enums -------------------------------------------------------------------------

Confidence parse_confidence(const Node& node, std::string_view key) {
  const std::string text = node.string(key);
  if (text == "high") return Confidence::high;
  if (text == "medium") return Confidence::medium;
  if (text == "low") return Confidence::low;
  if (text == "assumed") return Confidence::assumed;
  Node::fail(node.at(key), "expected one of high, medium, low, assumed, got \"" + text + "\"");
}

ReplacementPolicy parse_policy(const Node& node, std::string_view key) {
  const std::string text = node.string(key);
  for (auto policy : {ReplacementPolicy::lru, ReplacementPolicy::plru, ReplacementPolicy::fifo,
                      ReplacementPolicy::random, ReplacementPolicy::adaptive, ReplacementPolicy::unknown}) {
    if (text == to_string(policy)) return policy;
  }
  Node::fail(node.at(key), "expected one of lru, plru, fifo, random, adaptive, unknown, got \"" + text + "\"");
}

// ----- measured values -----------------------------------------------------------------

/// A measured value's documented range (docs/profile-format.md): [min, max], (0, max] when
/// `above_zero`, or a power of two in [1, max]. The upper bounds are far past any GPU's, and
/// keep the simulator's state (a slot per cache line and way) and its times finite.
struct Range {
  double min = 0;
  double max = 0;
  bool above_zero = false;
  bool power_of_two = false;
};

constexpr Range positive(double max) { return {0, max, true, false}; }
constexpr Range from(double min, double max) { return {min, max, false, false}; }
constexpr Range power_of_two_to(double max) { return {1, max, false, true}; }

constexpr double kMaxL1Bytes = 16.0 * (1 << 20); // 16 MiB per SM
constexpr double kMaxL2Bytes = 1.0 * (1 << 30);  // 1 GiB
constexpr double kMaxLineBytes = 1024;           // lines and sectors
constexpr double kMaxWays = 65536;
constexpr double kMaxCycles = 1e6;                  // latencies and penalties
constexpr Range kBandwidthGbPerS = from(1e-3, 1e6); // 1 MB/s to 1 PB/s
constexpr double kMaxSlowdown = 1000;

/// A bound as the messages and docs write it: whole numbers in full, others as %g.
std::string bound_text(double value) {
  if (value == std::floor(value) && std::abs(value) < 1e15) return std::to_string(static_cast<std::int64_t>(value));
  std::ostringstream text;
  text << value;
  return text.str();
}

Provenance read_provenance(const Node& node) {
  Provenance provenance;
  provenance.method = node.string("method");
  provenance.samples = node.integer("samples", 0, INT64_MAX);
  provenance.spread = node.number("spread");
  if (provenance.spread < 0)
    Node::fail(node.at("spread"), "expected a relative spread >= 0, got " + describe(node.required("spread")));
  provenance.confidence = parse_confidence(node, "confidence");
  return provenance;
}

json write_provenance(const Provenance& provenance) {
  return {{"method", provenance.method},
          {"samples", provenance.samples},
          {"spread", provenance.spread},
          {"confidence", to_string(provenance.confidence)}};
}

Measured read_measured(const Node& parent, std::string_view key, Range range) {
  const Node node = parent.object(key);
  Measured measured;
  measured.value = node.number("value");
  const double value = measured.value;
  std::string interval(range.above_zero ? "(" : "[");
  interval += bound_text(range.min) + ", " + bound_text(range.max) + "]";
  const bool inside = (range.above_zero ? value > range.min : value >= range.min) && value <= range.max;
  if (range.power_of_two && !(inside && is_power_of_two(value))) {
    Node::fail(node.at("value"),
               "expected a power of two in " + interval + ", got " + describe(node.required("value")));
  }
  if (!inside)
    Node::fail(node.at("value"), "expected a value in " + interval + ", got " + describe(node.required("value")));
  measured.provenance = read_provenance(node);
  return measured;
}

std::optional<Measured> read_optional(const Node& parent, std::string_view key, Range range) {
  if (!parent.has(key)) return std::nullopt;
  return read_measured(parent, key, range);
}

json write_measured(const Measured& measured) {
  json out = write_provenance(measured.provenance);
  out["value"] = measured.value;
  return out;
}

void write_optional(json& out, std::string_view key, const std::optional<Measured>& measured) {
  if (measured) out[std::string(key)] = write_measured(*measured);
}

MeasuredFlag read_flag(const Node& parent, std::string_view key) {
  const Node node = parent.object(key);
  return {node.boolean("value"), read_provenance(node)};
}

json write_flag(const MeasuredFlag& flag) {
  json out = write_provenance(flag.provenance);
  out["value"] = flag.value;
  return out;
}

Replacement read_replacement(const Node& parent) {
  const Node node = parent.object("replacement");
  Replacement replacement;
  replacement.policy = parse_policy(node, "policy");
  replacement.fingerprint = node.string_or_empty("fingerprint");
  replacement.provenance = read_provenance(node);
  return replacement;
}

json write_replacement(const Replacement& replacement) {
  json out = write_provenance(replacement.provenance);
  out["policy"] = to_string(replacement.policy);
  out["fingerprint"] = replacement.fingerprint;
  return out;
}

// ----- sections ------------------------------------------------------------------------

constexpr std::int64_t kMaxBytes = std::int64_t{1} << 50; // 1 PiB: anything larger is a typo

DeviceIdentity read_device(const Node& node) {
  DeviceIdentity device;
  device.name = node.string("name");
  if (device.name.empty()) Node::fail(node.at("name"), "expected a non-empty device name");
  const std::string capability = node.string("compute_capability");
  int major = 0;
  int minor = 0;
  char dot = 0;
  std::istringstream capability_stream(capability);
  if (!(capability_stream >> major >> dot >> minor) || dot != '.' || !capability_stream.eof() || major <= 0 ||
      minor < 0) {
    Node::fail(node.at("compute_capability"), "expected \"MAJOR.MINOR\" such as \"9.0\", got \"" + capability + "\"");
  }
  device.compute_capability_major = major;
  device.compute_capability_minor = minor;
  device.sm_count = node.small_integer("sm_count", 1, 100000);
  device.warp_size = node.small_integer("warp_size", 1, 1024);
  device.max_threads_per_block = node.small_integer("max_threads_per_block", 1, 1 << 20);
  device.max_threads_per_sm = node.small_integer("max_threads_per_sm", 1, 1 << 20);
  device.max_blocks_per_sm = node.small_integer("max_blocks_per_sm", 1, 1 << 20);
  device.registers_per_sm = node.small_integer("registers_per_sm", 1, 1 << 24);
  device.registers_per_block = node.small_integer("registers_per_block", 1, 1 << 24);
  device.global_memory_bytes = node.integer("global_memory_bytes", 1, kMaxBytes);
  device.l2_bytes_reported = node.integer("l2_bytes_reported", 0, kMaxBytes);
  const Node clocks = node.object("clocks_observed");
  device.sm_clock_mhz_before = clocks.small_integer("sm_mhz_before", 0, 100000);
  device.sm_clock_mhz_after = clocks.small_integer("sm_mhz_after", 0, 100000);
  device.memory_clock_mhz = clocks.small_integer("memory_mhz", 0, 100000);
  device.memory_bus_width_bits = node.small_integer("memory_bus_width_bits", 0, 1 << 16);
  device.driver_version = node.string("driver_version");
  device.runtime_version = node.string("runtime_version");
  device.probed_at = node.string("probed_at");
  device.probe_command = node.string("probe_command");
  device.probe_version = node.string("probe_version");
  return device;
}

json write_device(const DeviceIdentity& device) {
  return {{"name", device.name},
          {"compute_capability",
           std::to_string(device.compute_capability_major) + "." + std::to_string(device.compute_capability_minor)},
          {"sm_count", device.sm_count},
          {"warp_size", device.warp_size},
          {"max_threads_per_block", device.max_threads_per_block},
          {"max_threads_per_sm", device.max_threads_per_sm},
          {"max_blocks_per_sm", device.max_blocks_per_sm},
          {"registers_per_sm", device.registers_per_sm},
          {"registers_per_block", device.registers_per_block},
          {"global_memory_bytes", device.global_memory_bytes},
          {"l2_bytes_reported", device.l2_bytes_reported},
          {"memory_bus_width_bits", device.memory_bus_width_bits},
          {"clocks_observed",
           {{"sm_mhz_before", device.sm_clock_mhz_before},
            {"sm_mhz_after", device.sm_clock_mhz_after},
            {"memory_mhz", device.memory_clock_mhz}}},
          {"driver_version", device.driver_version},
          {"runtime_version", device.runtime_version},
          {"probed_at", device.probed_at},
          {"probe_command", device.probe_command},
          {"probe_version", device.probe_version}};
}

void check_line_and_sector(const Node& node, const Measured& line, const Measured& sector) {
  if (std::fmod(line.value, sector.value) != 0.0) {
    Node::fail(node.at("line_bytes"),
               "expected a multiple of sector_bytes (" + describe(sector.value) + "), got " + describe(line.value));
  }
}

L1Profile read_l1(const Node& node) {
  L1Profile l1;
  l1.capacity_bytes = read_measured(node, "capacity_bytes", positive(kMaxL1Bytes));
  l1.capacity_max_carveout_bytes = read_optional(node, "capacity_max_carveout_bytes", positive(kMaxL1Bytes));
  l1.line_bytes = read_measured(node, "line_bytes", power_of_two_to(kMaxLineBytes));
  l1.sector_bytes = read_measured(node, "sector_bytes", power_of_two_to(kMaxLineBytes));
  check_line_and_sector(node, l1.line_bytes, l1.sector_bytes);
  l1.ways = read_optional(node, "ways", from(1, kMaxWays));
  l1.replacement = read_replacement(node);
  l1.hit_latency_cycles = read_measured(node, "hit_latency_cycles", positive(kMaxCycles));
  l1.read_bandwidth_gb_per_s = read_optional(node, "read_bandwidth_gb_per_s", kBandwidthGbPerS);
  l1.allocates_on_store = read_flag(node, "allocates_on_store");
  return l1;
}

json write_l1(const L1Profile& l1) {
  json out{{"capacity_bytes", write_measured(l1.capacity_bytes)},
           {"line_bytes", write_measured(l1.line_bytes)},
           {"sector_bytes", write_measured(l1.sector_bytes)},
           {"replacement", write_replacement(l1.replacement)},
           {"hit_latency_cycles", write_measured(l1.hit_latency_cycles)},
           {"allocates_on_store", write_flag(l1.allocates_on_store)}};
  write_optional(out, "capacity_max_carveout_bytes", l1.capacity_max_carveout_bytes);
  write_optional(out, "ways", l1.ways);
  write_optional(out, "read_bandwidth_gb_per_s", l1.read_bandwidth_gb_per_s);
  return out;
}

/// An array of integers in [min, max] at `key`.
std::vector<int> read_integers(const Node& node, std::string_view key, int min, int max) {
  const json& array = node.required(key);
  if (!array.is_array()) Node::fail(node.at(key), "expected an array of integers, got " + type_name(array));
  std::vector<int> values;
  for (std::size_t i = 0; i < array.size(); ++i) {
    const json& value = array[i];
    const std::string path = node.at(key) + "[" + std::to_string(i) + "]";
    if (!value.is_number_integer()) Node::fail(path, "expected an integer, got " + describe(value));
    const auto number = value.get<std::int64_t>();
    if (number < min || number > max) {
      Node::fail(path, "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                           describe(value));
    }
    values.push_back(static_cast<int>(number));
  }
  return values;
}

SmPlacement read_sm_placement(const Node& node, int partitions, int sm_count) {
  constexpr int kMaxSmId = 65535;
  SmPlacement placement;
  placement.near_partition_by_sm = read_integers(node, "near_partition_by_sm", 0, partitions - 1);
  const int sm_ids = static_cast<int>(placement.near_partition_by_sm.size());
  if (sm_ids == 0) Node::fail(node.at("near_partition_by_sm"), "expected the near partition of at least one SM");
  placement.dispatch_sm_ids = read_integers(node, "dispatch_sm_ids", 0, std::min(kMaxSmId, sm_ids - 1));
  if (static_cast<int>(placement.dispatch_sm_ids.size()) != sm_count) {
    Node::fail(node.at("dispatch_sm_ids"), "expected one SM id per SM (" + std::to_string(sm_count) + "), got " +
                                               std::to_string(placement.dispatch_sm_ids.size()));
  }
  std::vector<bool> seen(static_cast<std::size_t>(sm_ids), false);
  for (std::size_t i = 0; i < placement.dispatch_sm_ids.size(); ++i) {
    const auto id = static_cast<std::size_t>(placement.dispatch_sm_ids[i]);
    if (seen[id])
      Node::fail(node.at("dispatch_sm_ids") + "[" + std::to_string(i) + "]",
                 "SM " + std::to_string(id) + " appears twice");
    seen[id] = true;
  }
  placement.provenance = read_provenance(node);
  return placement;
}

json write_sm_placement(const SmPlacement& placement) {
  json out = write_provenance(placement.provenance);
  out["dispatch_sm_ids"] = placement.dispatch_sm_ids;
  out["near_partition_by_sm"] = placement.near_partition_by_sm;
  return out;
}

L2Profile read_l2(const Node& node, int sm_count) {
  L2Profile l2;
  l2.capacity_bytes = read_measured(node, "capacity_bytes", positive(kMaxL2Bytes));
  l2.near_capacity_bytes = read_measured(node, "near_capacity_bytes", positive(kMaxL2Bytes));
  if (l2.near_capacity_bytes.value > l2.capacity_bytes.value) {
    Node::fail(node.at("near_capacity_bytes"), "expected at most capacity_bytes (" + describe(l2.capacity_bytes.value) +
                                                   "), got " + describe(l2.near_capacity_bytes.value));
  }
  l2.partitions = node.small_integer("partitions", 1, 64);
  l2.line_bytes = read_measured(node, "line_bytes", power_of_two_to(kMaxLineBytes));
  l2.sector_bytes = read_measured(node, "sector_bytes", power_of_two_to(kMaxLineBytes));
  check_line_and_sector(node, l2.line_bytes, l2.sector_bytes);
  l2.fill_granularity_bytes = read_optional(node, "fill_granularity_bytes", power_of_two_to(kMaxLineBytes));
  l2.slice_interleave_bytes = read_optional(node, "slice_interleave_bytes", power_of_two_to(1 << 20));
  l2.ways = read_optional(node, "ways", from(1, kMaxWays));
  l2.replacement = read_replacement(node);
  l2.near_hit_latency_cycles = read_measured(node, "near_hit_latency_cycles", positive(kMaxCycles));
  l2.far_hit_latency_cycles = read_measured(node, "far_hit_latency_cycles", positive(kMaxCycles));
  l2.read_bandwidth_gb_per_s = read_optional(node, "read_bandwidth_gb_per_s", kBandwidthGbPerS);
  l2.write_bandwidth_gb_per_s = read_optional(node, "write_bandwidth_gb_per_s", kBandwidthGbPerS);
  l2.sparse_line_write_slowdown = read_optional(node, "sparse_line_write_slowdown", positive(kMaxSlowdown));
  if (node.has("sm_placement"))
    l2.sm_placement = read_sm_placement(node.object("sm_placement"), l2.partitions, sm_count);
  l2.allocates_on_store = read_flag(node, "allocates_on_store");
  return l2;
}

json write_l2(const L2Profile& l2) {
  json out{{"capacity_bytes", write_measured(l2.capacity_bytes)},
           {"near_capacity_bytes", write_measured(l2.near_capacity_bytes)},
           {"partitions", l2.partitions},
           {"line_bytes", write_measured(l2.line_bytes)},
           {"sector_bytes", write_measured(l2.sector_bytes)},
           {"replacement", write_replacement(l2.replacement)},
           {"near_hit_latency_cycles", write_measured(l2.near_hit_latency_cycles)},
           {"far_hit_latency_cycles", write_measured(l2.far_hit_latency_cycles)},
           {"allocates_on_store", write_flag(l2.allocates_on_store)}};
  write_optional(out, "fill_granularity_bytes", l2.fill_granularity_bytes);
  write_optional(out, "slice_interleave_bytes", l2.slice_interleave_bytes);
  write_optional(out, "ways", l2.ways);
  write_optional(out, "read_bandwidth_gb_per_s", l2.read_bandwidth_gb_per_s);
  write_optional(out, "write_bandwidth_gb_per_s", l2.write_bandwidth_gb_per_s);
  write_optional(out, "sparse_line_write_slowdown", l2.sparse_line_write_slowdown);
  if (l2.sm_placement) out["sm_placement"] = write_sm_placement(*l2.sm_placement);
  return out;
}

/// {"2": Measured, "4": Measured, ...}: keys are integers in [2, max_key] (store bursts, rounds).
std::map<std::int64_t, Measured> read_slowdowns(const Node& parent, std::string_view key, std::string_view what,
                                                std::int64_t max_key) {
  std::map<std::int64_t, Measured> slowdowns;
  if (!parent.has(key)) return slowdowns;
  const Node node = parent.object(key);
  for (const auto& [burst_text, value] : node.raw().items()) {
    std::int64_t burst = 0;
    const auto [end, error] = std::from_chars(burst_text.data(), burst_text.data() + burst_text.size(), burst);
    if (error != std::errc() || end != burst_text.data() + burst_text.size() || burst < 2 || burst > max_key) {
      Node::fail(node.at(burst_text),
                 "expected " + std::string(what) + " as the key, an integer in [2, " + std::to_string(max_key) + "]");
    }
    slowdowns[burst] = read_measured(node, burst_text, positive(kMaxSlowdown));
  }
  return slowdowns;
}

DramProfile read_dram(const Node& node) {
  DramProfile dram;
  dram.latency_cycles = read_measured(node, "latency_cycles", positive(kMaxCycles));
  dram.read_bandwidth_gb_per_s = read_measured(node, "read_bandwidth_gb_per_s", kBandwidthGbPerS);
  dram.write_bandwidth_gb_per_s = read_measured(node, "write_bandwidth_gb_per_s", kBandwidthGbPerS);
  dram.copy_bandwidth_gb_per_s = read_optional(node, "copy_bandwidth_gb_per_s", kBandwidthGbPerS);
  dram.fetch_granularity_bytes = read_optional(node, "fetch_granularity_bytes", power_of_two_to(kMaxLineBytes));
  dram.store_burst_slowdown = read_slowdowns(node, "store_burst_slowdown", "a store burst", kMaxLoadsInFlight);
  dram.block_walk_slowdown = read_slowdowns(node, "block_walk_slowdown", "rounds per block", kMaxBlockWalkRounds);
  dram.spread_write_slowdown = read_slowdowns(node, "spread_write_slowdown", "run bytes", kMaxSpreadRunBytes);
  return dram;
}

json write_dram(const DramProfile& dram) {
  json out{{"latency_cycles", write_measured(dram.latency_cycles)},
           {"read_bandwidth_gb_per_s", write_measured(dram.read_bandwidth_gb_per_s)},
           {"write_bandwidth_gb_per_s", write_measured(dram.write_bandwidth_gb_per_s)}};
  write_optional(out, "copy_bandwidth_gb_per_s", dram.copy_bandwidth_gb_per_s);
  write_optional(out, "fetch_granularity_bytes", dram.fetch_granularity_bytes);
  for (const auto& [burst, slowdown] : dram.store_burst_slowdown) {
    out["store_burst_slowdown"][std::to_string(burst)] = write_measured(slowdown);
  }
  for (const auto& [rounds, slowdown] : dram.block_walk_slowdown) {
    out["block_walk_slowdown"][std::to_string(rounds)] = write_measured(slowdown);
  }
  for (const auto& [run_bytes, slowdown] : dram.spread_write_slowdown) {
    out["spread_write_slowdown"][std::to_string(run_bytes)] = write_measured(slowdown);
  }
  return out;
}

SharedMemoryProfile read_shared(const Node& node) {
  SharedMemoryProfile shared;
  shared.banks = read_measured(node, "banks", power_of_two_to(1024));
  shared.bank_width_bytes = read_measured(node, "bank_width_bytes", power_of_two_to(64));
  shared.extra_wavefront_cycles = read_optional(node, "extra_wavefront_cycles", from(0, kMaxCycles));
  shared.per_sm_bytes = node.integer("per_sm_bytes", 1, kMaxBytes);
  shared.per_block_optin_bytes = node.integer("per_block_optin_bytes", 1, kMaxBytes);
  if (shared.per_block_optin_bytes > shared.per_sm_bytes) {
    Node::fail(node.at("per_block_optin_bytes"), "expected at most per_sm_bytes (" +
                                                     std::to_string(shared.per_sm_bytes) + "), got " +
                                                     std::to_string(shared.per_block_optin_bytes));
  }
  return shared;
}

json write_shared(const SharedMemoryProfile& shared) {
  json out{{"banks", write_measured(shared.banks)},
           {"bank_width_bytes", write_measured(shared.bank_width_bytes)},
           {"per_sm_bytes", shared.per_sm_bytes},
           {"per_block_optin_bytes", shared.per_block_optin_bytes}};
  write_optional(out, "extra_wavefront_cycles", shared.extra_wavefront_cycles);
  return out;
}

TlbProfile read_tlb(const Node& node) {
  TlbProfile tlb;
  tlb.page_bytes = read_optional(node, "page_bytes", power_of_two_to(std::ldexp(1.0, 40)));
  tlb.reach_bytes = read_optional(node, "reach_bytes", positive(std::ldexp(1.0, 60)));
  tlb.entries = read_optional(node, "entries", from(1, std::ldexp(1.0, 32)));
  tlb.miss_penalty_cycles = read_optional(node, "miss_penalty_cycles", from(0, kMaxCycles));
  return tlb;
}

json write_tlb(const TlbProfile& tlb) {
  json out = json::object();
  write_optional(out, "page_bytes", tlb.page_bytes);
  write_optional(out, "reach_bytes", tlb.reach_bytes);
  write_optional(out, "entries", tlb.entries);
  write_optional(out, "miss_penalty_cycles", tlb.miss_penalty_cycles);
  return out;
}

std::vector<Curve> read_curves(const Node& root) {
  std::vector<Curve> curves;
  if (!root.has("curves")) return curves;
  const json& array = root.required("curves");
  if (!array.is_array()) Node::fail(root.at("curves"), "expected an array, got " + type_name(array));
  for (std::size_t i = 0; i < array.size(); ++i) {
    const Node node(array[i], root.at("curves") + "[" + std::to_string(i) + "]");
    Curve curve;
    curve.name = node.string("name");
    curve.x_unit = node.string("x_unit");
    curve.y_unit = node.string("y_unit");
    const json& points = node.required("points");
    if (!points.is_array()) Node::fail(node.at("points"), "expected an array of [x, y] pairs");
    for (std::size_t p = 0; p < points.size(); ++p) {
      const json& point = points[p];
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number()) {
        Node::fail(node.at("points") + "[" + std::to_string(p) + "]",
                   "expected an [x, y] pair of numbers, got " + describe(point));
      }
      curve.points.emplace_back(point[0].get<double>(), point[1].get<double>());
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

json write_curves(const std::vector<Curve>& curves) {
  json out = json::array();
  for (const Curve& curve : curves) {
    json points = json::array();
    for (const auto& [x, y] : curve.points) points.push_back({x, y});
    out.push_back({{"name", curve.name}, {"x_unit", curve.x_unit}, {"y_unit", curve.y_unit}, {"points", points}});
  }
  return out;
}

} // namespace

std::string to_string(Confidence confidence) {
  switch (confidence) {
  case Confidence::high: return "high";
  case Confidence::medium: return "medium";
  case Confidence::low: return "low";
  case Confidence::assumed: return "assumed";
  }
  return "unknown";
}

std::string to_string(ReplacementPolicy policy) {
  switch (policy) {
  case ReplacementPolicy::lru: return "lru";
  case ReplacementPolicy::plru: return "plru";
  case ReplacementPolicy::fifo: return "fifo";
  case ReplacementPolicy::random: return "random";
  case ReplacementPolicy::adaptive: return "adaptive";
  case ReplacementPolicy::unknown: return "unknown";
  }
  return "unknown";
}

DeviceProfile profile_from_json(const json& document) {
  const Node root(document, "profile");
  const json& version = root.required("schema_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kProfileSchemaVersion) {
    Node::fail(root.at("schema_version"), "unsupported schema version " + describe(version) + " (this build reads " +
                                              std::to_string(kProfileSchemaVersion) + ")");
  }
  DeviceProfile profile;
  profile.device = read_device(root.object("device"));
  profile.l1 = read_l1(root.object("l1"));
  profile.l2 = read_l2(root.object("l2"), profile.device.sm_count);
  if (profile.l1.capacity_bytes.value >= profile.l2.capacity_bytes.value) {
    Node::fail(root.at("l1.capacity_bytes"), "expected less than l2.capacity_bytes");
  }
  profile.dram = read_dram(root.object("dram"));
  profile.shared_memory = read_shared(root.object("shared_memory"));
  if (root.has("tlb")) profile.tlb = read_tlb(root.object("tlb"));
  profile.curves = read_curves(root);
  if (root.has("calibration"))
    profile.calibration = calibration_from_json(root.required("calibration"), root.at("calibration"));
  return profile;
}

json profile_to_json(const DeviceProfile& profile) {
  json out{{"schema_version", profile.schema_version},
           {"device", write_device(profile.device)},
           {"l1", write_l1(profile.l1)},
           {"l2", write_l2(profile.l2)},
           {"dram", write_dram(profile.dram)},
           {"shared_memory", write_shared(profile.shared_memory)},
           {"tlb", write_tlb(profile.tlb)}};
  if (!profile.curves.empty()) out["curves"] = write_curves(profile.curves);
  if (profile.calibration != default_calibration()) out["calibration"] = calibration_to_json(profile.calibration);
  return out;
}

} // namespace cachewise
