// The device mesh through the C ABI, on however many ranks the test was launched with (ctest:
// one, and 4 as tp 2 x pp 2, 8 would add dp 2): each axis' group, the tensor axis' all-reduce,
// pipeline sends and receives between stages (both ways at once, and more bytes than MPI's
// int), the pipeline ends' group, host gathers per axis, and the vocabulary-parallel embedding
// and cross-entropy against the whole-vocabulary kernels on the same rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "zrt/zrt.h"

namespace {

int worldFromLauncher() {
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size ? std::atoi(size) : 1;
}

// The mesh main() set: tp 2 x pp 2 on 4 ranks or more, every rank alone on one; with
// ZRT_TEST_CONTEXT=2, tp 2 x cp 2 (context parallelism inside the data axis) instead.
int tp = 1, pp = 1, cp = 1;

TEST(Mesh, CoordinatesFollowMegatronsOrder) {
  const int rank = zrt_rank(), world = zrt_world_size(), dp = world / (tp * pp);
  EXPECT_EQ(zrt_mesh_size(ZRT_AXIS_TENSOR), tp);
  EXPECT_EQ(zrt_mesh_size(ZRT_AXIS_PIPELINE), pp);
  EXPECT_EQ(zrt_mesh_size(ZRT_AXIS_DATA), dp);
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_TENSOR), rank % tp);
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_DATA), rank / tp % dp);
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_PIPELINE), rank / (tp * dp));
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_WORLD), rank);
}

TEST(Mesh, EachAxisReducesAmongItsGroup) {
  // Sum of world ranks over each group, from the coordinates.
  const int rank = zrt_rank(), world = zrt_world_size(), dp = world / (tp * pp);
  const int t = rank % tp, d = rank / tp % dp, p = rank / (tp * dp);
  for (int axis : {ZRT_AXIS_TENSOR, ZRT_AXIS_DATA}) {
    std::vector<float> x(5, static_cast<float>(rank)), y(5);
    zrt_all_reduce_on(axis, ZRT_DTYPE_F32, x.data(), y.data(), 5, 0);
    float expected = 0;
    if (axis == ZRT_AXIS_TENSOR)
      for (int tt = 0; tt < tp; ++tt)
        expected += (p * dp + d) * tp + tt;
    else
      for (int dd = 0; dd < dp; ++dd)
        expected += (p * dp + dd) * tp + t;
    for (float v : y)
      EXPECT_EQ(v, expected) << "axis " << axis;
  }
  std::vector<float> mine{static_cast<float>(rank)}, all(tp);
  zrt_host_all_gather(ZRT_AXIS_TENSOR, mine.data(), all.data(), 1);
  for (int tt = 0; tt < tp; ++tt)
    EXPECT_EQ(all[tt], (p * dp + d) * tp + tt);
}

TEST(Mesh, ContextGroupsSplitTheDataAxis) {
  // Megatron's order: rank = ((p dp + d) cp + c) tp + t; the data axis spans d and c.
  const int rank = zrt_rank(), world = zrt_world_size(), dataRanks = world / (tp * pp);
  const int t = rank % tp, c = rank / tp % cp, d = rank / (tp * cp) % (dataRanks / cp);
  EXPECT_EQ(zrt_mesh_size(ZRT_AXIS_CONTEXT), cp);
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_CONTEXT), c);
  EXPECT_EQ(zrt_mesh_rank(ZRT_AXIS_DATA), d * cp + c);
  // All-to-all: block q of rank c's send goes to rank q, landing as block c.
  for (int64_t count : {int64_t(0), int64_t(3), int64_t(250001)}) {
    std::vector<float> send(count * cp), recv(count * cp, -1.f);
    for (int q = 0; q < cp; ++q)
      for (int64_t i = 0; i < count; ++i)
        send[q * count + i] = static_cast<float>(rank * 100000 + q * 1000 + i % 997);
    zrt_all_to_all_on(ZRT_AXIS_CONTEXT, ZRT_DTYPE_F32, send.data(), recv.data(), count);
    for (int from = 0; from < cp; ++from) {
      const int fromRank = ((d * cp) + from) * tp + t + (rank / (tp * dataRanks)) * tp * dataRanks;
      for (int64_t i = 0; i < count; ++i)
        ASSERT_EQ(recv[from * count + i], static_cast<float>(fromRank * 100000 + c * 1000 + i % 997))
            << "block from context rank " << from << ", element " << i << " of " << count;
    }
  }
}

TEST(Mesh, ContextChunksAndUlyssesExchange) {
  // The whole sequence on every rank; each context rank's tokens by zrt_context_chunks (chunk c
  // and 2 cp - 1 - c of 2 cp), then to heads: the whole sequence in order, this rank's heads.
  const int64_t batch = 2, tokens = 4 * cp * 2, heads = 2 * cp, headSize = 3, width = heads * headSize;
  const int c = zrt_mesh_rank(ZRT_AXIS_CONTEXT);
  auto value = [](int64_t b, int64_t t, int64_t j) { return static_cast<float>(b * 10000 + t * 100 + j); };
  std::vector<float> whole(batch * tokens * width), mine(batch * tokens / cp * width);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < width; ++j)
        whole[(b * tokens + t) * width + j] = value(b, t, j);
  zrt_context_chunks(ZRT_AXIS_CONTEXT, 4, whole.data(), mine.data(), batch, tokens, width, 0);
  const int64_t local = tokens / cp, chunk = tokens / (2 * cp);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < local; ++t) {
      const int64_t global = t < chunk ? c * chunk + t : (2 * cp - 1 - c) * chunk + t - chunk;
      ASSERT_EQ(mine[(b * local + t) * width], value(b, global, 0)) << "local token " << t;
    }
  std::vector<float> byHeads(batch * tokens * width / cp), back(mine.size());
  zrt_context_exchange(ZRT_AXIS_CONTEXT, ZRT_DTYPE_F32, mine.data(), byHeads.data(), batch, local, heads, headSize, 1);
  const int64_t group = width / cp;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t j = 0; j < group; ++j)
        ASSERT_EQ(byHeads[(b * tokens + t) * group + j], value(b, t, c * group + j)) << "token " << t;
  zrt_context_exchange(ZRT_AXIS_CONTEXT, ZRT_DTYPE_F32, byHeads.data(), back.data(), batch, local, heads, headSize, 0);
  EXPECT_EQ(back, mine);
  // The inverse scatter: this rank's chunks back in place, zeros elsewhere.
  std::vector<float> scattered(whole.size(), -1.f);
  zrt_context_chunks(ZRT_AXIS_CONTEXT, 4, scattered.data(), mine.data(), batch, tokens, width, 1);
  int64_t kept = 0;
  for (size_t i = 0; i < whole.size(); ++i) {
    ASSERT_TRUE(scattered[i] == 0.f || scattered[i] == whole[i]) << i;
    kept += scattered[i] == whole[i] && whole[i] != 0.f;
  }
  EXPECT_EQ(kept, static_cast<int64_t>(mine.size()) - (c == 0 ? 1 : 0)); // whole[0] is 0
}

TEST(Mesh, RingAttentionMatchesTheWholeSequence) {
  // Every rank builds the whole sequence; each context rank runs the ring on its chunks, which
  // must be its chunks of one rank's causal attention and gradient of the whole sequence; and
  // every context rank computes as many scores (causal balance of the 2-chunk layout).
  const int64_t B = 2, T = 8 * cp * 2, H = 4, G = 2, D = 8, C = H * D, Ckv = G * D, L = T / cp;
  auto fill = [](std::vector<float> &x, float f) {
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = std::sin(f * static_cast<float>(i) + 0.3f);
  };
  std::vector<float> q(B * T * C), k(B * T * Ckv), v(B * T * Ckv), dout(B * T * C);
  fill(q, 0.37f), fill(k, 0.23f), fill(v, 0.71f), fill(dout, 0.13f);
  std::vector<float> out(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
  zrt_causal_attention(ZRT_DTYPE_F32, q.data(), k.data(), v.data(), out.data(), B, T, C, H, G, 0.0, 0.0, 0);
  zrt_causal_attention_grad(ZRT_DTYPE_F32, dout.data(), q.data(), k.data(), v.data(), dq.data(), dk.data(), dv.data(),
                            B, T, C, H, G, 0.0, 0.0, 0);
  auto part = [&](const std::vector<float> &whole, int64_t width) {
    std::vector<float> mine(B * L * width);
    zrt_context_chunks(ZRT_AXIS_CONTEXT, 4, whole.data(), mine.data(), B, T, width, 0);
    return mine;
  };
  std::vector<float> ql = part(q, C), kl = part(k, Ckv), vl = part(v, Ckv), gl = part(dout, C);
  std::vector<float> ol(ql.size()), dql(ql.size()), dkl(kl.size()), dvl(vl.size());
  zrt_counters before{}, after{};
  zrt_get_counters(&before);
  zrt_ring_attention(ZRT_DTYPE_F32, ql.data(), kl.data(), vl.data(), ol.data(), B, L, C, H, G, ZRT_AXIS_CONTEXT);
  zrt_ring_attention_grad(ZRT_DTYPE_F32, gl.data(), ql.data(), kl.data(), vl.data(), dql.data(), dkl.data(),
                          dvl.data(), B, L, C, H, G, ZRT_AXIS_CONTEXT);
  zrt_get_counters(&after);
  auto near = [](const std::vector<float> &got, const std::vector<float> &want, const char *what) {
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 2e-5f * (1.f + std::fabs(want[i]))) << what << " element " << i;
  };
  near(ol, part(out, C), "out");
  near(dql, part(dq, C), "dq");
  near(dkl, part(dk, Ckv), "dk");
  near(dvl, part(dv, Ckv), "dv");
  float mine = static_cast<float>(after.ring_attention_scores - before.ring_attention_scores);
  std::vector<float> all(cp);
  zrt_host_all_gather(ZRT_AXIS_CONTEXT, &mine, all.data(), 1);
  EXPECT_GT(mine, 0.f);
  for (float other : all)
    EXPECT_EQ(other, mine) << "context ranks computed different numbers of scores";
}

TEST(Mesh, PipelineStagesSendBothWaysAtOnce) {
  if (pp < 2)
    GTEST_SKIP() << "one pipeline stage";
  const int stage = zrt_mesh_rank(ZRT_AXIS_PIPELINE), other = 1 - stage;
  // Each stage sends first, then receives: neither waits for the other's receive.
  for (int64_t count : {int64_t(0), int64_t(3), int64_t(1) << 18}) {
    std::vector<float> out(count), in(count, -1.f);
    for (int64_t i = 0; i < count; ++i)
      out[i] = stage * 1000.f + static_cast<float>(i % 997);
    zrt_pipe_send(out.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
    out.assign(count, 0.f); // the send copied it: the buffer is ours again
    zrt_pipe_recv(in.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(in[i], other * 1000.f + static_cast<float>(i % 997)) << "element " << i << " of " << count;
  }
  zrt_pipe_flush();
  // The pipeline ends (the first and last stage, here both) sum what they share.
  std::vector<float> g{static_cast<float>(stage + 1)}, sum(1);
  zrt_all_reduce_on(ZRT_AXIS_PIPELINE_ENDS, ZRT_DTYPE_F32, g.data(), sum.data(), 1, 0);
  EXPECT_EQ(sum[0], 3.f);
}

// Each kind of message is its own channel: as two stages of an interleaved schedule do, each sends
// the other an activation and then a gradient of the same size, and the other takes the gradient
// first. On one channel the first receive would get the activation's bytes.
TEST(Mesh, PipelineMessageKindsAreSeparateChannels) {
  if (pp < 2)
    GTEST_SKIP() << "one pipeline stage";
  const int stage = zrt_mesh_rank(ZRT_AXIS_PIPELINE), other = 1 - stage;
  const int64_t count = 1000;
  std::vector<float> activation(count, 1.f + stage), gradient(count, -1.f - stage), in(count);
  zrt_pipe_send(activation.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
  zrt_pipe_send(gradient.data(), count * 4, other, ZRT_PIPE_GRADIENT);
  zrt_pipe_recv(in.data(), count * 4, other, ZRT_PIPE_GRADIENT);
  EXPECT_EQ(in[0], -1.f - other);
  EXPECT_EQ(in[count - 1], -1.f - other);
  zrt_pipe_recv(in.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
  EXPECT_EQ(in[0], 1.f + other);
  EXPECT_EQ(in[count - 1], 1.f + other);
  zrt_pipe_flush();
}

// Receives started ahead (zrt_pipe_recv_start, as train.bin prefetches a micro-batch's input):
// posted before the peer sends, of both kinds and to this rank itself (ZB-V's turn at rank P - 1),
// each lands whole by its wait, in the order each kind was sent.
TEST(Mesh, PipelineReceivesStartedAheadLandByTheirWait) {
  if (pp < 2)
    GTEST_SKIP() << "one pipeline stage";
  const int stage = zrt_mesh_rank(ZRT_AXIS_PIPELINE), other = 1 - stage;
  const int64_t count = int64_t(1) << 17; // larger than an eager message
  std::vector<float> first(count, -1.f), second(count, -1.f), gradient(count, -1.f), self(count, -1.f);
  const int64_t a = zrt_pipe_recv_start(first.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
  const int64_t g = zrt_pipe_recv_start(gradient.data(), count * 4, other, ZRT_PIPE_GRADIENT);
  const int64_t b = zrt_pipe_recv_start(second.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
  const int64_t s = zrt_pipe_recv_start(self.data(), count * 4, stage, ZRT_PIPE_ACTIVATION);
  std::vector<float> out(count);
  for (float value : {10.f, 20.f}) { // two activations, in order
    out.assign(count, value + static_cast<float>(stage));
    zrt_pipe_send(out.data(), count * 4, other, ZRT_PIPE_ACTIVATION);
  }
  out.assign(count, 30.f + static_cast<float>(stage));
  zrt_pipe_send(out.data(), count * 4, other, ZRT_PIPE_GRADIENT);
  out.assign(count, 40.f + static_cast<float>(stage));
  zrt_pipe_send(out.data(), count * 4, stage, ZRT_PIPE_ACTIVATION);
  zrt_pipe_recv_wait(a);
  zrt_pipe_recv_wait(g);
  zrt_pipe_recv_wait(b);
  zrt_pipe_recv_wait(s);
  for (int64_t i : {int64_t(0), count / 2, count - 1}) {
    EXPECT_EQ(first[i], 10.f + static_cast<float>(other)) << i;
    EXPECT_EQ(second[i], 20.f + static_cast<float>(other)) << i;
    EXPECT_EQ(gradient[i], 30.f + static_cast<float>(other)) << i;
    EXPECT_EQ(self[i], 40.f + static_cast<float>(stage)) << i;
  }
  zrt_pipe_flush();
}

TEST(Mesh, VocabularyParallelLossMatchesTheWholeVocabulary) {
  // Every rank builds the same whole problem; tensor rank t holds classes [t V, (t+1) V).
  const int64_t rows = 6, local = 5, classes = local * tp, channels = 3;
  const int t = zrt_mesh_rank(ZRT_AXIS_TENSOR);
  std::vector<float> logits(rows * classes), table(classes * channels);
  std::vector<int32_t> labels(rows), ids(rows);
  for (int64_t i = 0; i < rows * classes; ++i)
    logits[i] = std::sin(0.7f * static_cast<float>(i)) * 3.f;
  for (int64_t i = 0; i < classes * channels; ++i)
    table[i] = std::cos(0.3f * static_cast<float>(i));
  for (int64_t r = 0; r < rows; ++r) {
    labels[r] = static_cast<int32_t>((r * 7) % classes);
    ids[r] = static_cast<int32_t>((r * 3 + 1) % classes);
  }
  float whole = 0, one = 1, part = 0;
  std::vector<float> dWhole(rows * classes), mine(rows * local), dMine(rows * local);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < local; ++c)
      mine[r * local + c] = logits[r * classes + t * local + c];
  // Plain, and soft-capped (Gemma 2's final logits): the cap applies to every rank's classes.
  for (double softcap : {0.0, 0.5}) {
    zrt_cross_entropy(ZRT_DTYPE_F32, logits.data(), labels.data(), &whole, rows, classes, softcap);
    zrt_cross_entropy_grad(ZRT_DTYPE_F32, &one, logits.data(), labels.data(), dWhole.data(), rows, classes, softcap);
    zrt_cross_entropy_vocab_shard(ZRT_DTYPE_F32, mine.data(), labels.data(), &part, rows, local, softcap);
    zrt_cross_entropy_grad_vocab_shard(ZRT_DTYPE_F32, &one, mine.data(), labels.data(), dMine.data(), rows, local,
                                       softcap);
    EXPECT_NEAR(part, whole, 1e-6 * std::fabs(whole)) << "softcap " << softcap;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < local; ++c)
        EXPECT_NEAR(dMine[r * local + c], dWhole[r * classes + t * local + c], 1e-7)
            << r << ", " << c << " softcap " << softcap;
  }
  // The lookup: this rank's rows, zeros elsewhere; summed over the tensor axis, the whole lookup.
  std::vector<float> lookup(rows * channels), sum(rows * channels), expected(rows * channels);
  zrt_embedding_vocab_shard(ZRT_DTYPE_F32, table.data() + t * local * channels, ids.data(), lookup.data(), rows,
                            local, channels);
  zrt_all_reduce_on(ZRT_AXIS_TENSOR, ZRT_DTYPE_F32, lookup.data(), sum.data(), rows * channels, 0);
  zrt_embedding(ZRT_DTYPE_F32, table.data(), ids.data(), expected.data(), rows, classes, channels);
  EXPECT_EQ(sum, expected);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int world = worldFromLauncher();
  const char *context = std::getenv("ZRT_TEST_CONTEXT");
  if (world >= 4 && world % 4 == 0) {
    tp = 2, pp = 2;
    if (context)
      pp = 1, cp = std::atoi(context);
  }
  zrt_init(world, 1 << 16);
  zrt_set_mesh(tp, pp);
  zrt_set_context(cp);
  if (zrt_rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int result = RUN_ALL_TESTS();
  zrt_finalize();
  return result;
}
