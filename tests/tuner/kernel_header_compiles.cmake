# Generates a user kernel's header with `advisor tune --spec` (static without a GPU) and
# compiles a translation unit that checks it. -DADVISOR -DPROFILE -DSPEC -DCXX -DWORK_DIR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${ADVISOR} tune --spec ${SPEC} --size width=64,height=64 --size width=256,height=1024 --profile ${PROFILE}
                        --header ${WORK_DIR}/tuned.h --json ${WORK_DIR}/tuned.json
                RESULT_VARIABLE exit_code ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor tune failed (${exit_code}): ${err}")
endif()
file(READ ${WORK_DIR}/tuned.json json)
string(JSON measured GET "${json}" measured)
string(JSON sizes LENGTH "${json}" sizes)
if(NOT sizes EQUAL 2)
  message(FATAL_ERROR "expected 2 size buckets in tuned.json, got ${sizes}")
endif()
if(measured)
  set(expected_flag true)
else()
  set(expected_flag false)
endif()
file(READ ${WORK_DIR}/tuned.h header)
file(WRITE ${WORK_DIR}/use.cpp "#include \"tuned.h\"
namespace tuned = cachewise_tuned::transpose_tiled;
static_assert(tuned::from_measurement == ${expected_flag}, \"the header says what tuned.json says\");
static_assert(tuned::from_measurement == (CACHEWISE_TUNED_TRANSPOSE_TILED_FROM_MEASUREMENT == 1), \"macro and flag agree\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH64_HEIGHT64_TILE_DIM == tuned::width64_height64.TILE_DIM, \"macro = value\");
static_assert(CACHEWISE_TUNED_TRANSPOSE_TILED_WIDTH256_HEIGHT1024_BLOCK_ROWS == tuned::width256_height1024.BLOCK_ROWS, \"macro = value\");
static_assert(tuned::width64_height64.TILE_DIM % tuned::width64_height64.BLOCK_ROWS == 0, \"the spec's constraint\");
static_assert(tuned::width256_height1024.TILE_DIM % tuned::width256_height1024.BLOCK_ROWS == 0, \"the spec's constraint\");
static_assert(tuned::width64_height64.TILE_DIM <= 64 && tuned::width64_height64.PAD <= 1, \"values from the spec\");
// Log distance: (64, 64) -> 1 * 1 vs 4 * 16; (128, 256) -> 2 * 4 = 8 vs 2 * 4 = 8: a tie keeps the first;
// (200, 400) -> 3.125 * 6.25 vs 1.28 * 2.56: the second.
static_assert(&tuned::config_for(64, 64) == &tuned::width64_height64, \"exact sizes\");
static_assert(&tuned::config_for(128, 256) == &tuned::width64_height64, \"a tie keeps the smaller bucket\");
static_assert(&tuned::config_for(200, 400) == &tuned::width256_height1024, \"nearer the larger bucket\");
static_assert(&tuned::config_for(0, -5) == &tuned::width64_height64, \"non-positive sizes count as 1\");
int main() { return tuned::device_name[0] == 0; }
")
execute_process(COMMAND ${CXX} -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I${WORK_DIR} ${WORK_DIR}/use.cpp
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "the generated header does not compile:\n${out}${err}\n--- tuned.h\n${header}")
endif()
