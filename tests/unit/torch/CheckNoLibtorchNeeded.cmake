# Fails if BINARY (-DBINARY=<path>) lists libtorch among its direct
# dependencies (readelf NEEDED). The TorchScript frontend dlopens its libtorch
# loader module on first use, so the `turbine` tool starts without loading
# libtorch (~0.5 s of relocation per process otherwise).
if(NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "binary '${BINARY}' does not exist")
endif()
find_program(READELF readelf REQUIRED)
execute_process(COMMAND ${READELF} -d "${BINARY}" OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d failed on ${BINARY}")
endif()
string(REGEX MATCHALL "NEEDED[^\n]*" needed "${dynamic}")
if(needed MATCHES "libtorch|libc10")
  message(FATAL_ERROR "${BINARY} links libtorch directly: ${needed}")
endif()
message(STATUS "${BINARY} needs: ${needed}")
