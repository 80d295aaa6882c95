# fe-ptx's sources of cachewise_frontend (PTX parser, CFG, extractor), paths relative to frontend/.
set(CACHEWISE_FRONTEND_PTX_SOURCES
  src/ptx_parse.cpp
  src/ptx_syntax.cpp
  src/cfg_postdom.cpp
  src/cfg_schedule.cpp
  src/extract.cpp
  src/extract_lower.cpp
  src/extract_loops.cpp
  src/extract_opcodes.cpp
  src/extract_alu.cpp
  src/extract_warp.cpp
  src/extract_translation.cpp)
