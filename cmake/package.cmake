# `cmake --install`: the headers, libattnlab.a, attnlabConfig.cmake exporting attnlab::attnlab (with the compile
# options and definitions its ABI depends on) and attnlab.pc for pkg-config.
include(CMakePackageConfigHelpers)
set(ATTNLAB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/attnlab)

install(TARGETS attnlab EXPORT attnlabTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/attnlab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT attnlabTargets NAMESPACE attnlab:: DESTINATION ${ATTNLAB_CMAKE_DIR})

# What the config must find again for the exported link interface.
set(ATTNLAB_PACKAGE_MPI ${MPI_CXX_FOUND})
set(ATTNLAB_PACKAGE_CUDA FALSE)
if(CMAKE_CUDA_COMPILER)
  set(ATTNLAB_PACKAGE_CUDA TRUE)
endif()
configure_package_config_file(cmake/attnlabConfig.cmake.in ${CMAKE_BINARY_DIR}/attnlabConfig.cmake
                              INSTALL_DESTINATION ${ATTNLAB_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/attnlabConfig.cmake ${CMAKE_BINARY_DIR}/attnlabConfigVersion.cmake
        DESTINATION ${ATTNLAB_CMAKE_DIR})

# pkg-config: the same flags, spelled out (Eigen, zlib, toml++ and Open MPI bring their own .pc files).
set(ATTNLAB_PC_REQUIRES "eigen3 zlib tomlplusplus")
set(ATTNLAB_PC_CUDA_DEFINE "")
set(ATTNLAB_PC_CUDA_LIBS "")
if(MPI_CXX_FOUND)
  string(APPEND ATTNLAB_PC_REQUIRES " ompi-c")
endif()
if(CMAKE_CUDA_COMPILER)
  set(ATTNLAB_PC_CUDA_DEFINE " -DATTNLAB_HAVE_CUDA")
  set(ATTNLAB_PC_CUDA_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")  # cuBLAS is dlopen'ed
endif()
list(JOIN attnlab_abi_flags " " ATTNLAB_PC_ABI_FLAGS)
# The prefix relative to the .pc file, so that `cmake --install --prefix` anywhere gives a working file.
file(RELATIVE_PATH ATTNLAB_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
configure_file(cmake/attnlab.pc.in ${CMAKE_BINARY_DIR}/attnlab.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/attnlab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
