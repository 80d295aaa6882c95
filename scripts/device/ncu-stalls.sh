#!/usr/bin/env bash
# Warp stall reasons and unit throughputs of the configs the model orders wrongly (stencil3d
# z chunks and vector widths at 256^3), the naive transposes it underestimates most, one expert
# transpose and the two gemm tiles it swaps (run ON the GPU machine, from the repository root,
# with binaries laid out in .device/final as scripts/device/final.sh says). One launch each,
# through scripts/device/ncu-compare.sh (clocks never set); writes $OUT/ncu/.
set -u
stalls="long_scoreboard lg_throttle mio_throttle short_scoreboard barrier wait not_selected selected math_pipe_throttle drain membar no_instruction dispatch_stall tex_throttle imc_miss branch_resolving sleeping misc"
metrics=""
for stall in $stalls; do metrics="$metrics smsp__average_warps_issue_stalled_${stall}_per_issue_active.ratio"; done
metrics="$metrics l1tex__throughput.avg.pct_of_peak_sustained_elapsed lts__throughput.avg.pct_of_peak_sustained_elapsed lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed dram__throughput.avg.pct_of_peak_sustained_elapsed lts__t_sectors_op_write.sum lts__t_sectors_op_read.sum dram__bytes_read.sum dram__bytes_write.sum l1tex__t_requests_pipe_lsu_mem_global_op_st.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum l1tex__m_l1tex2xbar_write_sectors.sum l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed l1tex__t_sector_hit_rate.pct lts__average_gcomp_input_sector_success_rate.pct lts__gcomp_input_sectors.sum sm__warps_active.avg.pct_of_peak_sustained_active"
EXTRA_METRICS="$metrics" bash scripts/device/ncu-compare.sh .device/final "$OUT/ncu" \
  "stencil3d 256 block_x=64,block_y=4,block_z=1,mode=1,vector=1,z_chunk=64" \
  "stencil3d 256 block_x=64,block_y=4,block_z=1,mode=1,vector=1,z_chunk=8" \
  "stencil3d 256 block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=8" \
  "stencil3d 256 block_x=64,block_y=4,block_z=1,mode=1,vector=2,z_chunk=32" \
  "stencil3d 256 block_x=32,block_y=2,block_z=1,mode=1,vector=2,z_chunk=32" \
  "transpose 4096 block_x=32,block_y=8,pad=0,smem=0,tile=32" \
  "transpose 4096 block_x=8,block_y=32,pad=0,smem=0,tile=64" \
  "transpose 4096 block_x=8,block_y=4,pad=0,smem=0,tile=64" \
  "transpose 4096 block_x=32,block_y=8,pad=1,smem=1,tile=64" \
  "gemm 1024 bk=32,bm=64,bn=128,pad=1,tm=8,tn=2" "gemm 1024 bk=32,bm=128,bn=32,pad=1,tm=4,tn=4" >/dev/null 2>&1
grep -vE "Reducing stalls|Check the Warp|on each stall|used data to|On average|number of eligible" "$OUT/ncu/ncu-summary.txt"
