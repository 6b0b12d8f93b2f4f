# The library's layers, bottom up, and how each becomes a library.
#
# Every header is included as <sluice/layer/file.h>, in the tree as once
# installed. A header directly in a layer's folder is public: installed,
# and all an application (or samples/, tools/, bench/) may include. One in
# a subfolder is internal: a layer's detail/ folder, a backend's folder.
#
# Two views of the headers in the build tree: include/ links each layer's
# folder whole, for the layers themselves and the tests; include-public/
# links the public headers only, and is all a target linking a layer sees,
# so that an internal header included from samples/, tools/ or bench/ is
# refused ("No such file") when it compiles.
set(SLUICE_LAYERS base ops devices stream io pipeline)
set(SLUICE_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
set(SLUICE_PUBLIC_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include-public)
file(REMOVE_RECURSE ${SLUICE_PUBLIC_INCLUDE_DIR})
file(MAKE_DIRECTORY ${SLUICE_INCLUDE_DIR}/sluice ${SLUICE_PUBLIC_INCLUDE_DIR}/sluice)
foreach(entry IN LISTS SLUICE_LAYERS ITEMS sluice.h)
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${entry} ${SLUICE_INCLUDE_DIR}/sluice/${entry} SYMBOLIC)
endforeach()
file(CREATE_LINK ${PROJECT_SOURCE_DIR}/sluice.h ${SLUICE_PUBLIC_INCLUDE_DIR}/sluice/sluice.h SYMBOLIC)

# The shared libraries' ABI changes with every minor version while sluice is 0.x.
set(SLUICE_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})

# sluice_layer(name SOURCES...): one library per folder, static or shared as
# BUILD_SHARED_LIBS says, exported as sluice::name; its public headers (the
# folder's own *.h and *.def) installed under include/sluice/name/.
function(sluice_layer name)
  add_library(sluice_${name} ${ARGN})
  add_library(sluice::${name} ALIAS sluice_${name})
  # Installed shared, each library finds the layers below it beside itself
  # ($ORIGIN): an application's RUNPATH serves only its own direct needs.
  set_target_properties(sluice_${name} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME sluice_${name}
                        VERSION ${PROJECT_VERSION} SOVERSION ${SLUICE_SOVERSION} INSTALL_RPATH "\$ORIGIN")
  target_include_directories(sluice_${name}
    PUBLIC $<BUILD_INTERFACE:${SLUICE_PUBLIC_INCLUDE_DIR}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${SLUICE_INCLUDE_DIR})
  sluice_target_warnings(sluice_${name})

  file(GLOB headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/*.h
       ${CMAKE_CURRENT_SOURCE_DIR}/*.def)
  file(MAKE_DIRECTORY ${SLUICE_PUBLIC_INCLUDE_DIR}/sluice/${name})
  foreach(header IN LISTS headers)
    file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR}/${header} ${SLUICE_PUBLIC_INCLUDE_DIR}/sluice/${name}/${header}
         SYMBOLIC)
  endforeach()
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sluice/${name})
endfunction()
