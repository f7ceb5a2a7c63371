// cuDNN's fused attention (CudnnAttention.h) through cudnn-frontend (third_party/cudnn-frontend),
// with libcudnn loaded at run time (cudnn-frontend's NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING).
#include "cuda/CudnnAttention.h"

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include <cudnn_frontend.h>

#include "core/Error.h"
#include "cuda/CudaCheck.h"

namespace cudnn_frontend {
// cudnn-frontend's dynamic loading reads every cuDNN symbol through this handle.
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace zrt::cuda {
namespace {

namespace fe = cudnn_frontend;

constexpr const char *kCall = "zrt_causal_attention";

/// libcudnn.so.9 from the loader's path, else from $ZRT_CUDNN_LIBRARY (a file, e.g. the one in
/// PyTorch's wheels: site-packages/nvidia/cudnn/lib/libcudnn.so.9).
void *loadCudnn() {
  const char *own = std::getenv("ZRT_CUDNN_LIBRARY");
  for (const char *name : {own, static_cast<const char *>("libcudnn.so.9"), static_cast<const char *>("libcudnn.so")}) {
    if (!name || !*name)
      continue;
    if (void *handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL))
      return handle;
  }
  return nullptr;
}

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV };

fe::graph::Tensor_attributes view(const char *name, int64_t uid, const SdpaTensor &t) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim({t.dim[0], t.dim[1], t.dim[2], t.dim[3]})
      .set_stride({t.stride[0], t.stride[1], t.stride[2], t.stride[3]});
}

void place(const std::shared_ptr<fe::graph::Tensor_attributes> &t, int64_t uid, const SdpaTensor &layout) {
  t->set_output(true)
      .set_uid(uid)
      .set_dim({layout.dim[0], layout.dim[1], layout.dim[2], layout.dim[3]})
      .set_stride({layout.stride[0], layout.stride[1], layout.stride[2], layout.stride[3]});
}

/// The causal band (top-left aligned: query i sees keys up to i) and the window as its left bound.
template <class Attributes> void band(Attributes &a, const SdpaProblem &p) {
  a.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
  if (p.leftBound > 0)
    a.set_diagonal_band_left_bound(static_cast<int>(p.leftBound));
}

void check(fe::error_t status, const char *what, const SdpaProblem &p) {
  if (status.is_bad())
    fatal(kCall, "cuDNN's fused attention (%s) refused [%s]: %s (ZRT_ATTENTION=own runs zcc's kernels)", what,
          p.key().c_str(), status.get_message().c_str());
}

struct Graphs {
  std::shared_ptr<fe::graph::Graph> forward, backward;
};

class Cudnn {
public:
  static Cudnn &get() {
    static Cudnn cudnn;
    return cudnn;
  }

  CudnnSupport support() const { return support_; }

  const Graphs &graphs(const SdpaProblem &p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = cache_.find(p.key());
    if (found != cache_.end())
      return found->second;
    Graphs g{forwardGraph(p), backwardGraph(p)};
    return cache_.emplace(p.key(), std::move(g)).first->second;
  }

  void run(const fe::graph::Graph &graph, std::unordered_map<int64_t, void *> &pack, cudaStream_t s,
           const SdpaProblem &p, const char *what) {
    int64_t bytes = 0;
    check(graph.get_workspace_size(bytes), what, p);
    if (fe::detail::set_stream(handle_, s) != CUDNN_STATUS_SUCCESS)
      fatal(kCall, "cudnnSetStream failed (%s of [%s])", what, p.key().c_str());
    check(graph.execute(handle_, pack, workspace(bytes)), what, p);
  }

private:
  Cudnn() {
    int device = 0, major = 0;
    ZRT_CUDA_CHECK(cudaGetDevice(&device));
    ZRT_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    support_.smMajor = major;
    fe::cudnn_dlhandle = loadCudnn();
    if (!fe::cudnn_dlhandle)
      return;
    support_.version = static_cast<int64_t>(fe::detail::get_backend_version());
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS)
      fatal(kCall, "cudnnCreate failed (cuDNN %lld)", static_cast<long long>(support_.version));
  }

  std::shared_ptr<fe::graph::Graph> newGraph() {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    return g;
  }

  void build(fe::graph::Graph &g, const SdpaProblem &p, const char *what) {
    check(g.validate(), what, p);
    check(g.build_operation_graph(handle_), what, p);
    check(g.create_execution_plans({fe::HeurMode_t::A}), what, p);
    check(g.check_support(handle_), what, p);
    check(g.build_plans(handle_), what, p);
  }

  std::shared_ptr<fe::graph::Graph> forwardGraph(const SdpaProblem &p) {
    auto g = newGraph();
    auto q = g->tensor(view("Q", kQ, p.q)), k = g->tensor(view("K", kK, p.kv)), v = g->tensor(view("V", kV, p.kv));
    auto attributes =
        fe::graph::SDPA_attributes().set_name("zcc_attention").set_generate_stats(true).set_attn_scale(p.scale);
    band(attributes, p);
    auto [o, stats] = g->sdpa(q, k, v, attributes);
    place(o, kO, p.q);
    place(stats, kStats, p.stats);
    stats->set_data_type(fe::DataType_t::FLOAT);
    build(*g, p, "forward");
    return g;
  }

  std::shared_ptr<fe::graph::Graph> backwardGraph(const SdpaProblem &p) {
    auto g = newGraph();
    auto q = g->tensor(view("Q", kQ, p.q)), k = g->tensor(view("K", kK, p.kv)), v = g->tensor(view("V", kV, p.kv));
    auto o = g->tensor(view("O", kO, p.q)), dout = g->tensor(view("dO", kDO, p.q));
    auto stats = g->tensor(view("Stats", kStats, p.stats).set_data_type(fe::DataType_t::FLOAT));
    // Deterministic: the key/value gradients summed in a fixed order, so a run repeats bitwise
    // (resume, the bitwise recompute tests) as zcc's own kernels do.
    auto attributes = fe::graph::SDPA_backward_attributes()
                          .set_name("zcc_attention_backward")
                          .set_attn_scale(p.scale)
                          .set_deterministic_algorithm(true);
    band(attributes, p);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, dout, stats, attributes);
    place(dq, kDQ, p.q);
    place(dk, kDK, p.kv);
    place(dv, kDV, p.kv);
    build(*g, p, "backward");
    return g;
  }

  /// One device buffer, grown to the largest graph's need (in the eager first run, before any
  /// capture), as Scratch.cu's.
  void *workspace(int64_t bytes) {
    if (bytes > workspaceBytes_) {
      ZRT_CUDA_CHECK(cudaDeviceSynchronize());
      if (workspace_)
        ZRT_CUDA_CHECK(cudaFree(workspace_));
      ZRT_CUDA_CHECK(cudaMalloc(&workspace_, bytes));
      workspaceBytes_ = bytes;
    }
    return workspace_;
  }

  CudnnSupport support_;
  cudnnHandle_t handle_ = nullptr;
  std::mutex mutex_;
  std::unordered_map<std::string, Graphs> cache_;
  void *workspace_ = nullptr;
  int64_t workspaceBytes_ = 0;
};

} // namespace

CudnnSupport cudnnSupport() { return Cudnn::get().support(); }

void cudnnAttentionForward(const SdpaProblem &p, const void *q, const void *k, const void *v, void *out,
                           float *stats, cudaStream_t s) {
  Cudnn &cudnn = Cudnn::get();
  std::unordered_map<int64_t, void *> pack{{kQ, const_cast<void *>(q)}, {kK, const_cast<void *>(k)},
                                           {kV, const_cast<void *>(v)}, {kO, out}, {kStats, stats}};
  cudnn.run(*cudnn.graphs(p).forward, pack, s, p, "forward");
}

void cudnnAttentionBackward(const SdpaProblem &p, const void *q, const void *k, const void *v, const void *out,
                            const void *dout, const float *stats, void *dq, void *dk, void *dv, cudaStream_t s) {
  Cudnn &cudnn = Cudnn::get();
  std::unordered_map<int64_t, void *> pack{{kQ, const_cast<void *>(q)},     {kK, const_cast<void *>(k)},
                                           {kV, const_cast<void *>(v)},     {kO, const_cast<void *>(out)},
                                           {kDO, const_cast<void *>(dout)}, {kStats, const_cast<float *>(stats)},
                                           {kDQ, dq},                       {kDK, dk},
                                           {kDV, dv}};
  cudnn.run(*cudnn.graphs(p).backward, pack, s, p, "backward");
}

} // namespace zrt::cuda
