# advisor merge-tuned: recorded results of two GPU models (tests/tuner/data/merge) and fake-GPU
# results of `tune --gpus all` become one header; translation units compiled against it check
# the config it selects by device name, by compute capability, by -DCACHEWISE_TARGET_<DEVICE>,
# and the fallback for an unknown device (every expected value read off the inputs by hand).
# -DADVISOR -DFAKE_GPUS_ADVISOR (advisor_fake_gpus) -DCXX -DDATA -DSPEC -DPROFILE -DMIXED -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT exit_code EQUAL 0)
    message(FATAL_ERROR "${ARGN} failed (${exit_code}):\n${out}\n${err}")
  endif()
endfunction()

# check(NAME HEADER CODE [FLAGS...]): compiles CODE after including HEADER.
function(check name header code)
  file(WRITE ${WORK_DIR}/${name}.cpp "#include \"${header}\"\nnamespace tuned = cachewise_tuned::transpose_tiled;\n${code}\nint main() { return 0; }\n")
  run(${CXX} -std=c++17 -Wall -Werror ${ARGN} -I${WORK_DIR} -c ${WORK_DIR}/${name}.cpp -o ${WORK_DIR}/${name}.o)
endfunction()

# Recorded: the H200 tuned 1024x1024 (8/1/32) and 8192x8192 (16/1/64); the A100 1024x1024
# (4/0/16); the H200 file's static picks are 4/1/16 and 8/0/32 (BLOCK_ROWS/PAD/TILE_DIM).
run(${ADVISOR} merge-tuned ${DATA}/h200.json ${DATA}/a100.json --header ${WORK_DIR}/recorded.h)
check(by_name recorded.h "
constexpr auto near_1k = tuned::config_for_device(\"NVIDIA H200\", 1000, 1100);
static_assert(near_1k.BLOCK_ROWS == 8 && near_1k.PAD == 1 && near_1k.TILE_DIM == 32, \"H200, nearest bucket 1024x1024\");
static_assert(tuned::config_for_device(\"NVIDIA H200\", 8000, 8000).TILE_DIM == 64, \"H200, nearest bucket 8192x8192\");
constexpr auto a100 = tuned::config_for_device(\"NVIDIA A100-SXM4-80GB\", 8192, 8192);
static_assert(a100.BLOCK_ROWS == 4 && a100.PAD == 0 && a100.TILE_DIM == 16, \"A100: its only bucket\");
constexpr auto unknown = tuned::config_for_device(\"NVIDIA B200\", 8192, 8192);
static_assert(unknown.BLOCK_ROWS == 8 && unknown.PAD == 0 && unknown.TILE_DIM == 32, \"unknown device: static 8192x8192\");
static_assert(tuned::config_for_device(\"NVIDIA H20\", 1024, 1024).PAD == 1 && tuned::config_for_device(\"NVIDIA H20\", 1024, 1024).TILE_DIM == 16,
              \"a name that only starts like a tuned one is unknown\");
static_assert(!tuned::fallback::from_measurement && tuned::h200::from_measurement, \"fallback is static\");")
check(by_cc recorded.h "
static_assert(tuned::config_for_compute_capability(80, 1024, 1024).BLOCK_ROWS == 4, \"cc 80: the A100\");
static_assert(tuned::config_for_compute_capability(90, 1024, 1024).BLOCK_ROWS == 8, \"cc 90: the H200\");
constexpr auto turing = tuned::config_for_compute_capability(75, 1024, 1024);
static_assert(turing.BLOCK_ROWS == 4 && turing.PAD == 1 && turing.TILE_DIM == 16, \"cc 75: static 1024x1024\");")
check(target_h200 recorded.h "
static_assert(tuned::target::compute_capability == 90, \"-DCACHEWISE_TARGET_H200 picks the H200 table\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_FROM_MEASUREMENT == 1, \"measured\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH8192_HEIGHT8192_BLOCK_ROWS == 16, \"the H200's macro\");" -DCACHEWISE_TARGET_H200)
check(target_a100 recorded.h "
static_assert(tuned::target::compute_capability == 80, \"the A100 table\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH1024_HEIGHT1024_TILE_DIM == 16, \"the A100's macro\");" -DCACHEWISE_TARGET_A100_SXM4_80GB)
check(no_target recorded.h "
static_assert(!tuned::target::from_measurement, \"no target: the fallback\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_FROM_MEASUREMENT == 0, \"static\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH8192_HEIGHT8192_TILE_DIM == 32, \"the fallback's macro\");")

# Fake GPUs of two models tuned with --gpus all (each on its own), then merged: the fake times
# make 8/1/32 the H200's pick and 16/1/32 the A100's (cc 80).
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_VISIBLE_DEVICES CACHEWISE_FAKE_DEVICES=${MIXED}
                        ${FAKE_GPUS_ADVISOR} tune --spec ${SPEC} --size width=256,height=256 --strategy exhaustive --profile ${PROFILE}
                        --gpus all --json ${WORK_DIR}/fake.json
                RESULT_VARIABLE exit_code OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "tune --gpus all failed (${exit_code}): ${err}")
endif()
run(${ADVISOR} merge-tuned ${WORK_DIR}/fake.fake_h200.json ${WORK_DIR}/fake.fake_a100.json --header ${WORK_DIR}/fake.h)
check(fake fake.h "
static_assert(tuned::config_for_device(\"Fake H200\", 256, 256).BLOCK_ROWS == 8, \"fake H200: 0.5 ms pick\");
static_assert(tuned::config_for_device(\"Fake A100\", 256, 256).BLOCK_ROWS == 16, \"fake A100: 0.25 ms pick\");
static_assert(tuned::config_for_compute_capability(80, 256, 256).BLOCK_ROWS == 16, \"cc 80: the fake A100\");
static_assert(tuned::fake_a100::from_measurement, \"measured\");" -DCACHEWISE_TARGET_FAKE_A100)
message(STATUS "merge-tuned: selection by name, compute capability and target macro; fallback for unknown devices")
