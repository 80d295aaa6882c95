# Generates a header with `advisor tune` (static without a GPU) and compiles a translation
# unit that uses it. -DADVISOR=... -DPROFILE=... -DCXX=... -DWORK_DIR=...
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${ADVISOR} tune --pattern transpose --n 64 --n 256 --profile ${PROFILE}
                        --header ${WORK_DIR}/tuned.h --json ${WORK_DIR}/tuned.json
                RESULT_VARIABLE exit_code ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor tune failed (${exit_code}): ${err}")
endif()
file(READ ${WORK_DIR}/tuned.h header)
if(NOT header MATCHES "CACHEWISE_TUNED_TRANSPOSE_F32_FROM_MEASUREMENT [01]")
  message(FATAL_ERROR "no FROM_MEASUREMENT macro in:\n${header}")
endif()
# 64 and 256 meet at their geometric mean 128: 127 is the small bucket, 128 the large one.
file(WRITE ${WORK_DIR}/use.cpp [=[
#include "tuned.h"
namespace tuned = cachewise_tuned::transpose_f32;
static_assert(tuned::config_for(1).n == 64, "smallest sizes use the first bucket");
static_assert(tuned::config_for(127).n == 64, "below the geometric mean: first bucket");
static_assert(tuned::config_for(128).n == 256, "from the geometric mean on: second bucket");
static_assert(tuned::config_for(1 << 30).n == 256, "beyond the last size: last bucket");
static_assert(tuned::config_for(64).tile > 0 && tuned::config_for(64).block_x > 0, "a real config");
static_assert(tuned::from_measurement == (CACHEWISE_TUNED_TRANSPOSE_F32_FROM_MEASUREMENT == 1), "macro and flag agree");
int main() { return tuned::device_name[0] == '\0'; }
]=])
execute_process(COMMAND ${CXX} -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I${WORK_DIR} ${WORK_DIR}/use.cpp
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "the generated header does not compile:\n${out}${err}\n--- tuned.h\n${header}")
endif()
