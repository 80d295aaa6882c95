# advisor validate --spec S --kernel-tuner-cache FILE: the model's ranking against the times of a
# Kernel Tuner cache file (tests/data/kernel_tuner, written by hand in Kernel Tuner's format and,
# like a cache Kernel Tuner is still writing, without its closing braces). No GPU.
set(cachewise_kt_data ${PROJECT_SOURCE_DIR}/tests/data/kernel_tuner)
set(cachewise_kt_spec --spec ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.json --profile ${cachewise_example_profile})

# With TILE_DIM=32 and BLOCK_ROWS=8 the spec has two candidates, and the model ranks PAD=1 first
# (PAD=0 reads the tile with a 32-way bank conflict: cli.suggest_kernel_flags_override_spec).
# The cache measured PAD=0 at 40 µs and PAD=1 at 50 µs: top-1/best = 50/40 = 1.25, the best is
# the model's second, both of the top 3 hold it (1.000), two candidates in opposite orders give
# Spearman -1, and reaching 1.01x the best takes both evaluations. TILE_DIM=16 is not among the
# spec's values (one measured, one failed entry); use_cmem has one value and is ignored.
cachewise_kernel_test(validate_kernel_tuner_cache EXIT 0
  STDOUT "Kernel Tuner cache [^\n]*transpose-pad.json: transpose_tiled on NVIDIA H200, problem_size \\[4096,4096\\], 4 configurations \\(1 failed or skipped\\), unfinished \\(no closing braces\\)\n.*cache parameter use_cmem=1 \\(one value throughout\\): not in the spec, ignored\ncompared: 2 candidates ranked by the model and in the cache, 2 with a measured time; 0 ranked candidates not in the cache\n.*\n1 +BLOCK_ROWS=8,PAD=1,TILE_DIM=32 +[0-9.]+ +50.0 +2\n2 +BLOCK_ROWS=8,PAD=0,TILE_DIM=32 +[0-9.]+ +40.0 +1\n\nbest measured: BLOCK_ROWS=8,PAD=0,TILE_DIM=32 40.0 µs, predicted rank 2\ntop-1/best: 1.250 \\(BLOCK_ROWS=8,PAD=1,TILE_DIM=32\\)\nbest of the predicted top 3/best: 1.000\nSpearman \\(predicted vs measured time, 2 candidates\\): -1.000\nevaluations in model order to reach 1.01x the best: 2 of 2\n\nnot expressible by the spec: 2 cached configurations\n  TILE_DIM=16 is not among the spec's values \\(32\\): 2 configurations, e.g. 16,8,0,1\n$"
  ARGS validate ${cachewise_kt_spec} --param TILE_DIM=32 --param BLOCK_ROWS=8 --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json)
cachewise_kernel_test(validate_kernel_tuner_cache_json EXIT 0
  STDOUT "\"best_of_top3_over_best\": 1\\.0,.*\"evaluations_to_within\": 2,.*\"spearman\": -1\\.0,.*\"top1_over_best\": 1\\.25"
  ARGS validate ${cachewise_kt_spec} --param TILE_DIM=32 --param BLOCK_ROWS=8 --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json --json)

# Bad input: one line, exit 2, before any compilation.
cachewise_cli_test(validate_kernel_tuner_cache_missing_file EXIT 2
  STDERR "^advisor: /nonexistent/cache.json: cannot read the Kernel Tuner cache file\n$"
  ARGS validate ${cachewise_kt_spec} --kernel-tuner-cache /nonexistent/cache.json)
cachewise_cli_test(validate_kernel_tuner_cache_not_a_cache EXIT 2
  STDERR "^advisor: [^\n]*not-a-cache.json: not a Kernel Tuner cache file \\(no \"tune_params_keys\" list\\)\n$"
  ARGS validate ${cachewise_kt_spec} --kernel-tuner-cache ${cachewise_kt_data}/not-a-cache.json)
cachewise_cli_test(validate_kernel_tuner_cache_not_json EXIT 2
  STDERR "^advisor: [^\n]*transpose.cu: not JSON, nor a Kernel Tuner cache file cut short while being written\n$"
  ARGS validate ${cachewise_kt_spec} --kernel-tuner-cache ${PROJECT_SOURCE_DIR}/examples/kernels/transpose.cu)
cachewise_cli_test(validate_kernel_tuner_cache_needs_spec EXIT 2
  STDERR "^advisor: validate: --kernel-tuner-cache compares a --spec or --kernel with the cache; give one\n$"
  ARGS validate --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json)
cachewise_cli_test(validate_kernel_tuner_cache_with_top EXIT 2
  STDERR "^advisor: validate: --top has no effect with --kernel-tuner-cache \\(it runs nothing: every ranked candidate is compared with the cache\\)\n$"
  ARGS validate ${cachewise_kt_spec} --top 3 --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json)
# The spec's BLOCK_ROWS takes 4, 8, 16; the cache measured 8 alone, but its TILE_DIM=16 or 32
# never meets the spec's TILE_DIM=64.
cachewise_cli_test(validate_kernel_tuner_cache_nothing_matches EXIT 2
  STDERR "^advisor: [^\n]*transpose-pad.json: none of its 4 configurations is a candidate of the spec \\(16,8,0,1: TILE_DIM=16 is not among the spec's values \\(64\\)\\)\n$"
  ARGS validate ${cachewise_kt_spec} --param TILE_DIM=64 --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json)
cachewise_cli_test(validate_kernel_tuner_cache_spec_parameter_missing EXIT 2
  STDERR "^advisor: the spec's parameter SCALE \\(1, 2\\) is not in the cache's tune_params_keys \\(TILE_DIM, BLOCK_ROWS, PAD, use_cmem\\)\n$"
  ARGS validate ${cachewise_kt_spec} --param SCALE=1,2 --kernel-tuner-cache ${cachewise_kt_data}/transpose-pad.json)
