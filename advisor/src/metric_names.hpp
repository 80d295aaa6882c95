// CUPTI metric names the advisor reads from a Prediction (the model emits them).
#pragma once

#include <string_view>

namespace cachewise::advisor::metric_names {
inline constexpr std::string_view kGlobalLoadRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum";
inline constexpr std::string_view kGlobalLoadSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum";
inline constexpr std::string_view kGlobalStoreRequests = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum";
inline constexpr std::string_view kGlobalStoreSectors = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum";
inline constexpr std::string_view kSharedLoadWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
inline constexpr std::string_view kSharedStoreWavefronts = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";
inline constexpr std::string_view kSharedLoadBankConflicts = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum";
inline constexpr std::string_view kSharedStoreBankConflicts =
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum";
inline constexpr std::string_view kL1HitRate = "l1tex__t_sector_hit_rate.pct";
inline constexpr std::string_view kL2HitRate = "lts__t_sector_hit_rate.pct";
inline constexpr std::string_view kL2ReadSectors = "lts__t_sectors_op_read.sum";
inline constexpr std::string_view kL2WriteSectors = "lts__t_sectors_op_write.sum";
inline constexpr std::string_view kDramReadBytes = "dram__bytes_read.sum";
inline constexpr std::string_view kDramWriteBytes = "dram__bytes_write.sum";
} // namespace cachewise::advisor::metric_names
