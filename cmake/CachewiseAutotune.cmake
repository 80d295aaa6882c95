# cachewise_autotune(TARGET t FAMILY f SIZES n1 [n2 ...] OUTPUT header
#                    [DTYPE f32] [STRATEGY model|random|exhaustive] [BUDGET n]
#                    [PROFILE file] [FIX key=value,...] [M m] [K k])
# cachewise_autotune(TARGET t KERNEL_SPEC spec.json SIZES width=1024,height=1024 [...] OUTPUT header
#                    [STRATEGY model|random|exhaustive] [BUDGET n] [PROFILE file])
#
# FAMILY tunes a built-in pattern family for sizes n; KERNEL_SPEC tunes the user's own kernel
# (docs/kernel-spec.md), each SIZES item a size bucket: the spec args it sets.
# At build time, runs `advisor tune` to produce OUTPUT (a C++ header; relative paths are under
# the current binary dir) and OUTPUT.json beside it. With a GPU it measures the family's
# feasible configs for each size; without one it writes the advisor's static (model-predicted)
# recommendation and says so in the header (CACHEWISE_TUNED_<FAMILY>_<DTYPE>_FROM_MEASUREMENT
# is 0). TARGET gets the header as a source (so it is generated first) and its folder as a
# private include directory. A tuning run killed mid-build resumes from its journal
# (OUTPUT.journal*.jsonl); a finished run removes the journal, so the next build measures afresh.
#
# The advisor used is the in-tree `advisor` target when there is one, else
# CACHEWISE_ADVISOR_EXECUTABLE (set by find_package(cachewise)).
function(cachewise_autotune)
  cmake_parse_arguments(AT "" "TARGET;FAMILY;KERNEL_SPEC;OUTPUT;DTYPE;STRATEGY;BUDGET;PROFILE;FIX;M;K" "SIZES" ${ARGN})
  if(AT_FAMILY AND AT_KERNEL_SPEC)
    message(FATAL_ERROR "cachewise_autotune: give FAMILY or KERNEL_SPEC, not both")
  elseif(NOT AT_FAMILY AND NOT AT_KERNEL_SPEC)
    message(FATAL_ERROR "cachewise_autotune: FAMILY or KERNEL_SPEC is required")
  endif()
  foreach(required TARGET OUTPUT SIZES)
    if(NOT AT_${required})
      message(FATAL_ERROR "cachewise_autotune: ${required} is required")
    endif()
  endforeach()
  if(AT_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cachewise_autotune: unknown arguments: ${AT_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${AT_TARGET})
    message(FATAL_ERROR "cachewise_autotune: ${AT_TARGET} is not a target")
  endif()

  if(TARGET advisor)
    set(advisor_command $<TARGET_FILE:advisor>)
    set(advisor_dependency advisor)
  elseif(CACHEWISE_ADVISOR_EXECUTABLE)
    set(advisor_command ${CACHEWISE_ADVISOR_EXECUTABLE})
    set(advisor_dependency ${CACHEWISE_ADVISOR_EXECUTABLE})
  else()
    message(FATAL_ERROR "cachewise_autotune: no advisor executable (find_package(cachewise) sets CACHEWISE_ADVISOR_EXECUTABLE)")
  endif()

  set(header ${AT_OUTPUT})
  if(NOT IS_ABSOLUTE ${header})
    set(header ${CMAKE_CURRENT_BINARY_DIR}/${header})
  endif()
  get_filename_component(header_dir ${header} DIRECTORY)
  set(results ${header}.json)

  set(dependencies ${advisor_dependency})
  if(AT_FAMILY)
    set(arguments tune --pattern ${AT_FAMILY})
    set(size_flag --n)
    set(options DTYPE STRATEGY BUDGET PROFILE FIX M K)
    set(subject ${AT_FAMILY})
  else()
    get_filename_component(spec ${AT_KERNEL_SPEC} ABSOLUTE)
    set(arguments tune --spec ${spec})
    set(size_flag --size)
    set(options STRATEGY BUDGET PROFILE)
    foreach(family_only DTYPE FIX M K)
      if(DEFINED AT_${family_only})
        message(FATAL_ERROR "cachewise_autotune: ${family_only} is for FAMILY; a KERNEL_SPEC sets its own parameters")
      endif()
    endforeach()
    # Regenerate when the spec or the kernel source changes.
    file(READ ${spec} spec_text)
    string(JSON kernel_source ERROR_VARIABLE no_source GET ${spec_text} source)
    if(no_source)
      message(FATAL_ERROR "cachewise_autotune: ${spec}: no \"source\" (${no_source})")
    endif()
    get_filename_component(spec_dir ${spec} DIRECTORY)
    get_filename_component(kernel_source ${kernel_source} ABSOLUTE BASE_DIR ${spec_dir})
    list(APPEND dependencies ${spec} ${kernel_source})
    get_filename_component(subject ${spec} NAME)
  endif()
  foreach(size IN LISTS AT_SIZES)
    list(APPEND arguments ${size_flag} ${size})
  endforeach()
  foreach(option IN LISTS options)
    if(DEFINED AT_${option})
      string(TOLOWER ${option} flag)
      list(APPEND arguments --${flag} ${AT_${option}})
    endif()
  endforeach()
  # One journal per size when there are several (the advisor names them FILE.n<N>.jsonl for
  # a family, FILE.width1024_height1024.jsonl for a kernel's bucket width=1024,height=1024).
  set(journal ${header}.journal.jsonl)
  list(LENGTH AT_SIZES size_count)
  if(size_count EQUAL 1)
    set(journals ${journal})
  else()
    set(journals)
    foreach(size IN LISTS AT_SIZES)
      if(AT_FAMILY)
        set(bucket n${size})
      else()
        string(REPLACE "=" "" bucket ${size})
        string(REPLACE "," "_" bucket ${bucket})
      endif()
      list(APPEND journals ${header}.journal.${bucket}.jsonl)
    endforeach()
  endif()
  if(DEFINED AT_PROFILE)
    list(APPEND dependencies ${AT_PROFILE})
  endif()

  string(REPLACE ";" " " sizes_text "${AT_SIZES}")
  add_custom_command(
    OUTPUT ${header} ${results}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${header_dir}
    COMMAND ${advisor_command} ${arguments} --header ${header} --json ${results} --journal ${journal}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${journals}
    DEPENDS ${dependencies}
    COMMENT "cachewise: tuning ${subject} for ${sizes_text} (static recommendation when no GPU)"
    VERBATIM)
  target_sources(${AT_TARGET} PRIVATE ${header})
  target_include_directories(${AT_TARGET} PRIVATE ${header_dir})
endfunction()
