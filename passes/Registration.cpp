//===- Registration.cpp - anchors the pass library ------------------------===//
//
// The generated registerZccPasses() is inline in Passes.h; this file gives the
// library an object until the first pass lands, and checks the header compiles.

#include "passes/Passes.h"
