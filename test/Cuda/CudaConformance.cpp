// The CUDA backend against the CPU backend, op by op, on random data (f32 and bf16), and
// NCCL collectives against their definition (--collectives, under mpirun, a GPU per rank).
// Exits 77 when no CUDA device is present: ctest reports the test as skipped.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <mpi.h>

#include "cuda/Device.h"
#include "cuda/Kernels.h"
#include "cuda/Matmul.h"
#include "cuda/NcclCommunicator.h"
#include "zrt/bf16.h"
#include "zrt/zrt.h"

namespace {

int failures = 0;

struct Tensor {
  int32_t dtype;
  std::vector<float> values; // f32 view of the contents
  std::vector<unsigned char> bytes() const {
    std::vector<unsigned char> b(values.size() * (dtype == 1 ? 2 : 4));
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == 1) {
        zrt::bf16 h(values[i]);
        std::memcpy(&b[2 * i], &h, 2);
      } else {
        std::memcpy(&b[4 * i], &values[i], 4);
      }
    }
    return b;
  }
};

std::vector<float> decode(const std::vector<unsigned char> &b, int32_t dtype) {
  size_t n = b.size() / (dtype == 1 ? 2 : 4);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == 1) {
      zrt::bf16 h;
      std::memcpy(&h, &b[2 * i], 2);
      v[i] = float(h);
    } else {
      std::memcpy(&v[i], &b[4 * i], 4);
    }
  }
  return v;
}

Tensor random(int32_t dtype, size_t n, std::mt19937 &rng, float scale = 1.0f) {
  std::normal_distribution<float> d(0.0f, scale);
  Tensor t{dtype, std::vector<float>(n)};
  for (float &x : t.values)
    x = dtype == 1 ? float(zrt::bf16(d(rng))) : d(rng);
  return t;
}

/// Device copy of host bytes.
struct DeviceBuffer {
  void *ptr = nullptr;
  size_t size = 0;
  explicit DeviceBuffer(const std::vector<unsigned char> &host) : size(host.size()) {
    cudaMalloc(&ptr, size ? size : 1);
    cudaMemcpy(ptr, host.data(), size, cudaMemcpyHostToDevice);
  }
  explicit DeviceBuffer(size_t bytes) : size(bytes) {
    cudaMalloc(&ptr, bytes ? bytes : 1);
    cudaMemset(ptr, 0, bytes ? bytes : 1);
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  std::vector<unsigned char> host() const {
    std::vector<unsigned char> h(size);
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), ptr, size, cudaMemcpyDeviceToHost);
    return h;
  }
};

void compare(const std::string &what, const std::vector<float> &got, const std::vector<float> &want, double tol) {
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double err = std::fabs(double(got[i]) - want[i]) / std::max(1.0, std::fabs(double(want[i])));
    if (!(err <= worst)) {
      worst = err;
      at = i;
    }
  }
  bool ok = got.size() == want.size() && worst <= tol;
  std::printf("%s %-40s worst %.2e%s\n", ok ? "ok  " : "FAIL", what.c_str(), worst,
              ok ? "" : (" at " + std::to_string(at)).c_str());
  failures += !ok;
}

const char *name(int32_t dtype) { return dtype == 1 ? "bf16" : "f32"; }

void elementwise(std::mt19937 &rng) {
  const int64_t n = 100003; // not a multiple of any block size
  for (int32_t dt : {0, 1}) {
    double tol = dt == 1 ? 1e-2 : 1e-6;
    Tensor a = random(dt, n, rng), b = random(dt, n, rng);
    auto ab = a.bytes(), bb = b.bytes();
    DeviceBuffer da(ab), db(bb), dout(ab.size());
    std::vector<unsigned char> cpu(ab.size());
    using Binary = std::function<void(int32_t, const void *, const void *, void *, int64_t)>;
    using CudaBinary = void (*)(int32_t, const void *, const void *, void *, int64_t, cudaStream_t);
    auto binary = [&](const char *op, Binary cpuOp, CudaBinary gpuOp, double t) {
      cpuOp(dt, ab.data(), bb.data(), cpu.data(), n);
      gpuOp(dt, da.ptr, db.ptr, dout.ptr, n, nullptr);
      compare(std::string(op) + " " + name(dt), decode(dout.host(), dt), decode(cpu, dt), t);
    };
    binary("add", zrt_add, zrt::cuda::add, tol);
    binary("sub", zrt_sub, zrt::cuda::sub, tol);
    binary("mul", zrt_mul, zrt::cuda::mul, tol);
    binary("relu_grad", zrt_relu_grad, zrt::cuda::reluGrad, tol);
    binary("gelu_grad", zrt_gelu_grad, zrt::cuda::geluGrad, dt == 1 ? 1e-2 : 1e-5);
    zrt_relu(dt, ab.data(), cpu.data(), n);
    zrt::cuda::relu(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("relu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), tol);
    zrt_gelu(dt, ab.data(), cpu.data(), n);
    zrt::cuda::gelu(dt, da.ptr, dout.ptr, n, nullptr);
    compare(std::string("gelu ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), dt == 1 ? 1e-2 : 1e-5);
    zrt_scale(dt, ab.data(), cpu.data(), n, 0.37);
    zrt::cuda::scale(dt, da.ptr, dout.ptr, n, 0.37, nullptr);
    compare(std::string("scale ") + name(dt), decode(dout.host(), dt), decode(cpu, dt), tol);
    const int64_t rows = 211, cols = n / rows;
    Tensor bias = random(dt, cols, rng);
    auto biasb = bias.bytes();
    DeviceBuffer dbias(biasb);
    zrt_bias_add(dt, ab.data(), biasb.data(), cpu.data(), rows, cols);
    zrt::cuda::biasAdd(dt, da.ptr, dbias.ptr, dout.ptr, rows, cols, nullptr);
    std::vector<float> got = decode(dout.host(), dt), want = decode(cpu, dt);
    got.resize(rows * cols);
    want.resize(rows * cols);
    compare(std::string("bias_add ") + name(dt), got, want, tol);
    int32_t other = 1 - dt;
    std::vector<unsigned char> cast(n * (other == 1 ? 2 : 4));
    DeviceBuffer dcast(cast.size());
    zrt_cast(dt, ab.data(), other, cast.data(), n);
    zrt::cuda::cast(dt, da.ptr, other, dcast.ptr, n, nullptr);
    compare(std::string("cast ") + name(dt) + "->" + name(other), decode(dcast.host(), other), decode(cast, other), 0);
  }
}

void optimizers(std::mt19937 &rng) {
  const int64_t n = 4099;
  for (int32_t gdt : {0, 1}) {
    Tensor p = random(0, n, rng), g = random(gdt, n, rng), m = random(0, n, rng, 0.1f), v = random(0, n, rng, 0.1f);
    for (float &x : v.values)
      x = std::fabs(x);
    auto pb = p.bytes(), gb = g.bytes(), mb = m.bytes(), vb = v.bytes();
    DeviceBuffer dp(pb), dg(gb), dm(mb), dv(vb), dlow(n * 2);
    std::vector<unsigned char> low(n * 2);
    zrt_adamw(pb.data(), gdt, gb.data(), mb.data(), vb.data(), low.data(), n, 1e-3, 0.9, 0.999, 1e-8, 0.01, 3);
    zrt::cuda::adamw(static_cast<float *>(dp.ptr), gdt, dg.ptr, static_cast<float *>(dm.ptr),
                     static_cast<float *>(dv.ptr), dlow.ptr, n, 1e-3, 0.9, 0.999, 1e-8, 0.01, 3, nullptr);
    compare(std::string("adamw param, grad ") + name(gdt), decode(dp.host(), 0), decode(pb, 0), 1e-6);
    compare(std::string("adamw exp_avg_sq, grad ") + name(gdt), decode(dv.host(), 0), decode(vb, 0), 1e-6);
    compare(std::string("adamw bf16 copy, grad ") + name(gdt), decode(dlow.host(), 1), decode(low, 1), 1e-2);
    Tensor buf = random(0, n, rng, 0.1f);
    auto bufb = buf.bytes(), p2 = p.bytes();
    DeviceBuffer dp2(p2), dbuf(bufb);
    zrt_sgd_momentum(p2.data(), gdt, gb.data(), bufb.data(), nullptr, n, 0.01, 0.9, 0.01);
    zrt::cuda::sgdMomentum(static_cast<float *>(dp2.ptr), gdt, dg.ptr, static_cast<float *>(dbuf.ptr), nullptr, n,
                           0.01, 0.9, 0.01, nullptr);
    compare(std::string("sgd param, grad ") + name(gdt), decode(dp2.host(), 0), decode(p2, 0), 1e-6);
  }
}

void matmuls(std::mt19937 &rng) {
  struct Case {
    int64_t batch, m, n, k;
    bool ta, tb, shared;
  };
  for (int32_t dt : {0, 1})
    for (Case c : {Case{1, 64, 48, 80, false, false, false}, Case{1, 33, 17, 65, true, false, false},
                   Case{1, 31, 29, 47, false, true, false}, Case{3, 16, 24, 40, false, false, false},
                   Case{4, 12, 20, 28, false, true, true}, Case{2, 9, 11, 13, true, true, false}}) {
      Tensor a = random(dt, c.batch * c.m * c.k, rng), b = random(dt, (c.shared ? 1 : c.batch) * c.k * c.n, rng);
      auto ab = a.bytes(), bb = b.bytes();
      std::vector<unsigned char> cpu(c.batch * c.m * c.n * (dt == 1 ? 2 : 4));
      DeviceBuffer da(ab), db(bb), dc(cpu.size());
      zrt_matmul(dt, ab.data(), bb.data(), cpu.data(), c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared);
      zrt::cuda::matmul(dt, da.ptr, db.ptr, dc.ptr, c.batch, c.m, c.n, c.k, c.ta, c.tb, c.shared, nullptr);
      char what[96];
      std::snprintf(what, sizeof what, "matmul %s b%lld %lldx%lldx%lld%s%s%s", name(dt), (long long)c.batch,
                    (long long)c.m, (long long)c.n, (long long)c.k, c.ta ? " tA" : "", c.tb ? " tB" : "",
                    c.shared ? " shared" : "");
      compare(what, decode(dc.host(), dt), decode(cpu, dt), dt == 1 ? 2e-2 : 1e-4);
    }
}

int collectives() {
  MPI_Init(nullptr, nullptr);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  zrt::cuda::selectDevice();
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  // The control communicator is the runtime's MPI one; MPI is already initialized.
  auto comm = zrt::cuda::createNcclCommunicator(zrt::createMpiCommunicator(nullptr, nullptr), stream);
  const int64_t count = 1000;
  std::vector<float> mine(count * ranks);
  for (int64_t i = 0; i < count * ranks; ++i)
    mine[i] = float(rank + 1) * 0.5f + float(i % 7);
  std::vector<unsigned char> bytes(mine.size() * 4);
  std::memcpy(bytes.data(), mine.data(), bytes.size());
  DeviceBuffer send(bytes), recv(bytes.size()), shard(count * 4), gathered(count * ranks * 4);
  auto expectSum = [&](int64_t i) {
    float s = 0;
    for (int r = 0; r < ranks; ++r)
      s += float(r + 1) * 0.5f + float(i % 7);
    return s;
  };
  comm->run({zrt::Collective::AllReduce, 0, send.ptr, recv.ptr, count * ranks, true, 0});
  cudaStreamSynchronize(stream);
  std::vector<float> want(count * ranks), got = decode(recv.host(), 0);
  for (int64_t i = 0; i < count * ranks; ++i)
    want[i] = expectSum(i) / ranks;
  compare("nccl all_reduce avg (rank " + std::to_string(rank) + ")", got, want, 1e-6);
  comm->run({zrt::Collective::ReduceScatter, 0, send.ptr, shard.ptr, count, false, 0});
  cudaStreamSynchronize(stream);
  want.assign(count, 0);
  for (int64_t i = 0; i < count; ++i)
    want[i] = expectSum(rank * count + i);
  compare("nccl reduce_scatter sum (rank " + std::to_string(rank) + ")", decode(shard.host(), 0), want, 1e-6);
  comm->run({zrt::Collective::AllGather, 0, send.ptr, gathered.ptr, count, false, 0});
  cudaStreamSynchronize(stream);
  want.assign(count * ranks, 0);
  for (int r = 0; r < ranks; ++r)
    for (int64_t i = 0; i < count; ++i)
      want[r * count + i] = float(r + 1) * 0.5f + float(i % 7);
  compare("nccl all_gather (rank " + std::to_string(rank) + ")", decode(gathered.host(), 0), want, 0);
  comm->finalize();
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: the CUDA conformance suite is skipped here\n");
    return 77;
  }
  if (argc > 1 && std::string(argv[1]) == "--collectives")
    return collectives();
  std::mt19937 rng(1234);
  elementwise(rng);
  optimizers(rng);
  matmuls(rng);
  std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
