# On a GPU: `advisor tune --spec` measures the example consumer's own kernel (with its
# reference check) and writes a measured header, Kernel Tuner cache and results; a resumed
# run measures nothing; `advisor validate --spec` prints predicted next to measured counters.
# Prints "SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION) when no device is usable.
# -DADVISOR -DSPEC -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(tune ${ADVISOR} tune --spec ${SPEC} --size rows=2048,cols=2048 --strategy exhaustive --max-repeats 20 --timeout-s 60
         --journal ${WORK_DIR}/tune.jsonl --header ${WORK_DIR}/tuned.h --json ${WORK_DIR}/tuned.json
         --kernel-tuner-cache ${WORK_DIR}/kernel_tuner.json)
execute_process(COMMAND ${tune} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(err MATCHES "no CUDA device")
  message("SKIPPED: no CUDA device (${err})")
  return()
endif()
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor tune --spec failed (${exit_code}):\n${out}${err}")
endif()
file(READ ${WORK_DIR}/tuned.h header)
if(NOT header MATCHES "#define CACHEWISE_TUNED_TRANSPOSE_GUARDED_FROM_MEASUREMENT 1")
  message(FATAL_ERROR "header is not marked measured:\n${header}")
endif()
file(READ ${WORK_DIR}/tuned.json results)
string(JSON best_ms GET "${results}" sizes 0 results best median_ms)
string(JSON evaluated LENGTH "${results}" sizes 0 results evaluations)
# The spec's space: TILE 16|32 x ROWS 4|8 x PAD 0|1, all satisfying TILE % ROWS == 0: 8 candidates,
# every one correct against the reference (the guarded transpose is right for any tile).
if(NOT best_ms GREATER 0 OR NOT evaluated EQUAL 8)
  message(FATAL_ERROR "implausible results: best_ms=${best_ms} evaluated=${evaluated}\n${err}")
endif()
if(err MATCHES "failed:")
  message(FATAL_ERROR "a candidate failed:\n${err}")
endif()
file(READ ${WORK_DIR}/kernel_tuner.json cache)
string(JSON cached LENGTH "${cache}" cache)
string(JSON objective GET "${cache}" objective)
if(NOT cached EQUAL 8 OR NOT objective STREQUAL "time")
  message(FATAL_ERROR "Kernel Tuner cache: ${cached} entries, objective ${objective}")
endif()

execute_process(COMMAND ${tune} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCHALL "tune: [^\n]* \\[[0-9]+/[0-9]+\\] [^\n]*\n" progress "${err}") # one per evaluation
# Every line is taken, none measured: from the journal or the Kernel Tuner cache (both hold this
# run's measurements; a line names the cache where the configuration is in it).
string(REGEX MATCHALL "tune: [^\n]*\\[(journal|kernel tuner cache)\\]\n" from_journal "${err}")
list(LENGTH progress progress_count)
list(LENGTH from_journal journal_count)
if(NOT exit_code EQUAL 0 OR progress_count EQUAL 0 OR NOT progress_count EQUAL journal_count)
  message(FATAL_ERROR "the resumed run measured again (${journal_count} of ${progress_count} from the journal or the cache):\n${err}")
endif()

execute_process(COMMAND ${ADVISOR} validate --spec ${SPEC} --arg rows=2048 --arg cols=2048 --top 2
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0 OR NOT out MATCHES "lts__t_sectors_op_read.sum +[0-9.]+ +[0-9.]+")
  message(FATAL_ERROR "advisor validate --spec (${exit_code}):\n${out}${err}")
endif()
message(STATUS "measured ${evaluated} candidates, best ${best_ms} ms\n${out}")
