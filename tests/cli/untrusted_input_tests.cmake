# Hostile and broken input (issue 32): every case is one line on stderr and exit 2, at once,
# where the CLI used to crash (SIGSEGV), leak an exception (exit 1), run for minutes or take
# gigabytes, or accept it silently. docs/fuzzing.md lists each input's behaviour before and after.
# Each runs in run_cli.cmake's sandbox (SANDBOX): afterwards nothing but the compile cache is in
# its fresh HOME, TMPDIR and working directory, and no process it started still runs.
set(cachewise_specs ${PROJECT_SOURCE_DIR}/tests/data/specs)
set(cachewise_copy --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy.cu --entry copy
  --block 256 --buffer out=4096 --buffer in=4096)

# Expressions nest at most 256 levels (clang's bracket depth): deeper was a stack overflow.
string(REPEAT "(" 5000 cachewise_open)
string(REPEAT ")" 5000 cachewise_close)
cachewise_kernel_test(expression_5000_parentheses SANDBOX EXIT 2
  STDERR "^advisor: --grid: nested deeper than 256 levels at column 258 of '[(]+\\.\\.\\.'\n$"
  ARGS simulate ${cachewise_copy} --grid "${cachewise_open}4${cachewise_close}")
string(REPEAT "-" 40000 cachewise_minus)
cachewise_kernel_test(expression_40000_unary_minus SANDBOX EXIT 2
  STDERR "^advisor: --grid: nested deeper than 256 levels at column 258 of '-+\\.\\.\\.'\n$"
  ARGS simulate ${cachewise_copy} "--grid=${cachewise_minus}4")
# An unclosed parenthesis was an empty list, taken as one block.
cachewise_kernel_test(grid_unclosed_parenthesis SANDBOX EXIT 2 STDERR "^advisor: --grid: expected '\\)' at column 4 of '\\(\\(n'\n$"
  ARGS simulate ${cachewise_copy} --grid "((n")
cachewise_kernel_test(grid_past_2pow31 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*grid 2147483648 x 1 x 1 exceeds CUDA's limit of 2147483647 blocks in x\n$"
  ARGS simulate ${cachewise_copy} --grid 2147483648)
cachewise_kernel_test(arg_past_int64 SANDBOX EXIT 2
  STDERR "^advisor: --arg n: 18446744073709551615 is outside the 64-bit integer range \\[-9223372036854775808, 9223372036854775807\\]\n$"
  ARGS simulate ${cachewise_copy} --grid 4 --arg n=18446744073709551615)

# The candidate space is counted before it is built: 7 parameters of 10 values are refused at
# once (they took 8 GB and no candidate had compiled after minutes); --max-candidates raises the cap.
set(cachewise_ten 1,2,3,4,5,6,7,8,9,10)
cachewise_kernel_test(space_of_1e7_refused SANDBOX EXIT 2
  STDERR "^advisor: kernel spec: the parameters span 10000000 candidates, more than the cap of 10000 \\(give fewer values, or raise the cap with --max-candidates N\\)\n$"
  ARGS suggest ${cachewise_copy} --grid 4 --param A=${cachewise_ten} --param B=${cachewise_ten} --param C=${cachewise_ten}
  --param D=${cachewise_ten} --param E=${cachewise_ten} --param F=${cachewise_ten} --param G=${cachewise_ten})
set_tests_properties(cli.space_of_1e7_refused PROPERTIES TIMEOUT 10)
set(cachewise_copy_width suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy_width.cu --entry copy_width
  --param WIDTH=1,2 --grid "1024 / WIDTH" --block 256 --buffer "out=1048576" --buffer "in=1048576")
cachewise_kernel_test(space_over_max_candidates SANDBOX EXIT 2
  STDERR "^advisor: kernel spec: the parameters span 2 candidates, more than the cap of 1 \\(give fewer values, or raise the cap with --max-candidates N\\)\n$"
  ARGS ${cachewise_copy_width} --max-candidates 1)
# --max-candidates itself is bounded: the space is enumerated (4 bytes a parameter a candidate)
# and each screened candidate tallied before the ranking ends, so 1 to 100000.
foreach(count 0 1000000)
  cachewise_kernel_test(space_max_candidates_${count} SANDBOX EXIT 2
    STDERR "^advisor: --max-candidates: expected 1 to 100000 \\(the space is enumerated and every screened candidate tallied before the ranking ends\\), got ${count}\n$"
    ARGS ${cachewise_copy_width} --max-candidates ${count})
endforeach()
cachewise_kernel_test(space_within_max_candidates SANDBOX EXIT 0 STDOUT ": 2 feasible of 2 candidates"
  ARGS ${cachewise_copy_width} --max-candidates 2)
cachewise_kernel_test(max_candidates_with_pattern SANDBOX EXIT 2
  STDERR "^advisor: suggest: --max-candidates has no effect without --kernel/--spec \\(it caps a kernel spec's space\\)\n$"
  ARGS suggest --pattern transpose --n 256 --profile ${cachewise_example_profile} --max-candidates 5)
cachewise_cli_test(tune_max_candidates_with_pattern SANDBOX EXIT 2
  STDERR "^advisor: tune: --max-candidates has no effect without --kernel/--spec \\(it caps a kernel spec's space\\)\n$"
  ARGS tune --pattern transpose --n 256 --max-candidates 5)

# Spec files: no duplicate keys, integers within 64 bits, identifiers, outputs checked, files only.
cachewise_kernel_test(spec_duplicate_key SANDBOX EXIT 2 STDERR "^advisor: [^\n]*duplicate-key.json: duplicate key 'buffers.in'\n$"
  ARGS suggest --spec ${cachewise_specs}/duplicate-key.json --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_is_a_directory SANDBOX EXIT 2 STDERR "^advisor: [^\n]*/specs: not a regular file \\(a kernel spec is a JSON file\\)\n$"
  ARGS suggest --spec ${cachewise_specs} --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_tolerance_1e999 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*tolerance-1e999.json: not valid JSON \\(\\[json.exception.out_of_range.406\\] number overflow parsing '1e999'\\)\n$"
  ARGS suggest --spec ${cachewise_specs}/tolerance-1e999.json --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_tolerance_negative SANDBOX EXIT 2 STDERR "^advisor: kernel spec: tolerance must be a finite number >= 0, got -5\n$"
  ARGS suggest --spec ${cachewise_specs}/tolerance-negative.json --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_unknown_output_type SANDBOX EXIT 2 STDERR "^advisor: kernel spec: output 'out' has type 'f16' \\(valid: f32, f64, i32, u8\\)\n$"
  ARGS suggest --spec ${cachewise_specs}/output-type.json --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_parameter_not_identifier SANDBOX EXIT 2
  STDERR "^advisor: kernel spec: parameter 'E; int injected = 0; //' is not a C identifier\n$"
  ARGS suggest --spec ${cachewise_specs}/parameter-not-identifier.json --profile ${cachewise_example_profile})
cachewise_kernel_test(spec_arg_past_int64 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*arg-2pow64.json: arg 'n': 18446744073709551615 is past the largest integer, 9223372036854775807\n$"
  ARGS suggest --spec ${cachewise_specs}/arg-2pow64.json --profile ${cachewise_example_profile})
cachewise_kernel_test(kernel_tuner_cache_duplicate_key SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*duplicate-key.json: duplicate key 'cache.16,8,0,1.time'\n$"
  ARGS validate --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32
  --param BLOCK_ROWS=8 --kernel-tuner-cache ${PROJECT_SOURCE_DIR}/tests/data/kernel_tuner/duplicate-key.json)

# Profiles and patterns: physical ranges (docs/profile-format.md, docs/pattern-format.md), no duplicate keys.
cachewise_cli_test(profile_duplicate_key SANDBOX EXIT 2 STDERR "^advisor: [^\n]*duplicate-key.json: duplicate key 'l1.ways'\n$"
  ARGS show ${cachewise_bad_profiles}/duplicate-key.json)
cachewise_cli_test(profile_l1_ways_1e18 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*l1-ways-1e18.json: profile.l1.ways.value: expected a value in \\[1, 65536\\], got 1e\\+18\n$"
  ARGS simulate --pattern transpose --n 1024 --config smem=1,tile=32,block_x=32,block_y=8,pad=1 --profile ${cachewise_bad_profiles}/l1-ways-1e18.json)
set(cachewise_bad_patterns ${PROJECT_SOURCE_DIR}/tests/data/patterns)
cachewise_cli_test(pattern_grid_2pow31 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*grid-2pow31.json: pattern.grid.x: expected an integer in \\[1, 2147483647\\], got 2147483648\n$"
  ARGS simulate --pattern-file ${cachewise_bad_patterns}/grid-2pow31.json --profile ${cachewise_example_profile})
cachewise_cli_test(pattern_loop_to_1e18 SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*loop-1e18.json: pattern.phases\\[0\\].loops\\[0\\].end: a thread would run its phase more than 16777216 times \\(2\\^24, the cap on simulated work\\)\n$"
  ARGS simulate --pattern-file ${cachewise_bad_patterns}/loop-1e18.json --profile ${cachewise_example_profile})
set_tests_properties(cli.pattern_grid_2pow31 cli.pattern_loop_to_1e18 PROPERTIES TIMEOUT 10)
cachewise_cli_test(pattern_duplicate_key SANDBOX EXIT 2 STDERR "^advisor: [^\n]*duplicate-key.json: duplicate key 'grid.x'\n$"
  ARGS simulate --pattern-file ${cachewise_bad_patterns}/duplicate-key.json --profile ${cachewise_example_profile})
# JSON 100,000 arrays deep: the profile reader crashed (SIGSEGV); nesting stops at 256 levels.
string(REPEAT "[" 100000 cachewise_deep_open)
string(REPEAT "]" 100000 cachewise_deep_close)
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deep.json "{\"schema_version\": ${cachewise_deep_open}${cachewise_deep_close}}\n")
cachewise_cli_test(profile_nested_100000_deep SANDBOX EXIT 2 STDERR "^advisor: [^\n]*deep.json: nested deeper than 256 levels at 'schema_version(\\[0\\])+'\n$"
  ARGS show ${CMAKE_CURRENT_BINARY_DIR}/deep.json)

# A loop whose trip count is an argument of 10^12: a block's trace is held in memory (280 bytes a
# warp access), so it is refused at 2^20 accesses, 280 MiB (it peaked at 1.2 GB, refused at 2^21).
cachewise_kernel_test(kernel_loop_of_1e12_refused SANDBOX EXIT 2
  STDERR "^advisor: [^\n]*column_sums.cu:4: a block makes more than 1048576 warp memory accesses: too long to trace \\(a block's trace is held in memory, 280 MiB at this limit\\)\n$"
  ARGS simulate --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/column_sums.cu --entry column_sums
  --grid 1 --block 256 --buffer in=1048576 --buffer out=1024 --arg n=1000000000000)
set_tests_properties(cli.kernel_loop_of_1e12_refused PROPERTIES TIMEOUT 60)

# Hostile defines on the nvcc path (transpose_template.cu holds host code): nvcc's driver runs its
# steps through a shell, so a value reaching its argv would run. The macros are unused: exit 0;
# the file the payload would touch does not exist, and the process it would leave (its command
# line holds the run's marker) does not run.
set(cachewise_payload "touch @SCRATCH@/work/pwned && sh -c \"sleep 60 && :\" @MARKER@ >/dev/null 2>&1 &")
cachewise_kernel_test(suggest_kernel_define_reaches_no_shell SANDBOX EXIT 0 MUST_NOT_CREATE @SCRATCH@/work/pwned
  STDOUT ": 1 feasible of 1 candidates"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile}
  --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 --define "EXTRA=$(${cachewise_payload})1" --define "MORE=`${cachewise_payload}`")
cachewise_kernel_test(suggest_kernel_define_of_two_lines SANDBOX EXIT 2 STDERR "^advisor: --define EXTRA: a macro value must be one line\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile}
  --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 "--define=EXTRA=1\n#include </etc/passwd>")
