#include "main/Flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace zrt::train {
namespace {

const char *kUsage =
    "usage: train.bin [--data FILE | --synthetic] [flags]\n"
    "  --data FILE            token file, memory-mapped: text (bytes are tokens), .bin of uint16 tokens\n"
    "                         (nanoGPT's), or Megatron-LM's indexed dataset PREFIX (PREFIX.idx + .bin)\n"
    "  --data-dtype T         text | uint8 | uint16 | uint32 | megatron (default: from the file's name)\n"
    "  --data-order O         sequential (default) | random (windows at seeded random offsets, as nanoGPT)\n"
    "  --synthetic            seeded learnable data generated here (same for every world size)\n"
    "  --eval-data FILE       held-out tokens (a --data file): the validation loss (val_loss in the log)\n"
    "                         every --eval-every steps and after the last, over the same --eval-iters\n"
    "                         global batches each time; the checkpoint records the best\n"
    "  --eval-every N         default 100 (nanoGPT: eval_interval, Megatron: --eval-interval)\n"
    "  --eval-iters K         default 10 (nanoGPT: eval_iters, Megatron: --eval-iters)\n"
    "  --steps N              optimizer steps (default 100)\n"
    "  --lr X                 peak learning rate (default: the model's, else 1e-3)\n"
    "  --lr-schedule S        constant | cosine | linear (warmup, then decay to --min-lr) | wsd\n"
    "                         (warmup-stable-decay: lr until the last --wsd-decay-steps, then linear)\n"
    "  --warmup N             linear warmup steps (default 0; nanoGPT: warmup_iters, Megatron:\n"
    "                         --lr-warmup-iters)\n"
    "  --min-lr X             where the decay ends (default lr/10; nanoGPT: min_lr, Megatron: --min-lr)\n"
    "  --lr-decay-steps N     the step the decay reaches --min-lr, then stays (default: the last;\n"
    "                         nanoGPT: lr_decay_iters, Megatron: --lr-decay-iters)\n"
    "  --wsd-decay-steps N    WSD's decay length (default a fifth of the horizon; Megatron:\n"
    "                         --lr-wsd-decay-iters)\n"
    "  --moe-bias-update-rate X  the step of a MoE routing's balancing bias (DeepSeek-V3's\n"
    "                         aux-loss-free balancing): after each update it moves by X towards the\n"
    "                         mean load (default 1e-3, the paper's; 0: frozen; Megatron:\n"
    "                         --moe-router-bias-update-rate)\n"
    "  --seed N               seed of the initial weights and synthetic data (default 1337)\n"
    "  --log-every N          print a line every N steps (default 10)\n"
    "  --log-json FILE        one JSON object per logged step\n"
    "  --init-weights FILE    initial parameters: raw f32, parameters in model order\n"
    "  --init FILE.safetensors  initial parameters by name (zcc-ckpt consolidate writes them)\n"
    "  --export-weights FILE  final parameters in the same format\n"
    "  --nvme-path DIR        where the NVMe store goes (zcc --offload-optimizer nvme; default: zcc's\n"
    "                         --nvme-path); one file per rank, removed when the run ends\n"
    "  --ckpt-dir DIR         sharded checkpoints go here (DIR/step-NNNNNNNN/)\n"
    "  --ckpt-every N         save one every N steps (and after the last step)\n"
    "  --ckpt-keep K          keep the newest K checkpoints (default 2)\n"
    "  --resume               continue from the newest complete checkpoint of --ckpt-dir\n"
    "                         (SIGTERM or SIGUSR1, as Slurm sends before preempting a job: every rank\n"
    "                         finishes its step, a checkpoint goes to --ckpt-dir, the run exits; a\n"
    "                         second signal stops at once)\n"
    "  --ckpt-lease-wait S    a job holds --ckpt-dir while it runs (DIR/zcc.lease); wait up to S seconds\n"
    "                         for a live holder to end before stopping with its name (default 60; a dead\n"
    "                         holder's lease is taken over)\n"
    "  --override-lr-schedule resume even where --lr/--lr-schedule/--warmup/--steps give another schedule\n"
    "  --describe             print the compiler's model description (JSON) and exit\n"
    "  --ranks-per-node N     world ranks per node, where the link counters (bytes inside and across\n"
    "                         nodes, printed by every rank at the end) put node boundaries (default: the\n"
    "                         launcher's local rank count; a one-machine test can declare several nodes)\n"
    "  --comm-timeout S       stop every rank when a collective makes no progress for S seconds\n"
    "                         (a dead or stuck rank; default 600, 0: never)\n"
    "  --nonfinite M          a NaN or Inf in the loss or a gradient: stop (default), skip the\n"
    "                         step's update, or off (no check)\n"
    "  --trace FILE           Chrome trace (ui.perfetto.dev) of compute and communication; rank r > 0\n"
    "                         writes FILE.rankR\n"
    "  --cuda-graphs on|off   CUDA backend: capture the step (forward, backward and their collectives)\n"
    "                         and the update once as CUDA graphs and replay them (default on); the CPU\n"
    "                         backend ignores it\n"
    "  --comm nccl|mpi|auto   CUDA backend: collectives through NCCL, or through MPI over pinned host\n"
    "                         buffers (ranks sharing a GPU, no NCCL; steps not captured as graphs);\n"
    "                         auto (default): NCCL when each rank of a node has its own GPU\n"
    "  --help\n";

} // namespace

Flags parseFlags(int argc, char **argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "train.bin: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    auto integer = [&]() -> int64_t {
      std::string v = value();
      char *end = nullptr;
      long long n = std::strtoll(v.c_str(), &end, 10);
      if (*end || n < 0) {
        std::fprintf(stderr, "train.bin: %s expects a non-negative integer, got '%s'\n", a.c_str(), v.c_str());
        std::exit(2);
      }
      return n;
    };
    // A real number: positive, or >= 0 (a NaN is neither).
    auto real = [&](bool positive, const char *expectation) -> double {
      std::string v = value();
      char *end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (*end || v.empty() || !(positive ? x > 0 : x >= 0)) {
        std::fprintf(stderr, "train.bin: %s expects %s, got '%s'\n", a.c_str(), expectation, v.c_str());
        std::exit(2);
      }
      return x;
    };
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      std::exit(0);
    } else if (a == "--data") f.data = value();
    else if (a == "--data-dtype") {
      f.dataDtype = value();
      if (f.dataDtype != "text" && f.dataDtype != "uint8" && f.dataDtype != "uint16" && f.dataDtype != "uint32" &&
          f.dataDtype != "megatron") {
        std::fprintf(stderr, "train.bin: --data-dtype is text, uint8, uint16, uint32 or megatron, got '%s'\n",
                     f.dataDtype.c_str());
        std::exit(2);
      }
    } else if (a == "--data-order") {
      f.dataOrder = value();
      if (f.dataOrder != "sequential" && f.dataOrder != "random") {
        std::fprintf(stderr, "train.bin: --data-order is sequential or random, got '%s'\n", f.dataOrder.c_str());
        std::exit(2);
      }
    } else if (a == "--min-lr") {
      f.minLr = real(false, "a number >= 0");
    } else if (a == "--moe-bias-update-rate") {
      f.moeBiasUpdateRate = real(false, "a number >= 0");
    } else if (a == "--eval-data") f.evalData = value();
    else if (a == "--eval-every") f.evalEvery = std::max<int64_t>(1, integer());
    else if (a == "--eval-iters") f.evalIters = std::max<int64_t>(1, integer());
    else if (a == "--lr-decay-steps") f.decaySteps = integer();
    else if (a == "--wsd-decay-steps") f.wsdDecaySteps = integer();
    else if (a == "--synthetic") f.synthetic = true;
    else if (a == "--steps") f.steps = integer();
    else if (a == "--lr") {
      f.lr = real(true, "a positive number");
    } else if (a == "--lr-schedule") {
      f.schedule = value();
      if (f.schedule != "constant" && f.schedule != "cosine" && f.schedule != "linear" && f.schedule != "wsd") {
        std::fprintf(stderr, "train.bin: --lr-schedule is constant, cosine, linear or wsd, got '%s'\n",
                     f.schedule.c_str());
        std::exit(2);
      }
    } else if (a == "--warmup") f.warmup = integer();
    else if (a == "--seed") f.seed = static_cast<uint64_t>(integer());
    else if (a == "--log-every") f.logEvery = std::max<int64_t>(1, integer());
    else if (a == "--log-json") f.logJson = value();
    else if (a == "--init-weights") f.initWeights = value();
    else if (a == "--export-weights") f.exportWeights = value();
    else if (a == "--trace") f.trace = value();
    else if (a == "--init") f.init = value();
    else if (a == "--ckpt-dir") f.ckptDir = value();
    else if (a == "--nvme-path") f.nvmePath = value();
    else if (a == "--ckpt-every") f.ckptEvery = integer();
    else if (a == "--ckpt-keep") f.ckptKeep = std::max<int64_t>(1, integer());
    else if (a == "--resume") f.resume = true;
    else if (a == "--override-lr-schedule") f.overrideSchedule = true;
    else if (a == "--describe") f.describe = true;
    else if (a == "--ranks-per-node") f.ranksPerNode = integer();
    else if (a == "--comm-timeout") {
      f.commTimeout = real(false, "seconds >= 0");
    } else if (a == "--ckpt-lease-wait") {
      f.ckptLeaseWait = real(false, "seconds >= 0");
    } else if (a == "--cuda-graphs") {
      std::string v = value();
      if (v != "on" && v != "off") {
        std::fprintf(stderr, "train.bin: --cuda-graphs is on or off, got '%s'\n", v.c_str());
        std::exit(2);
      }
      f.cudaGraphs = v == "on";
    } else if (a == "--comm") {
      f.comm = value();
      if (f.comm != "nccl" && f.comm != "mpi" && f.comm != "auto") {
        std::fprintf(stderr, "train.bin: --comm is nccl, mpi or auto, got '%s'\n", f.comm.c_str());
        std::exit(2);
      }
    } else if (a == "--nonfinite") {
      f.nonfinite = value();
      if (f.nonfinite != "stop" && f.nonfinite != "skip" && f.nonfinite != "off") {
        std::fprintf(stderr, "train.bin: --nonfinite is stop, skip or off, got '%s'\n", f.nonfinite.c_str());
        std::exit(2);
      }
    }
    else {
      std::fprintf(stderr, "train.bin: unknown flag '%s'\n%s", a.c_str(), kUsage);
      std::exit(2);
    }
  }
  if ((f.resume || f.ckptEvery > 0) && f.ckptDir.empty()) {
    std::fprintf(stderr, "train.bin: --resume and --ckpt-every need --ckpt-dir\n");
    std::exit(2);
  }
  if (!f.init.empty() && !f.initWeights.empty()) {
    std::fprintf(stderr, "train.bin: --init and --init-weights are exclusive\n");
    std::exit(2);
  }
  return f;
}

} // namespace zrt::train
