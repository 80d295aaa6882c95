# fe-ptx's test sources of frontend_tests, paths relative to tests/frontend/.
set(CACHEWISE_FRONTEND_PTX_TESTS)
