# advisor simulate
set(cachewise_expert_transpose smem=1,tile=32,block_x=32,block_y=8,pad=1)
cachewise_cli_test(simulate_transpose EXIT 0
  STDOUT "transpose n=1024 f32.*predicted time +[0-9.]+ µs.*l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum +0\n"
  ARGS simulate --pattern transpose --n 1024 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_json EXIT 0
  STDOUT "\"metrics\": \\{.*\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\": 65536,.*\"time_us\""
  ARGS simulate --pattern transpose --n 256 --config smem=0,tile=32,block_x=32,block_y=8 --profile ${cachewise_example_profile} --json)
cachewise_cli_test(simulate_pattern_file EXIT 0 STDOUT "pattern row_sum from .*row-sum.json"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_unknown_family EXIT 2
  STDERR "^advisor: unknown pattern 'transpos' \\(valid: copy, gemm, stencil2d, stencil3d, transpose\\)\n$"
  ARGS simulate --pattern transpos --n 64 --config tile=32 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_missing_key EXIT 2 STDERR "^advisor: config: missing key 'tile'\n$"
  ARGS simulate --pattern transpose --n 64 --config smem=0,block_x=32,block_y=8 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_unknown_key EXIT 2 STDERR "^advisor: config: unknown key 'ept' for transpose"
  ARGS simulate --pattern transpose --n 64 --config ${cachewise_expert_transpose},ept=2 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_rule_broken EXIT 2 STDERR "^advisor: transpose: tile \\(32\\) must be a multiple of block_y \\(6\\)\n$"
  ARGS simulate --pattern transpose --n 64 --config smem=1,tile=32,block_x=32,block_y=6,pad=1 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_n_zero EXIT 2 STDERR "^advisor: transpose: n must be > 0, got 0\n$"
  ARGS simulate --pattern transpose --n 0 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_n_not_a_number EXIT 2 STDERR "^advisor: .*--n.*\n$"
  ARGS simulate --pattern transpose --n many --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_shared_over_limit EXIT 2
  STDERR "^advisor: pattern needs 263168 bytes of shared memory per block; the device allows 232448\n$"
  ARGS simulate --pattern transpose --n 4096 --config smem=1,tile=256,block_x=32,block_y=8,pad=1 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_no_pattern EXIT 2 STDERR "^advisor: simulate: give exactly one of --pattern FAMILY or --pattern-file FILE\n$"
  ARGS simulate --n 64 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_bad_pattern_file EXIT 2
  STDERR "^advisor: .*bad-pattern.json: pattern.phases\\[0\\].accesses\\[0\\].array: unknown array 'nope'\n$"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/tests/data/patterns/bad-pattern.json --profile ${cachewise_example_profile})
# A 32-tile transpose's warps store one 128 B line of each output row and the neighbouring
# blocks write other rows: every stored line is spread; the H200 profile slows that x1.11.
cachewise_cli_test(simulate_spread_writes EXIT 0
  STDOUT "spread writes: 100.0% of the stored lines in runs of 128 B per row that the neighbouring blocks do not continue; DRAM time x1\\.11[0-9]\n"
  ARGS simulate --pattern transpose --n 2048 --config ${cachewise_expert_transpose} --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json)

# The JSON says what was predicted: version, pattern, config and profile beside the prediction.
cachewise_cli_test(simulate_json_self_describing EXIT 0
  STDOUT "\"cachewise_version\": \"[0-9]+\\.[0-9]+\\.[0-9]+\",\n *\"calibration\": \"[a-z0-9-]+\",\n *\"config\": \"block_x=32,block_y=8,smem=0,tile=32\",.*\"pattern\": \\{\n *\"dtype\": \"f32\",\n *\"family\": \"transpose\",\n *\"k\": 0,\n *\"m\": 0,\n *\"n\": 256\n *\},\n *\"profile\": \\{\n *\"device\": \"Example Hopper GPU\",.*\"source\": \"--profile\""
  ARGS simulate --pattern transpose --n 256 --config smem=0,tile=32,block_x=32,block_y=8 --profile ${cachewise_example_profile} --json)
# Sampled (n=4096 with the default work budget): counts are whole numbers scaled from the
# sample, and the JSON says so with the factor.
cachewise_cli_test(simulate_json_sampled_counts EXIT 0
  STDOUT "\"lts__t_sectors_op_read.sum\": [0-9]+,\n.*\"sampled\": true,\n *\"scale_factor\": [1-9][0-9]*\\.[0-9]+,\n *\"simulated_fraction\": 0\\.[0-9]+"
  ARGS simulate --pattern transpose --n 4096 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile} --json)
cachewise_cli_test(simulate_text_sampled EXIT 0
  STDOUT "\ncounts extrapolated from a sample: [0-9.]+% of the work simulated, scaled x[0-9.]+\n"
  ARGS simulate --pattern transpose --n 4096 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
# The text says how the terms make the time: launch + per wave the soft maximum of two sides,
# each side's parts named (the arithmetic: tests/model/sampling_test.cpp).
cachewise_cli_test(simulate_time_terms_combine EXIT 0
  STDOUT "predicted time +[0-9.]+ µs  \\(bottleneck: [a-z]+, useful bandwidth [0-9]+ GB/s\\)\n  = launch 2\\.00 \\+ [0-9.]+: per wave the soft maximum of its memory side and SM side, summed over 7 waves\n  memory side +[0-9.]+ = soft maximum of \\(dram [0-9.]+, l2 [0-9.]+, l1 [0-9.]+\\) \\+ exposed latency [0-9.]+\n  SM side +[0-9.]+ from latency [0-9.]+ and soft maximum of \\(compute [0-9.]+ \\+ issue [0-9.]+, shared [0-9.]+, constant [0-9.]+, blocks [0-9.]+\\): their sum in the first wave, after it the larger of that work and\n +latency \\+ work / resident blocks\n"
  ARGS simulate --pattern transpose --n 2048 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
# 16 blocks of 256 threads move 16384 floats: their one round of loads waits for DRAM and no
# other block on the SM covers it: the exposed latency is the bottleneck.
cachewise_cli_test(simulate_latency_bottleneck EXIT 0 STDOUT "\\(bottleneck: latency,"
  ARGS simulate --pattern copy --n 16384 --config block=256,vector=1,ept=4 --profile ${cachewise_example_profile})

# Flags that would change nothing, or that are missing, are named.
cachewise_cli_test(simulate_missing_config EXIT 2 STDERR "^advisor: simulate: --config is required with --pattern \\(e\\.g\\. "
  ARGS simulate --pattern transpose --n 64 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_missing_n EXIT 2 STDERR "^advisor: simulate: --n is required with --pattern\n$"
  ARGS simulate --pattern transpose --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_pattern_file_with_config EXIT 2
  STDERR "^advisor: simulate: --config has no effect with --pattern-file \\(the file describes one kernel\\)\n$"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --config tile=32 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_pattern_file_with_n EXIT 2
  STDERR "^advisor: simulate: --n has no effect with --pattern-file \\(the file gives its sizes and element types\\)\n$"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --n 4096 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_pattern_file_with_dtype EXIT 2 STDERR "^advisor: simulate: --dtype has no effect with --pattern-file"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --dtype f64 --profile ${cachewise_example_profile})

# Warnings on stderr, exit 0: row-sum's 4 blocks leave 128 of 132 SMs idle; copy's n counts
# elements (2^20 f32 = 4 MiB; 1024 blocks of 256 x 4, no idle SM).
cachewise_cli_test(simulate_idle_sms EXIT 0 STDOUT "\\(4 blocks\\)"
  STDERR "^advisor: warning: 4 blocks on 132 SMs: 128 SMs idle\n$"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_copy_size EXIT 0
  STDERR "^advisor: warning: copy n=1048576 elements = 4 MiB per array \\(--n counts elements for copy\\)\n$"
  ARGS simulate --pattern copy --n 1048576 --config block=256,vector=4,ept=1 --profile ${cachewise_example_profile})

# The spread-write rule is the transposes': a block-per-row matrix-vector product whose 512
# blocks write 4 B each of y (32 neighbouring blocks per line) is not slowed, on the H200
# profile that slows the transposes above x1.11.
cachewise_cli_test(simulate_shared_lines_not_spread_text EXIT 0 STDOUT "predicted time" NOT_STDOUT "spread writes"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/tests/data/patterns/matvec-block-per-row.json
       --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json)
cachewise_cli_test(simulate_shared_lines_not_spread EXIT 0
  STDOUT "\"spread_write_factor\": 1\\.0,\n *\"spread_write_fraction\": 0\\.0,"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/tests/data/patterns/matvec-block-per-row.json
       --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json --json)
