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
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --top 3)
# Flags over the spec file: one tile and row count left, so the two pads; 32 x 33 x 4 B of shared.
cachewise_kernel_test(suggest_kernel_flags_override_spec EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_ROWS=8,PAD=1,TILE_DIM=32 [^\n]*/0/4224  .*\n2  BLOCK_ROWS=8,PAD=0,TILE_DIM=32 [^\n]*/0/4096  [^\n]*32-way bank conflict on shared loads"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8)
# Template arguments in a .cu with host code: instantiated per candidate, compiled by nvcc.
cachewise_kernel_test(suggest_kernel_template_host_code EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_ROWS=8,PAD=1,TILE_DIM=32 "
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile} --param TILE_DIM=32 --param BLOCK_ROWS=8)
cachewise_kernel_test(suggest_kernel_json EXIT 0
  STDOUT "\"kernel\": \"transpose_tiled in .*\"compiler\": {[^}]*\"registers_per_thread\": [1-9][^}]*\"static_shared_bytes\": 4224"
  ARGS suggest ${cachewise_kernel_transpose} --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 --json)
# WIDTH=4 hits an #error: counted as rejected, the two others are ranked.
cachewise_kernel_test(suggest_kernel_candidate_fails_to_compile EXIT 0 STDOUT ": 2 feasible of 3 candidates"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_data}/copy_width.cu --entry copy_width
  --param WIDTH=1,2,4 --grid "1024 / WIDTH" --block 256 --buffer "out=1048576" --buffer "in=1048576")

# CSR SpMV with declared index arrays (spmv.json: 32 entries per row, row r's columns r .. r + 31
# mod rows). Per warp, THREADS_PER_ROW=1: row_ptr[r], row_ptr[r + 1] (4 + 5 sectors), then 32
# rounds of col and val with lanes 128 B apart (32 sectors each) and x[r + t] (4 sectors at t = 0,
# 5 after): (9 + 32 * 64 + 4 + 31 * 5) / 98 requests = 22.6 sectors per load request; 4 per store.
# THREADS_PER_ROW=4, 8 rows a warp: row_ptr 1 + 2 sectors, 8 rounds of col and val (8 rows x 16 B:
# 8 sectors each) and x (11 consecutive words: 2 sectors): (3 + 8 * 18) / 26 = 5.7; lane 0 of 4 stores: 1.
cachewise_kernel_test(suggest_kernel_spmv_contents EXIT 0
  STDOUT "csr_spmv in [^\n]*spmv.cu: 9 feasible of 9 candidates.*\n[0-9]  BLOCK_SIZE=128,THREADS_PER_ROW=4 [^\n]* 5.7/1.0 .*\n[0-9]  BLOCK_SIZE=128,THREADS_PER_ROW=1 [^\n]* 22.6/4.0 "
  ARGS suggest --spec ${cachewise_kernel_examples}/spmv.json --profile ${cachewise_example_profile})
# The same kernel from flags, over the block size alone (THREADS_PER_ROW=1 by default): the
# accesses per warp do not change with the block, 22.6/4.0 for both.
set(cachewise_kernel_spmv --profile ${cachewise_example_profile} --kernel ${cachewise_kernel_examples}/spmv.cu --entry csr_spmv
  --grid "ceil_div(rows, BLOCK_SIZE)" --block BLOCK_SIZE --param BLOCK_SIZE=128,256 --arg rows=65536
  --buffer "row_ptr=(rows + 1) * 4" --buffer "col=rows * 32 * 4" --buffer "val=rows * 32 * 4" --buffer "x=rows * 4" --buffer "y=rows * 4")
cachewise_kernel_test(suggest_kernel_spmv_contents_flags EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*\n1  BLOCK_SIZE=[0-9]+ [^\n]* 22.6/4.0 [^\n]*\n2  BLOCK_SIZE=[0-9]+ [^\n]* 22.6/4.0 "
  ARGS suggest ${cachewise_kernel_spmv} --contents "row_ptr=i * 32" --contents "col=(i / 32 + i % 32) % rows")

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

# Hostile defines on the nvcc path (transpose_template.cu holds host code): nvcc's driver runs its
# steps through a shell, so a value reaching its argv would run. The macros are unused: exit 0,
# and the file the payload would touch does not exist.
set(cachewise_pwned ${CMAKE_BINARY_DIR}/cachewise-pwned)
cachewise_kernel_test(suggest_kernel_define_reaches_no_shell EXIT 0 MUST_NOT_CREATE ${cachewise_pwned}
  STDOUT ": 1 feasible of 1 candidates"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile}
  --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 --define "EXTRA=$(touch ${cachewise_pwned})1" --define "MORE=`touch ${cachewise_pwned}`")
cachewise_kernel_test(suggest_kernel_define_of_two_lines EXIT 2 STDERR "^advisor: --define EXTRA: a macro value must be one line\n$"
  ARGS suggest --spec ${cachewise_kernel_examples}/transpose_template.json --profile ${cachewise_example_profile}
  --param TILE_DIM=32 --param BLOCK_ROWS=8 --param PAD=1 "--define=EXTRA=1\n#include </etc/passwd>")
# Real files as users have them (issue 35). several.cu holds kernels the parser (env_word) and
# the extractor (carry_sum) cannot read; the entries asked for are ranked regardless.
set(cachewise_kernel_several --profile ${cachewise_example_profile} --kernel ${PROJECT_SOURCE_DIR}/tests/frontend/kernels/several.cu
  --arg n=1048576 --buffer "out=n * 8")
# A type-and-bool template entry over a type parameter: FIRST_ADD makes every thread load
# in[i] and in[i + 256]; a warp's 32 consecutive elements are 128 B (4 sectors) as float and
# 256 B (8 sectors) as double; thread 0 alone stores out[blockIdx.x]: 1 sector per request.
cachewise_kernel_test(suggest_kernel_type_and_bool_template EXIT 0
  STDOUT ": 2 feasible of 2 candidates.*(\n[12]  T=float [^\n]* 4\\.0/1\\.0 [^\n]*\n[12]  T=double [^\n]* 8\\.0/1\\.0 |\n[12]  T=double [^\n]* 8\\.0/1\\.0 [^\n]*\n[12]  T=float [^\n]* 4\\.0/1\\.0 )"
  ARGS suggest ${cachewise_kernel_several} --entry "pair_sum<T, 256, true>" --param T=float,double --grid "n / 512" --block 256
  --buffer "in=n * 8")
# Two entries in one table, with an entry column: the cooperative-groups reduction and the
# shared-memory tree over the same launch (THREADS elements per block), 2 x 2 candidates.
cachewise_kernel_test(suggest_kernel_several_entries EXIT 0
  STDOUT "tile_sum, pair_sum<float, THREADS, false> in [^\n]*several.cu: 4 feasible of 4 candidates[^\n]*\n#  entry +config .*\n[1-4]  tile_sum +THREADS=(128|256) .*\n[1-4]  pair_sum<float, THREADS, false>  THREADS=(128|256) "
  ARGS suggest ${cachewise_kernel_several} --entry tile_sum --entry "pair_sum<float, THREADS, false>" --param THREADS=128,256
  --grid "n / THREADS" --block THREADS --buffer "in=n * 4")
# The extractor's refusal in the entry asked for names the entry and the source line (the
# asm statement at several.cu:13).
cachewise_kernel_test(suggest_kernel_several_rejected_entry EXIT 2 STDERR "^advisor: carry_sum: several.cu:13: [^\n]*add[^\n]*\n$"
  ARGS suggest --profile ${cachewise_example_profile} --kernel ${PROJECT_SOURCE_DIR}/tests/frontend/kernels/several.cu
  --entry carry_sum --entry tile_sum --grid 8 --block 128 --buffer a=4096 --buffer b=4096 --buffer out=4096 --buffer in=4096)

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
  ARGS suggest ${cachewise_kernel_strided} -I ${cachewise_kernel_data}/needs_include/include)
cachewise_kernel_test(suggest_kernel_without_include_dir EXIT 2 STDERR "^advisor: [^\n]*stride_config.h[^\n]*\n$"
  ARGS suggest ${cachewise_kernel_strided})
