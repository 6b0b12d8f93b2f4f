# The library's layers, bottom up, and how each becomes a library.
#
# Every header is included as <sluice/layer/file.h>, in the tree as once
# installed: include/sluice/ in the build tree links each layer's folder and
# the umbrella sluice.h, and only that folder is on the include path. A layer
# names its public headers (sluice_public_headers); those are installed, every
# other header is internal to the build.
set(SLUICE_LAYERS base ops devices stream io pipeline)
set(SLUICE_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${SLUICE_INCLUDE_DIR}/sluice)
foreach(entry IN LISTS SLUICE_LAYERS ITEMS sluice.h)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${entry} ${SLUICE_INCLUDE_DIR}/sluice/${entry} SYMBOLIC)
endforeach()

# The shared libraries' ABI changes with every minor version while sluice is 0.x.
set(SLUICE_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

# sluice_layer(name SOURCES...): one library per folder, static or shared as
# BUILD_SHARED_LIBS says, exported as sluice::name.
function(sluice_layer name)
  add_library(sluice_${name} ${ARGN})
  add_library(sluice::${name} ALIAS sluice_${name})
  # Installed shared, each library finds the layers below it beside itself
  # ($ORIGIN): an application's RUNPATH serves only its own direct needs.
  set_target_properties(sluice_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME sluice_${name}
                        VERSION ${PROJECT_VERSION} SOVERSION ${SLUICE_SOVERSION} INSTALL_RPATH "\$ORIGIN")
  target_include_directories(sluice_${name} PUBLIC
    $<BUILD_INTERFACE:${SLUICE_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  sluice_target_warnings(sluice_${name})
endfunction()

# sluice_public_headers(layer HEADERS...): the headers of a layer an
# application includes, paths relative to the layer's folder. They are
# installed under include/sluice/layer/; tests/install checks that each
# compiles on its own.
function(sluice_public_headers layer)
  foreach(header IN LISTS ARGN)
    cmake_path(GET header PARENT_PATH dir)
    install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/${layer}/${dir})
  endforeach()
endfunction()
