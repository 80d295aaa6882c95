// `advisor merge-tuned A.json B.json ... --header tuned.h`: results tuned on different GPU
// models (advisor tune --json) become one header selecting the config by device, with the
// model's static recommendation for any other device.
#include <iostream>
#include <memory>

#include "cachewise/tuner/merged_header.hpp"
#include "command.hpp"
#include "common.hpp"

namespace cachewise::cli {
namespace {

struct MergeArguments {
  std::vector<std::string> inputs;
  std::string header;
};

void run_merge_tuned(const MergeArguments& args) {
  std::vector<tuner::TunedResults> results;
  for (const std::string& input : args.inputs) results.push_back(tuner::read_tuned_results(input));
  tuner::write_text_file(args.header, tuner::render_merged_header(results, command_line_text()));
  for (const tuner::TunedResults& r : results) {
    if (r.measured) {
      std::cout << r.device_name << ": " << r.buckets.size() << " size bucket(s) from " << r.source
                << ", -DCACHEWISE_TARGET_" << tuner::device_target_name(r.device_name) << '\n';
    }
  }
  std::cout << "wrote " << args.header << '\n';
}

void add_merge_tuned(CLI::App& root) {
  auto* command = root.add_subcommand(
      "merge-tuned",
      "Merge advisor tune --json results from several GPU models into one header that selects the config by device");
  auto args = std::make_shared<MergeArguments>();
  command
      ->add_option("results", args->inputs,
                   "advisor tune --json files, one per GPU model (static ones give the fallback)")
      ->required();
  command->add_option("--header", args->header, "Write the merged C++ header here")->required();
  command->callback([args] { run_merge_tuned(*args); });
}

} // namespace

CACHEWISE_REGISTER_COMMAND(55, add_merge_tuned);

} // namespace cachewise::cli
