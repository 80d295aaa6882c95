// The Extractor: lowers an entry once per launch, then traces blocks on demand, warp by warp.
#include <algorithm>
#include <mutex>
#include <optional>

#include "cachewise/model.hpp"
#include "extract_translation.hpp"
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
  program_->translatable = program_->args.translate_blocks && !program_->args.simulate_out_of_bounds_reads &&
                           !program_->args.skip_guards_on_loaded_data && block_index_dependence(*program_).empty();
}

Extractor::~Extractor() = default;
Extractor::Extractor(Extractor&&) noexcept = default;
Extractor& Extractor::operator=(Extractor&&) noexcept = default;

const std::vector<ParamInfo>& Extractor::params() const { return program_->params; }

InterpretedBlock interpret_block(const Program& program, const std::array<std::int64_t, 3>& block_index) {
  InterpretedBlock block;
  block.trace.block_index = block_index;
  const std::int64_t warps = (program.args.block.count() + 31) / 32;
  WarpState state(program);
  const auto trace_warps = [&](bool summarise) {
    block.trace.warps.assign(static_cast<std::size_t>(warps), WarpTrace{});
    state.loops.set_enabled(summarise);
    state.out_of_bounds = {};
    state.skipped_on_loaded_data = {};
    std::size_t steps = 0;
    for (std::int64_t w = 0; w < warps; ++w) {
      WarpTrace& warp = block.trace.warps[static_cast<std::size_t>(w)];
      // Warps of a block, and blocks of a grid, mostly run alike.
      const std::size_t expected =
          w > 0 ? block.trace.warps[0].steps.size() : program.first_warp_steps.load(std::memory_order_relaxed);
      block.max_loads_in_flight =
          std::max(block.max_loads_in_flight, run_warp(state, block_index, w, warp, steps, expected));
      steps += warp.steps.size();
    }
  };
  try {
    trace_warps(program.args.summarise_loops);
  } catch (const LoopSummaryInvalid&) {
    trace_warps(false); // a decision read a register a summary could not carry forward
  }
  if (!block.trace.warps.empty())
    program.first_warp_steps.store(block.trace.warps[0].steps.size(), std::memory_order_relaxed);
  block.loop_tally = state.loops.tally();
  block.out_of_bounds_loads = state.out_of_bounds;
  block.skipped_on_loaded_data = state.skipped_on_loaded_data;
  return block;
}

namespace {

/// Adds a traced block's facts to the program's.
void record_facts(const Program& program, const std::array<std::int64_t, 3>& block_index,
                  const InterpretedBlock& block) {
  std::int64_t seen = program.max_loads_in_flight.load();
  while (block.max_loads_in_flight > seen &&
         !program.max_loads_in_flight.compare_exchange_weak(seen, block.max_loads_in_flight)) {
  }
  if (!block.loop_tally.empty()) {
    const std::lock_guard lock(program.loop_tally_mutex);
    for (const auto& [header, tally] : block.loop_tally) {
      LoopTally& total = program.loop_tally[header];
      total.runs += tally.runs;
      total.trips_interpreted += tally.trips_interpreted;
      total.trips_skipped += tally.trips_skipped;
    }
  }
  // A block traced again (a boundary block sampled) counts once.
  const Dim3& grid = program.args.grid;
  const std::int64_t linear = block_index[0] + grid.x * (block_index[1] + grid.y * block_index[2]);
  if (block.out_of_bounds_loads.warp_loads > 0 || block.skipped_on_loaded_data.warp_instructions > 0) {
    const std::lock_guard lock(program.let_through_mutex);
    if (block.out_of_bounds_loads.warp_loads > 0) program.out_of_bounds_loads[linear] = block.out_of_bounds_loads;
    if (block.skipped_on_loaded_data.warp_instructions > 0)
      program.skipped_on_loaded_data[linear] = block.skipped_on_loaded_data;
  }
  program.traced_any = true;
}

/// The program's translation, prepared once it has interpreted enough blocks to pay for it (a
/// candidate the advisor only screens traces a few); null when it has none.
std::shared_ptr<const BlockTranslation> prepared_translation(const Program& program) {
  if (!program.translatable) return nullptr;
  const std::int64_t preparation = translation_preparation_blocks(program.args.grid);
  if (program.blocks_interpreted.load(std::memory_order_relaxed) < 2 * preparation) return nullptr;
  const std::lock_guard lock(program.translation_mutex);
  if (!program.translation && !program.translation_refused) {
    program.translation = BlockTranslation::prepare(program);
    program.translation_refused = !program.translation;
  }
  return program.translation;
}

void check_in_grid(const Program& program, const std::array<std::int64_t, 3>& block_index) {
  const Dim3& grid = program.args.grid;
  if (block_index[0] < 0 || block_index[0] >= grid.x || block_index[1] < 0 || block_index[1] >= grid.y ||
      block_index[2] < 0 || block_index[2] >= grid.z)
    throw InputError("block index outside the grid");
}

/// Records a translated block's facts: the reference's.
void record_translated(const Program& program, const std::array<std::int64_t, 3>& block_index,
                       const BlockTranslation& translation) {
  record_facts(program, block_index, translation.reference());
  program.blocks_translated.fetch_add(1, std::memory_order_relaxed);
}

} // namespace

BlockTrace Extractor::trace_block(const std::array<std::int64_t, 3>& block_index) const {
  const Program& program = *program_;
  check_in_grid(program, block_index);
  if (const std::shared_ptr<const BlockTranslation> translation = prepared_translation(program)) {
    if (std::optional<BlockTrace> trace = translation->translate(program, block_index)) {
      record_translated(program, block_index, *translation);
      return std::move(*trace);
    }
  }
  InterpretedBlock block = interpret_block(program, block_index);
  program.blocks_interpreted.fetch_add(1, std::memory_order_relaxed);
  record_facts(program, block_index, block);
  return std::move(block.trace);
}

std::optional<TranslatedBlock> Extractor::translated_block(const std::array<std::int64_t, 3>& block_index) const {
  const Program& program = *program_;
  check_in_grid(program, block_index);
  const std::shared_ptr<const BlockTranslation> translation = prepared_translation(program);
  if (!translation || !translation->uniform_steps()) return std::nullopt;
  record_translated(program, block_index, *translation);
  return TranslatedBlock{translation->shared_reference(), translation->uniform_steps()};
}

void Extractor::forget_translation() const {
  const std::lock_guard lock(program_->translation_mutex);
  program_->translation.reset();
}

ExtractedFacts Extractor::facts() const {
  if (!program_->traced_any) (void)trace_block({0, 0, 0}); // loads in flight are read off a traced block
  ExtractedFacts facts;
  facts.static_shared_bytes = program_->static_shared_bytes;
  facts.local_bytes_per_thread = program_->local_bytes;
  facts.max_loads_in_flight = program_->max_loads_in_flight.load();
  facts.interpreted_blocks = program_->blocks_interpreted.load();
  facts.translated_blocks = program_->blocks_translated.load();
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
