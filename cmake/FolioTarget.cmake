# Flags shared by every folio target. Third-party headers come in as SYSTEM
# includes (imported targets), so -Werror applies to folio's own code only.

set(FOLIO_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
    -Wformat=2)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC 12 reports -Wrestrict false positives inside libstdc++'s string
  # operator+ at -O3 (GCC bug 105329); they are not about our code.
  # -Wnull-dereference is left off for the same reason: at -O3 it fires inside
  # inlined Boost.Asio and libstdc++ code.
  list(APPEND FOLIO_WARNINGS -Wno-restrict)
endif()
if(FOLIO_WERROR)
  list(APPEND FOLIO_WARNINGS -Werror)
endif()

set(FOLIO_ARCH_FLAGS)
if(FOLIO_NATIVE)
  list(APPEND FOLIO_ARCH_FLAGS -march=native)
endif()

set(FOLIO_SAN_FLAGS)
if(FOLIO_SANITIZE)
  set(FOLIO_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
      -fno-omit-frame-pointer)
endif()

# folio_options(<target>): warnings, arch tuning and sanitizers for one target.
function(folio_options target)
  target_compile_options(${target} PRIVATE ${FOLIO_WARNINGS} ${FOLIO_ARCH_FLAGS}
                         ${FOLIO_SAN_FLAGS})
  target_link_options(${target} PRIVATE ${FOLIO_SAN_FLAGS})
endfunction()

# Module headers are reachable only through the link graph. Each library
# `folio_<name>` gets its own include root ${FOLIO_INCLUDE_ROOT}/<name>, which
# holds one symlink `<name>` -> its source folder (created at configure time),
# and that root is its PUBLIC include directory. So "kv/block_pool.h" resolves
# only in targets that link folio_kv, directly or through PUBLIC DEPS: a module
# that includes a header of a module it does not link (one above it, or a
# sibling missing from DEPS) fails to compile instead of building by accident.
# This is how the build enforces "dependencies point down" (docs/ARCHITECTURE.md)
# and keeps each DEPS list honest. Includes keep their spelling ("base/error.h").
set(FOLIO_INCLUDE_ROOT ${CMAKE_BINARY_DIR}/include)

# folio_library(<name> SOURCES ... DEPS ...): a module library `folio_<name>`
# whose headers (the folder of the calling CMakeLists.txt, normally
# src/<name>/) are included as "<name>/..." by it and by whatever links it.
function(folio_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  set(root ${FOLIO_INCLUDE_ROOT}/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${name} SYMBOLIC)
  add_library(folio_${name} STATIC ${ARG_SOURCES})
  target_include_directories(folio_${name} PUBLIC ${root})
  target_link_libraries(folio_${name} PUBLIC ${ARG_DEPS})
  folio_options(folio_${name})
endfunction()

# folio_test(<name> SOURCES ... DEPS ... [LABELS ...]): a GoogleTest executable
# registered with CTest. Label `slow` marks tests that scripts/test runs in
# the release build only (not again under the sanitizers). Every test joins
# the target `folio_tests` (tests/CMakeLists.txt), which builds the tests and
# what they link, not the CLI or the benchmarks.
function(folio_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  set_property(GLOBAL APPEND PROPERTY FOLIO_TEST_TARGETS ${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
      FOLIO_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      FOLIO_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  folio_options(${name})
  if(FOLIO_TEST_OPT)
    target_compile_options(${name} PRIVATE ${FOLIO_TEST_OPT})
  endif()
  set(props ENVIRONMENT "FOLIO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  if(ARG_LABELS)
    list(APPEND props LABELS "${ARG_LABELS}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()
