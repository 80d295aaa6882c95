# fe-ptx's test sources of frontend_tests, paths relative to tests/frontend/.
# The extraction tests read PTX that nvcc compiles from tests/frontend/kernels/*.cu at build time
# (-lineinfo, so error messages can name CUDA source lines); without nvcc only the parser tests run.
set(CACHEWISE_FRONTEND_PTX_TESTS ptx_parse_test.cpp ptx_integer_test.cpp)
find_program(CACHEWISE_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
if(CACHEWISE_NVCC)
  set(cachewise_ptx_dir ${CMAKE_CURRENT_BINARY_DIR}/ptx)
  file(MAKE_DIRECTORY ${cachewise_ptx_dir})
  # cachewise_test_ptx(output source [-DNAME=VALUE ...]): source relative to kernels/, or absolute
  function(cachewise_test_ptx output source)
    set(ptx ${cachewise_ptx_dir}/${output}.ptx)
    if(NOT IS_ABSOLUTE ${source})
      set(source ${CMAKE_CURRENT_SOURCE_DIR}/kernels/${source})
    endif()
    add_custom_command(OUTPUT ${ptx}
      COMMAND ${CACHEWISE_NVCC} -ptx -arch=sm_90 -lineinfo ${ARGN} ${source} -o ${ptx}
      DEPENDS ${source}
      COMMENT "nvcc -ptx ${source} ${ARGN}" VERBATIM)
    set(cachewise_test_ptx_outputs ${cachewise_test_ptx_outputs} ${ptx} PARENT_SCOPE)
  endfunction()
  cachewise_test_ptx(transpose_t32_b8_p0 ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.cu -DTILE_DIM=32 -DBLOCK_ROWS=8 -DPAD=0)
  cachewise_test_ptx(transpose_t32_b8_p1 ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.cu -DTILE_DIM=32 -DBLOCK_ROWS=8 -DPAD=1)
  cachewise_test_ptx(transpose_t16_b4_p0 ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.cu -DTILE_DIM=16 -DBLOCK_ROWS=4 -DPAD=0)
  cachewise_test_ptx(reduce reduce.cu)
  cachewise_test_ptx(histogram histogram.cu)
  cachewise_test_ptx(constant_reads constant_reads.cu)
  cachewise_test_ptx(gemv gemv.cu)
  cachewise_test_ptx(conv2d conv2d.cu)
  cachewise_test_ptx(vectors vectors.cu)
  cachewise_test_ptx(spmv spmv.cu)
  cachewise_test_ptx(control control.cu)
  cachewise_test_ptx(async_copy async_copy.cu)
  cachewise_test_ptx(several several.cu)
  cachewise_test_ptx(translation translation.cu)
  cachewise_test_ptx(bench_gemm ${PROJECT_SOURCE_DIR}/benchmarks/kernels/gemm_register_tiled.cu)
  cachewise_test_ptx(bench_sum ${PROJECT_SOURCE_DIR}/benchmarks/kernels/sum_grid_stride.cu)
  cachewise_test_ptx(bench_conv ${PROJECT_SOURCE_DIR}/benchmarks/kernels/convolution_17x17.cu -DTILE_SIZE_X=2 -DTILE_SIZE_Y=2)
  # The built-in kernels, compiled from kernels/src as they are (host launchers included, so
  # every instantiation the launchers make is in the PTX): nvcc takes host code NVRTC rejects.
  set(cachewise_builtin_ptx_options -ptx -arch=sm_90 -std=c++20 --expt-relaxed-constexpr -lineinfo)
  function(cachewise_builtin_ptx family)
    set(ptx ${cachewise_ptx_dir}/builtin_${family}.ptx)
    set(source ${PROJECT_SOURCE_DIR}/kernels/src/${family}.cu)
    file(GLOB headers ${PROJECT_SOURCE_DIR}/kernels/src/*.cuh ${PROJECT_SOURCE_DIR}/kernels/src/*.hpp
         ${PROJECT_SOURCE_DIR}/model/include/cachewise/model/families/family_kernels.hpp)
    add_custom_command(OUTPUT ${ptx}
      COMMAND ${CACHEWISE_NVCC} ${cachewise_builtin_ptx_options}
              -I${PROJECT_SOURCE_DIR}/model/include -I${PROJECT_SOURCE_DIR}/kernels/include ${source} -o ${ptx}
      DEPENDS ${source} ${headers}
      COMMENT "nvcc -ptx kernels/src/${family}.cu" VERBATIM)
    set(cachewise_test_ptx_outputs ${cachewise_test_ptx_outputs} ${ptx} PARENT_SCOPE)
  endfunction()
  cachewise_builtin_ptx(copy)
  cachewise_builtin_ptx(transpose)
  cachewise_builtin_ptx(stencil2d)
  cachewise_builtin_ptx(stencil3d)
  cachewise_builtin_ptx(gemm)
  set(cachewise_extract_tests
    extract_transpose_test.cpp
    extract_reduce_test.cpp
    extract_atomics_test.cpp
    extract_constant_test.cpp
    extract_gemv_test.cpp
    extract_conv2d_test.cpp
    extract_vector_test.cpp
    extract_reject_test.cpp
    extract_contents_test.cpp
    extract_control_test.cpp
    extract_async_test.cpp
    extract_several_test.cpp
    extract_loops_test.cpp
    extract_translation_test.cpp
    builtin_crosscheck_test.cpp)
  set_source_files_properties(${cachewise_extract_tests} PROPERTIES COMPILE_DEFINITIONS CACHEWISE_TEST_PTX_DIR="${cachewise_ptx_dir}")
  list(APPEND CACHEWISE_FRONTEND_PTX_TESTS ${cachewise_extract_tests} ${cachewise_test_ptx_outputs})
  # Prints measurements/frontend-crosscheck.md's table: builtin_crosscheck_table PROFILE PTX_DIR
  add_executable(builtin_crosscheck_table builtin/crosscheck_table.cpp ${cachewise_test_ptx_outputs})
  target_link_libraries(builtin_crosscheck_table PRIVATE cachewise::frontend)
  cachewise_warnings(builtin_crosscheck_table)
  target_compile_definitions(builtin_crosscheck_table PRIVATE CACHEWISE_TEST_PTX_DIR="${cachewise_ptx_dir}"
                             CACHEWISE_H200_PROFILE="${PROJECT_SOURCE_DIR}/profiles/h200.json")
  # The built-in kernels' PTX for the kernel facts generator (tools/kernel_facts): a target
  # here, where its rules are, and the folder and the options that made it.
  set(cachewise_builtin_ptx_outputs ${cachewise_test_ptx_outputs})
  list(FILTER cachewise_builtin_ptx_outputs INCLUDE REGEX "/builtin_[a-z0-9]+\\.ptx$")
  add_custom_target(cachewise_builtin_ptx DEPENDS ${cachewise_builtin_ptx_outputs})
  set(CACHEWISE_BUILTIN_PTX_DIR ${cachewise_ptx_dir} CACHE INTERNAL "builtin_<family>.ptx of tests/frontend")
  set(CACHEWISE_BUILTIN_PTX_OPTIONS ${cachewise_builtin_ptx_options} CACHE INTERNAL "nvcc options of builtin_<family>.ptx")
else()
  message(STATUS "nvcc not found: the PTX extraction tests are not built")
endif()
