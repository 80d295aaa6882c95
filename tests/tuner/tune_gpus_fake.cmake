# advisor tune --gpus on the fake device list (tests/tuner/data/fake-gpus*.json): every GPU
# measures a share, the journal names the device of each round, the pick is the serial run's
# and the one the fake times make fastest; mixed models are tuned separately.
# -DADVISOR -DPROFILE -DSPEC -DFAKES -DMIXED -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

function(run_advisor fakes)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_VISIBLE_DEVICES CACHEWISE_FAKE_DEVICES=${fakes} ${ADVISOR} ${ARGN}
                  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT exit_code EQUAL 0)
    message(FATAL_ERROR "advisor ${ARGN} failed (${exit_code}):\n${out}\n${err}")
  endif()
endfunction()

function(expect_contains file text)
  file(READ ${file} content)
  string(FIND "${content}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${file} lacks '${text}':\n${content}")
  endif()
endfunction()

function(expect_missing file text)
  file(READ ${file} content)
  string(FIND "${content}" "${text}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${file} has '${text}', which it must not")
  endif()
endfunction()

# The Config lines of a header: what it selects.
function(selected_configs header out_var)
  file(STRINGS ${header} lines REGEX "^inline constexpr Config ")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

# A user kernel, exhaustive over its 18 candidates: the fake times make BLOCK_ROWS=8,PAD=1,TILE_DIM=32
# (0.5 ms) the fastest, every other at 2 ms except one at 0.75 ms.
set(kernel tune --spec ${SPEC} --size width=256,height=256 --strategy exhaustive --profile ${PROFILE})
run_advisor(${FAKES} ${kernel} --header ${WORK_DIR}/serial.h --journal ${WORK_DIR}/serial.jsonl)
run_advisor(${FAKES} ${kernel} --gpus all --header ${WORK_DIR}/parallel.h --journal ${WORK_DIR}/parallel.jsonl
            --json ${WORK_DIR}/parallel.json)
expect_contains(${WORK_DIR}/parallel.h "/*BLOCK_ROWS*/ 8, /*PAD*/ 1, /*TILE_DIM*/ 32, /*time_ms*/ 0.5}")
expect_contains(${WORK_DIR}/parallel.h "// Device:   Fake H200")
selected_configs(${WORK_DIR}/serial.h serial_pick)
selected_configs(${WORK_DIR}/parallel.h parallel_pick)
if(NOT serial_pick STREQUAL parallel_pick)
  message(FATAL_ERROR "--gpus all picked ${parallel_pick}, the serial run ${serial_pick}")
endif()
foreach(gpu 0 1 2)
  expect_contains(${WORK_DIR}/parallel.jsonl "\"uuid\":\"GPU-fake-${gpu}\"")
endforeach()
expect_missing(${WORK_DIR}/serial.jsonl "GPU-fake-1") # without --gpus: the first GPU alone
file(STRINGS ${WORK_DIR}/parallel.jsonl first_rounds REGEX "\"round\":0")
list(LENGTH first_rounds first_round_count)
if(NOT first_round_count EQUAL 18)
  message(FATAL_ERROR "expected 18 first-round records, got ${first_round_count}")
endif()
file(READ ${WORK_DIR}/parallel.json json)
string(JSON device_count LENGTH "${json}" devices)
if(NOT device_count EQUAL 3)
  message(FATAL_ERROR "parallel.json lists ${device_count} devices, not 3")
endif()

# A built-in family, model-ranked: the fake makes the model's second (block_x=8,block_y=8) the
# fastest, which contradicts the model's order in the first batch of 3: one widening batch of 3
# finds nothing faster, so 6 candidates are measured.
run_advisor(${FAKES} tune --pattern transpose --n 64 --gpus 0,2 --profile ${PROFILE} --header ${WORK_DIR}/family.h
            --json ${WORK_DIR}/family.json --journal ${WORK_DIR}/family.jsonl)
expect_contains(${WORK_DIR}/family.h "#define CACHEWISE_TUNED_TRANSPOSE_F32_N64_BLOCK_Y 8\n")
expect_contains(${WORK_DIR}/family.h "#define CACHEWISE_TUNED_TRANSPOSE_F32_N64_BLOCK_X 8\n")
expect_contains(${WORK_DIR}/family.h "#define CACHEWISE_TUNED_TRANSPOSE_F32_N64_TILE 16\n")
file(READ ${WORK_DIR}/family.json json)
string(JSON evaluations LENGTH "${json}" sizes 0 results evaluations)
if(NOT evaluations EQUAL 6)
  message(FATAL_ERROR "expected 6 measured candidates (a batch and one widening), got ${evaluations}")
endif()
expect_contains(${WORK_DIR}/family.jsonl "\"uuid\":\"GPU-fake-2\"")
expect_missing(${WORK_DIR}/family.jsonl "\"uuid\":\"GPU-fake-1\"") # not chosen

# Mixed models: each tuned on its own, with its own outputs; the A100's times make another pick.
run_advisor(${MIXED} ${kernel} --gpus all --header ${WORK_DIR}/mixed.h --journal ${WORK_DIR}/mixed.jsonl)
expect_contains(${WORK_DIR}/mixed.fake_h200.h "/*BLOCK_ROWS*/ 8, /*PAD*/ 1, /*TILE_DIM*/ 32, /*time_ms*/ 0.5}")
expect_contains(${WORK_DIR}/mixed.fake_a100.h "/*BLOCK_ROWS*/ 16, /*PAD*/ 1, /*TILE_DIM*/ 32, /*time_ms*/ 0.25}")
expect_missing(${WORK_DIR}/mixed.fake_h200.jsonl "Fake A100")
expect_missing(${WORK_DIR}/mixed.fake_a100.jsonl "Fake H200")
message(STATUS "--gpus on fake devices: parallel pick = serial pick, 3 GPUs journaled, mixed models apart")
