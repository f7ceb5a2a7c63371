#!/usr/bin/env python3
"""zcc-ckpt: inspect, consolidate and reshard the sharded checkpoints train.bin writes.

  zcc-ckpt inspect CKPT                      the manifest, and every rank file checked
  zcc-ckpt consolidate CKPT -o OUT.safetensors [--with-optimizer]
                                             every parameter whole, in fp32 (the master
                                             copy under mixed precision), by name
  zcc-ckpt reshard CKPT --target TRAIN.bin -o DIR
                                             the same state laid out for another world
                                             size or ZeRO stage (the layout TRAIN.bin
                                             --describe reports); train it with
                                             --ckpt-dir DIR --resume

CKPT is a checkpoint (DIR/step-NNNNNNNN) or a --ckpt-dir (its newest complete checkpoint).
The layout is runtime/main/Checkpoint.cpp's: each rank file holds, in model order, every
parameter's stored bytes then every optimizer state's; the manifest says where and how each
is split. Only the Python standard library is used.
"""
import argparse, array, json, os, struct, subprocess, sys, zlib

def fail(message):
    sys.exit(f"zcc-ckpt: error: {message}")

def crc32(data):
    return f"{zlib.crc32(data) & 0xFFFFFFFF:08x}"

def fnv1a64(data):
    """The checksum of checkpoints written before CRC-32 (pure Python: slow, kept to read them)."""
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"

def checksum_matches(data, entry):
    return crc32(data) == entry["crc32"] if "crc32" in entry else fnv1a64(data) == entry["fnv1a64"]

def find_checkpoint(path):
    if os.path.exists(os.path.join(path, "manifest.json")):
        return path
    steps = sorted(d for d in os.listdir(path) if d.startswith("step-")
                   and os.path.exists(os.path.join(path, d, "manifest.json"))) if os.path.isdir(path) else []
    if not steps:
        fail(f"{path} holds no complete checkpoint (no manifest.json)")
    return os.path.join(path, steps[-1])

def load(path):
    ckpt = find_checkpoint(path)
    try:
        manifest = json.load(open(os.path.join(ckpt, "manifest.json")))
    except (OSError, ValueError) as e:
        fail(f"{ckpt}/manifest.json: {e}")
    files = []
    for entry in manifest["ranks"]:
        name = os.path.join(ckpt, entry["file"])
        try:
            data = open(name, "rb").read()
        except OSError as e:
            fail(f"{name}: {e}")
        if len(data) != entry["bytes"]:
            fail(f"{name} has {len(data)} bytes, the manifest says {entry['bytes']} (truncated?)")
        if not checksum_matches(data, entry):
            fail(f"{name}: checksum mismatch (the file is corrupt)")
        files.append(data)
    return ckpt, manifest, files

def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n

def to_floats(raw, dtype):
    if dtype == "f32":
        a = array.array("f")
        a.frombytes(raw)
        return a
    # bf16: the high half of an f32
    halves = array.array("H")
    halves.frombytes(raw)
    return array.array("f", struct.unpack(f"<{len(halves)}f", b"".join(struct.pack("<I", h << 16) for h in halves)))

def from_floats(values, dtype):
    if dtype == "f32":
        return array.array("f", values).tobytes()
    out = array.array("H")
    for v in values:  # round to nearest even, as the runtime's bf16
        u = struct.unpack("<I", struct.pack("<f", v))[0]
        out.append(((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF)
    return out.tobytes()

def whole_tensor(files, offset, storage_bytes, dtype, elements, shards, shard_elements, sharded):
    """The whole tensor from each rank's stored bytes (a shard of it, or all of it)."""
    size = 4 if dtype == "f32" else 2
    if not sharded:
        return to_floats(files[0][offset:offset + elements * size], dtype)
    values = array.array("f")
    for r in range(shards):
        values.extend(to_floats(files[r][offset:offset + shard_elements * size], dtype))
    return values[:elements]

def mesh_of(layout_or_model, world_size):
    """(tp, pp, dp) of a checkpoint's layout or a train.bin's description (none: all data parallel)."""
    mesh = layout_or_model.get("mesh", {})
    tp, pp = mesh.get("tp", 1), mesh.get("pp", 1)
    return tp, pp, world_size // (tp * pp)

def stage_rank(stage, pp, v_placement):
    """The pipeline rank of virtual stage `stage`: stage mod pp (Megatron's loop, chunk stage // pp),
    or in ZB-V's V (a layout's mesh "placement": "v") rank r holds stages r and 2 pp - 1 - r."""
    return 2 * pp - 1 - stage if v_placement and stage >= pp else stage % pp

def whole_shape(p):
    """A parameter's whole shape: its layout's "shape" is one tensor-parallel rank's part (or one
    expert rank's experts)."""
    if p.get("whole_shape"):
        return p["whole_shape"]
    shape = list(p["shape"])
    if p.get("tp_split"):
        shape[p["tp_split"]["axis"]] = sum(p["tp_split"]["segments"])
    shape[0] *= expert_ranks(p)
    return shape

def expert_ranks(p):
    """Expert parallelism (zcc --ep): an expert weight's ranks; expert rank e of them holds part e of
    axis 0 (consecutive), data rank d is expert rank d % ep, and ZeRO shards it over the dp / ep ranks
    with the same place (d // ep: the shard)."""
    return p["ep_split"]["ranks"] if p.get("ep_split") else 1

def part_indices(p, t):
    """Index in the whole tensor of each element of tensor rank t's part (runtime/main/ModelInfo.h)."""
    shape, split = p["shape"], p.get("tp_split")
    if not split:
        return range(numel(shape))
    axis, ranks, segments = split["axis"], split["ranks"], split["segments"]
    inner = numel(shape[axis + 1:])
    whole = sum(segments)
    # Along the axis: rank t's slice of each segment, in order.
    along = []
    start = 0
    for segment in segments:
        piece = segment // ranks
        along.extend(range(start + t * piece, start + (t + 1) * piece))
        start += segment
    out = []
    for outer in range(numel(shape[:axis])):
        for w in along:
            base = (outer * whole + w) * inner
            out.extend(range(base, base + inner))
    return out

def rank_of(t, d, tp, dp, pipe=0):
    """Megatron's rank order: tensor fastest, then data, then pipeline."""
    return (pipe * dp + d) * tp + t

def stage_layouts(manifest):
    """Each pipeline stage's layout (one: the checkpoint's), and the files of each stage's ranks."""
    return manifest.get("stage_layouts") or [manifest["layout"]]

def full_state(manifest, files):
    """Every stage's full_state_of_stage, merged (a tied parameter, on two stages, is one). Stage p's
    files are its pipeline rank's (stage_rank: an interleaved rank's file holds its chunks in turn,
    each layout's offsets in it)."""
    layouts = stage_layouts(manifest)
    pp = layouts[0].get("mesh", {}).get("pp", len(layouts)) if len(layouts) > 1 else 1
    vee = layouts[0].get("mesh", {}).get("placement") == "v"
    per_stage = len(files) // pp
    values, states = {}, {}
    for p, layout in enumerate(layouts):
        r = stage_rank(p, pp, vee)
        v, st = full_state_of_stage(dict(manifest, layout=layout), files[r * per_stage:(r + 1) * per_stage])
        for name, value in v.items():
            values.setdefault(name, value)
        for name, value in st.items():
            states.setdefault(name, value)
    return values, states

def state_sharded(p, s):
    """ZeRO shards a parameter's optimizer states with it; a pruning mask (zcc --compression) is
    whole on every rank."""
    return p["shards"] > 1 and s["role"] != "mask"

def full_state_of_stage(manifest, files):
    """name -> whole fp32 values: parameters (their master values where there is one) and
    optimizer states (by their names), plus which states each parameter has. Each tensor-parallel
    rank's part is put together from its data-parallel ranks' files (ZeRO shards), then the
    parts are placed in the whole tensor."""
    layout = manifest["layout"]
    tp, _, dp = mesh_of(layout, manifest["world_size"])
    params = {p["name"]: p for p in layout["params"]}
    masters = {s["param"]: s for s in layout["states"] if s["role"] == "master"}

    def whole(p, offset, storage_bytes, dtype, sharded):
        n = numel(p["shape"])
        ep = expert_ranks(p)
        if ep > 1:  # each expert rank's experts from its ranks' shards, in expert order
            values = array.array("f")
            for e in range(ep):
                values.extend(whole_tensor([files[rank_of(0, g * ep + e, tp, dp)] for g in range(dp // ep)], offset,
                                           storage_bytes, dtype, n, p["shards"], p["shard_elements"], sharded))
            return values
        parts = [whole_tensor([files[rank_of(t, d, tp, dp)] for d in range(dp)], offset, storage_bytes, dtype, n,
                              p["shards"], p["shard_elements"], sharded) for t in range(tp if p.get("tp_split") else 1)]
        if len(parts) == 1:
            return parts[0]
        values = array.array("f", bytes(4 * numel(whole_shape(p))))
        for t, part in enumerate(parts):
            for i, w in enumerate(part_indices(p, t)):
                values[w] = part[i]
        return values

    values, states = {}, {}
    for p in layout["params"]:
        if p["name"] in masters:
            s = masters[p["name"]]
            values[p["name"]] = whole(p, s["file_offset"], s["bytes"], "f32", p["shards"] > 1)
        else:
            values[p["name"]] = whole(p, p["file_offset"], p["bytes"], p["dtype"], p["sharded_param"])
    for s in layout["states"]:
        if s["role"] == "master":
            continue
        p = params[s["param"]]
        if s["role"] == "mask":  # whole on every rank (a row mask: one value per row of its axis)
            states[s["name"]] = to_floats(files[rank_of(0, 0, tp, dp)][s["file_offset"]:s["file_offset"] + s["bytes"]],
                                          "f32")
            continue
        states[s["name"]] = whole(p, s["file_offset"], s["bytes"], "f32", state_sharded(p, s))
    return values, states

def write_safetensors(path, tensors, metadata):
    header, blobs, at = {"__metadata__": metadata}, [], 0
    for name, (shape, values) in tensors.items():
        blob = array.array("f", values).tobytes()
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [at, at + len(blob)]}
        blobs.append(blob)
        at += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)

def cmd_inspect(a):
    ckpt, m, files = load(a.checkpoint)
    tp, pp, dp = mesh_of(m["layout"], m["world_size"])
    print(f"{ckpt}: model {m['model']}, step {m['step']}, {m['world_size']} rank(s) (tp {tp} x pp {pp} x dp {dp}), "
          f"ZeRO stage {m['zero_stage']}, optimizer {m['optimizer']}, seed {m['seed']}, data {m['data']}")
    if "lr_schedule" in m:
        s = m["lr_schedule"]
        print(f"  lr {s['peak_lr']:g}, schedule {s['schedule']}, warmup {s['warmup']}, over {s['steps']} steps")
    for stage, stage_layout in enumerate(stage_layouts(m)):
        if pp > 1:
            print(f"  pipeline stage {stage}:")
        for p in stage_layout["params"]:
            layout = (f"{p['shards']} shards of {p['shard_elements']}" if p["sharded_param"] else "whole") + \
                     (" (update shard-wise)" if p["shards"] > 1 and not p["sharded_param"] else "")
            if p.get("tp_split"):
                split = p["tp_split"]
                layout += f", split over {split['ranks']} tensor ranks on axis {split['axis']}" + \
                          (f" (segments {'+'.join(map(str, split['segments']))})" if len(split["segments"]) > 1 else "")
            if p.get("pipeline_tied"):
                layout += ", tied between the first and last stage"
            print(f"  {p['name']:24s} {p['dtype']} {'x'.join(map(str, whole_shape(p))):>12s}  {layout}")
    all_states = [s for layout in stage_layouts(m) for s in layout["states"]]
    masks = sum(s["role"] == "mask" for s in all_states)
    print(f"  {len(all_states) - masks} optimizer state tensors" +
          (f", {masks} pruning masks (zcc --compression)" if masks else "") +
          f"; {len(files)} rank files, checksums verified")

def cmd_consolidate(a):
    ckpt, m, files = load(a.checkpoint)
    values, states = full_state(m, files)
    shapes = {p["name"]: whole_shape(p) for layout in stage_layouts(m) for p in layout["params"]}
    tensors = {name: (shapes[name], v) for name, v in values.items()}
    if a.with_optimizer:
        by_name = {s["name"]: s for layout in stage_layouts(m) for s in layout["states"]}
        for name, v in states.items():
            tensors[name] = (shapes[by_name[name]["param"]], v)
    write_safetensors(a.output, tensors, {"format": "pt", "model": m["model"], "step": str(m["step"]),
                                          "source": ckpt})
    print(f"zcc-ckpt: wrote {a.output}: {len(tensors)} tensors from {ckpt} (step {m['step']})")

def zero_stage(params):
    stage = 0
    for p in params:
        if p["shards"] > 1:
            stage = max(stage, 1)
        if p["shards"] > 1 and p["grad_storage_bytes"] < p["bytes"]:
            stage = max(stage, 2)
        if p["sharded_param"]:
            stage = 3
    return stage

def layout_of(model, base=0):
    """A train.bin description's checkpoint layout, exactly as runtime/main/Checkpoint.cpp writes it,
    from byte `base` of its rank's file (an interleaved rank's later chunks)."""
    tp, pp, dp = mesh_of(model, model["world_size"])
    params, states, at = [], [], base
    for p in model["params"]:
        params.append({"name": p["name"], "shape": p["shape"], "dtype": p["dtype"], "shards": p["shards"],
                       "shard_elements": p["shard_elements"], "sharded_param": p["sharded_param"],
                       "whole_shape": whole_shape(p), "tp_split": p.get("tp_split"),
                       "file_offset": at, "bytes": p["param_storage_bytes"]})
        if p.get("ep_split"):
            params[-1]["ep_split"] = p["ep_split"]
        at += p["param_storage_bytes"]
    for s in model["states"]:
        states.append({"name": s["name"], "param": s["param"], "role": s["role"], "file_offset": at,
                       "bytes": s["bytes"]})
        at += s["bytes"]
    # cp: context-parallel ranks, inside the data axis (dp counts both): their files are data
    # ranks' (ZeRO shards over data x context), so a reshard between cp and dp moves nothing.
    mesh = {"tp": tp, "pp": pp, "dp": dp}
    if model.get("mesh", {}).get("cp", 1) > 1:
        mesh["cp"] = model["mesh"]["cp"]
    if model.get("mesh", {}).get("ep", 1) > 1:  # expert parallelism (runtime/main/Checkpoint.cpp)
        mesh["ep"] = model["mesh"]["ep"]
    layout = {"params": params, "states": states, "rank_file_bytes": at - base, "mesh": mesh}
    chunks = model.get("pipeline", {}).get("chunks", 1)
    if chunks > 1:  # interleaved: virtual stage s is chunk s // pp of pipeline rank stage_rank(s)
        mesh["chunks"] = chunks
        layout["file_base"] = base
        if model["pipeline"].get("schedule") == "zbv":
            mesh["placement"] = "v"
    return layout

def cmd_reshard(a):
    ckpt, m, files = load(a.checkpoint)
    try:
        described = json.loads(subprocess.run([a.target, "--describe"], check=True, capture_output=True,
                                              text=True).stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        fail(f"cannot read the layout of {a.target} (train.bin --describe): {e}")
    targets = described.get("stages") or [described]  # a pipeline: each stage's description
    if targets[0]["model"] != m["model"]:
        fail(f"{a.target} trains '{targets[0]['model']}', the checkpoint is of '{m['model']}'")
    values, states = full_state(m, files)
    source_params = {p["name"]: p for layout in stage_layouts(m) for p in layout["params"]}
    for target in targets:
        for p in target["params"]:
            if p["name"] not in source_params or whole_shape(source_params[p["name"]]) != whole_shape(p):
                fail(f"parameter {p['name']} {whole_shape(p)} is not in the checkpoint with that shape")
    ranks = targets[0]["world_size"]
    tp, pp, dp = mesh_of(targets[0], ranks)
    # Each stage's bytes in its rank's file: an interleaved rank's chunks one after the other.
    vee = targets[0].get("pipeline", {}).get("schedule") == "zbv"  # ZB-V's V
    layouts, bases = [], [0] * pp
    for s, target in enumerate(targets):
        r = stage_rank(s, pp, vee)
        layouts.append(layout_of(target, bases[r]))
        bases[r] += layouts[-1]["rank_file_bytes"]
    parts = {}  # (name of the whole values, tensor rank) -> that rank's part

    def stored(values_whole, p, sharded, rank, storage_bytes, dtype):
        size = 4 if dtype == "f32" else 2
        n = storage_bytes // size
        t, d = rank % tp, rank // tp % dp
        ep = expert_ranks(p)
        if ep > 1:  # this expert rank's experts; the shard of its place among the ranks holding them
            local = numel(p["shape"])
            t, d = d % ep, d // ep
        key = (id(values_whole), t)
        if key not in parts:
            if ep > 1:
                parts[key] = values_whole[t * local:(t + 1) * local]
            else:
                parts[key] = [values_whole[w] for w in part_indices(p, t)] if p.get("tp_split") else values_whole
        first = d * p["shard_elements"] if sharded else 0
        chunk = list(parts[key][first:first + n])
        chunk += [0.0] * (n - len(chunk))  # ZeRO padding
        return from_floats(chunk, dtype)

    out_dir = os.path.join(a.output, f"step-{m['step']:08d}")
    os.makedirs(out_dir, exist_ok=True)
    entries = []
    for r in range(ranks):
        blob = bytearray()
        mine = [t for s, t in enumerate(targets) if stage_rank(s, pp, vee) == r // (tp * dp)]
        for target in mine:  # this rank's pipeline stage (interleaved: its chunks, in order)
            by_param = {p["name"]: p for p in target["params"]}
            for p in target["params"]:
                blob += stored(values[p["name"]], p, p["sharded_param"], r, p["param_storage_bytes"], p["dtype"])
            for s in target["states"]:
                p = by_param[s["param"]]
                if s["role"] == "master":
                    whole = values[p["name"]]
                elif s["name"] in states:
                    whole = states[s["name"]]
                else:
                    fail(f"the checkpoint has no optimizer state {s['name']} (another optimizer?)")
                blob += stored(whole, p, state_sharded(p, s), r, s["bytes"], "f32")
        name = f"rank-{r}.bin"
        tmp = os.path.join(out_dir, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(out_dir, name))
        entries.append({"file": name, "bytes": len(blob), "crc32": crc32(blob)})
    manifest = dict(m)
    manifest.update({"world_size": ranks, "zero_stage": zero_stage(targets[0]["params"]),
                     "optimizer": targets[0]["optimizer"].get("kind", m["optimizer"]),
                     "layout": layouts[0], "ranks": entries})
    manifest.pop("stage_layouts", None)
    if len(layouts) > 1:
        manifest["stage_layouts"] = layouts
    tmp = os.path.join(out_dir, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(out_dir, "manifest.json"))
    stp, spp, sdp = mesh_of(m["layout"], m["world_size"])
    print(f"zcc-ckpt: resharded {ckpt} ({m['world_size']} ranks: tp {stp} x pp {spp} x dp {sdp}, stage "
          f"{m['zero_stage']}) into {out_dir} ({ranks} ranks: tp {tp} x pp {pp} x dp {dp}, stage "
          f"{manifest['zero_stage']})")

def main():
    ap = argparse.ArgumentParser(prog="zcc-ckpt", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inspect")
    p.add_argument("checkpoint")
    p = sub.add_parser("consolidate")
    p.add_argument("checkpoint")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--with-optimizer", action="store_true", help="also the optimizer states, as NAME.exp_avg...")
    p = sub.add_parser("reshard")
    p.add_argument("checkpoint")
    p.add_argument("--target", required=True, help="the train.bin that will resume")
    p.add_argument("-o", "--output", required=True, help="a --ckpt-dir for the target")
    a = ap.parse_args()
    {"inspect": cmd_inspect, "consolidate": cmd_consolidate, "reshard": cmd_reshard}[a.command](a)

if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `zcc-ckpt inspect | head` ends quietly, as cat would
    main()
