# bench/kernels (GPU): the example kernels against their CUDA C++ twins (bench/cuda/*.cu),
# which nvcc compiles to PTX here at build time: -O3 -arch=sm_90a, the peer's best settings.
# The PTX lands in nvcc/ next to the executable, where bench/kernels looks first, so the two
# travel together to the GPU machine. Included from bench/CMakeLists.txt.
find_program(OXIDE_NVCC nvcc HINTS ${CUDA_HOME}/bin)
set(OXIDE_BENCH_NVCC_DIR ${CMAKE_CURRENT_BINARY_DIR}/nvcc)
set(oxide_bench_twins vecadd saxpy reduce sgemm softmax transpose histogram cluster_dsmem)
set(oxide_bench_twin_ptx)
if(OXIDE_NVCC)
  foreach(k ${oxide_bench_twins})
    add_custom_command(OUTPUT ${OXIDE_BENCH_NVCC_DIR}/${k}.ptx
      COMMAND ${CMAKE_COMMAND} -E make_directory ${OXIDE_BENCH_NVCC_DIR}
      COMMAND ${OXIDE_NVCC} -O3 -arch=sm_90a -ptx ${CMAKE_CURRENT_SOURCE_DIR}/cuda/${k}.cu
              -o ${OXIDE_BENCH_NVCC_DIR}/${k}.ptx
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda/${k}.cu
      COMMENT "nvcc -O3 -arch=sm_90a -ptx bench/cuda/${k}.cu"
      VERBATIM)
    list(APPEND oxide_bench_twin_ptx ${OXIDE_BENCH_NVCC_DIR}/${k}.ptx)
  endforeach()
else()
  message(STATUS "nvcc not found: bench/kernels will report nan for the nvcc columns")
endif()
add_custom_target(bench_kernels_twins ALL DEPENDS ${oxide_bench_twin_ptx})
add_executable(bench_kernels ${CMAKE_CURRENT_SOURCE_DIR}/kernels.c)
set_target_properties(bench_kernels PROPERTIES OUTPUT_NAME kernels)
target_link_libraries(bench_kernels PRIVATE oxide oxide_examples dl m)
add_dependencies(bench_kernels bench_kernels_twins)
