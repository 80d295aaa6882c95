# cachewise_autotune(KERNEL_SPEC ...) end to end without an install: a generated project
# includes the module, tunes examples/autotune-kernel's own kernel with this build's advisor
# (static without a GPU), compiles that example's main.cpp against the header and runs it.
# Misuse (FAMILY with KERNEL_SPEC, a family-only option) fails at configure time.
# -DADVISOR -DMODULE -DEXAMPLE -DPROFILE -DWORK_DIR -DGENERATOR
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/good ${WORK_DIR}/both ${WORK_DIR}/dtype)
string(CONCAT preamble "cmake_minimum_required(VERSION 3.25)\nproject(t LANGUAGES CXX)\ninclude(${MODULE})\n"
       "set(CACHEWISE_ADVISOR_EXECUTABLE ${ADVISOR})\nadd_executable(app ${EXAMPLE}/main.cpp)\n"
       "target_compile_features(app PRIVATE cxx_std_17)\n")
file(WRITE ${WORK_DIR}/good/CMakeLists.txt "${preamble}"
     "cachewise_autotune(TARGET app KERNEL_SPEC ${EXAMPLE}/kernels/transpose.json SIZES rows=1000,cols=1000 rows=4096,cols=4096\n"
     "                   OUTPUT tuned/transpose.h STRATEGY model BUDGET 4 PROFILE ${PROFILE})\n")
file(WRITE ${WORK_DIR}/both/CMakeLists.txt "${preamble}"
     "cachewise_autotune(TARGET app FAMILY transpose KERNEL_SPEC ${EXAMPLE}/kernels/transpose.json SIZES 64 OUTPUT t.h)\n")
file(WRITE ${WORK_DIR}/dtype/CMakeLists.txt "${preamble}"
     "cachewise_autotune(TARGET app KERNEL_SPEC ${EXAMPLE}/kernels/transpose.json SIZES rows=64,cols=64 OUTPUT t.h DTYPE f64)\n")

function(configure name expect_ok expect_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/${name} -B ${WORK_DIR}/${name}/build -G ${GENERATOR}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(expect_ok AND NOT code EQUAL 0)
    message(FATAL_ERROR "${name}: configure failed:\n${out}${err}")
  elseif(NOT expect_ok AND (code EQUAL 0 OR NOT err MATCHES "${expect_text}"))
    message(FATAL_ERROR "${name}: expected a configure error matching '${expect_text}', got (${code}):\n${err}")
  endif()
endfunction()
configure(both FALSE "give FAMILY or KERNEL_SPEC, not both")
configure(dtype FALSE "DTYPE is for FAMILY")
configure(good TRUE "")
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/good/build RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "build failed:\n${out}${err}")
endif()
file(READ ${WORK_DIR}/good/build/tuned/transpose.h header)
if(NOT header MATCHES "#define CACHEWISE_TUNED_TRANSPOSE_GUARDED_FROM_MEASUREMENT [01]")
  message(FATAL_ERROR "no FROM_MEASUREMENT macro in:\n${header}")
endif()
if(EXISTS ${WORK_DIR}/good/build/tuned/transpose.h.journal.rows1000_cols1000.jsonl)
  message(FATAL_ERROR "the finished run left its journal behind")
endif()
execute_process(COMMAND ${WORK_DIR}/good/build/app RESULT_VARIABLE code OUTPUT_VARIABLE out)
if(NOT code EQUAL 0 OR NOT out MATCHES "1000x1000 -> bucket 1000x1000: TILE=(16|32) ROWS=(4|8) PAD=[01]")
  message(FATAL_ERROR "the program using the header printed (${code}):\n${out}")
endif()
message(STATUS "${out}")
