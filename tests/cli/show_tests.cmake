# advisor show / --help / --version
cachewise_cli_test(show_example EXIT 0 STDOUT "Example Hopper GPU.*L1 \\(per SM\\).*near hit latency +265\\.0 cycles.*Shared memory.*32 x 4 B"
  ARGS show ${cachewise_example_profile})
cachewise_cli_test(show_json EXIT 0 STDOUT "\"schema_version\": 1" ARGS show ${cachewise_example_profile} --json)
# The compact table: value with its unit, then the confidence; no method text. The H200's
# 150109880320 B of DRAM = 139.80 GiB; its L1 hit latency 32.1 cycles at 1980 MHz = 16.2 ns.
cachewise_cli_test(show_compact EXIT 0
  STDOUT "\n  capacity +188 KiB +low\n.*\n  hit latency +32\\.1 cycles \\(16\\.2 ns\\) +high\n.*\n  capacity +139\\.8 GiB\n.*confidence: how far each value can be trusted"
  NOT_STDOUT "pointer chase"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json)
# --verbose adds each value's samples, spread and method on the line below it.
cachewise_cli_test(show_verbose EXIT 0
  STDOUT "\n  hit latency +32\\.1 cycles \\(16\\.2 ns\\) +high\n      n=14, spread 0\\.0%. pointer chase, ld\\.global\\.ca"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json --verbose)
# --json leaves the raw curves out unless --curves asks for them (the H200 profile has them).
cachewise_cli_test(show_json_without_curves EXIT 0 STDOUT "\"schema_version\": 1" NOT_STDOUT "\"curves\""
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json --json)
cachewise_cli_test(show_json_curves EXIT 0 STDOUT "\"curves\": .\n *\\{" ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json --json --curves)
cachewise_cli_test(show_curves_without_json EXIT 2
  STDERR "^advisor: show: --curves has no effect without --json \\(the table shows no curves\\)\n$"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json --curves)
cachewise_cli_test(show_verbose_with_json EXIT 2 STDERR "^advisor: show: --verbose has no effect with --json"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json --json --verbose)
cachewise_cli_test(help EXIT 0 STDOUT "Subcommands:.*show" ARGS --help)
cachewise_cli_test(version EXIT 0 STDOUT "cachewise [0-9]+\\.[0-9]+\\.[0-9]+" ARGS --version)
cachewise_cli_test(no_subcommand EXIT 2 STDERR "^advisor: .*subcommand" ARGS)
cachewise_cli_test(unknown_subcommand EXIT 2 STDERR "^advisor: .*frobnicate" ARGS frobnicate)
cachewise_cli_test(show_missing_file EXIT 2 STDERR "^advisor: /nonexistent/p.json: cannot open profile file\n$"
  ARGS show /nonexistent/p.json)
cachewise_cli_test(show_malformed_json EXIT 2 STDERR "^advisor: .*malformed.json: malformed JSON"
  ARGS show ${cachewise_bad_profiles}/malformed.json)
cachewise_cli_test(show_bad_line_size EXIT 2
  STDERR "^advisor: .*line-100.json: profile.l2.line_bytes.value: expected a power of two in \\[1, 1024\\], got 100\n$"
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
  STDOUT "SMs near partition 0 / 1 +64 / 68 +high\n  neighbours on one partition +129 of 131 consecutive blocks +high\n"
  ARGS show ${PROJECT_SOURCE_DIR}/profiles/h200.json)
cachewise_cli_test(show_sm_placement_repeated EXIT 2
  STDERR "^advisor: .*sm-placement-repeated.json: profile.l2.sm_placement.dispatch_sm_ids\\[1\\]: SM 0 appears twice\n$"
  ARGS show ${cachewise_bad_profiles}/sm-placement-repeated.json)
