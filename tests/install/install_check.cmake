# cmake -P script behind the install_* tests (see CMakeLists.txt); STEP says which.
set(prefix ${WORK_DIR}/prefix)
set(expected "consumer: x * 2 + 1 = 3 5 7")

function(fail message)
  message(FATAL_ERROR "install_${STEP}: ${message}")
endfunction()

# run(what COMMAND...): runs a command, fails the test with its output when it fails.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    fail("${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

function(expect_consumer_output output)
  string(FIND "${output}" "${expected}" at)
  if(at EQUAL -1)
    fail("expected the consumer to print\n  ${expected}\nfound\n  ${output}")
  endif()
  message(STATUS "install_${STEP}: ${output}")
endfunction()

# The consumer project built with find_package(sluice) against `from`, only there.
function(build_with_find_package from build)
  file(REMOVE_RECURSE ${build})
  run("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${build} -G ${GENERATOR}
      -DCMAKE_PREFIX_PATH=${from} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
      -DCMAKE_CXX_FLAGS=${CXX_FLAGS} -DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS})
  file(STRINGS ${build}/CMakeCache.txt sluice_dir REGEX "^sluice_DIR:")
  string(FIND "${sluice_dir}" "${from}/" at)
  if(NOT at GREATER -1)
    fail("sluice was found outside the install prefix ${from}: ${sluice_dir}")
  endif()
  run("building the consumer" ${CMAKE_COMMAND} --build ${build})
  run("running the consumer" ${build}/app)
  expect_consumer_output("${run_output}")
endfunction()

# The consumer's one file compiled and linked with what `pkg-config ARGN sluice` says.
function(build_with_pkg_config from app)
  file(GLOB_RECURSE pc_files ${from}/sluice.pc)
  if(NOT pc_files)
    fail("no sluice.pc installed under ${from}")
  endif()
  list(GET pc_files 0 pc)
  cmake_path(GET pc PARENT_PATH pc_dir)
  run("pkg-config" ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} pkg-config ${ARGN} sluice)
  separate_arguments(pc_flags UNIX_COMMAND "${run_output}")
  separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS} ${LINKER_FLAGS}")
  run("compiling the consumer with pkg-config's flags (${run_output})"
      ${CXX_COMPILER} -std=c++20 ${cxx_flags} ${CONSUMER_DIR}/main.cpp -o ${app} ${pc_flags})
  # A shared libsluice is found where pkg-config's libdir is, as an installed
  # system would find it through ld.so.conf.
  cmake_path(GET pc_dir PARENT_PATH libdir)
  run("running the consumer" ${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${app})
  expect_consumer_output("${run_output}")
endfunction()

if(STEP STREQUAL "tree")
  file(REMOVE_RECURSE ${WORK_DIR})
  run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

elseif(STEP STREQUAL "headers")
  # Libraries the implementation uses and an application need not see. The one
  # exception: a custom node kind joins the oneTBB flow graph (pipeline/node.h).
  set(private_includes "#include <(zmq|fftw3|cblas|lapacke|oneapi|sleef|httplib|sodium|spdlog|fmt|nlohmann|tbb)[/.>]")
  file(GLOB_RECURSE headers RELATIVE ${prefix}/include ${prefix}/include/sluice/*.h)
  list(LENGTH headers count)
  if(count LESS 10)
    fail("expected sluice's public headers under ${prefix}/include/sluice, found ${count}: ${headers}")
  endif()
  foreach(header IN LISTS headers)
    if(header MATCHES "/detail/|/cpu/|/cuda/")
      fail("${header} is internal (a backend's or an implementation's) but was installed")
    endif()
    file(STRINGS ${prefix}/include/${header} includes REGEX "${private_includes}")
    if(header STREQUAL "sluice/pipeline/node.h")
      list(FILTER includes EXCLUDE REGEX "<tbb/flow_graph.h>")
    endif()
    if(includes)
      fail("${header} includes ${includes}: an installed header may not pull in sluice's private dependencies")
    endif()
    # Each header on its own, first in its translation unit.
    string(MAKE_C_IDENTIFIER ${header} name)
    set(unit ${WORK_DIR}/headers/${name}.cpp)
    file(WRITE ${unit} "#include <${header}>\n")
    separate_arguments(cxx_flags UNIX_COMMAND "${CXX_FLAGS}")
    run("compiling ${header} on its own" ${CXX_COMPILER} -std=c++20 ${cxx_flags} -fsyntax-only
        -I${prefix}/include ${unit})
  endforeach()
  message(STATUS "install_headers: ${count} installed headers, each compiles on its own")

elseif(STEP STREQUAL "find_package")
  build_with_find_package(${prefix} ${WORK_DIR}/find_package)

elseif(STEP STREQUAL "pkg_config")
  build_with_pkg_config(${prefix} ${WORK_DIR}/app_pkg_config --cflags --libs)

elseif(STEP STREQUAL "shared")
  set(shared ${WORK_DIR}/shared)
  file(REMOVE_RECURSE ${shared})
  cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
  # Unoptimized (-O0, no debug information): what this checks is how the
  # libraries are built, named, installed and linked, not their speed, and
  # optimizing every kernel again would take most of the suite's time.
  run("configuring sluice with BUILD_SHARED_LIBS=ON" ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${shared}/build
      -G ${GENERATOR} -DBUILD_SHARED_LIBS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_BENCH=OFF
      -DSLUICE_BUILD_PROGRAMS=OFF -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
      -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CXX_FLAGS=${CXX_FLAGS}
      -DCMAKE_SHARED_LINKER_FLAGS=${LINKER_FLAGS})
  run("building the shared libraries" ${CMAKE_COMMAND} --build ${shared}/build -j ${cores})
  run("installing them" ${CMAKE_COMMAND} --install ${shared}/build --prefix ${shared}/prefix)
  # Each library as a distribution ships it: the file, its soname link, its link-time name.
  foreach(layer IN ITEMS base ops devices stream io pipeline)
    file(GLOB_RECURSE library ${shared}/prefix/libsluice_${layer}.so.${VERSION})
    if(NOT library)
      fail("libsluice_${layer}.so.${VERSION} was not installed under ${shared}/prefix")
    endif()
    run("reading its soname" readelf -d ${library})
    if(NOT run_output MATCHES "SONAME[^\n]*\\[libsluice_${layer}\\.so\\.${SOVERSION}\\]")
      fail("libsluice_${layer}'s soname is not libsluice_${layer}.so.${SOVERSION}:\n${run_output}")
    endif()
    cmake_path(GET library PARENT_PATH libdir)
    foreach(link IN ITEMS libsluice_${layer}.so.${SOVERSION} libsluice_${layer}.so)
      if(NOT IS_SYMLINK ${libdir}/${link})
        fail("${libdir}/${link} is missing")
      endif()
    endforeach()
  endforeach()
  build_with_find_package(${shared}/prefix ${shared}/find_package)
  run("reading the consumer's needs" readelf -d ${shared}/find_package/app)
  if(NOT run_output MATCHES "NEEDED[^\n]*libsluice_ops\\.so\\.${SOVERSION}")
    fail("the consumer does not load libsluice_ops.so.${SOVERSION}:\n${run_output}")
  endif()
  build_with_pkg_config(${shared}/prefix ${shared}/app_pkg_config --cflags --libs)
else()
  fail("unknown STEP '${STEP}'")
endif()
