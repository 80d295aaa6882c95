// A compiled candidate as the simulator takes it: launch, resources, buffers and parameters,
// and the extractor behind its traces, the grid's boundary blocks traced (and so checked) first.
#include "traced_candidate.hpp"

#include <set>

#include "cachewise/model.hpp"

namespace cachewise::frontend {
namespace {

/// The candidate's declared contents, placed at their buffers' base addresses.
std::vector<KnownContents> known_contents(const KernelSpec& spec, const EvaluatedSpec& evaluated,
                                          const std::vector<std::uint64_t>& bases) {
  std::vector<KnownContents> known;
  for (std::size_t i = 0; i < spec.buffers.size(); ++i) {
    const DeclaredContents* contents = evaluated.contents_of(spec.buffers[i].name);
    if (!contents) continue;
    known.push_back({contents->buffer(), bases[i], evaluated.buffer_bytes[i], contents->type().bytes,
                     [contents = *contents](std::int64_t element) { return contents.element(element); }});
  }
  return known;
}

/// Traces (and so checks: accesses in bounds, barriers reached together) the first and the last
/// block and the last along each grid edge. The simulator's sample lies in the middle of the
/// grid, where the boundary conditions (i = 0, the partial last block) rarely are.
void trace_boundary_blocks(const Extractor& extractor, const Dim3& grid) {
  const std::set<std::array<std::int64_t, 3>> blocks = {
      {0, 0, 0}, {grid.x - 1, 0, 0}, {0, grid.y - 1, 0}, {0, 0, grid.z - 1}, {grid.x - 1, grid.y - 1, grid.z - 1}};
  for (const std::array<std::int64_t, 3>& block : blocks) (void)extractor.trace_block(block);
}

} // namespace

TracedCandidate traced_candidate(const KernelSpec& spec, const EvaluatedSpec& evaluated, const CompiledKernel& compiled,
                                 const std::string& entry, const std::shared_ptr<const PtxModule>& module,
                                 const std::optional<std::vector<SourceParameter>>& source_parameters) {
  TracedCandidate traced;
  traced.resources = parse_ptxas_resources(compiled.ptxas_log, entry);
  auto kernel = std::make_shared<TracedKernel>();
  kernel->name = spec.entry;
  kernel->grid = evaluated.grid;
  kernel->block = evaluated.block;
  kernel->shared_bytes_per_block = traced.resources.static_shared_bytes + evaluated.dynamic_shared_bytes;
  kernel->registers_per_thread = traced.resources.registers_per_thread;
  kernel->local_bytes_per_thread = traced.resources.stack_frame_bytes;
  kernel->useful_bytes = evaluated.useful_bytes;
  kernel->simulate_out_of_bounds_reads = spec.out_of_bounds_reads == OutOfBoundsReads::simulate;
  const std::vector<std::uint64_t> bases = buffer_base_addresses(evaluated.buffer_bytes);
  std::vector<PtxParam> parameters;
  for (const PtxFunction& function : module->functions) {
    if (function.name == entry) parameters = function.params;
  }
  for (std::size_t i = 0; i < spec.buffers.size(); ++i)
    kernel->buffers.push_back({spec.buffers[i].name, bases[i], evaluated.buffer_bytes[i]});
  LaunchArgs args;
  args.grid = evaluated.grid;
  args.block = evaluated.block;
  args.dynamic_shared_bytes = evaluated.dynamic_shared_bytes;
  args.buffers = kernel->buffers;
  args.param_bytes = kernel_parameter_values(parameters, source_parameters, spec, evaluated, bases);
  args.params.assign(args.param_bytes.size(), 0); // every value is in param_bytes
  args.contents = known_contents(spec, evaluated, bases);
  args.summarise_loops = !spec.replay_loops;
  args.simulate_out_of_bounds_reads = kernel->simulate_out_of_bounds_reads;
  args.skip_guards_on_loaded_data = spec.branches_on_loaded_data == BranchesOnLoadedData::not_taken;
  traced.extractor = std::make_shared<const Extractor>(*module, entry, args);
  trace_boundary_blocks(*traced.extractor, evaluated.grid);
  kernel->trace_block = [extractor = traced.extractor, module](const std::array<std::int64_t, 3>& index) {
    return extractor->trace_block(index);
  };
  kernel->translate_block = [extractor = traced.extractor](const std::array<std::int64_t, 3>& index) {
    return extractor->translated_block(index);
  };
  traced.kernel = std::move(kernel);
  return traced;
}

} // namespace cachewise::frontend
