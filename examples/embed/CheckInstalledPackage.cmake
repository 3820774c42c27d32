# CheckInstalledPackage.cmake - the embed.installed_package test: installs
# this build into WORK_DIR/prefix, builds examples/embed out of tree against
# it with find_package(Turbine), and runs the result on ARTIFACT. Fails on
# any step; the run's output is printed for ctest to match.
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR ARTIFACT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "CheckInstalledPackage.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/embed_example ${ARTIFACT} main 4)
message("${last_output}")
