//===- InitAll.cpp - registers every dialect and pass zcc uses -----------===//

#include "zcc/InitAll.h"

#include "dialects/zc/ZcDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void zcc::registerZccDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::zc::ZcDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::tensor::TensorDialect, mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::LLVM::LLVMDialect>();
}

void zcc::registerZccPasses() {
  mlir::zc::registerZccPasses();
  // Upstream passes zcc's pipeline runs (zcc-recompute re-parses the pipeline's text).
  mlir::registerCSEPass();
  mlir::zc::registerZccPipeline();
}
