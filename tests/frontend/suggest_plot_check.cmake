# `advisor suggest --plot FILE.svg`: every feasible candidate drawn, and the heat map over two
# varied parameters. -DADVISOR -DSPEC -DPROFILE -DWORK_DIR
# TILE_DIM=32 leaves BLOCK_ROWS in {4, 8, 16} x PAD in {0, 1}: 6 candidates (32 divides by each),
# so 6 points, and a 3 x 2 heat map of 6 filled cells (every pair feasible), BLOCK_ROWS across.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${ADVISOR} suggest --spec ${SPEC} --profile ${PROFILE} --param TILE_DIM=32 --top 2 --plot ${WORK_DIR}/plot.svg
                RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT exit_code EQUAL 0)
  message(FATAL_ERROR "advisor suggest --plot failed (${exit_code}): ${out}${err}")
endif()
file(READ ${WORK_DIR}/plot.svg svg)
string(REGEX MATCHALL "<circle " points "${svg}")
list(LENGTH points point_count)
string(REGEX MATCHALL "fill='rgb\\(" cells "${svg}")
list(LENGTH cells cell_count)
if(NOT svg MATCHES "^<svg " OR NOT svg MATCHES "</svg>\n$" OR NOT point_count EQUAL 6 OR NOT cell_count EQUAL 6 OR
   NOT svg MATCHES "over BLOCK_ROWS \\(across\\) and PAD \\(down\\)" OR NOT svg MATCHES "6 feasible candidates")
  message(FATAL_ERROR "expected 6 points and a 3 x 2 heat map over BLOCK_ROWS and PAD, got ${point_count} points and ${cell_count} cells:\n${svg}")
endif()
# The table still shows --top 2.
if(NOT out MATCHES "\n2  [^\n]*\n[^\n]*\n\\(predicted" OR out MATCHES "\n3  ")
  message(FATAL_ERROR "the table should keep --top 2:\n${out}")
endif()
message(STATUS "${point_count} points, ${cell_count} heat-map cells")
