# cmake -DOUT=<file.cpp> -DFILES=<a.cl;b.cl;...> -P embed.cmake
# Writes one C++ raw string holding every .cl file in order.
set(body "")
foreach(f ${FILES})
  file(READ ${f} text)
  get_filename_component(name ${f} NAME)
  string(APPEND body "// ---- ${name}\n${text}\n")
endforeach()
file(WRITE ${OUT} "// generated from backends/opencl/kernels/*.cl by embed.cmake: do not edit\n")
file(APPEND ${OUT} "extern const char * const lmocl_kernel_source;\n")
file(APPEND ${OUT} "const char * const lmocl_kernel_source = R\"LMOCLSRC(\n${body})LMOCLSRC\";\n")
