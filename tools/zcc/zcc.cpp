//===- zcc.cpp - the zcc compiler driver (thin main over lib/Driver) ------===//

#include "zcc/Driver.h"

int main(int argc, char **argv) { return zcc::runZccMain(argc, argv); }
