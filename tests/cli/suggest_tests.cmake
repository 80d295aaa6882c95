# advisor suggest: ranking output, JSON, pins, custom patterns, and one-line bad-input errors.
set(cachewise_suggest_profile --profile ${cachewise_example_profile})

# Transpose: a staged (smem=1) config must win, and its reason names a mechanism with numbers.
cachewise_cli_test(suggest_transpose EXIT 0
  STDOUT "profile: Example Hopper GPU from .*example-gpu.json \\[--profile\\].*transpose n=1024 f32: [0-9]+ feasible.*time µs.*\n1  [^\n]*smem=1[^\n]*[0-9]+x? (faster|slower)\n.*\\(predicted on the profile; the columns are explained in docs/glossary.md\\)\n$"
  ARGS suggest --pattern transpose --n 1024 ${cachewise_suggest_profile} --top 3)
cachewise_cli_test(suggest_transpose_json EXIT 0
  STDOUT "\"profile\": {.*\"source\": \"--profile\".*\"ranked\": .*\"rank\": 1.*\"reason\": \"[a-z]"
  ARGS suggest --pattern transpose --n 1024 ${cachewise_suggest_profile} --top 2 --json)
# Pinning smem=1,pad=0 leaves only unpadded staged configs: every row shows pad=0.
cachewise_cli_test(suggest_fix_pins_keys EXIT 0
  STDOUT "\n1  block_x=[0-9]+,block_y=[0-9]+,pad=0,smem=1,tile="
  ARGS suggest --pattern transpose --n 1024 ${cachewise_suggest_profile} --fix smem=1,pad=0 --top 2)
# copy with a pinned stride: the rules force vector=1, so every config carries stride=4,vector=1.
cachewise_cli_test(suggest_copy_stride EXIT 0 STDOUT "\n1  block=[0-9]+,ept=[0-9]+,stride=4,vector=1 "
  ARGS suggest --pattern copy --n 1048576 ${cachewise_suggest_profile} --fix stride=4)
cachewise_cli_test(suggest_verbose EXIT 0 STDOUT "\n1  "
  ARGS suggest --pattern stencil2d --n 512 ${cachewise_suggest_profile} --verbose --top 1)
# Naive transposes (smem=0): of 42 feasible, the shortlist of 32 is refined only below the example
# profile's refine margin (1.5) times the best's screened time: fewer than 32, and the JSON says
# where the cut fell (docs/advisor.md).
cachewise_cli_test(suggest_refine_margin_json EXIT 0
  STDOUT "\"refine_cut_us\": [0-9.]+,.*\"refined\": ([1-9]|[12][0-9]|3[01]),"
  ARGS suggest --pattern transpose --n 1024 ${cachewise_suggest_profile} --fix smem=0 --top 1 --json)

# Bad input: one line, exit 2.
cachewise_cli_test(suggest_unknown_pattern EXIT 2
  STDERR "^advisor: unknown pattern 'frob' \\(valid: [a-z0-9, ]*transpose[a-z0-9, ]*\\)\n$"
  ARGS suggest --pattern frob --n 64 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_zero_n EXIT 2 STDERR "^advisor: transpose: n must be > 0, got 0\n$"
  ARGS suggest --pattern transpose --n 0 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_negative_n EXIT 2 STDERR "^advisor: transpose: n must be > 0, got -5\n$"
  ARGS suggest --pattern transpose --n -5 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_missing_n EXIT 2 STDERR "^advisor: suggest: --n is required with --pattern\n$"
  ARGS suggest --pattern copy ${cachewise_suggest_profile})
cachewise_cli_test(suggest_non_numeric_n EXIT 2 STDERR "^advisor: .*--n.*abc.*\n$"
  ARGS suggest --pattern transpose --n abc ${cachewise_suggest_profile})
# 4e9 x 4e9 f32 elements: 6.4e19 bytes per array, beyond int64.
cachewise_cli_test(suggest_overflowing_sizes EXIT 2 STDERR "^advisor: transpose: sizes too large: byte counts overflow 64-bit integers\n$"
  ARGS suggest --pattern transpose --n 4000000000 ${cachewise_suggest_profile})
# 200000^2 f32 = 160 GB per array; the example device has 150754820096 bytes.
cachewise_cli_test(suggest_exceeds_device_memory EXIT 2
  STDERR "^advisor: transpose n=200000 f32: arrays need 320000000000 bytes, the device has 150754820096\n$"
  ARGS suggest --pattern transpose --n 200000 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_unknown_dtype EXIT 2 STDERR "^advisor: unknown dtype 'bf16' \\(valid: f32, f64, f16\\)\n$"
  ARGS suggest --pattern transpose --n 64 --dtype bf16 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_unreadable_profile EXIT 2 STDERR "^advisor: /nonexistent/p.json: cannot open profile file\n$"
  ARGS suggest --pattern transpose --n 64 --profile /nonexistent/p.json)
cachewise_cli_test(suggest_top_zero EXIT 2 STDERR "^advisor: --top must be at least 1, got 0\n$"
  ARGS suggest --pattern transpose --n 64 --top 0 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_unknown_fix_key EXIT 2
  STDERR "^advisor: --fix: transpose has no key 'vector' \\(keys: [a-z_, ]+\\)\n$"
  ARGS suggest --pattern transpose --n 64 --fix vector=4 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_malformed_fix EXIT 2 STDERR "^advisor: config: expected key=value, got 'pad'\n$"
  ARGS suggest --pattern transpose --n 64 --fix pad ${cachewise_suggest_profile})
# Pinning a value every config rejects: the model's rule is the message.
cachewise_cli_test(suggest_fix_breaks_rule EXIT 2 STDERR "^advisor: transpose n=64 f32: transpose: .*pad.*\n$"
  ARGS suggest --pattern transpose --n 64 --fix smem=0,pad=1 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_no_pattern EXIT 2
  STDERR "^advisor: suggest: give exactly one of --pattern FAMILY, --pattern-file FILE or --kernel FILE.cu / --spec FILE.json\n$"
  ARGS suggest --n 64 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_missing_pattern_file EXIT 2 STDERR "^advisor: /nonexistent/k.json: .*\n$"
  ARGS suggest --pattern-file /nonexistent/k.json ${cachewise_suggest_profile})

# A custom pattern is predicted and explained on its own numbers.
cachewise_cli_test(suggest_pattern_file EXIT 0
  STDOUT "transpose-smem-256.json: 1 feasible of 1 candidates.*\n1  transpose .*bottleneck [a-z]+, [0-9]+ GB/s useful"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/transpose-smem-256.json ${cachewise_suggest_profile})
cachewise_cli_test(suggest_pattern_file_with_sizes EXIT 2
  STDERR "^advisor: suggest: --n has no effect with --pattern-file \\(the file gives its sizes and element types\\)\n$"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --n 64 ${cachewise_suggest_profile})
# Without --profile the bundled profile is used, and the output says so.
cachewise_cli_test(suggest_default_profile EXIT 0 STDOUT "^profile: .* from .*profiles/.*json .bundled"
  ARGS suggest --pattern copy --n 65536 --top 1)
# The H200 profile measured spread writes: a 64-wide block (two warps of 128 B per output row)
# ranks below the 32x8 64-tile (24th) and says why: its DRAM time is the term that differs most
# (24 rows: the rank column is two wide).
cachewise_cli_test(suggest_spread_write_reason EXIT 0
  STDOUT "\n 1  block_x=32,block_y=8,pad=1,smem=1,tile=64 .*block_x=64,block_y=2 \\(vs 32,8\\): DRAM time [0-9.]+ vs [0-9.]+ µs \\(writes only 128 B of each output row at a time instead of 256 B\\)"
  ARGS suggest --pattern transpose --n 4096 --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json --top 24)
cachewise_cli_test(suggest_pattern_file_with_fix EXIT 2
  STDERR "^advisor: suggest: --fix has no effect with --pattern-file \\(the file describes one kernel: nothing to search\\)\n$"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --fix tile=32 ${cachewise_suggest_profile})
cachewise_cli_test(suggest_pattern_file_with_m EXIT 2 STDERR "^advisor: suggest: --m has no effect with --pattern-file"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json --m 64 ${cachewise_suggest_profile})
# Warnings, exit 0: row-sum's 4 blocks on the example's 132 SMs; copy's n counts elements
# (2^24 f32 = 64 MiB: every config's grid covers the SMs).
cachewise_cli_test(suggest_idle_sms EXIT 0 STDERR "^advisor: warning: 4 blocks on 132 SMs: 128 SMs idle\n$"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json ${cachewise_suggest_profile})
cachewise_cli_test(suggest_copy_size EXIT 0
  STDERR "^advisor: warning: copy n=16777216 elements = 64 MiB per array \\(--n counts elements for copy\\)\n$"
  ARGS suggest --pattern copy --n 16777216 --top 1 ${cachewise_suggest_profile})
# The JSON names the version and the pattern file it predicted.
cachewise_cli_test(suggest_json_self_describing EXIT 0
  STDOUT "\"cachewise_version\": \"[0-9]+\\.[0-9]+\\.[0-9]+\",.*\"pattern\": \\{\n *\"name\": \"row_sum\",\n *\"pattern_file\": \"[^\"]*row-sum.json\"\n *\},\n *\"problem\": \\{"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/row-sum.json ${cachewise_suggest_profile} --json)
# The README's own-pattern example: a thread per row of a 4096x4096 f32 matrix-vector product.
# A warp's load of A touches 32 rows, one sector each, its load of x one sector (a broadcast):
# (32 + 1) / 2 = 16.5 sectors per load request; y's store is 32 consecutive floats, 4 sectors.
# 4096 rows / 128 threads = 32 blocks on the H200's 132 SMs.
cachewise_cli_test(suggest_readme_matvec EXIT 0
  STDOUT "\n1  matvec_row_per_thread +[0-9.]+ \\([0-9.]+-[0-9.]+\\) +[0-9]+ +16\\.5/4\\.0 +-/- .*\\(32 blocks on 132 SMs: 100 SMs idle\\)\n"
  STDERR "^advisor: warning: 32 blocks on 132 SMs: 100 SMs idle\n$"
  ARGS suggest --pattern-file ${PROJECT_SOURCE_DIR}/examples/patterns/matvec-row-per-thread.json
       --profile ${PROJECT_SOURCE_DIR}/profiles/h200.json)
