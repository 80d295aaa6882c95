// `advisor show [PROFILE] [--json]`: a readable summary of a device profile.
#include <algorithm>
#include <array>
#include <memory>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cachewise/advisor/units.hpp"
#include "command.hpp"
#include "common.hpp"

namespace cachewise::cli {
namespace {

std::string bytes_text(double bytes) { return advisor::bytes_text(bytes); }

std::string number_text(double value, int precision = 0) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(precision) << value;
  return out.str();
}

/// One section: quantity, value with its unit, and the probe's confidence; with --verbose each
/// measured row is followed by its samples, spread and method.
class Table {
public:
  explicit Table(bool verbose) : verbose_(verbose) {}

  void row(const std::string& quantity, const std::string& value, const Provenance* provenance = nullptr) {
    Row row{quantity, value, provenance ? std::string(to_string(provenance->confidence)) : std::string(), {}};
    if (provenance != nullptr && verbose_) {
      std::ostringstream out;
      if (provenance->samples > 0) out << "n=" << provenance->samples;
      if (provenance->spread > 0)
        out << (out.tellp() > 0 ? ", " : "") << "spread " << number_text(provenance->spread * 100, 1) << "%";
      if (!provenance->method.empty()) out << (out.tellp() > 0 ? "; " : "") << provenance->method;
      row.method = out.str();
    }
    rows_.push_back(std::move(row));
  }
  void measured(const std::string& quantity, const Measured& value, const std::string& text) {
    row(quantity, text, &value.provenance);
  }
  /// A row for a value the profile may lack: none when absent.
  void optional(const std::string& quantity, const std::optional<Measured>& value, const std::string& unit,
                int precision = 0) {
    if (value) measured(quantity, *value, number_text(value->value, precision) + unit);
  }
  void print(std::ostream& out) const {
    std::size_t quantity_width = 0;
    std::size_t value_width = 0;
    for (const Row& row : rows_) {
      quantity_width = std::max(quantity_width, row.quantity.size());
      value_width = std::max(value_width, row.value.size());
    }
    for (const Row& row : rows_) {
      out << "  " << std::left << std::setw(static_cast<int>(quantity_width)) << row.quantity << "  ";
      if (row.confidence.empty()) {
        out << row.value << '\n';
      } else {
        out << std::setw(static_cast<int>(value_width)) << row.value << "  " << row.confidence << '\n';
      }
      if (!row.method.empty()) out << "      " << row.method << '\n';
    }
  }

private:
  struct Row {
    std::string quantity;
    std::string value;
    std::string confidence; ///< empty for values the driver reports
    std::string method;
  };
  bool verbose_;
  std::vector<Row> rows_;
};

/// Latencies in SM cycles, and in ns at the clock the probe observed.
struct Cycles {
  int clock_mhz = 0;
  std::string text(double cycles) const {
    std::string text = number_text(cycles, 1) + " cycles";
    if (clock_mhz > 0) text += " (" + number_text(cycles * 1000.0 / clock_mhz, 1) + " ns)";
    return text;
  }
};

Table l1_table(const DeviceProfile& profile, const Cycles& cycles, bool verbose) {
  Table l1(verbose);
  l1.measured("capacity", profile.l1.capacity_bytes, bytes_text(profile.l1.capacity_bytes.value));
  if (profile.l1.capacity_max_carveout_bytes) {
    l1.measured("capacity (max carveout)", *profile.l1.capacity_max_carveout_bytes,
                bytes_text(profile.l1.capacity_max_carveout_bytes->value));
  }
  l1.measured("line / sector", profile.l1.line_bytes,
              number_text(profile.l1.line_bytes.value) + " B / " + number_text(profile.l1.sector_bytes.value) + " B");
  l1.optional("ways", profile.l1.ways, "");
  l1.row("replacement", to_string(profile.l1.replacement.policy), &profile.l1.replacement.provenance);
  l1.measured("hit latency", profile.l1.hit_latency_cycles, cycles.text(profile.l1.hit_latency_cycles.value));
  l1.optional("read bandwidth", profile.l1.read_bandwidth_gb_per_s, " GB/s");
  l1.row("allocates on store", profile.l1.allocates_on_store.value ? "yes" : "no",
         &profile.l1.allocates_on_store.provenance);
  return l1;
}

Table l2_table(const DeviceProfile& profile, const Cycles& cycles, bool verbose) {
  Table l2(verbose);
  l2.measured("capacity", profile.l2.capacity_bytes, bytes_text(profile.l2.capacity_bytes.value));
  l2.measured("near partition capacity", profile.l2.near_capacity_bytes,
              bytes_text(profile.l2.near_capacity_bytes.value) + " of " + std::to_string(profile.l2.partitions) +
                  " partitions");
  l2.measured("line / sector", profile.l2.line_bytes,
              number_text(profile.l2.line_bytes.value) + " B / " + number_text(profile.l2.sector_bytes.value) + " B");
  l2.optional("fill granularity", profile.l2.fill_granularity_bytes, " B");
  l2.optional("slice interleave", profile.l2.slice_interleave_bytes, " B");
  l2.optional("ways", profile.l2.ways, "");
  l2.row("replacement", to_string(profile.l2.replacement.policy), &profile.l2.replacement.provenance);
  l2.measured("near hit latency", profile.l2.near_hit_latency_cycles,
              cycles.text(profile.l2.near_hit_latency_cycles.value));
  l2.measured("far hit latency", profile.l2.far_hit_latency_cycles,
              cycles.text(profile.l2.far_hit_latency_cycles.value));
  l2.optional("read bandwidth", profile.l2.read_bandwidth_gb_per_s, " GB/s");
  l2.optional("write bandwidth", profile.l2.write_bandwidth_gb_per_s, " GB/s");
  if (profile.l2.sparse_line_write_slowdown) {
    l2.measured("one sector per line written", *profile.l2.sparse_line_write_slowdown,
                "x" + number_text(profile.l2.sparse_line_write_slowdown->value, 3) + " of whole lines, per sector");
  }
  if (profile.l2.sm_placement) {
    // Per SM of partition 1, and how often a wave's neighbouring blocks share a near partition.
    const SmPlacement& placement = *profile.l2.sm_placement;
    const int same = neighbours_sharing_a_partition(placement);
    const auto far = std::ranges::count(placement.near_partition_by_sm, 1);
    l2.row("SMs near partition 0 / 1",
           std::to_string(placement.near_partition_by_sm.size() - static_cast<std::size_t>(far)) + " / " +
               std::to_string(far),
           &placement.provenance);
    l2.row("neighbours on one partition",
           std::to_string(same) + " of " + std::to_string(placement.dispatch_sm_ids.size() - 1) + " consecutive blocks",
           &placement.provenance);
  }
  l2.row("allocates on store", profile.l2.allocates_on_store.value ? "yes" : "no",
         &profile.l2.allocates_on_store.provenance);
  return l2;
}

Table dram_table(const DeviceProfile& profile, const Cycles& cycles, bool verbose) {
  Table dram(verbose);
  dram.measured("latency", profile.dram.latency_cycles, cycles.text(profile.dram.latency_cycles.value));
  dram.measured("read bandwidth", profile.dram.read_bandwidth_gb_per_s,
                number_text(profile.dram.read_bandwidth_gb_per_s.value) + " GB/s");
  dram.measured("write bandwidth", profile.dram.write_bandwidth_gb_per_s,
                number_text(profile.dram.write_bandwidth_gb_per_s.value) + " GB/s");
  dram.optional("copy bandwidth", profile.dram.copy_bandwidth_gb_per_s, " GB/s");
  dram.optional("fetch granularity", profile.dram.fetch_granularity_bytes, " B");
  for (const auto& [burst, slowdown] : profile.dram.store_burst_slowdown) {
    dram.measured("copy time, " + std::to_string(burst) + " stores per burst", slowdown,
                  "x" + number_text(slowdown.value, 3) + " of 1 per thread");
  }
  for (const auto& [rounds, slowdown] : profile.dram.block_walk_slowdown) {
    dram.measured("copy time, " + std::to_string(rounds) + " rounds per thread", slowdown,
                  "x" + number_text(slowdown.value, 3) + " of 1 per thread");
  }
  for (const auto& [run_bytes, slowdown] : profile.dram.spread_write_slowdown) {
    dram.measured("spread writes, " + std::to_string(run_bytes) + " B runs", slowdown,
                  "x" + number_text(slowdown.value, 3) + " of the same tiles");
  }
  dram.row("capacity", bytes_text(static_cast<double>(profile.device.global_memory_bytes)));
  return dram;
}

Table shared_table(const DeviceProfile& profile, const Cycles& cycles, bool verbose) {
  Table shared(verbose);
  shared.measured("banks x width", profile.shared_memory.banks,
                  number_text(profile.shared_memory.banks.value) + " x " +
                      number_text(profile.shared_memory.bank_width_bytes.value) + " B");
  if (profile.shared_memory.extra_wavefront_cycles) {
    shared.measured("extra wavefront", *profile.shared_memory.extra_wavefront_cycles,
                    cycles.text(profile.shared_memory.extra_wavefront_cycles->value));
  }
  shared.row("per SM / per block (opt-in)",
             bytes_text(static_cast<double>(profile.shared_memory.per_sm_bytes)) + " / " +
                 bytes_text(static_cast<double>(profile.shared_memory.per_block_optin_bytes)));
  return shared;
}

Table tlb_table(const DeviceProfile& profile, const Cycles& cycles, bool verbose) {
  Table tlb(verbose);
  if (profile.tlb.page_bytes) tlb.measured("page", *profile.tlb.page_bytes, bytes_text(profile.tlb.page_bytes->value));
  if (profile.tlb.reach_bytes)
    tlb.measured("reach", *profile.tlb.reach_bytes, bytes_text(profile.tlb.reach_bytes->value));
  tlb.optional("entries", profile.tlb.entries, "");
  if (profile.tlb.miss_penalty_cycles) {
    tlb.measured("miss penalty", *profile.tlb.miss_penalty_cycles, cycles.text(profile.tlb.miss_penalty_cycles->value));
  }
  return tlb;
}

Table limits_table(const DeviceProfile& profile, bool verbose) {
  const DeviceIdentity& device = profile.device;
  Table limits(verbose);
  limits.row("threads per block / SM",
             std::to_string(device.max_threads_per_block) + " / " + std::to_string(device.max_threads_per_sm));
  limits.row("blocks per SM", std::to_string(device.max_blocks_per_sm));
  limits.row("registers per SM / block",
             std::to_string(device.registers_per_sm) + " / " + std::to_string(device.registers_per_block));
  return limits;
}

void print_summary(const DeviceProfile& profile, const std::string& path, bool verbose, std::ostream& out) {
  const DeviceIdentity& device = profile.device;
  out << device.name << "  sm_" << device.compute_capability_major << device.compute_capability_minor << ", "
      << device.sm_count << " SMs, driver " << device.driver_version << ", runtime " << device.runtime_version << '\n'
      << "profile " << path << " (schema v" << profile.schema_version << "), probed " << device.probed_at << '\n'
      << "clocks observed: SM " << device.sm_clock_mhz_before << " -> " << device.sm_clock_mhz_after << " MHz, memory "
      << device.memory_clock_mhz << " MHz\n\n";
  const Cycles cycles{std::max(device.sm_clock_mhz_before, device.sm_clock_mhz_after)};
  auto section = [&out](const char* title, const Table& table) {
    out << title << '\n';
    table.print(out);
    out << '\n';
  };
  section("L1 (per SM)", l1_table(profile, cycles, verbose));
  section("L2", l2_table(profile, cycles, verbose));
  section("DRAM", dram_table(profile, cycles, verbose));
  section("Shared memory", shared_table(profile, cycles, verbose));
  if (profile.tlb.page_bytes || profile.tlb.reach_bytes || profile.tlb.entries)
    section("TLB", tlb_table(profile, cycles, verbose));
  section("Limits", limits_table(profile, verbose));
}

void add_show(CLI::App& root) {
  auto* command = root.add_subcommand("show", "Print a device profile as a table (or JSON)");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto curves = std::make_shared<bool>(false);
  auto verbose = std::make_shared<bool>(false);
  command->add_option("profile", *path, "Profile JSON file (default: the bundled profile)");
  command->add_flag("--json", *json, "Print the validated profile as JSON (without the raw curves)");
  command->add_flag("--curves", *curves, "With --json: include the probe's raw curves (large)");
  command->add_flag("--verbose", *verbose, "Also print each value's samples, spread and measuring method");
  command->callback([command, path, json, curves, verbose] {
    if (*json) {
      reject_flags(*command, {"--verbose"}, "with --json (the JSON carries every method)");
    } else {
      reject_flags(*command, {"--curves"}, "without --json (the table shows no curves)");
    }
    const LoadedProfile loaded = load_profile_for_cli(*path);
    if (*json) {
      nlohmann::json out = profile_to_json(loaded.profile);
      if (!*curves) out.erase("curves");
      print_json(out);
    } else {
      print_summary(loaded.profile, loaded.path.string() + " [" + loaded.source + "]", *verbose, std::cout);
      std::cout << "confidence: how far each value can be trusted (docs/glossary.md#confidence)"
                << (*verbose ? "" : "; --verbose shows how each was measured") << '\n';
    }
  });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(10, add_show);

} // namespace cachewise::cli
