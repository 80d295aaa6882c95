# On a GPU: `advisor tune --spec examples/kernels/spmv.json` measures a CSR SpMV whose index
# arrays have declared contents. The tuner must upload them (row_ptr[i] = 32 i, banded col):
# with the hashed float words instead, row_ptr and col would hold values near 10^9, and every
# candidate would read far outside its buffers or disagree with the reference. All 9 candidates
# (BLOCK_SIZE 128|256|512 x THREADS_PER_ROW 1|4|32) must run and match THREADS_PER_ROW=1's y.
# Prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION) when no device is usable.
# -DADVISOR -DSPEC -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${ADVISOR} tune --spec ${SPEC} --size rows=65536 --strategy exhaustive --max-repeats 10 --timeout-s 60
                        --json ${WORK_DIR}/tuned.json --header ${WORK_DIR}/tuned.h
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(err MATCHES "no CUDA device")
  message("SKIPPED: no CUDA device (${err})")
  return()
endif()
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor tune --spec spmv.json failed (${exit_code}):\n${out}${err}")
endif()
if(err MATCHES "failed:")
  message(FATAL_ERROR "a candidate failed:\n${err}")
endif()
file(READ ${WORK_DIR}/tuned.json results)
string(JSON best_ms GET "${results}" sizes 0 results best median_ms)
string(JSON evaluated LENGTH "${results}" sizes 0 results evaluations)
if(NOT best_ms GREATER 0 OR NOT evaluated EQUAL 9)
  message(FATAL_ERROR "implausible results: best_ms=${best_ms} evaluated=${evaluated}\n${err}")
endif()
message(STATUS "measured ${evaluated} candidates, best ${best_ms} ms\n${out}")
