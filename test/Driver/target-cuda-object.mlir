// --target=cuda --emit=obj writes the object a CUDA runtime links: the same object as --target=cpu's
// (the runtime is chosen when linking), so test/CudaOnCpu links it against the CUDA backend built
// on the CPU, with or without the CUDA toolkit here.
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cuda --emit=obj --world-size 2 --zero-stage 3 -o %t-cuda.o
// RUN: zcc %zcc_src_root/examples/gpt.mlir --target=cpu --emit=obj --world-size 2 --zero-stage 3 -o %t-cpu.o
// RUN: cmp %t-cuda.o %t-cpu.o
