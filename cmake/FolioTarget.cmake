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

# folio_library(<name> SOURCES ... DEPS ...): a module library `folio_<name>`
# whose public include root is src/ (so code includes "base/error.h").
function(folio_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(folio_${name} STATIC ${ARG_SOURCES})
  target_include_directories(folio_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(folio_${name} PUBLIC ${ARG_DEPS})
  folio_options(folio_${name})
endfunction()

# folio_test(<name> SOURCES ... DEPS ... [LABELS ...]): a GoogleTest executable
# registered with CTest. Label `slow` marks tests that scripts/test runs in
# the release build only (not again under the sanitizers).
function(folio_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
      FOLIO_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      FOLIO_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  folio_options(${name})
  set(props ENVIRONMENT "FOLIO_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  if(ARG_LABELS)
    list(APPEND props LABELS "${ARG_LABELS}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES ${props})
endfunction()
