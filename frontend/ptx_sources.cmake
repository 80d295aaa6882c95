# fe-ptx's sources of cachewise_frontend (PTX parser, CFG, extractor), paths relative to frontend/.
set(CACHEWISE_FRONTEND_PTX_SOURCES)
