# advisor show / --help / --version
cachewise_cli_test(show_example EXIT 0 STDOUT "Example Hopper GPU.*L1 \\(per SM\\).*near hit latency +265\\.0 cycles.*Shared memory.*32 x 4 B"
  ARGS show ${cachewise_example_profile})
cachewise_cli_test(show_json EXIT 0 STDOUT "\"schema_version\": 1" ARGS show ${cachewise_example_profile} --json)
cachewise_cli_test(help EXIT 0 STDOUT "Subcommands:.*show" ARGS --help)
cachewise_cli_test(version EXIT 0 STDOUT "cachewise [0-9]+\\.[0-9]+\\.[0-9]+" ARGS --version)
cachewise_cli_test(no_subcommand EXIT 2 STDERR "^advisor: .*subcommand" ARGS)
cachewise_cli_test(unknown_subcommand EXIT 2 STDERR "^advisor: .*frobnicate" ARGS frobnicate)
cachewise_cli_test(show_missing_file EXIT 2 STDERR "^advisor: /nonexistent/p.json: cannot open profile file\n$"
  ARGS show /nonexistent/p.json)
cachewise_cli_test(show_malformed_json EXIT 2 STDERR "^advisor: .*malformed.json: malformed JSON"
  ARGS show ${cachewise_bad_profiles}/malformed.json)
cachewise_cli_test(show_bad_line_size EXIT 2
  STDERR "^advisor: .*line-100.json: profile.l2.line_bytes.value: expected a power of two, got 100\n$"
  ARGS show ${cachewise_bad_profiles}/line-100.json)
cachewise_cli_test(show_missing_field EXIT 2 STDERR "^advisor: .*no-dram.json: profile.dram: missing\n$"
  ARGS show ${cachewise_bad_profiles}/no-dram.json)
cachewise_cli_test(show_wrong_type EXIT 2
  STDERR "^advisor: .*latency-string.json: profile.l1.hit_latency_cycles.value: expected a number, got a string\n$"
  ARGS show ${cachewise_bad_profiles}/latency-string.json)
cachewise_cli_test(show_future_schema EXIT 2 STDERR "^advisor: .*schema-v2.json: profile.schema_version: unsupported schema version 2"
  ARGS show ${cachewise_bad_profiles}/schema-v2.json)
cachewise_cli_test(show_not_an_object EXIT 2 STDERR "^advisor: .*array.json: profile: expected an object, got an array\n$"
  ARGS show ${cachewise_bad_profiles}/array.json)
cachewise_cli_test(show_sm_placement EXIT 0
  STDOUT "SM placement +64 / 68 SMs near partition 0 / 1; 129 of 131 neighbouring blocks share one"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json)
cachewise_cli_test(show_sm_placement_repeated EXIT 2
  STDERR "^advisor: .*sm-placement-repeated.json: profile.l2.sm_placement.dispatch_sm_ids\\[1\\]: SM 0 appears twice\n$"
  ARGS show ${cachewise_bad_profiles}/sm-placement-repeated.json)
