# The fuzz build (TURBINE_FUZZ=ON; `make fuzz` configures it in build-fuzz
# with clang-22). Included by the top-level CMakeLists.txt instead of the
# normal set of folders. What it compiles, and how:
#  - the parsers and loaders (artifact, runtime, kernels' cache reader,
#    frontends) with AddressSanitizer + UndefinedBehaviorSanitizer and
#    libFuzzer's coverage instrumentation (-fsanitize=fuzzer-no-link);
#  - the fuzz targets (fuzz/targets) linked with libFuzzer;
#  - nothing else: the compiler libraries that the ONNX target runs
#    global-opt with are not parsers of user files and need no
#    instrumentation, so they are taken from the normal build
#    (TURBINE_NORMAL_BUILD_DIR, built first by `make fuzz`) instead of being
#    compiled a second time.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "TURBINE_FUZZ needs clang (libFuzzer): configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22")
endif()
set(TURBINE_NORMAL_BUILD_DIR "${PROJECT_SOURCE_DIR}/build" CACHE PATH
    "The normal build whose compiler libraries the fuzz build links")

# Sanitizers everywhere in this build; UBSan findings abort (so libFuzzer
# records them). vptr checks are off: the uninstrumented LLVM/MLIR/libtorch
# objects would give false reports.
set(TURBINE_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr
    -fno-sanitize-recover=all -fno-omit-frame-pointer -gline-tables-only)
add_compile_options(${TURBINE_SANITIZER_FLAGS})
add_link_options(-fsanitize=address,undefined)

# The normal build's compiler libraries, imported (see above).
add_subdirectory(base)
set(TURBINE_REUSED_INCLUDES
  ${PROJECT_SOURCE_DIR}/compiler/include
  ${TURBINE_NORMAL_BUILD_DIR}/compiler/include
  ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_library(turbine_compiler_headers INTERFACE IMPORTED GLOBAL)
set_target_properties(turbine_compiler_headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${TURBINE_REUSED_INCLUDES}"
  INTERFACE_LINK_LIBRARIES "turbine_base;turbine_artifact")
foreach(lib turbine_dialect turbine_compiler)
  set(archive ${TURBINE_NORMAL_BUILD_DIR}/lib/lib${lib}.a)
  if(NOT EXISTS ${archive})
    message(FATAL_ERROR "the fuzz build links ${archive} from the normal build: "
                        "build that first (make build), or set TURBINE_NORMAL_BUILD_DIR")
  endif()
  add_library(${lib} STATIC IMPORTED GLOBAL)
  set_target_properties(${lib} PROPERTIES IMPORTED_LOCATION ${archive}
    INTERFACE_INCLUDE_DIRECTORIES "${TURBINE_REUSED_INCLUDES}")
endforeach()
set_target_properties(turbine_dialect PROPERTIES
  INTERFACE_LINK_LIBRARIES "turbine_compiler_headers;MLIR;LLVM")
set_target_properties(turbine_compiler PROPERTIES
  INTERFACE_LINK_LIBRARIES "turbine_dialect;turbine_compiler_headers;MLIR;LLVM")
# Folders below name the generated headers as a dependency (they come from
# the normal build).
add_custom_target(TurbineOpsIncGen)
add_custom_target(TurbinePassesIncGen)

add_subdirectory(artifact)
add_subdirectory(runtime)
add_subdirectory(kernels EXCLUDE_FROM_ALL)
add_subdirectory(frontends EXCLUDE_FROM_ALL)

# Coverage feedback for the code under test.
foreach(lib turbine_artifact turbine_runtime turbine_kernels turbine_frontend_common
            turbine_onnx turbine_torchscript turbine_torchscript_loader)
  target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link)
endforeach()
# A sanitized shared library leaves the sanitizer runtime's symbols to the
# executable, so the runtime's --no-undefined check cannot hold here.
set_property(TARGET turbine_runtime PROPERTY LINK_OPTIONS "")

add_subdirectory(fuzz)
