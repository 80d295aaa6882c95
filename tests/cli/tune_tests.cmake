# advisor tune: bad input fails before any work; without a GPU (this build or this machine)
# it writes the advisor's static recommendation, says so on stderr in one line, and exits 0.
# Small sizes keep the model ranking fast.
set(cachewise_tune_out ${CMAKE_CURRENT_BINARY_DIR}/tune)
file(MAKE_DIRECTORY ${cachewise_tune_out}) # the tests write into it, in any order
cachewise_cli_test(tune_unknown_pattern EXIT 2 STDERR "^advisor: unknown pattern 'spiral'" ARGS tune --pattern spiral --n 64)
cachewise_cli_test(tune_bad_strategy EXIT 2 STDERR "^advisor: unknown strategy 'greedy' \\(valid: exhaustive, random, model\\)\n$"
  ARGS tune --pattern transpose --n 64 --strategy greedy)
cachewise_cli_test(tune_negative_size EXIT 2 STDERR "^advisor: transpose: n must be > 0, got -5\n$" ARGS tune --pattern transpose --n -5)
cachewise_cli_test(tune_missing_size EXIT 2 STDERR "^advisor: .*--n" ARGS tune --pattern transpose)
cachewise_cli_test(tune_bad_budget EXIT 2 STDERR "^advisor: --budget must be >= 0, got -1\n$"
  ARGS tune --pattern transpose --n 64 --budget -1)
cachewise_cli_test(tune_bad_fix EXIT 2 STDERR "^advisor: .*" ARGS tune --pattern copy --n 64 --fix "stride")
if(NOT CACHEWISE_WITH_CUDA)
  cachewise_cli_test(tune_static_fallback EXIT 0
    STDOUT "transpose n=64 f32: .*tile=[^\n]*  [0-9]+\\.[0-9][0-9] µs predicted \\(not measured\\)\ntranspose n=256 f32: [^\n]* µs predicted"
    STDERR "^advisor: tune: no CUDA device \\(built without CUDA\\); wrote the advisor's static recommendation \\(model-predicted, not measured\\) to .*tuned.h\n$"
    ARGS tune --pattern transpose --n 64 --n 256 --profile ${cachewise_example_profile}
         --header ${cachewise_tune_out}/tuned.h --json ${cachewise_tune_out}/tuned.json)
  cachewise_cli_test(tune_convergence_needs_a_gpu EXIT 2
    STDERR "^advisor: no CUDA device: --report-convergence needs measurements\n$"
    ARGS tune --pattern transpose --n 64 --report-convergence --profile ${cachewise_example_profile})
endif()

# The generated header compiles and config_for picks the nearest bucket (checked by a
# static_assert compiled against it).
add_test(NAME cli.tune_header_compiles
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DPROFILE=${cachewise_example_profile}
    -DCXX=${CMAKE_CXX_COMPILER} -DWORK_DIR=${cachewise_tune_out}/compiles
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/header_compiles.cmake)

if(CACHEWISE_WITH_CUDA)
  add_test(NAME cli.tune_on_gpu
    COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DWORK_DIR=${cachewise_tune_out}/gpu
      -P ${PROJECT_SOURCE_DIR}/tests/tuner/tune_on_gpu.cmake)
  set_tests_properties(cli.tune_on_gpu PROPERTIES LABELS gpu SKIP_REGULAR_EXPRESSION "SKIPPED: no CUDA device")
endif()

# The convergence table from recorded `advisor validate --all --json` cases (no GPU).
# transpose: best 10 us (tile=16), good = {10, 10.05} of 5 (tile=2 computed wrong: failed);
# predicted order 12, 10, ... -> model needs 2; random (5+1)/(2+1) = 2.0; the rule sees 10
# beat 12 in the first batch of 3 and widens to all 5. copy: measured order = predicted
# order -> model 1, random (4+1)/(1+1) = 2.5, the rule stops after its first batch of 3.
cachewise_cli_test(tune_convergence_from_validate EXIT 0
  STDOUT "transpose n=64 f32 +4 +2 +2 +2\\.0 +5 +100\\.0\ncopy n=1024 f32 +4 +1 +1 +2\\.5 +3 +100\\.0\n"
  ARGS tune --convergence-from ${PROJECT_SOURCE_DIR}/tests/tuner/data/validate-cases.json)
cachewise_cli_test(tune_convergence_from_missing_file EXIT 2 STDERR "^advisor: /nonexistent.json: cannot open\n$"
  ARGS tune --convergence-from /nonexistent.json)
cachewise_cli_test(tune_convergence_from_with_pattern EXIT 2 STDERR "^advisor: tune: --convergence-from reads recorded runs"
  ARGS tune --pattern copy --convergence-from ${PROJECT_SOURCE_DIR}/tests/tuner/data/validate-cases.json)
# Flags that would change nothing are rejected.
cachewise_cli_test(tune_seed_without_random EXIT 2 STDERR "^advisor: tune: --seed has no effect without --strategy random\n$"
  ARGS tune --pattern transpose --n 64 --seed 3)
cachewise_cli_test(tune_budget_with_report_convergence EXIT 2
  STDERR "^advisor: tune: --budget has no effect with --report-convergence \\(it measures every config\\)\n$"
  ARGS tune --pattern transpose --n 64 --report-convergence --budget 4)
cachewise_cli_test(tune_convergence_from_with_header EXIT 2
  STDERR "^advisor: tune: --header has no effect with --convergence-from \\(it reads recorded runs\\)\n$"
  ARGS tune --convergence-from ${PROJECT_SOURCE_DIR}/tests/tuner/data/validate-cases.json --header /tmp/never.h)

# --gpus: parallel measurement on the fake device list (same code paths as on GPUs): the
# advisor_fake_gpus test executable, `advisor` with the list CACHEWISE_FAKE_DEVICES names injected.
set(cachewise_fake_gpus ${PROJECT_SOURCE_DIR}/tests/tuner/data/fake-gpus.json)
add_test(NAME cli.tune_gpus_fake
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor_fake_gpus> -DPROFILE=${cachewise_example_profile}
    -DSPEC=${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json -DFAKES=${cachewise_fake_gpus}
    -DMIXED=${PROJECT_SOURCE_DIR}/tests/tuner/data/fake-gpus-mixed.json -DWORK_DIR=${cachewise_tune_out}/gpus
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/tune_gpus_fake.cmake)
# Resuming from a Kernel Tuner cache (--kernel-tuner-cache) on the fake devices.
add_test(NAME cli.tune_kernel_tuner_cache
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor_fake_gpus> -DPROFILE=${cachewise_example_profile}
    -DSPEC=${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json -DFAKES=${cachewise_fake_gpus}
    -DCACHE=${PROJECT_SOURCE_DIR}/tests/data/kernel_tuner/resume-fake-h200.json -DWORK_DIR=${cachewise_tune_out}/kernel-tuner-cache
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/tune_kernel_tuner_cache.cmake)
# A --gpus naming a device that is not there: one line, exit 2, before any work.
add_test(NAME cli.tune_gpus_unknown_device COMMAND ${CMAKE_COMMAND} -E env CACHEWISE_FAKE_DEVICES=${cachewise_fake_gpus}
  ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:advisor_fake_gpus>|tune|--pattern|transpose|--n|64|--gpus|0,7" -DEXPECT_EXIT=2
    "-DEXPECT_STDERR=^advisor: --gpus 0,7: no device 7 \\(this host has 0-2\\)\n$" -P ${CMAKE_CURRENT_SOURCE_DIR}/run_cli.cmake)
add_test(NAME cli.tune_kernel_gpus_unknown_device COMMAND ${CMAKE_COMMAND} -E env CACHEWISE_FAKE_DEVICES=${cachewise_fake_gpus}
  ${CMAKE_COMMAND} "-DCOMMAND=$<TARGET_FILE:advisor_fake_gpus>|tune|--spec|${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json|--size|width=64,height=64|--gpus|3"
    -DEXPECT_EXIT=2 "-DEXPECT_STDERR=^advisor: --gpus 3: no device 3 \\(this host has 0-2\\)\n$" -P ${CMAKE_CURRENT_SOURCE_DIR}/run_cli.cmake)
if(NOT CACHEWISE_WITH_CUDA)
  cachewise_cli_test(tune_gpus_without_gpu EXIT 2 STDERR "^advisor: --gpus all: this host has no GPU\n$"
    ARGS tune --pattern transpose --n 64 --gpus all --profile ${cachewise_example_profile})
endif()

# --mpi: one rank is not enough (rank 0 only coordinates); a build without MPI says so.
if(CACHEWISE_WITH_MPI)
  cachewise_cli_test(tune_mpi_one_rank EXIT 2 STDERR "^advisor: tune --mpi: needs at least 2 ranks \\(rank 0 plans, the others measure\\); got 1\n$"
    ARGS tune --spec ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json --size width=64,height=64 --mpi --profile ${cachewise_example_profile})
else()
  cachewise_cli_test(tune_mpi_without_mpi EXIT 2 STDERR "^advisor: tune --mpi: this advisor was built without MPI \\(install libopenmpi-dev and configure again\\)\n$"
    ARGS tune --pattern transpose --n 64 --mpi --profile ${cachewise_example_profile})
endif()
cachewise_cli_test(tune_mpi_with_gpus EXIT 2 STDERR "^advisor: tune: --gpus has no effect with --mpi"
  ARGS tune --pattern transpose --n 64 --mpi --gpus all --profile ${cachewise_example_profile})
# mpirun --oversubscribe -np 3 on this host, fake GPUs: serial results, a rank killed mid-run,
# resume after Open MPI's abort (tests/tuner/mpi_tune.sh; skipped without mpirun or MPI).
add_test(NAME cli.tune_mpi_ranks
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/tuner/mpi_tune.sh $<TARGET_FILE:advisor_fake_gpus> ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json
    ${cachewise_example_profile} ${PROJECT_SOURCE_DIR}/tests/tuner/data/fake-gpus-slow.json ${cachewise_tune_out}/mpi)
set_tests_properties(cli.tune_mpi_ranks PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)

# advisor merge-tuned: one header over several GPU models' results; bad input is one line, exit 2.
set(cachewise_merge_data ${PROJECT_SOURCE_DIR}/tests/tuner/data/merge)
add_test(NAME cli.merge_tuned_header_compiles
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DFAKE_GPUS_ADVISOR=$<TARGET_FILE:advisor_fake_gpus>
    -DCXX=${CMAKE_CXX_COMPILER} -DDATA=${cachewise_merge_data}
    -DSPEC=${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json -DPROFILE=${cachewise_example_profile}
    -DMIXED=${PROJECT_SOURCE_DIR}/tests/tuner/data/fake-gpus-mixed.json -DWORK_DIR=${cachewise_tune_out}/merge
    -P ${PROJECT_SOURCE_DIR}/tests/tuner/merge_tuned.cmake)
cachewise_cli_test(merge_tuned_different_kernels EXIT 2
  STDERR "^advisor: merge-tuned: [^\n]*copy.json tunes copy_f32, [^\n]*h200.json transpose_tiled: results of different kernels\n$"
  ARGS merge-tuned ${cachewise_merge_data}/h200.json ${cachewise_merge_data}/copy.json --header ${cachewise_tune_out}/never.h)
cachewise_cli_test(merge_tuned_different_spaces EXIT 2
  STDERR "^advisor: merge-tuned: [^\n]*other_space.json has another parameter space \\({\"BLOCK_ROWS\":\\[4,8\\],[^\n]*\n$"
  ARGS merge-tuned ${cachewise_merge_data}/h200.json ${cachewise_merge_data}/other_space.json --header ${cachewise_tune_out}/never.h)
cachewise_cli_test(merge_tuned_device_twice EXIT 2
  STDERR "^advisor: merge-tuned: two inputs hold results for NVIDIA H200 \\([^\n]*h200.json is the second\\)\n$"
  ARGS merge-tuned ${cachewise_merge_data}/h200.json ${cachewise_merge_data}/h200.json --header ${cachewise_tune_out}/never.h)
cachewise_cli_test(merge_tuned_not_tune_output EXIT 2
  STDERR "^advisor: [^\n]*example-gpu.json: not the --json of advisor tune \\(no 'scope' and 'parameters'\\)\n$"
  ARGS merge-tuned ${cachewise_example_profile} --header ${cachewise_tune_out}/never.h)
cachewise_cli_test(merge_tuned_missing_file EXIT 2 STDERR "^advisor: /nonexistent.json: cannot open\n$"
  ARGS merge-tuned /nonexistent.json --header ${cachewise_tune_out}/never.h)
