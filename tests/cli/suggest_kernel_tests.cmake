# advisor suggest --kernel / --spec: a user kernel compiled, extracted, simulated and ranked;
# bad specs give one line and exit 2. Compiled candidates go to a cache inside the build tree.
set(cachewise_kernel_examples ${PROJECT_SOURCE_DIR}/examples/kernels)
set(cachewise_kernel_data ${PROJECT_SOURCE_DIR}/tests/frontend/data)
set(cachewise_kernel_launch --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_examples}/transpose.cu
  --entry transpose_tiled --grid "width / TILE_DIM, height / TILE_DIM" --block "TILE_DIM, BLOCK_ROWS")
set(cachewise_kernel_transpose ${cachewise_kernel_launch}
  --buffer "odata=width * height * 4" --buffer "idata=width * height * 4" --arg width=4096 --arg height=4096)
set(cachewise_kernel_tests)
function(cachewise_kernel_test name)
  cachewise_cli_test(${name} ${ARGN})
  set_tests_properties(cli.${name} PROPERTIES ENVIRONMENT "CACHEWISE_CACHE_DIR=${CMAKE_BINARY_DIR}/kernel-cache")
endfunction()

# The example's 18 candidates: reading the tile by columns with PAD=0 puts 32 lanes on one bank
# (row stride 32 words); PAD=1 makes the stride 33 words, 32 distinct banks. The winner pads.
cachewise_kernel_test(suggest_kernel_transpose EXIT 0
  STDOUT "transpose_tiled in [^\n]*transpose.cu: 18 feasible of 18 candidates.*regs/spill B/smem B.*\n1  BLOCK_ROWS=[0-9]+,PAD=1,TILE_DIM=[0-9]+ [^\n]*removes the 32-way bank conflict of shared loads"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --top 3 --wide)
# Flags over the spec file: one tile and row count left, so the two pads; 32 x 33 x 4 B of shared.
cachewise_kernel_test(suggest_kernel_flags_override_spec EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_ROWS=8,PAD=1,TILE_DIM=32 [^\n]*/0/4224  .*\n2  BLOCK_ROWS=8,PAD=0,TILE_DIM=32 [^\n]*/0/4096  [^\n]*32-way bank conflict on shared loads"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8 --wide)
# Template arguments in a .cu with host code: instantiated per candidate, compiled by nvcc.
cachewise_kernel_test(suggest_kernel_template_host_code EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_ROWS=8,PAD=1,TILE_DIM=32 "
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8 --wide)
cachewise_kernel_test(suggest_kernel_json EXIT 0
  STDOUT "\"kernel\": \"transpose_tiled in .*\"compiler\": {[^}]*\"registers_per_thread\": [1-9][^}]*\"static_shared_bytes\": 4224"
  ARGS suggest ${cachewise_kernel_transpose} --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 --json)
# WIDTH=4 hits an #error: counted as rejected, the two others are ranked.
cachewise_kernel_test(suggest_kernel_candidate_fails_to_compile EXIT 0 STDOUT ": 2 feasible of 3 candidates"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy_width.cu --entry copy_width
  --param WIDTH=1,2,4 --grid "1024 / WIDTH" --block 256 --buffer "out=1048576" --buffer "in=1048576")

# STEPS=33000: the 32 warps of the one block make 32 x 33001 = 1056032 warp memory accesses (33000
# loads at line 6 and a store each), past the 1048576 (2^20) a block may make to be traced: rejected by
# trace, named in --json with its config and line; STEPS=4 is ranked. ('.' stands for the JSON's
# square brackets: CMake pairs them in lists.) Tracing to the limit is most of the test's time.
cachewise_kernel_test(suggest_kernel_candidate_too_long_to_trace EXIT 0
  STDOUT "\"enumerated\": 2,\n *\"feasible\": 1,.*\"ranked\": .\n *{\n *\"blocks_per_sm\": [0-9]+,\n *\"compiler\": {[^}]*},\n *\"config\": \"STEPS=4\".*\"rejections\": .\n *{\n *\"count\": 1,\n *\"example\": \"STEPS=33000\",\n *\"message\": \"sum_steps.cu:7: a block makes more than 1048576 warp memory accesses: too long to trace \\(a block's trace is held in memory, 280 MiB at this limit\\)\",\n[^\n]*\n *\"stage\": \"trace\"\n *}\n *.,\n"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/sum_steps.cu --entry sum_steps
  --grid 1 --block 1024 --buffer "out=4096" --buffer "in=STEPS * 4096" --param STEPS=4,33000 --json)

# CSR SpMV with declared index arrays (spmv.json: 32 entries per row, row r's columns r .. r + 31
# mod rows). Per warp, THREADS_PER_ROW=1: row_ptr[r], row_ptr[r + 1] (4 + 5 sectors), then 32
# rounds of col and val with lanes 128 B apart (32 sectors each) and x[r + t] (4 sectors at t = 0,
# 5 after): (9 + 32 * 64 + 4 + 31 * 5) / 98 requests = 22.6 sectors per load request; 4 per store.
# THREADS_PER_ROW=4, 8 rows a warp: row_ptr 1 + 2 sectors, 8 rounds of col and val (8 rows x 16 B:
# 8 sectors each) and x (11 consecutive words: 2 sectors): (3 + 8 * 18) / 26 = 5.7; lane 0 of 4 stores: 1.
# All 9 shown: THREADS_PER_ROW=1's loads touch 32 lines a request, one L1 wavefront each, which ranks
# it below the top 5 (docs/model.md "L1 wavefronts").
cachewise_kernel_test(suggest_kernel_spmv_contents EXIT 0
  STDOUT "csr_spmv in [^\n]*spmv.cu: 9 feasible of 9 candidates.*\n[0-9]  BLOCK_SIZE=128,THREADS_PER_ROW=4 [^\n]* 5.7/1.0 .*\n[0-9]  BLOCK_SIZE=128,THREADS_PER_ROW=1 [^\n]* 22.6/4.0 "
  ARGS suggest --spec ${cachewise_kernel_examples}/spmv.json --profile ${cachewise_example_profile} --wide --top 9)
# The same kernel from flags, over the block size alone (THREADS_PER_ROW=1 by default): the
# accesses per warp do not change with the block, 22.6/4.0 for both.
set(cachewise_kernel_spmv --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_examples}/spmv.cu --entry csr_spmv
  --grid "ceil_div(rows, BLOCK_SIZE)" --block BLOCK_SIZE --param BLOCK_SIZE=128,256 --arg rows=65536
  --buffer "row_ptr=(rows + 1) * 4" --buffer "col=rows * 32 * 4" --buffer "val=rows * 32 * 4" --buffer "x=rows * 4" --buffer "y=rows * 4")
cachewise_kernel_test(suggest_kernel_spmv_contents_flags EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_SIZE=[0-9]+ [^\n]* 22.6/4.0 [^\n]*\n2  BLOCK_SIZE=[0-9]+ [^\n]* 22.6/4.0 "
  ARGS suggest ${cachewise_kernel_spmv} --contents "row_ptr=i * 32" --contents "col=(i / 32 + i % 32) % rows" --wide)

# Bad input: one line, exit 2.
cachewise_kernel_test(suggest_kernel_all_fail_to_compile EXIT 2 STDERR "^advisor: [^\n]*copy_width.cu[(:]3[):][^\n]*error[^\n]*WIDTH above 2 is not supported\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy_width.cu --entry copy_width
  --param WIDTH=4 --grid 1 --block 256 --buffer "out=4096" --buffer "in=4096")
cachewise_kernel_test(suggest_kernel_compile_error EXIT 2
  STDERR "^advisor: [^\n]*broken.cu\\(3\\): error: identifier \"undefined_name\" is undefined\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/broken.cu --entry broken --grid 1 --block 32 --buffer out=128)
cachewise_kernel_test(suggest_kernel_unknown_entry EXIT 2 STDERR "^advisor: entry 'transpose' not found \\(entries: transpose_tiled\\)\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --entry transpose)
# UNUSED reaches the source as a macro nobody reads: identical PTX, and no launch expression names it.
cachewise_kernel_test(suggest_kernel_unused_parameter EXIT 2
  STDERR "^advisor: parameter 'UNUSED' is used neither by the source \\(its values compile to identical PTX\\) nor by a launch expression\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8 --param UNUSED=1,2)
# 64 x 32 threads: past the example device's 1024 per block.
cachewise_kernel_test(suggest_kernel_too_many_threads EXIT 2
  STDERR "^advisor: transpose_tiled in [^\n]*: kernel 'transpose_tiled' needs 2048 threads per block; the device allows 1024\n$"
  ARGS suggest ${cachewise_kernel_transpose} --param TILE_DIM=64 --param BLOCK_ROWS=32 --param PAD=0)
cachewise_kernel_test(suggest_kernel_too_much_shared EXIT 2 STDERR "^advisor: transpose_tiled in [^\n]*shared memory[^\n]*\n$"
  ARGS suggest ${cachewise_kernel_transpose} --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=0 --shared 1000000)
cachewise_kernel_test(suggest_kernel_grid_too_large EXIT 2 STDERR "^advisor: transpose_tiled in [^\n]*grid[^\n]*65535[^\n]*\n$"
  ARGS suggest ${cachewise_kernel_launch} --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=0 --arg width=32 --arg height=4194304
  --buffer "idata=width * height * 4" --buffer "odata=width * height * 4")
cachewise_kernel_test(suggest_kernel_missing_buffer EXIT 2
  STDERR "^advisor: kernel parameter 'idata' is a pointer with no buffer: give --buffer idata=BYTES\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_examples}/transpose.cu --entry transpose_tiled
  --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 --grid "128, 128" --block "32, 8" --buffer "odata=67108864" --arg width=4096 --arg height=4096)
cachewise_kernel_test(suggest_kernel_unknown_name EXIT 2
  STDERR "^advisor: --grid: unknown name 'widht' \\(known: BLOCK_ROWS, PAD, TILE_DIM, height, width\\)\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --grid "widht / TILE_DIM, height / TILE_DIM")
cachewise_kernel_test(suggest_kernel_division_by_zero EXIT 2 STDERR "^advisor: --grid: division by zero in 'width / \\(PAD - PAD\\)'\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --grid "width / (PAD - PAD)")
cachewise_kernel_test(suggest_kernel_negative_buffer EXIT 2
  STDERR "^advisor: --buffer idata: 'width - 2 \\* width' is -4096 bytes for BLOCK_ROWS=4,PAD=0,TILE_DIM=16; a buffer needs at least 1 byte\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --buffer "idata=width - 2 * width")
cachewise_kernel_test(suggest_kernel_overflow EXIT 2 STDERR "^advisor: --buffer odata: integer overflow in 'width \\* height \\* 4'\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --arg width=4611686018427387904)
cachewise_kernel_test(suggest_kernel_spmv_undeclared_contents EXIT 2
  STDERR "^advisor: spmv.cu:16: branch depends on a value loaded from memory \\(ld.global.nc.u32 [^\n]*\\): data-dependent control flow is not supported unless what buffer 'row_ptr' holds is declared \\(\"contents\", --contents row_ptr=EXPR\\)\n$"
  ARGS suggest ${cachewise_kernel_spmv})
cachewise_kernel_test(suggest_kernel_contents_unknown_buffer EXIT 2 STDERR "^advisor: --contents rowptr: 'rowptr' is not a buffer \\(--buffer\\)\n$"
  ARGS suggest ${cachewise_kernel_spmv} --contents "rowptr=i * 32")
cachewise_kernel_test(suggest_kernel_contents_division_by_zero EXIT 2
  STDERR "^advisor: spmv.cu:16: contents of 'row_ptr': division by zero in 'i / \\(i - 1\\)' at element i = 1\n$"
  ARGS suggest ${cachewise_kernel_spmv} --contents "row_ptr=i / (i - 1)" --contents "col=0")
cachewise_kernel_test(suggest_kernel_with_pattern EXIT 2 STDERR "^advisor: suggest: give exactly one of --pattern FAMILY, --pattern-file FILE or --kernel FILE.cu / --spec FILE.json\n$"
  ARGS suggest --pattern transpose --n 64 --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile})
cachewise_kernel_test(suggest_kernel_bad_spec_file EXIT 2 STDERR "^advisor: [^\n]*transpose.cu: not valid JSON \\([^\n]*\\)\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.cu --profile ${cachewise_example_profile})
if(NOT CACHEWISE_WITH_NVRTC)
  cachewise_kernel_test(suggest_kernel_no_compiler EXIT 2 STDERR "^advisor: built without NVRTC and no nvcc found: cannot compile [^\n]*\n$"
    ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile})
  set_property(TEST cli.suggest_kernel_no_compiler APPEND PROPERTY ENVIRONMENT "CACHEWISE_NVCC=/nonexistent/nvcc")
endif()

# Real files as users have them (issue 35). several.cu holds kernels the parser (env_word) and
# the extractor (carry_sum) cannot read; the entries asked for are ranked regardless.
set(cachewise_kernel_several --profile ${cachewise_example_profile} --kernel ${PROJECT_SOURCE_DIR}/tests/frontend/kernels/several.cu
  --arg n=1048576 --buffer "out=n * 8")
# A type-and-bool template entry over a type parameter: FIRST_ADD makes every thread load
# in[i] and in[i + 256]; a warp's 32 consecutive elements are 128 B (4 sectors) as float and
# 256 B (8 sectors) as double; thread 0 alone stores out[blockIdx.x]: 1 sector per request.
cachewise_kernel_test(suggest_kernel_type_and_bool_template EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*(\n[12]  T=float [^\n]* 4\\.0/1\\.0 [^\n]*\n[12]  T=double [^\n]* 8\\.0/1\\.0 |\n[12]  T=double [^\n]* 8\\.0/1\\.0 [^\n]*\n[12]  T=float [^\n]* 4\\.0/1\\.0 )"
  ARGS suggest --wide ${cachewise_kernel_several} --entry "pair_sum<T, 256, true>" --param T=float,double --grid "n / 512" --block 256
  --buffer "in=n * 8")
# Two entries in one table, with an entry column: the cooperative-groups reduction and the
# shared-memory tree over the same launch (BLOCK elements per block), 2 x 2 candidates. The
# parameter is not named THREADS: tile_sum takes it as a macro, which would rewrite
# pair_sum's template parameter of that name.
cachewise_kernel_test(suggest_kernel_several_entries EXIT 0
  STDOUT "tile_sum, pair_sum<float, BLOCK, false> in [^\n]*several.cu: 4 feasible of 4 candidates[^\n]*\n#  entry +config .*\n[1-4]  tile_sum +BLOCK=(128|256) .*\n[1-4]  pair_sum<float, BLOCK, false>  BLOCK=(128|256) "
  ARGS suggest --wide ${cachewise_kernel_several} --entry tile_sum --entry "pair_sum<float, BLOCK, false>" --param BLOCK=128,256
  --grid "n / BLOCK" --block BLOCK --buffer "in=n * 4")
# Named THREADS, the parameter would reach tile_sum as -DTHREADS and rewrite pair_sum's template
# parameter of that name (several.cu:48): one line, before anything compiles.
cachewise_kernel_test(suggest_kernel_several_entries_macro_hits_template EXIT 2
  STDERR "^advisor: several.cu:48: --param THREADS reaches tile_sum as a macro, which rewrites the template parameter THREADS of 'pair_sum': give the --param a name no entry's template declares\n$"
  ARGS suggest ${cachewise_kernel_several} --entry tile_sum --entry "pair_sum<float, THREADS, false>" --param THREADS=128,256
  --grid "n / THREADS" --block THREADS --buffer "in=n * 4")
# The extractor's refusal in the entry asked for names the source line (the asm statement at
# several.cu:13); the other kernels of the file are never read.
cachewise_kernel_test(suggest_kernel_several_rejected_entry EXIT 2
  STDERR "^advisor: several.cu:13: unsupported instruction 'add' with carry \\(add.cc.u32 [^\n]*\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${PROJECT_SOURCE_DIR}/tests/frontend/kernels/several.cu
  --entry carry_sum --grid 8 --block 128 --buffer a=4096 --buffer b=4096 --buffer out=4096)

# Parameters that cannot reach the code, found before anything compiles (macro_params.cu).
# ROWS is guarded (line 3), COLS is not (line 6).
cachewise_kernel_test(suggest_kernel_unguarded_define EXIT 2
  STDERR "^advisor: macro_params.cu:6: '#define COLS' overrides --param COLS: guard it with #ifndef COLS \\.\\.\\. #endif\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/macro_params.cu --entry scale_rows
  --param ROWS=2,4 --param COLS=32 --grid 8 --block 32 --buffer "data=8 * ROWS * 32 * 4")
cachewise_kernel_test(suggest_kernel_template_parameter_as_macro EXIT 2
  STDERR "^advisor: macro_params.cu:9: 'scale_tile' is a template over BLOCK_SIZE, which a --param cannot reach as a macro: write --entry \"scale_tile<BLOCK_SIZE>\"\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/macro_params.cu --entry scale_tile
  --param BLOCK_SIZE=64,128 --grid 8 --block BLOCK_SIZE --buffer "data=8 * BLOCK_SIZE * 4")
# Compiler options reach nvcc, which runs through a shell: only known ones pass.
cachewise_kernel_test(suggest_kernel_unknown_compiler_option EXIT 2
  STDERR "^advisor: --compiler-option '-Xcompiler=-fopenmp': not an option cachewise passes on \\(allowed: -maxrregcount=N, [^\n]*\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --compiler-option=-Xcompiler=-fopenmp)
cachewise_kernel_test(suggest_kernel_include_dir_missing EXIT 2 STDERR "^advisor: -I [^\n]*no-such-dir: not a directory\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} -I ${cachewise_kernel_data}/no-such-dir)
cachewise_kernel_test(suggest_kernel_entry_twice_elsewhere EXIT 2 STDERR "^advisor: --entry: give one entry here \\(suggest ranks several in one table\\)\n$"
  ARGS validate --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --entry a --entry b)
# A file that needs -I: <stride_config.h> sets STRIDE_WORDS 2, so a warp's loads span 32 x 8 B
# = 256 B (8 sectors) and its stores 128 B (4 sectors). Without -I the compile fails, and the
# failure is not served from the cache to the run with -I.
set(cachewise_kernel_strided --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/needs_include/strided.cu
  --entry strided_copy --grid 64 --block 256 --buffer "in=64 * 256 * 8" --buffer "out=64 * 256 * 4")
cachewise_kernel_test(suggest_kernel_needs_include_dir EXIT 0 STDOUT "\n1  strided_copy [^\n]* 8\\.0/4\\.0 "
  ARGS suggest --wide ${cachewise_kernel_strided} -I ${cachewise_kernel_data}/needs_include/include)
cachewise_kernel_test(suggest_kernel_without_include_dir EXIT 2 STDERR "^advisor: [^\n]*stride_config.h[^\n]*\n$"
  ARGS suggest ${cachewise_kernel_strided})

# The default table fits 100 columns: transpose.json's 18 candidates vary TILE_DIM, BLOCK_ROWS and
# PAD, so three parameter columns in that order (the spec's, not alphabetical), each as wide as
# its name. The header is then 2 ("18") + 8 + 10 + 3 + 9 ("time µs", or "12.34 tie") + 4 +
# 10 ("sect ld/st") + 10 ("ways ld/st") + 6 + 15 ("regs/spill/smem") + 9 gaps of 2 = 95 columns
# (96 bytes: "µ" takes 2); the rows' cells are no wider, and each reason has a line of its own,
# cut to 97 after a 3-space indent. A table line (a row, the header, a reason: they start with a
# space, a digit or '#') of 101 columns fails the test; the profile line above names a path and is
# no table line. A column is one character, and "µ" (in "µs") takes two bytes: a line is too
# wide when it holds 101 bytes besides "µ" (the class excludes its two bytes), or 102 bytes in
# all (101 columns with one "µ"; a reason holds at most one).
string(REPEAT "[^\nµ]" 100 cachewise_ascii_100)
string(REPEAT "[^\n]" 101 cachewise_bytes_101)
set(cachewise_line_over_100 "\n[ #0-9](${cachewise_ascii_100}|${cachewise_bytes_101})")
cachewise_kernel_test(suggest_kernel_table_fits_100_columns EXIT 0
  STDOUT "\n *#  TILE_DIM  BLOCK_ROWS  PAD  time [^\n]*\n *1 [^\n]*\n   [^\n]*(faster|slower|same|within)"
  NOT_STDOUT "${cachewise_line_over_100}"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --top 18)
# A parameter with one value is printed once above the table, not as a column.
cachewise_kernel_test(suggest_kernel_table_fixed_parameters EXIT 0
  STDOUT "\nevery candidate: TILE_DIM=32, BLOCK_ROWS=8\n#  PAD  time "
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8)

# Arguments by type. A float scalar by value: alpha=2.5 is encoded as a float (the unit test
# checks the bits); the kernel ranks. An int parameter given 2.5 says which parameter and what to give.
set(cachewise_saxpy --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/saxpy.cu --entry saxpy
  --grid 4 --block 256 --buffer y=4096 --buffer x=4096)
cachewise_kernel_test(suggest_kernel_float_scalar EXIT 0 STDOUT "saxpy in [^\n]*saxpy.cu: 1 feasible of 1 candidates"
  ARGS suggest ${cachewise_saxpy} --arg alpha=2.5 --arg n=1024)
cachewise_kernel_test(suggest_kernel_float_for_int EXIT 2 STDERR "^advisor: kernel parameter 'n' is int: give it an integer, not '2.5'\n$"
  ARGS suggest ${cachewise_saxpy} --arg alpha=2.5 --arg n=2.5)
cachewise_kernel_test(suggest_kernel_arg_not_a_number EXIT 2 STDERR "^advisor: --arg alpha: expected a number, got 'two'\n$"
  ARGS suggest ${cachewise_saxpy} --arg alpha=two --arg n=1024)

# A struct by value (struct_stride.cu: Shape {int width; int stride; float scale}, 12 bytes).
# One block of 64 threads, width 48, stride 2: warp 0 loads in[2i] for 32 lanes, 8 B apart: 256 B,
# 8 sectors; warp 1 has lanes 32..47 active (16 lanes, 128 B: 4 sectors). Loads: 12 sectors in 2
# requests = 6.0 per request; stores: 4 + 2 sectors in 2 requests = 3.0. Had stride not reached
# byte 4 of p (read as 0), every lane would load in[0]: 1 sector per request.
set(cachewise_struct_stride --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/struct_stride.cu
  --entry scale_strided --grid 1 --block 64 --buffer out=256 --buffer in=512)
cachewise_kernel_test(suggest_kernel_struct_argument EXIT 0 STDOUT "\n1  [^\n]* 6.0/3.0 "
  ARGS suggest ${cachewise_struct_stride} --arg p.width=48 --arg p.stride=2 --arg p.scale=0.5)
cachewise_kernel_test(suggest_kernel_struct_braces EXIT 0 STDOUT "\n1  [^\n]* 6.0/3.0 "
  ARGS suggest ${cachewise_struct_stride} "--arg" "p={width=48, stride=2, scale=0.5}")
cachewise_kernel_test(suggest_kernel_struct_given_scalar EXIT 2
  STDERR "^advisor: kernel parameter 'p' \\(struct Shape\\) is a struct passed by value, not a scalar: give its fields: --arg p.width=VALUE --arg p.stride=VALUE --arg p.scale=VALUE\n$"
  ARGS suggest ${cachewise_struct_stride} --arg p=48)
cachewise_kernel_test(suggest_kernel_struct_unknown_field EXIT 2
  STDERR "^advisor: --arg p.height: struct Shape has no field 'height' \\(fields: width, stride, scale\\)\n$"
  ARGS suggest ${cachewise_struct_stride} --arg p.width=48 --arg p.stride=2 --arg p.scale=0.5 --arg p.height=3)

# simulate --kernel: one configuration's counters. copy.cu, 4 blocks of 256 threads, 4 B each:
# 32 warps, each one request of 128 contiguous aligned bytes = 4 sectors, for the load and the
# store: 32 requests and 128 sectors each; every sector read once, so 0% L1 hits and
# 128 x 32 = 4096 DRAM bytes read. Two memory instructions per warp (64 in all), every
# lane active, one load per round.
set(cachewise_copy_simulate simulate --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy.cu --entry copy
  --grid 4 --block 256 --buffer out=4096 --buffer in=4096)
cachewise_kernel_test(simulate_kernel_copy_counters EXIT 0
  STDOUT "copy in [^\n]*copy.cu  config \\(no parameters\\)\n.*grid 4 x 1 x 1 \\(4 blocks\\), block 256 x 1 x 1.*\ntrace: [0-9]+ warp instructions \\(64 memory\\), 100.0% of lanes active per memory instruction, 1.00 global loads in flight per round \\(at most 1\\)\n.*predicted time .*dram__bytes_read.sum +4096\n.*l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum +32\n.*l1tex__t_requests_pipe_lsu_mem_global_op_st.sum +32\n.*l1tex__t_sector_hit_rate.pct +0.00\n.*l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum +128\n.*l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum +128\n.*error band: "
  ARGS ${cachewise_copy_simulate})
cachewise_kernel_test(simulate_kernel_copy_json EXIT 0
  STDOUT "\"kernel\": \"copy in .*\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\": 128(\\.0)?,.*\"trace\": {[^}]*\"active_lane_fraction\": 1.0,[^}]*\"memory_instructions\": 64.0"
  ARGS ${cachewise_copy_simulate} --json)
# The struct kernel's one configuration: 96 of 128 lane slots active (warp 1 has 16 of 32 lanes
# for its load and its store) = 75.0%.
cachewise_kernel_test(simulate_kernel_struct_lanes EXIT 0 STDOUT "\ntrace: [^\n]*\\(4 memory\\), 75.0% of lanes active per memory instruction"
  ARGS simulate ${cachewise_struct_stride} --arg p.width=48 --arg p.stride=2 --arg p.scale=0.5)
cachewise_kernel_test(simulate_kernel_needs_one_value EXIT 2
  STDERR "^advisor: simulate: parameter 'PAD' has 2 values \\(0,1\\); simulate takes one per parameter: give --param PAD=0 \\(advisor suggest ranks them all\\)\n$"
  ARGS simulate --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8)
cachewise_kernel_test(simulate_kernel_config_pins EXIT 0 STDOUT "transpose_tiled in [^\n]*  config BLOCK_ROWS=8,PAD=1,TILE_DIM=32\n"
  ARGS simulate --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --config TILE_DIM=32,BLOCK_ROWS=8,PAD=1)
# The tiled transpose's block index decides nothing: past its first interpreted blocks the
# sample's blocks are translations of one (docs/ptx-extraction.md, "Blocks by translation").
cachewise_kernel_test(simulate_kernel_translated_blocks EXIT 0
  STDOUT "\nblocks: [1-9][0-9]* interpreted, [1-9][0-9]* translated from a reference block\n"
  ARGS simulate --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --config TILE_DIM=32,BLOCK_ROWS=8,PAD=1)

# Sizes as macros (Kernel Tuner's style): copy_defined_size.cu reads N and BLOCK, takes no scalar;
# a --define with an integer value is a name the launch expressions may use.
cachewise_kernel_test(suggest_kernel_size_as_define EXIT 0 STDOUT "copy_fixed in [^\n]*: 2 feasible of 2 candidates"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy_defined_size.cu --entry copy_fixed
  --param BLOCK=128,256 --define N=8192 --grid "ceil_div(N, BLOCK)" --block BLOCK --buffer "out=N * 4" --buffer "in=N * 4")

add_test(NAME cli.suggest_kernel_plot
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DSPEC=${cachewise_kernel_examples}/transpose.json
    -DPROFILE=${cachewise_example_profile} -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/suggest-plot
    -P ${PROJECT_SOURCE_DIR}/tests/frontend/suggest_plot_check.cmake)
set_tests_properties(cli.suggest_kernel_plot PROPERTIES ENVIRONMENT "CACHEWISE_CACHE_DIR=${CMAKE_BINARY_DIR}/kernel-cache")

# Every access checked: the grid's first and last blocks are traced besides the simulator's
# sample from the middle of the grid, and each buffer is followed by a guard gap as long as
# itself (before, all three ran silently at exit 0). 2^22 floats in 16384 blocks of 256 threads:
# only block 0 reads in[-1]; in[i + n] lies past the end of in (in out, the next buffer, before
# the gaps), block 0's first; copy's last block stores past the end of an out 4 KiB too small
# (its lane 0 at element 16383 * 256 = byte 16776192).
set(cachewise_kernel_bounds --profile ${cachewise_example_profile} --grid 16384 --block 256
  --buffer in=16777216 --buffer out=16777216 --arg n=4194304)
cachewise_kernel_test(suggest_kernel_read_before_the_buffer EXIT 2
  STDERR "^advisor: [^\n]*bounds.cu:4: global access outside every buffer: 4 bytes at byte offset -4 of buffer 'in' \\(16777216 bytes\\) \\(ld.global[^\n]*\\)\n$"
  ARGS suggest --kernel ${cachewise_kernel_data}/bounds.cu --entry read_before ${cachewise_kernel_bounds})
cachewise_kernel_test(suggest_kernel_read_past_the_buffer EXIT 2
  STDERR "^advisor: [^\n]*bounds.cu:9: global access outside every buffer: 4 bytes at byte offset 16777216 of buffer 'in' \\(16777216 bytes\\) \\(ld.global[^\n]*\\)\n$"
  ARGS suggest --kernel ${cachewise_kernel_data}/bounds.cu --entry read_ahead ${cachewise_kernel_bounds})
cachewise_kernel_test(suggest_kernel_buffer_4k_too_small EXIT 2
  STDERR "^advisor: [^\n]*copy.cu:4: global access outside every buffer: 4 bytes at byte offset 16776192 of buffer 'out' \\(16773120 bytes\\) \\(st.global[^\n]*\\)\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy.cu --entry copy --grid 16384 --block 256
  --buffer out=16773120 --buffer in=16777216)

# Out-of-bounds reads on request ("out_of_bounds_reads": "simulate", --out-of-bounds-reads): 4
# blocks of 256 threads, n = 1024, in and out 4 KiB, every block simulated (--work-budget 0).
# Refused by default, the error naming the opt-in. With it, only block 0's warp 0 reads in[-1]: 1
# warp load outside every buffer. Each of the 32 warps loads in[32w - 1 .. 32w + 30], the last
# sector of the line before (in[-8 .. -1] for warp 0, in the guard gap) and 4 of its own: 32
# requests, 160 sectors; the stores of out[32w ..] 32 requests, 4 sectors each.
set(cachewise_kernel_read_before --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/bounds.cu
  --entry read_before --grid 4 --block 256 --buffer in=4096 --buffer out=4096 --arg n=1024)
cachewise_kernel_test(simulate_kernel_read_before_the_buffer_names_the_opt_in EXIT 2
  STDERR "^advisor: [^\n]*bounds.cu:4: global access outside every buffer: 4 bytes at byte offset -4 of buffer 'in' \\(4096 bytes\\) \\(ld.global[^\n]*\\); to simulate such loads at their addresses instead: \"out_of_bounds_reads\": \"simulate\" \\(--out-of-bounds-reads simulate\\)\n$"
  ARGS simulate ${cachewise_kernel_read_before})
cachewise_kernel_test(simulate_kernel_read_before_the_buffer_simulated EXIT 0
  STDOUT "\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\": 32,\n *\"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum\": 32,.*\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\": 160,\n *\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\": 128,.*\"out_of_bounds_loads\": {\n *\"first\": \"bounds.cu:4: 4 bytes at byte offset -4 of buffer 'in' \\(4096 bytes\\) \\(ld.global[^\n]*\\)\",\n *\"warp_loads\": 1\n"
  ARGS simulate ${cachewise_kernel_read_before} --out-of-bounds-reads simulate --work-budget 0 --json)
cachewise_kernel_test(simulate_kernel_read_before_the_buffer_text EXIT 0
  STDOUT "\nout of bounds: 1 warp loads outside every buffer in the traced blocks, simulated at their addresses; the first at bounds.cu:4: 4 bytes at byte offset -4 of buffer 'in' \\(4096 bytes\\) \\(ld.global[^\n]*\\)\n"
  ARGS simulate ${cachewise_kernel_read_before} --out-of-bounds-reads simulate --work-budget 0)
# The 16384-block launch of suggest_kernel_read_before_the_buffer, ranked with the opt-in: of the
# blocks traced (the first, the last, the sample from the middle), only block 0's warp 0 reads
# outside (in[-1]): 1 warp load, in the one candidate.
cachewise_kernel_test(suggest_kernel_read_before_the_buffer_simulated EXIT 0
  STDOUT "\"feasible\": 1,.*\"out_of_bounds_loads\": {\n *\"candidates\": 1,\n *\"first\": \"bounds.cu:4: 4 bytes at byte offset -4 of buffer 'in' \\(16777216 bytes\\) \\(ld.global[^\n]*\\)\",\n *\"warp_loads\": 1\n"
  ARGS suggest --kernel ${cachewise_kernel_data}/bounds.cu --entry read_before ${cachewise_kernel_bounds} --out-of-bounds-reads simulate --json)
# Stores outside every buffer stay errors with the opt-in (copy.cu's out 4 KiB too small).
cachewise_kernel_test(suggest_kernel_buffer_4k_too_small_reads_simulated EXIT 2
  STDERR "^advisor: [^\n]*copy.cu:4: global access outside every buffer: 4 bytes at byte offset 16776192 of buffer 'out' \\(16773120 bytes\\) \\(st.global[^\n]*\\)\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy.cu --entry copy --grid 16384 --block 256
  --buffer out=16773120 --buffer in=16777216 --out-of-bounds-reads simulate)
cachewise_kernel_test(simulate_kernel_out_of_bounds_reads_unknown EXIT 2
  STDERR "^advisor: --out-of-bounds-reads: expected \"error\" or \"simulate\", got \"ignore\"\n$"
  ARGS simulate ${cachewise_kernel_read_before} --out-of-bounds-reads ignore)

# A branch on loaded data (guarded_store.cu: `if (v > 0) out[i] = v`, nvcc's `@%p1 bra` around the
# store when v <= 0): an error naming the opt-in; with "not-taken" no lane branches, so every lane
# stores. 4 blocks x 256 threads, all simulated: 32 warps, each 1 load and 1 store of 32
# consecutive floats (4 sectors) and 1 branch skipped: 32 requests and 128 sectors each way, 32
# warp instructions not taken.
set(cachewise_kernel_guarded_store --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/guarded_store.cu
  --entry store_positive --grid 4 --block 256 --buffer in=4096 --buffer out=4096)
cachewise_kernel_test(simulate_kernel_branch_on_loaded_data_names_the_opt_in EXIT 2
  STDERR "^advisor: [^\n]*guarded_store.cu:5: branch depends on a value loaded from memory \\(ld.global.f32[^\n]*\\): data-dependent control flow is not supported[^\n]*; to have those lanes skip it instead \\(a branch not taken\\): \"branches_on_loaded_data\": \"not-taken\" \\(--branches-on-loaded-data not-taken\\)\n$"
  ARGS simulate ${cachewise_kernel_guarded_store})
cachewise_kernel_test(simulate_kernel_branch_on_loaded_data_not_taken EXIT 0
  STDOUT "\"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum\": 32,\n *\"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum\": 32,.*\"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum\": 128,\n *\"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum\": 128,.*\"skipped_on_loaded_data\": {\n *\"first\": \"guarded_store.cu:5: branch on a value loaded at guarded_store.cu:4 \\(@%p1 bra[^\n]*\\)\",\n *\"warp_instructions\": 32\n"
  ARGS simulate ${cachewise_kernel_guarded_store} --branches-on-loaded-data not-taken --work-budget 0 --json)
cachewise_kernel_test(simulate_kernel_branches_on_loaded_data_unknown EXIT 2
  STDERR "^advisor: --branches-on-loaded-data: expected \"error\" or \"not-taken\", got \"taken\"\n$"
  ARGS simulate ${cachewise_kernel_guarded_store} --branches-on-loaded-data taken)

# Barriers: __syncthreads() that only lanes 0-15 reach is an error (as compute-sanitizer's
# synccheck reports it); threads that leave before the barrier (i >= n) are not. A trap is an
# error: n = 65436 leaves the last block's threads 156.. past n, warp 4 the first to trap.
set(cachewise_kernel_barriers --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/barriers.cu --grid 256 --block 256
  --buffer out=262144 --buffer in=262144)
cachewise_kernel_test(suggest_kernel_divergent_barrier EXIT 2
  STDERR "^advisor: [^\n]*barriers.cu:6: divergent barrier: 16 of the 32 threads of warp 0 in block \\(0, 0, 0\\) reach it, the others do not \\(bar[^\n]*sync 0\\)\n$"
  ARGS suggest --entry divergent_sync ${cachewise_kernel_barriers})
cachewise_kernel_test(suggest_kernel_barrier_after_early_exit EXIT 0 STDOUT "early_exit_sync in [^\n]*barriers.cu"
  ARGS suggest --entry early_exit_sync ${cachewise_kernel_barriers} --arg n=65436)
cachewise_kernel_test(suggest_kernel_trap EXIT 2
  STDERR "^advisor: [^\n]*barriers.cu:23: the kernel traps in block \\(255, 0, 0\\), warp 4 \\(trap;\\)\n$"
  ARGS suggest --entry trap_past_n ${cachewise_kernel_barriers} --arg n=65436)

# Overloaded kernels: the name alone is ambiguous; a parameter list (as the candidates are
# listed, or with `const T` before the type) picks one.
set(cachewise_kernel_overloads --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/overloads.cu --grid 4 --block 256
  --buffer out=8192 --buffer in=8192)
cachewise_kernel_test(suggest_kernel_overloads_ambiguous EXIT 2
  STDERR "^advisor: entry 'scale' is ambiguous: 2 kernels match \\(scale\\(float\\*, float const\\*\\), scale\\(double\\*, double const\\*\\)\\); name one with its parameters, e.g. --entry \"scale\\(float\\*, float const\\*\\)\"\n$"
  ARGS suggest --entry scale ${cachewise_kernel_overloads})
cachewise_kernel_test(suggest_kernel_overload_by_signature EXIT 0 STDOUT "scale\\(double\\*, const double\\*\\) in [^\n]*overloads.cu"
  ARGS suggest --entry "scale(double*, const double*)" ${cachewise_kernel_overloads})

add_test(NAME cli.suggest_kernel_progress
  COMMAND ${CMAKE_COMMAND} -DADVISOR=$<TARGET_FILE:advisor> -DSPEC=${cachewise_kernel_examples}/transpose.json
    -DPROFILE=${cachewise_example_profile} -P ${PROJECT_SOURCE_DIR}/tests/frontend/suggest_progress_check.cmake)
set_tests_properties(cli.suggest_kernel_progress PROPERTIES ENVIRONMENT "CACHEWISE_CACHE_DIR=${CMAKE_BINARY_DIR}/kernel-cache")
