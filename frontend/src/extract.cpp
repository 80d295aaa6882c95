// The Extractor: lowers an entry once per launch, then traces blocks on demand, warp by warp.
#include <algorithm>

#include "cachewise/model.hpp"
#include "extract_warp.hpp"

namespace cachewise::frontend {

std::string Program::where(std::int32_t pc) const {
  return source_location(module, function->instructions[static_cast<std::size_t>(pc)]);
}

const std::string& Program::text(std::int32_t pc) const {
  return function->instructions[static_cast<std::size_t>(pc)].text;
}

Extractor::Extractor(const PtxModule& module, std::string_view entry_name, LaunchArgs args)
    : program_(std::make_unique<Program>()) {
  const auto it = std::find_if(module.functions.begin(), module.functions.end(),
                               [&](const PtxFunction& f) { return f.is_entry && f.name == entry_name; });
  if (it == module.functions.end()) throw InputError("no entry '" + std::string(entry_name) + "' in the PTX");
  if (!it->body_parsed)
    throw InputError("entry '" + std::string(entry_name) +
                     "': its body was not parsed (parse_ptx's filter skipped it)");
  for (const std::int64_t extent : {args.grid.x, args.grid.y, args.grid.z, args.block.x, args.block.y, args.block.z})
    if (extent < 1 || extent > (std::int64_t{1} << 31)) throw InputError("launch dimensions must lie in 1 .. 2^31");
  if (args.block.count() > 1024)
    throw InputError("a block of " + std::to_string(args.block.count()) + " threads is more than 1024");
  program_->module.variables = module.variables;
  program_->module.files = module.files;
  program_->module.functions = {*it};
  program_->function = &program_->module.functions[0];
  program_->args = std::move(args);
  lower_program(*program_);
}

Extractor::~Extractor() = default;
Extractor::Extractor(Extractor&&) noexcept = default;
Extractor& Extractor::operator=(Extractor&&) noexcept = default;

const std::vector<ParamInfo>& Extractor::params() const { return program_->params; }

BlockTrace Extractor::trace_block(const std::array<std::int64_t, 3>& block_index) const {
  const Program& program = *program_;
  const Dim3& grid = program.args.grid;
  if (block_index[0] < 0 || block_index[0] >= grid.x || block_index[1] < 0 || block_index[1] >= grid.y ||
      block_index[2] < 0 || block_index[2] >= grid.z)
    throw InputError("block index outside the grid");
  BlockTrace block;
  block.block_index = block_index;
  const std::int64_t warps = (program.args.block.count() + 31) / 32;
  std::int64_t in_flight = 0;
  WarpState state(program);
  const auto trace_warps = [&](bool summarise) {
    block.warps.assign(static_cast<std::size_t>(warps), WarpTrace{});
    state.loops.set_enabled(summarise);
    state.out_of_bounds = {};
    state.skipped_on_loaded_data = {};
    std::size_t steps = 0;
    for (std::int64_t w = 0; w < warps; ++w) {
      WarpTrace& warp = block.warps[static_cast<std::size_t>(w)];
      // Warps of a block, and blocks of a grid, mostly run alike.
      const std::size_t expected =
          w > 0 ? block.warps[0].steps.size() : program.first_warp_steps.load(std::memory_order_relaxed);
      in_flight = std::max(in_flight, run_warp(state, block_index, w, warp, steps, expected));
      steps += warp.steps.size();
    }
  };
  try {
    trace_warps(program.args.summarise_loops);
  } catch (const LoopSummaryInvalid&) {
    trace_warps(false); // a decision read a register a summary could not carry forward
  }
  if (!block.warps.empty()) program.first_warp_steps.store(block.warps[0].steps.size(), std::memory_order_relaxed);
  std::int64_t seen = program.max_loads_in_flight.load();
  while (in_flight > seen && !program.max_loads_in_flight.compare_exchange_weak(seen, in_flight)) {
  }
  // A block traced again (a boundary block sampled) counts once.
  const std::int64_t linear = block_index[0] + grid.x * (block_index[1] + grid.y * block_index[2]);
  if (state.out_of_bounds.warp_loads > 0 || state.skipped_on_loaded_data.warp_instructions > 0) {
    const std::lock_guard lock(program.let_through_mutex);
    if (state.out_of_bounds.warp_loads > 0) program.out_of_bounds_loads[linear] = state.out_of_bounds;
    if (state.skipped_on_loaded_data.warp_instructions > 0)
      program.skipped_on_loaded_data[linear] = state.skipped_on_loaded_data;
  }
  program.traced_any = true;
  return block;
}

ExtractedFacts Extractor::facts() const {
  if (!program_->traced_any) (void)trace_block({0, 0, 0}); // loads in flight are read off a traced block
  ExtractedFacts facts;
  facts.static_shared_bytes = program_->static_shared_bytes;
  facts.local_bytes_per_thread = program_->local_bytes;
  facts.max_loads_in_flight = program_->max_loads_in_flight.load();
  const std::lock_guard lock(program_->loop_tally_mutex);
  for (const auto& [header, tally] : program_->loop_tally) {
    facts.summarised_loops.push_back({program_->where(program_->code[static_cast<std::size_t>(header)].source),
                                      tally.runs, tally.trips_interpreted, tally.trips_skipped});
  }
  const std::lock_guard let_through_lock(program_->let_through_mutex);
  for (const auto& [block, loads] : program_->out_of_bounds_loads) {
    if (facts.out_of_bounds_loads.first.empty()) facts.out_of_bounds_loads.first = loads.first;
    facts.out_of_bounds_loads.warp_loads += loads.warp_loads;
  }
  for (const auto& [block, skipped] : program_->skipped_on_loaded_data) {
    if (facts.skipped_on_loaded_data.first.empty()) facts.skipped_on_loaded_data.first = skipped.first;
    facts.skipped_on_loaded_data.warp_instructions += skipped.warp_instructions;
  }
  return facts;
}

} // namespace cachewise::frontend
