# `advisor suggest --kernel ... --progress`: progress lines on stderr from the start, the last
# with the final counts; --json without --progress leaves stderr empty. -DADVISOR -DSPEC -DPROFILE
# transpose.json with TILE_DIM=32, PAD=1 and BLOCK_ROWS 4, 8, 16: 3 candidates (32 divides by
# each), 3 builds (BLOCK_ROWS is a macro: three sources). Each candidate is screened, then the
# example profile refines min(3, max(32 screening_refined_candidates, --top 3)) = 3 of them:
# 3 + 3 = 6 simulations. So the run ends at "compiled 3/3, simulated 6/6".
set(kernel suggest --spec ${SPEC} --profile ${PROFILE} --param TILE_DIM=32 --param BLOCK_ROWS=4,8,16 --param PAD=1 --json)
execute_process(COMMAND ${ADVISOR} ${kernel} --progress RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0 OR NOT out MATCHES "^{")
  message(FATAL_ERROR "advisor suggest --json --progress failed (${exit_code}):\n${out}${err}")
endif()
if(NOT err MATCHES "\n$")
  message(FATAL_ERROR "stderr should end a line:\n${err}")
endif()
string(REGEX REPLACE "\n$" "" err_lines "${err}")
string(REPLACE "\n" ";" err_lines "${err_lines}")
set(line_shape "^advisor: compiled [0-3]/3, simulated ([0-6]/6|0/\\?), [0-9]+\\.[0-9] s elapsed(, about [0-9]+ s left( to compile)?)?$")
foreach(line IN LISTS err_lines)
  if(NOT line MATCHES "${line_shape}")
    message(FATAL_ERROR "a stderr line is no progress line: '${line}'\n${err}")
  endif()
endforeach()
list(GET err_lines -1 last)
if(NOT last MATCHES "^advisor: compiled 3/3, simulated 6/6, [0-9]+\\.[0-9] s elapsed$")
  message(FATAL_ERROR "the last progress line should have the final counts 3/3 and 6/6, got '${last}'\n${err}")
endif()
# Without --progress, --json (and a stderr that is no terminal) reports nothing.
execute_process(COMMAND ${ADVISOR} ${kernel} RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0 OR NOT err STREQUAL "")
  message(FATAL_ERROR "advisor suggest --json should leave stderr empty (${exit_code}):\n${err}")
endif()
list(LENGTH err_lines line_count)
message(STATUS "${line_count} progress lines, the last: ${last}")
