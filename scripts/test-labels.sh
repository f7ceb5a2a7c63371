# Sourced by scripts/test.sh and scripts/test-sanitizers.sh: the labels of the tests that the ASan + UBSan
# suite leaves to the plain build (docs/development.md, "Labels: which tests run where"). Every other test
# runs in the sanitizer suite, which checks all the plain run would and more, so scripts/test.sh runs each
# test once: these on the plain build, the rest on the sanitized one.
#   large:     6 GB arenas, collectives past 2^31 bytes, long meshes: ASan's shadow costs gigabytes
#   harness:   checks of the PyTorch harnesses themselves (defects planted in a PyTorch run)
#   reference: parity with PyTorch, numerics on the Release build that users run
#   cuda-build: train.bins linked against the CUDA backend nvcc built, which only the plain build compiles
ZCC_PLAIN_ONLY_LABELS="large|harness|reference|cuda-build"
