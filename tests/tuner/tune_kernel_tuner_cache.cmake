# advisor tune --spec ... --kernel-tuner-cache FILE resumes from a Kernel Tuner cache, on the fake
# GPUs (tests/tuner/data/fake-gpus.json: BLOCK_ROWS=8,PAD=1,TILE_DIM=32 0.5 ms, BLOCK_ROWS=16,
# PAD=1,TILE_DIM=32 0.75 ms, the rest 2 ms). The cache (tests/data/kernel_tuner/resume-fake-h200.json,
# unfinished as Kernel Tuner leaves it while running) measured 32,8,1 at 0.3 ms, 64,16,1 at
# 0.9 ms, 16,4,0 failed, and 48,8,1, which the spec (TILE_DIM 16, 32, 64) cannot express.
# -DADVISOR -DPROFILE -DSPEC -DFAKES -DCACHE -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
file(COPY_FILE ${CACHE} ${WORK_DIR}/cache.json)
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_VISIBLE_DEVICES CACHEWISE_FAKE_DEVICES=${FAKES}
                ${ADVISOR} tune --spec ${SPEC} --size width=256,height=256 --strategy exhaustive --profile ${PROFILE}
                --kernel-tuner-cache ${WORK_DIR}/cache.json --header ${WORK_DIR}/tuned.h
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor tune failed (${exit_code}):\n${out}\n${err}")
endif()

function(expect text where what)
  string(FIND "${where}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what} lacks '${text}':\n${where}")
  endif()
endfunction()

expect("resuming from ${WORK_DIR}/cache.json: 3 of its 4 configurations are candidates" "${err}" stderr)
# The three cached candidates are taken, not measured: the cache's times, no fake time.
expect("BLOCK_ROWS=8,PAD=1,TILE_DIM=32: 0.3 ms (7 samples) [kernel tuner cache]" "${err}" stderr)
expect("BLOCK_ROWS=16,PAD=1,TILE_DIM=64: 0.9 ms (7 samples) [kernel tuner cache]" "${err}" stderr)
expect("BLOCK_ROWS=4,PAD=0,TILE_DIM=16: failed: Kernel Tuner: RuntimeFailedConfig [kernel tuner cache]" "${err}" stderr)
string(REGEX MATCHALL "\\[kernel tuner cache\\]" cached_lines "${err}")
list(LENGTH cached_lines cached_count)
string(REGEX MATCHALL "ms \\([0-9]+ samples\\)\n" measured_lines "${err}")
list(LENGTH measured_lines measured_count)
if(NOT cached_count EQUAL 3 OR NOT measured_count EQUAL 15)
  message(FATAL_ERROR "expected 3 candidates from the cache and 15 measured (18 in all), got ${cached_count} and ${measured_count}:\n${err}")
endif()
# The pick is the cache's 0.3 ms, faster than the fake GPU's 0.5 ms for the same config.
file(READ ${WORK_DIR}/tuned.h header)
expect("/*BLOCK_ROWS*/ 8, /*PAD*/ 1, /*TILE_DIM*/ 32, /*time_ms*/ 0.3}" "${header}" tuned.h)

# Written back closed, complete JSON: the cached entries as they were (their timestamps), the
# one the spec cannot express kept, the 15 measured beside them: 19 entries.
file(READ ${WORK_DIR}/cache.json written)
string(JSON entries LENGTH "${written}" cache)
if(NOT entries EQUAL 19)
  message(FATAL_ERROR "the written cache holds ${entries} entries, not 19:\n${written}")
endif()
string(JSON kept GET "${written}" cache "32,8,1" timestamp)
string(JSON failed GET "${written}" cache "16,4,0" time)
string(JSON foreign GET "${written}" cache "48,8,1" time)
string(JSON fresh GET "${written}" cache "16,8,1" time)
if(NOT kept STREQUAL "2024-05-01 10:00:00+00:00" OR NOT failed STREQUAL "RuntimeFailedConfig" OR NOT foreign MATCHES "^0\\.1" OR NOT fresh MATCHES "^2(\\.0+)?$")
  message(FATAL_ERROR "written cache: 32,8,1 timestamp '${kept}', 16,4,0 time '${failed}', 48,8,1 time '${foreign}', 16,8,1 time '${fresh}'")
endif()

# Resumed from the cache it wrote: every candidate is in it now, nothing is measured.
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_VISIBLE_DEVICES CACHEWISE_FAKE_DEVICES=${FAKES}
                ${ADVISOR} tune --spec ${SPEC} --size width=256,height=256 --strategy exhaustive --profile ${PROFILE}
                --kernel-tuner-cache ${WORK_DIR}/cache.json
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE again)
string(REGEX MATCHALL "\\[kernel tuner cache\\]" cached_lines "${again}")
list(LENGTH cached_lines cached_count)
if(NOT exit_code EQUAL 0 OR NOT cached_count EQUAL 18)
  message(FATAL_ERROR "second run (${exit_code}): ${cached_count} of 18 from the cache:\n${again}")
endif()

# Another device's cache is refused in one line (exit 2), as Kernel Tuner refuses it.
string(REPLACE "\"Fake H200\"" "\"NVIDIA A100-PCIE-40GB\"" other "${written}")
file(WRITE ${WORK_DIR}/other.json "${other}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=CUDA_VISIBLE_DEVICES CACHEWISE_FAKE_DEVICES=${FAKES}
                ${ADVISOR} tune --spec ${SPEC} --size width=256,height=256 --strategy exhaustive --profile ${PROFILE}
                --kernel-tuner-cache ${WORK_DIR}/other.json
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE refused)
if(NOT exit_code EQUAL 2 OR NOT refused MATCHES "^advisor: [^\n]*other.json: the cache holds another device \\(NVIDIA A100-PCIE-40GB, not Fake H200\\)\n$")
  message(FATAL_ERROR "another device's cache: exit ${exit_code}:\n${refused}")
endif()
message(STATUS "tune --kernel-tuner-cache: 3 cached candidates taken, 15 measured, the cache's pick, written back with 19 entries")
