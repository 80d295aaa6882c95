# advisor simulate
set(cachewise_expert_transpose smem=1,tile=32,block_x=32,block_y=8,pad=1)
cachewise_cli_test(simulate_transpose EXIT 0
  STDOUT "transpose n=1024 f32.*predicted time +[0-9.]+ us.*l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum +0\n"
  ARGS simulate --pattern transpose --n 1024 --config ${cachewise_expert_transpose} --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_json EXIT 0
  STDOUT "\"metrics\": \\{.*\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\": 65536\\.0.*\"time_us\""
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
cachewise_cli_test(simulate_no_pattern EXIT 2 STDERR "^advisor: give exactly one of --pattern FAMILY or --pattern-file FILE\n$"
  ARGS simulate --n 64 --profile ${cachewise_example_profile})
cachewise_cli_test(simulate_bad_pattern_file EXIT 2
  STDERR "^advisor: .*bad-pattern.json: pattern.phases\\[0\\].accesses\\[0\\].array: unknown array 'nope'\n$"
  ARGS simulate --pattern-file ${PROJECT_SOURCE_DIR}/tests/data/patterns/bad-pattern.json --profile ${cachewise_example_profile})
# A 32-tile transpose's warps store one 128 B line of each output row and the neighbouring
# blocks write other rows: every stored line is spread; the H200 profile slows that x1.11.
cachewise_cli_test(simulate_spread_writes EXIT 0
  STDOUT "spread writes: 100.0% of the stored lines in runs of 128 B per row that the neighbouring blocks do not continue; DRAM time x1\\.11[0-9]\n"
  ARGS simulate --pattern transpose --n 2048 --config ${cachewise_expert_transpose} --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json)
