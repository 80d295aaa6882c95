// Tuning a user kernel through the launch layer on a fake device: real compiles (a candidate
// that does not compile is a failed candidate), real argument marshalling and buffer sets,
// the reference check, launch limits, and the injected model order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cachewise/tuner.hpp"
#include "cachewise/tuner/kernel_tuning.hpp"
#include "fake_device.hpp"

namespace cachewise::tuner {
namespace {

constexpr std::uint64_t kFirst = testing::FakeDevice::kFirstAddress;
constexpr std::uint64_t kStep = testing::FakeDevice::kAddressStep;

const char* kKernel = R"(#ifndef BLOCK
#define BLOCK 64
#endif
#if BLOCK == 256
#error BLOCK 256 is not supported
#endif
__global__ void shift_copy(float* out, const float* in, int n, long long offset) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) out[i] = in[(i + offset) % n];
}
)";

std::filesystem::path scratch(const std::string& name) {
  const auto directory =
      std::filesystem::temp_directory_path() / ("cachewise-kernel-tuning-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "shift_copy.cu") << kKernel;
  return directory;
}

frontend::KernelSpec shift_copy_spec(const std::filesystem::path& directory) {
  frontend::KernelSpec spec;
  spec.source = directory / "shift_copy.cu";
  spec.entry = "shift_copy";
  spec.parameters = {{"BLOCK", {64, 128, 256, 2048}}};
  spec.grid = "ceil_div(n, BLOCK)";
  spec.block = "BLOCK";
  spec.buffers = {{"out", "n * 4"}, {"in", "n * 4"}};
  spec.args = {{"n", 4096}, {"offset", 3}};
  spec.reference = {{"BLOCK", 64}};
  spec.outputs = {{"out", "f32"}};
  return spec;
}

float word(const std::vector<std::byte>& memory, std::size_t index) {
  float value = 0;
  std::memcpy(&value, memory.data() + 4 * index, 4);
  return value;
}

/// The kernel's effect, done by the fake: out[i] = in[(i + 3) % n]; the 128-thread build is
/// made wrong at element 5.
void shift_copy_effect(const testing::RecordedLaunch& launch, testing::FakeDevice& device) {
  std::uint64_t out = 0, in = 0;
  std::memcpy(&out, launch.arguments.bytes.data() + launch.arguments.offsets[0], 8);
  std::memcpy(&in, launch.arguments.bytes.data() + launch.arguments.offsets[1], 8);
  std::vector<std::byte>& out_memory = device.memory_at(out);
  const std::vector<std::byte>& in_memory = device.memory_at(in);
  const std::size_t n = out_memory.size() / 4;
  for (std::size_t i = 0; i < n; ++i) std::memcpy(out_memory.data() + 4 * i, in_memory.data() + 4 * ((i + 3) % n), 4);
  if (launch.shape.block.x == 128) {
    const float wrong = word(out_memory, 5) + 1.0f;
    std::memcpy(out_memory.data() + 20, &wrong, 4);
  }
}

Options quick_options() {
  Options options;
  options.isolation = Isolation::in_process; // the fake device's log lives in this process
  options.measurement.warmup_runs = 1;
  options.measurement.min_repeats = 3;
  options.measurement.max_repeats = 3;
  options.measurement.contender_rounds = 0;
  return options;
}

struct TunedRun {
  testing::FakeDevice::Log log;
  TuningResult result;
};

TunedRun tune_shift_copy(const std::string& name, Strategy strategy) {
  const std::filesystem::path directory = scratch(name);
  frontend::Compiler compiler(directory / "cache");
  auto candidates = std::make_shared<const KernelCandidates>(shift_copy_spec(directory), compiler, 90);
  TunedRun run;
  const DeviceFactory open = [&run] {
    return std::make_unique<testing::FakeDevice>(
        testing::fake_limits(64 * 1024), run.log,
        [](const testing::RecordedLaunch& l) { return l.shape.block.x == 128 ? 1.0 : 2.0; }, shift_copy_effect);
  };
  Tuner tuner(kernel_problem(candidates->spec(), {{{"n", 4096}}}), candidates->space());
  tuner.set_measure(kernel_measure(candidates, open));
  tuner.set_strategy(std::move(strategy));
  tuner.set_options(quick_options());
  run.result = tuner.tune();
  std::filesystem::remove_all(directory);
  return run;
}

TEST(KernelTuning, FailuresAreCandidatesAndTheRunGoesOn) {
  const TunedRun run = tune_shift_copy("failures", Strategy::exhaustive());
  const std::vector<Evaluation>& e = run.result.evaluations;
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].config.to_string(), "BLOCK=64");
  EXPECT_TRUE(e[0].ok);
  EXPECT_EQ(e[0].samples_ms, (std::vector<double>{2.0, 2.0, 2.0}));
  EXPECT_FALSE(e[1].ok); // faster, but wrong
  EXPECT_EQ(e[1].failure.rfind("threw: output out differs from the reference (BLOCK=64) at index 5: ", 0), 0u)
      << e[1].failure;
  EXPECT_FALSE(e[2].ok);
  EXPECT_EQ(e[2].failure.rfind("threw: does not compile: ", 0), 0u) << e[2].failure;
  EXPECT_NE(e[2].failure.find("BLOCK 256 is not supported"), std::string::npos) << e[2].failure;
  EXPECT_FALSE(e[3].ok);
  EXPECT_EQ(e[3].failure, "threw: launch past the device's limits: block 2048x1x1 = 2048 threads > 1024 per block");
  ASSERT_NE(run.result.best_evaluation(), nullptr);
  EXPECT_EQ(run.result.best_evaluation()->config.to_string(), "BLOCK=64");
}

TEST(KernelTuning, LaunchesMarshalTheSpecAndRotateBufferSetsPastTheL2) {
  const TunedRun run = tune_shift_copy("launches", Strategy::exhaustive());
  // BLOCK=64: 2 buffers of n * 4 = 16384 bytes; a set is 32 KiB, the L2 64 KiB -> 64/32 + 1 = 3 sets.
  // BLOCK=128 allocates its own 3 sets after BLOCK=64's are released; 256 and 2048 allocate
  // nothing (2048 releases 128's before its launch check fails).
  EXPECT_EQ(run.log.allocations, std::vector<std::int64_t>(12, 16384));
  EXPECT_EQ(run.log.releases, 12);
  // BLOCK=64: reference and candidate once each (the check), then 1 warm-up + 3 timed: 6 launches;
  // BLOCK=128: the check's two launches, then it fails.
  ASSERT_EQ(run.log.launches.size(), 8u);
  const std::uint64_t outs[] = {1, 1, 1, 3, 5, 1}; // buffer ids: the check on set 0, then sets 0, 1, 2, 0
  for (std::size_t i = 0; i < 6; ++i) {
    const testing::RecordedLaunch& launch = run.log.launches[i];
    EXPECT_EQ(launch.shape.grid, (Dim3{64, 1, 1})) << i; // ceil_div(4096, 64)
    EXPECT_EQ(launch.shape.block, (Dim3{64, 1, 1})) << i;
    // out, in: 8 bytes at 0 and 8; n (int): 4 at 16; offset (long long): 8 at 24, after 4 of padding.
    ASSERT_EQ(launch.arguments.offsets, (std::vector<std::size_t>{0, 8, 16, 24})) << i;
    std::vector<std::byte> expected(32, std::byte{0});
    const std::uint64_t out = kFirst + outs[i] * kStep, in = kFirst + (outs[i] + 1) * kStep;
    const std::int32_t n = 4096;
    const std::int64_t offset = 3;
    std::memcpy(expected.data(), &out, 8);
    std::memcpy(expected.data() + 8, &in, 8);
    std::memcpy(expected.data() + 16, &n, 4);
    std::memcpy(expected.data() + 24, &offset, 8);
    EXPECT_EQ(launch.arguments.bytes, expected) << i;
  }
  EXPECT_EQ(run.log.launches[6].shape.grid, (Dim3{64, 1, 1})); // the reference, in BLOCK=128's check
  EXPECT_EQ(run.log.launches[7].shape.grid, (Dim3{32, 1, 1})); // ceil_div(4096, 128)
  // The reference (BLOCK=64) and each candidate loaded as a module; 256 never got that far.
  EXPECT_EQ(run.log.modules.size(), 4u);
}

// index[i] = (7 i) % n declared: the tuner uploads exactly that (as i32) to every set, so the
// measured kernel gathers what the model traced; the undeclared buffers keep the hashed floats.
// A set is 3 x 16384 B = 48 KiB, the L2 64 KiB: 64 / 48 + 1 = 2 sets (buffer ids 1-3, 4-6).
TEST(KernelTuning, DeclaredContentsAreUploadedToEverySet) {
  const std::filesystem::path directory = scratch("contents");
  std::ofstream(directory / "gather.cu")
      << "__global__ void gather(float* out, const float* in, const int* index, int n) {\n"
         "  int i = blockIdx.x * BLOCK + threadIdx.x;\n"
         "  if (i < n) out[i] = in[index[i]];\n}\n";
  frontend::KernelSpec spec;
  spec.source = directory / "gather.cu";
  spec.entry = "gather";
  spec.parameters = {{"BLOCK", {64}}};
  spec.grid = "n / BLOCK";
  spec.block = "BLOCK";
  spec.buffers = {{"out", "n * 4"}, {"in", "n * 4"}, {"index", "n * 4"}};
  spec.contents = {{"index", "(i * 7) % n", "i32"}};
  spec.args = {{"n", 4096}};
  frontend::Compiler compiler(directory / "cache");
  const KernelCandidates candidates(spec, compiler, 90);
  testing::FakeDevice::Log log;
  testing::FakeDevice device(testing::fake_limits(64 * 1024), log, [](const testing::RecordedLaunch&) { return 1.0; });
  {
    LoadedKernel loaded(device, candidates, candidates.at(Config{{"BLOCK", 64}}));
    ASSERT_EQ(loaded.buffer_sets(), 2u);
    for (const std::uint64_t id : {3, 6}) {
      const std::vector<std::byte>& index = device.memory_at(kFirst + id * kStep);
      ASSERT_EQ(index.size(), 16384u);
      for (std::size_t i = 0; i < 4096; ++i) {
        std::int32_t value = 0;
        std::memcpy(&value, index.data() + 4 * i, 4);
        ASSERT_EQ(value, static_cast<std::int32_t>(i * 7 % 4096)) << "set " << (id - 1) / 3 << ", element " << i;
      }
    }
    EXPECT_EQ(device.memory_at(kFirst + 2 * kStep), buffer_contents(16384, 0, 1)); // in, set 0
    EXPECT_EQ(device.memory_at(kFirst + 5 * kStep), buffer_contents(16384, 1, 1)); // in, set 1
  }
  std::filesystem::remove_all(directory);
}

TEST(KernelTuning, ModelRankedVisitsByTheInjectedPrediction) {
  // Predicted: 128 fastest, then 64, 256, 2048. The first batch of 3 has one success (64), so
  // no measured pair contradicts the prediction: the rule stops after 3 evaluations.
  const Predict predict = [](const Config& c) {
    const std::int64_t block = c.get("BLOCK");
    return block == 128 ? 1.0 : block == 64 ? 2.0 : block == 256 ? 3.0 : 4.0;
  };
  const TunedRun run = tune_shift_copy("model", Strategy::model_ranked(predict));
  ASSERT_EQ(run.result.evaluations.size(), 3u);
  EXPECT_EQ(run.result.evaluations[0].config.to_string(), "BLOCK=128");
  EXPECT_EQ(run.result.evaluations[1].config.to_string(), "BLOCK=64");
  EXPECT_EQ(run.result.evaluations[2].config.to_string(), "BLOCK=256");
  EXPECT_EQ(run.result.stop_reason, "measured order agrees with the prediction");
  EXPECT_EQ(run.result.best_evaluation()->config.to_string(), "BLOCK=64");
}

TEST(KernelTuning, APointerWithoutABufferFailsTheCandidate) {
  const std::filesystem::path directory = scratch("nobuffer");
  frontend::KernelSpec spec = shift_copy_spec(directory);
  spec.buffers = {{"out", "n * 4"}};
  spec.reference.clear();
  spec.outputs.clear();
  spec.parameters = {{"BLOCK", {64}}};
  frontend::Compiler compiler(directory / "cache");
  auto candidates = std::make_shared<const KernelCandidates>(spec, compiler, 90);
  testing::FakeDevice::Log log;
  const Measure measure = kernel_measure(candidates, [&log] {
    return std::make_unique<testing::FakeDevice>(testing::fake_limits(1 << 20), log,
                                                 [](const testing::RecordedLaunch&) { return 1.0; });
  });
  try {
    measure(Config::parse("BLOCK=64"), 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "kernel parameter 'in' is a pointer with no buffer: give --buffer in=BYTES");
  }
  EXPECT_TRUE(log.launches.empty());
  std::filesystem::remove_all(directory);
}

TEST(KernelTuning, EveryCandidateFailingToCompileIsOneError) {
  const std::filesystem::path directory = scratch("allfail");
  frontend::KernelSpec spec = shift_copy_spec(directory);
  spec.parameters = {{"BLOCK", {256}}};
  spec.reference.clear();
  spec.outputs.clear();
  frontend::Compiler compiler(directory / "cache");
  try {
    KernelCandidates candidates(spec, compiler, 90);
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("every candidate failed to compile; first: BLOCK=256: does not compile: ", 0), 0u)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  std::filesystem::remove_all(directory);
}

TEST(SizeBuckets, ParseAndApply) {
  const SizeBucket bucket = parse_size_bucket("n=1024,offset=5");
  EXPECT_EQ(bucket.label(), "n=1024,offset=5");
  const std::filesystem::path source = std::filesystem::temp_directory_path() / "cachewise_size_buckets.cu";
  std::ofstream(source) << "#ifndef HEIGHT\n#define HEIGHT 64\n#endif\n// WIDTH only in a comment\n";
  frontend::KernelSpec spec;
  spec.source = source;
  spec.args = {{"n", 4096}, {"offset", 3}};
  spec.defines = {{"DEPTH", "8"}};
  const frontend::KernelSpec sized = with_size_bucket(spec, bucket);
  EXPECT_EQ(sized.args[0].value, 1024);
  EXPECT_EQ(sized.args[1].value, 5);
  // A size as a macro: a define of the spec gets the value, a name the source reads becomes one.
  const frontend::KernelSpec macros = with_size_bucket(spec, parse_size_bucket("DEPTH=16,HEIGHT=256"));
  ASSERT_EQ(macros.defines.size(), 2U);
  EXPECT_EQ(macros.defines[0].value, "16");
  EXPECT_EQ(macros.defines[1].name, "HEIGHT");
  EXPECT_EQ(macros.defines[1].value, "256");
  try {
    with_size_bucket(spec, parse_size_bucket("WIDTH=64"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(
        e.what(),
        "size bucket WIDTH=64: 'WIDTH' is no arg or define of the kernel spec (n, offset, DEPTH) and no name in "
        "cachewise_size_buckets.cu");
  }
  std::filesystem::remove(source);
  EXPECT_THROW(parse_size_bucket("n=1,n=2"), InputError);
  EXPECT_THROW(parse_size_bucket("n"), InputError);
  spec.entry = "shift_copy";
  EXPECT_EQ(kernel_problem(spec, bucket).family, "shift_copy n=1024,offset=5");
}

} // namespace
} // namespace cachewise::tuner

namespace cachewise::tuner {
namespace {

TEST(KernelSpecCheck, ReferenceOutputsAndToleranceFromJson) {
  const nlohmann::ordered_json json = nlohmann::ordered_json::parse(R"({"source": "k.cu", "entry": "k",
      "reference": {"BLOCK": 64}, "outputs": {"out": "f64", "sum": "i32"}, "tolerance": 0.001})");
  const frontend::KernelSpec spec = frontend::kernel_spec_from_json(json, "/specs", "k.json");
  ASSERT_EQ(spec.reference.size(), 1u);
  EXPECT_EQ(spec.reference[0].name, "BLOCK");
  EXPECT_EQ(spec.reference[0].value, 64);
  ASSERT_EQ(spec.outputs.size(), 2u);
  EXPECT_EQ(spec.outputs[0].name, "out");
  EXPECT_EQ(spec.outputs[0].type, "f64");
  EXPECT_EQ(spec.outputs[1].type, "i32");
  EXPECT_DOUBLE_EQ(spec.tolerance, 0.001);
  frontend::KernelSpec overrides;
  overrides.reference = {{"BLOCK", 128}};
  EXPECT_EQ(frontend::merge_kernel_specs(spec, overrides).reference[0].value, 128);
  EXPECT_THROW(frontend::kernel_spec_from_json(nlohmann::ordered_json::parse(R"({"reference": {"BLOCK": "big"}})"), "/",
                                               "k.json"),
               InputError);
}

TEST(KernelSpecCheck, OutputsMustBeTypedBuffersWithAReference) {
  const std::filesystem::path directory = scratch("speccheck");
  frontend::Compiler compiler(directory / "cache");
  const auto message = [&](frontend::KernelSpec spec) {
    try {
      KernelCandidates candidates(std::move(spec), compiler, 90);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  frontend::KernelSpec spec = shift_copy_spec(directory);
  spec.outputs = {{"result", "f32"}};
  EXPECT_EQ(message(spec), "kernel spec: output 'result' is not a buffer");
  spec.outputs = {{"out", "f16"}};
  EXPECT_EQ(message(spec), "kernel spec: output 'out' has type 'f16' (valid: f32, f64, i32, u8)");
  spec.outputs = {{"out", "f32"}};
  spec.reference.clear();
  EXPECT_EQ(message(spec), "kernel spec: outputs are checked against a \"reference\": give one");
  spec.reference = {{"BLOCK", 64}, {"UNROLL", 2}};
  EXPECT_EQ(message(spec), "kernel spec: the reference BLOCK=64,UNROLL=2 names something that is not a parameter");
  std::filesystem::remove_all(directory);
}

} // namespace
} // namespace cachewise::tuner
