# cmake -P script behind the install_consumer test; see CMakeLists.txt.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
# Only the fresh prefix may provide sluice: no package registry, no build tree.
step("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build} -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
     -DCMAKE_CXX_FLAGS=${CXX_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS})
file(STRINGS ${build}/CMakeCache.txt sluice_dir REGEX "^sluice_DIR:")
string(FIND "${sluice_dir}" "${prefix}/" at)
if(NOT at GREATER -1)
  message(FATAL_ERROR "install_consumer: sluice was found outside the install prefix ${prefix}: ${sluice_dir}")
endif()
step("building the consumer" ${CMAKE_COMMAND} --build ${build})
step("running the consumer" ${build}/app)

set(expected "consumer: x * 2 + 1 = 3 5 7")
string(FIND "${step_output}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "install_consumer: expected the consumer to print\n  ${expected}\nfound\n  ${step_output}")
endif()
message(STATUS "install_consumer: ${step_output}")
