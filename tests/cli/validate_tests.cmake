# advisor validate: bad input is reported in one line (exit 2) before any GPU is needed, so
# these hold on CPU-only machines too. Its GPU modes exist only in CUDA builds (without CUDA
# `validate --spec S --kernel-tuner-cache FILE` alone runs: validate_cache_tests.cmake).
if(CACHEWISE_WITH_CUDA)
  cachewise_cli_test(validate_unknown_pattern EXIT 2 STDERR "^advisor: unknown pattern 'spiral'"
    ARGS validate --pattern spiral --n 64 --config tile=8 --profile ${cachewise_example_profile})
  cachewise_cli_test(validate_bad_config EXIT 2 STDERR "^advisor: transpose: tile \\(32\\) must be a multiple of block_x \\(24\\)\n$"
    ARGS validate --pattern transpose --n 64 --config smem=0,tile=32,block_x=24,block_y=8 --profile ${cachewise_example_profile})
  cachewise_cli_test(validate_needs_one_mode EXIT 2 STDERR "^advisor: validate: give exactly one of --config, --top K or --all\n$"
    ARGS validate --pattern copy --n 1024 --all --top 3 --profile ${cachewise_example_profile})
  cachewise_cli_test(validate_bad_dtype EXIT 2 STDERR "^advisor: .*f8"
    ARGS validate --pattern copy --n 1024 --dtype f8 --all --profile ${cachewise_example_profile})
endif()

# On a machine without the NVIDIA driver the CUDA runtime calls it "insufficient": the CLI
# says there is no driver (only where ldconfig knows no libcuda.so.1, e.g. a CPU-only CI).
if(CACHEWISE_WITH_CUDA)
  execute_process(COMMAND ldconfig -p OUTPUT_VARIABLE cachewise_ldconfig ERROR_QUIET)
  if(NOT cachewise_ldconfig MATCHES "libcuda\\.so\\.1")
    cachewise_cli_test(validate_no_driver EXIT 2
      STDERR "^advisor: no NVIDIA driver found \\(libcuda\\.so\\.1 cannot be loaded\\): this command runs on a GPU\n$"
      ARGS validate --pattern transpose --n 64 --config smem=0,tile=32,block_x=32,block_y=8 --profile ${cachewise_example_profile})
  endif()
endif()
if(CACHEWISE_WITH_CUDA)
  cachewise_cli_test(validate_counters_without_all EXIT 2
    STDERR "^advisor: validate: --counters has no effect without --all \\(every row's counters are read\\)\n$"
    ARGS validate --pattern copy --n 1024 --top 2 --counters 1 --profile ${cachewise_example_profile})
  cachewise_cli_test(validate_missing_n EXIT 2 STDERR "^advisor: validate: --n is required with --pattern\n$"
    ARGS validate --pattern copy --all --profile ${cachewise_example_profile})
endif()
