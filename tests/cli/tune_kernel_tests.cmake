# advisor tune --kernel/--spec: bad input is one line and exit 2; without a GPU the front end's
# static ranking is written, marked predicted. Small sizes keep the simulation fast.
set(cachewise_tune_kernel_out ${CMAKE_CURRENT_BINARY_DIR}/tune-kernel)
file(MAKE_DIRECTORY ${cachewise_tune_kernel_out})
set(cachewise_transpose_spec ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json)
set(cachewise_tuner_kernels ${PROJECT_SOURCE_DIR}/tests/tuner/data/kernels)

cachewise_cli_test(tune_kernel_unknown_size_arg EXIT 2
  STDERR "^advisor: size bucket widht=64: 'widht' is no arg or define of the kernel spec \\(width, height\\) and no name in transpose.cu\n$"
  ARGS tune --spec ${cachewise_transpose_spec} --size widht=64)
cachewise_cli_test(tune_kernel_size_twice EXIT 2 STDERR "^advisor: --size: 'width' is given twice\n$"
  ARGS tune --spec ${cachewise_transpose_spec} --size width=64,width=128)
cachewise_cli_test(tune_kernel_with_pattern EXIT 2 STDERR "^advisor: tune: --kernel/--spec sizes a user kernel with --size; it takes no --pattern"
  ARGS tune --spec ${cachewise_transpose_spec} --pattern transpose --n 64)
cachewise_cli_test(tune_kernel_bad_strategy EXIT 2 STDERR "^advisor: unknown strategy 'greedy' \\(valid: exhaustive, random, model\\)\n$"
  ARGS tune --spec ${cachewise_transpose_spec} --strategy greedy)
cachewise_cli_test(tune_kernel_missing_spec EXIT 2 STDERR "^advisor: /nonexistent.json: cannot open kernel spec\n$"
  ARGS tune --spec /nonexistent.json --size width=64)

if(NOT CACHEWISE_WITH_CUDA)
  # These reach the compiler and the model: with CUDA the run would measure instead.
  cachewise_cli_test(tune_kernel_pointer_without_buffer EXIT 2
    STDERR "^advisor: kernel parameter 'idata' is a pointer with no buffer: give --buffer idata=BYTES\n$"
    ARGS tune --kernel ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.cu --entry transpose_tiled --param TILE_DIM=32
         --param BLOCK_ROWS=8 --param PAD=0,1 --grid "width / TILE_DIM, height / TILE_DIM" --block "TILE_DIM, BLOCK_ROWS"
         --buffer "odata=width * height * 4" --arg width=64 --arg height=64 --profile ${cachewise_example_profile})
  cachewise_cli_test(tune_kernel_nothing_compiles EXIT 2
    STDERR "^advisor: [^\n]*never_compiles.cu\\(3\\): error: identifier \"undeclared_value\" is undefined\n$"
    ARGS tune --kernel ${cachewise_tuner_kernels}/never_compiles.cu --entry broken --param BLOCK=32,64 --grid 1 --block BLOCK
         --buffer "out=n * 4" --arg n=64 --profile ${cachewise_example_profile})
  # TILE_DIM=64 does not compile; 16 and 32 are still ranked and one of them is the pick.
  cachewise_cli_test(tune_kernel_one_candidate_does_not_compile EXIT 0
    STDOUT "^tiled_copy width=256: BLOCK_ROWS=8,TILE_DIM=(16|32)  [0-9.e-]+ ms predicted \\(not measured\\)\n$"
    ARGS tune --kernel ${cachewise_tuner_kernels}/no_tile_64.cu --entry tiled_copy --param TILE_DIM=16,32,64 --param BLOCK_ROWS=8
         --grid "width / TILE_DIM, width / TILE_DIM" --block "TILE_DIM, BLOCK_ROWS" --buffer "out=width * width * 4"
         --buffer "in=width * width * 4" --arg width=256 --profile ${cachewise_example_profile})
  cachewise_cli_test(tune_kernel_static_fallback EXIT 0
    STDOUT "^transpose_tiled width=64,height=64: BLOCK_ROWS=[0-9]+,PAD=[01],TILE_DIM=[0-9]+  [0-9.e-]+ ms predicted \\(not measured\\)\ntranspose_tiled width=256,height=256: "
    STDERR "^advisor: tune: no CUDA device: built without CUDA; wrote the front end's static ranking \\(model-predicted, not measured\\) to .*kernel.h\n$"
    ARGS tune --spec ${cachewise_transpose_spec} --size width=64,height=64 --size width=256,height=256
         --profile ${cachewise_example_profile} --header ${cachewise_tune_kernel_out}/kernel.h)
endif()

# The generated header compiles, its macros agree with its constexpr values, each bucket's
# pick satisfies the spec's constraint, and config_for picks the nearest bucket.
add_test(NAME cli.tune_kernel_header_compiles
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DPROFILE=${cachewise_example_profile} -DSPEC=${cachewise_transpose_spec}
    -DCXX=${CMAKE_CXX_COMPILER} -DWORK_DIR=${cachewise_tune_kernel_out}/compiles
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/kernel_header_compiles.cmake)

# cachewise_autotune(KERNEL_SPEC ...) through CMake, without a GPU and without an install.
add_test(NAME cli.autotune_kernel_project
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DMODULE=${PROJECT_SOURCE_DIR}/cmake/CachewiseAutotune.cmake
    -DEXAMPLE=${PROJECT_SOURCE_DIR}/examples/autotune-kernel -DPROFILE=${cachewise_example_profile}
    -DWORK_DIR=${cachewise_tune_kernel_out}/project -DGENERATOR=${CMAKE_GENERATOR}
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/autotune_kernel_project.cmake)

if(CACHEWISE_WITH_CUDA)
  add_test(NAME cli.tune_kernel_on_gpu
    COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DSPEC=${PROJECT_SOURCE_DIR}/examples/autotune-kernel/kernels/transpose.json
      -DWORK_DIR=${cachewise_tune_kernel_out}/gpu -P ${PROJECT_SOURCE_DIR}/tests/tuner/tune_kernel_on_gpu.cmake)
  set_tests_properties(cli.tune_kernel_on_gpu PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "SKIPPED: no CUDA device")
  add_test(NAME cli.tune_spmv_contents_on_gpu
    COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DSPEC=${PROJECT_SOURCE_DIR}/examples/kernels/spmv.json
      -DWORK_DIR=${cachewise_tune_kernel_out}/spmv-gpu -P ${PROJECT_SOURCE_DIR}/tests/tuner/tune_spmv_on_gpu.cmake)
  set_tests_properties(cli.tune_spmv_contents_on_gpu PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "SKIPPED: no CUDA device")
endif()

# The header's recorded command, run again as argv, writes the same header; the kernel's size is
# a macro (copy_defined_size.cu's N), set per bucket by --size N=... though N is no argument.
add_test(NAME cli.tune_kernel_header_command_reruns
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DPROFILE=${cachewise_example_profile}
    -DKERNEL=${PROJECT_SOURCE_DIR}/tests/frontend/data/copy_defined_size.cu -DWORK_DIR=${cachewise_tune_kernel_out}/rerun
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/header_command_rerun.cmake)
# Sizes fixed in the source (no arg, no define, no --size): one bucket, `fixed`, config_for().
cachewise_cli_test(tune_kernel_sizes_fixed_in_source EXIT 0 STDOUT "^copy_fixed: BLOCK=(128|256)  [0-9.e-]+ ms (predicted|measured)"
  ARGS tune --kernel ${PROJECT_SOURCE_DIR}/tests/frontend/data/copy_defined_size.cu --entry copy_fixed --param BLOCK=128,256
       --grid "4096 / BLOCK" --block BLOCK --buffer out=16384 --buffer in=16384 --profile ${cachewise_example_profile}
       --header ${cachewise_tune_kernel_out}/fixed.h)
