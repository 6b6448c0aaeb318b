"""The reference for the training benchmark: t2t's Transformer written in
plain PyTorch (eager, Python), trained on the very batches t2t-bench-train
uses, with the same step count, threads and hyperparameters.

It is the same network as models/transformer.cc (T2T v3): pre-norm layers
(layer norm before each sub-layer, dropout then residual after, a final
layer norm on each stack), bias-free attention with fused query/key/value
projections through F.scaled_dot_product_attention, ReLU feed-forward,
T2T's timing signal, embeddings N(0, d^-0.5) times sqrt(d) with padding
rows zero, one matrix shared by input and target embeddings and the
softmax, T2T's target-space vector on the inputs, the label-smoothed loss
of t2t/train/loss.cc averaged over target tokens, and Adam with the set's
betas and epsilon. Its parameter count is printed so that it can be checked
against ours.

The reference is given what helps PyTorch on this CPU: OMP_WAIT_POLICY
PASSIVE and a caching allocator (tcmalloc or jemalloc) preloaded when one is
installed (the script re-executes itself to set both before the runtime
starts), the fused CPU Adam, and the fused cross entropy (whose smoothing
over V classes equals T2T's over V - 1 with the adjusted rate below).

On a GPU (--device=cuda) it is what a PyTorch user would write there: model
and batches resident on the device, fused CUDA Adam, torch.autocast for
--mixed_precision=bf16/fp16 with a GradScaler for fp16, and no host
synchronization inside the timed steps.

  reference_train.py --hparams_set=transformer_tiny --steps=20 --warmup_steps=4
  reference_train.py --hparams_set=transformer_base --device=cuda --mixed_precision=bf16
"""
import argparse
import json
import math
import os
import resource
import sys
import time

# The three sets as hparams/transformer_hparams.cc defines them; run.sh
# passes the C++ side's own values (--config) so the two cannot drift apart.
SETS = {
    "transformer_tiny": dict(hidden_size=128, filter_size=512, num_heads=4, num_hidden_layers=2),
    "transformer_small": dict(hidden_size=256, filter_size=1024, num_heads=4, num_hidden_layers=2),
    "transformer_base": dict(hidden_size=512, filter_size=2048, num_heads=8, num_hidden_layers=6),
}
V3 = dict(layer_prepostprocess_dropout=0.1, attention_dropout=0.1, relu_dropout=0.1,
          label_smoothing=0.1, optimizer_adam_beta1=0.9, optimizer_adam_beta2=0.997,
          optimizer_adam_epsilon=1e-9, norm_epsilon=1e-6, clip_grad_norm=0.0,
          batch_size=4096)
ALLOCATORS = ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libjemalloc.so.2")


def reexec_tuned():
    """Sets what must be set before libgomp and malloc load, then restarts."""
    if os.environ.get("T2T_BENCH_TUNED") == "1":
        return
    env = dict(os.environ, T2T_BENCH_TUNED="1")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "LD_PRELOAD" not in env:
        for lib in ALLOCATORS:
            for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                      "/usr/lib", "/lib"):
                if os.path.exists(os.path.join(d, lib)):
                    env["LD_PRELOAD"] = os.path.join(d, lib)
                    break
            if "LD_PRELOAD" in env:
                break
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


# --- synthetic batches: the same generator as bench_train.cc -----------------

MASK64 = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def uniform(self, lo, hi):  # [lo, hi]
        return lo + self.next() % (hi - lo + 1)


# Length buckets of T2T's scheme (boundaries 8, then x1.1) around the lengths
# of news sentences in subword tokens; one batch per bucket, cycled.
BUCKETS = ((20, 22), (28, 30), (36, 39), (46, 50))


def synthetic_batches(seed, vocab, batch_size):
    """Lists of (inputs, targets) id rows: per bucket [lo, hi), batch_size // hi
    examples (T2T's examples per bucket), each side 80%·lo..hi-1 tokens long,
    ending in EOS (1), other ids uniform in [2, vocab)."""
    rng = SplitMix64(seed)
    batches = []
    for lo, hi in BUCKETS:
        rows_in, rows_tg = [], []
        for _ in range(max(1, batch_size // hi)):
            for rows in (rows_in, rows_tg):
                n = rng.uniform((4 * lo) // 5, hi - 1)
                rows.append([rng.uniform(2, vocab - 1) for _ in range(n - 1)] + [1])
        batches.append((rows_in, rows_tg))
    return batches


def to_tensor(rows):
    import torch
    width = max(len(r) for r in rows)
    return torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=torch.int64)


def fingerprint(batches):
    """Sum over all id tensors of sum_i id_i * (i + 1): equal on both sides."""
    total = 0
    for t in batches:
        flat = t.flatten()
        total += int((flat * (1 + __import__("torch").arange(flat.numel()))).sum())
    return total


# --- FLOPs: the same formula as bench_train.cc --------------------------------

def forward_matmul_flops(c, B, S, T, V):
    """Multiply-adds x2 of every matrix product of one forward pass over a
    padded batch [B, S] -> [B, T]: projections, attention scores and
    weighted sums (full square, as computed), feed-forward and logits."""
    d, f, L = c["hidden_size"], c["filter_size"], c["num_hidden_layers"]
    enc = L * (2 * B * S * (4 * d * d + 2 * d * f) + 4 * B * S * S * d)
    dec = L * (2 * B * T * (6 * d * d + 2 * d * f) + 4 * B * S * d * d
               + 4 * B * T * T * d + 4 * B * T * S * d)
    return enc + dec + 2 * B * T * d * V


def step_flops(c, inputs, targets, V):
    B, S = inputs.shape
    return 3 * forward_matmul_flops(c, B, S, targets.shape[1], V)


# --- the model -----------------------------------------------------------------

def build_model(c, vocab):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    d, h = c["hidden_size"], c["num_heads"]
    p_post, p_att, p_relu = (c["layer_prepostprocess_dropout"], c["attention_dropout"],
                             c["relu_dropout"])

    def dense(i, o, bias):
        layer = nn.Linear(i, o, bias=bias)
        limit = math.sqrt(3.0 / ((i + o) / 2.0))  # T2T's uniform_unit_scaling
        nn.init.uniform_(layer.weight, -limit, limit)
        if bias:
            nn.init.zeros_(layer.bias)
        return layer

    def norm():
        return nn.LayerNorm(d, eps=c["norm_epsilon"])

    class Attention(nn.Module):
        def __init__(self, memory):
            super().__init__()
            if memory:
                self.q, self.kv = dense(d, d, False), dense(d, 2 * d, False)
            else:
                self.qkv = dense(d, 3 * d, False)
            self.out = dense(d, d, False)

        def heads(self, x):
            return x.view(x.shape[0], x.shape[1], h, -1).transpose(1, 2)

        def forward(self, x, memory=None, mask=None, causal=False):
            if memory is None:
                q, k, v = self.qkv(x).split(d, -1)
            else:
                q = self.q(x)
                k, v = self.kv(memory).split(d, -1)
            o = F.scaled_dot_product_attention(
                self.heads(q), self.heads(k), self.heads(v), attn_mask=mask,
                dropout_p=p_att if self.training else 0.0, is_causal=causal)
            return self.out(o.transpose(1, 2).reshape(x.shape[0], x.shape[1], d))

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = dense(d, c["filter_size"], True), dense(c["filter_size"], d, True)

        def forward(self, x):
            return self.conv2(F.dropout(F.relu(self.conv1(x)), p_relu, self.training))

    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.attn, self.norm2, self.ffn = norm(), Attention(False), norm(), FeedForward()

        def forward(self, x, mask):
            x = x + F.dropout(self.attn(self.norm1(x), mask=mask), p_post, self.training)
            return x + F.dropout(self.ffn(self.norm2(x)), p_post, self.training)

    class DecoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.self_attn = norm(), Attention(False)
            self.norm2, self.memory_attn = norm(), Attention(True)
            self.norm3, self.ffn = norm(), FeedForward()

        def forward(self, x, memory, memory_mask):
            x = x + F.dropout(self.self_attn(self.norm1(x), causal=True), p_post, self.training)
            x = x + F.dropout(self.memory_attn(self.norm2(x), memory, memory_mask), p_post,
                              self.training)
            return x + F.dropout(self.ffn(self.norm3(x)), p_post, self.training)

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Parameter(torch.randn(vocab, d) * d ** -0.5)
            limit = math.sqrt(3.0 / ((32 + d) / 2.0))
            self.target_space = nn.Parameter(torch.empty(d).uniform_(-limit, limit))
            L = c["num_hidden_layers"]
            self.encoder = nn.ModuleList(EncoderLayer() for _ in range(L))
            self.encoder_norm = norm()
            self.decoder = nn.ModuleList(DecoderLayer() for _ in range(L))
            self.decoder_norm = norm()
            self.register_buffer("timing", timing_signal(512, d), persistent=False)

        def embed(self, ids):
            scale = ids.ne(0).to(self.shared.dtype) * math.sqrt(d)
            return F.embedding(ids, self.shared) * scale.unsqueeze(-1)

        def forward(self, inputs, targets):
            padding = inputs.eq(0)
            x = self.embed(inputs) + self.target_space + self.timing[: inputs.shape[1]]
            x = F.dropout(x, p_post, self.training)
            mask = padding.logical_not().logical_or(padding.all(1, keepdim=True))
            mask = mask.view(inputs.shape[0], 1, 1, inputs.shape[1])
            for layer in self.encoder:
                x = layer(x, mask)
            memory = self.encoder_norm(x)
            y = self.embed(F.pad(targets[:, :-1], (1, 0)))
            y = F.dropout(y + self.timing[: targets.shape[1]], p_post, self.training)
            for layer in self.decoder:
                y = layer(y, memory, mask)
            return F.linear(self.decoder_norm(y), self.shared)

    def timing_signal(length, channels):
        n = channels // 2
        increment = math.log(1.0e4) / max(n - 1, 1)
        position = torch.arange(length, dtype=torch.float32).unsqueeze(1)
        inv = torch.exp(torch.arange(n, dtype=torch.float32) * -increment)
        scaled = position * inv.unsqueeze(0)
        return torch.cat([scaled.sin(), scaled.cos()], 1)

    return Transformer()


def smoothed_loss(logits, labels, smoothing):
    """Mean over non-pad labels of t2t/train/loss.cc's label-smoothed cross
    entropy. F.cross_entropy spreads its rate eps over all V classes; with
    eps = s·V/(V-1) that puts 1 - s on the gold id and s/(V-1) elsewhere,
    T2T's distribution, and the constant entropy is subtracted as T2T does."""
    import torch.nn.functional as F
    V = logits.shape[-1]
    confidence, low = 1.0 - smoothing, smoothing / (V - 1)
    normalizing = -(confidence * math.log(confidence) + (V - 1) * low * math.log(low + 1e-20))
    tokens = labels.ne(0).sum()
    xent = F.cross_entropy(logits.reshape(-1, V), labels.reshape(-1), ignore_index=0,
                           reduction="sum", label_smoothing=smoothing * V / (V - 1))
    return (xent - normalizing * tokens) / tokens


def cpu_seconds():
    """User + system CPU time of the process: less disturbed than wall time
    by other processes sharing the cores."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def synchronize(torch, device):
    """CUDA kernels run after their launch returns: the clock may only be read
    once the device has caught up."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_matmul_flops(torch, device, dtype,
                      sizes=((2048, 2048, 2048), (4096, 512, 2048), (4096, 2048, 512)),
                      repeats=10):
    """Best GEMM rate over a few shapes, best of `repeats` each, in the type
    the model's products run in (float32, or the mixed-precision type)."""
    # A GPU does one of these products in tens of microseconds, about what a
    # synchronization costs: time several back to back there.
    per_timing = 10 if device.type == "cuda" else 1
    best = 0.0
    for m, k, n in sizes:
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        out = torch.empty(m, n, device=device, dtype=dtype)
        torch.mm(a, b, out=out)
        for _ in range(repeats):
            synchronize(torch, device)
            t0 = time.perf_counter()
            for _ in range(per_timing):
                torch.mm(a, b, out=out)
            synchronize(torch, device)
            best = max(best, per_timing * 2.0 * m * k * n / (time.perf_counter() - t0))
    return best


def resolve_device(torch, ap, flag):
    """--device as t2t-bench-train reads it: cpu, cuda, cuda:N or auto; a
    clear error (not a traceback) when CUDA is asked for and absent."""
    if flag == "auto":
        flag = "cuda" if torch.cuda.is_available() else "cpu"
    if flag == "cpu":
        return torch.device("cpu")
    if flag == "cuda" or flag.startswith("cuda:"):
        if not torch.cuda.is_available():
            why = ("no CUDA GPU is visible on this machine" if torch.version.cuda
                   else "this PyTorch was built without CUDA")
            ap.error("--device=%s: CUDA is not available (%s); use --device=cpu" % (flag, why))
        try:
            index = int(flag[5:]) if len(flag) > 5 else 0
        except ValueError:
            ap.error("--device=%s: expected cuda:N with N a GPU index" % flag)
        if not 0 <= index < torch.cuda.device_count():
            ap.error("--device=%s: only %d CUDA device(s) are visible"
                     % (flag, torch.cuda.device_count()))
        return torch.device("cuda", index)
    ap.error("--device=%s is not a device; use cpu, cuda, cuda:N or auto" % flag)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hparams_set", default="transformer_tiny", choices=sorted(SETS))
    ap.add_argument("--config", default="", help="JSON of hparams (from t2t-bench-train) "
                                                  "overriding the built-in table")
    ap.add_argument("--vocab", type=int, default=0, help="0: 8192, 32768 for transformer_base")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup_steps", type=int, default=4)
    ap.add_argument("--threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    ap.add_argument("--mixed_precision", default="none", choices=("none", "bf16", "fp16"),
                    help="autocast type; fp16 (CUDA only) with a GradScaler")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--profile", default="",
                    help="write a chrome trace of the timed steps here (slows them)")
    ap.add_argument("--no_tuning", action="store_true",
                    help="leave OMP_WAIT_POLICY and the allocator as they are")
    args = ap.parse_args()
    if args.steps < 1 or args.warmup_steps < 0:
        ap.error("--steps must be >= 1 and --warmup_steps >= 0")
    if not args.no_tuning:
        reexec_tuned()

    import torch
    device = resolve_device(torch, ap, args.device)
    if args.mixed_precision == "fp16" and device.type != "cuda":
        ap.error("--mixed_precision=fp16 needs a CUDA device (--device=%s); on a CPU use "
                 "--mixed_precision=bf16" % args.device)
    amp_dtype = {"none": None, "bf16": torch.bfloat16, "fp16": torch.float16}[args.mixed_precision]
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)

    c = dict(V3, **SETS[args.hparams_set])
    if args.config:
        c.update(json.loads(args.config))
    vocab = args.vocab or (32768 if args.hparams_set == "transformer_base" else 8192)

    rows = synthetic_batches(args.seed, vocab, c["batch_size"])
    host_batches = [(to_tensor(i), to_tensor(t)) for i, t in rows]
    # Resident on the device from the start (on the CPU these are the same
    # tensors); tokens are counted on the host copies so that counting them
    # does not wait for the GPU inside the timed loop.
    batches = [(i.to(device), t.to(device)) for i, t in host_batches]
    model = build_model(c, vocab).to(device)
    params = sum(p.numel() for p in model.parameters())
    optimizer = torch.optim.Adam(
        model.parameters(), lr=args.lr,
        betas=(c["optimizer_adam_beta1"], c["optimizer_adam_beta2"]),
        eps=c["optimizer_adam_epsilon"], fused=True)
    model.train()
    forward = torch.compile(model) if args.compile else model

    def step(inputs, targets):
        optimizer.zero_grad(set_to_none=True)
        loss = smoothed_loss(forward(inputs, targets), targets, c["label_smoothing"])
        loss.backward()
        if c["clip_grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_grad_norm"])
        optimizer.step()
        return loss.detach()

    # fp16 loss scaling on T2T's schedule, as t2t::TrainStep does it: 2^15 to
    # start, halved on overflow (the step skipped), doubled after 2000 good
    # steps. With the fused Adam the scaler unscales and skips on the device,
    # without a host synchronization.
    scaler = (torch.amp.GradScaler(device.type, init_scale=2.0 ** 15, growth_interval=2000)
              if amp_dtype == torch.float16 else None)

    def amp_step(inputs, targets):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=amp_dtype):
            loss = smoothed_loss(forward(inputs, targets), targets, c["label_smoothing"])
        if scaler is None:
            loss.backward()
        else:
            scaler.scale(loss).backward()
        if c["clip_grad_norm"] > 0:
            if scaler is not None:
                scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), c["clip_grad_norm"])
        if scaler is None:
            optimizer.step()
        else:
            scaler.step(optimizer)
            scaler.update()
        return loss.detach()

    if amp_dtype is not None:  # a separate function keeps the float32 step as tuned
        step = amp_step

    t_start = time.perf_counter()
    losses = []
    for i in range(args.warmup_steps):
        losses.append(step(*batches[i % len(batches)]))
    synchronize(torch, device)
    warmup_s = time.perf_counter() - t_start
    tokens = flops = 0
    profiler = None
    if args.profile:
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":  # on a GPU the CPU-side times are mostly launch costs
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        profiler = torch.profiler.profile(activities=activities)
        profiler.__enter__()
    cpu0 = cpu_seconds()
    t0 = time.perf_counter()
    for i in range(args.steps):
        inputs, targets = batches[i % len(batches)]
        losses.append(step(inputs, targets))
        tokens += int(host_batches[i % len(batches)][1].ne(0).sum())
        flops += step_flops(c, inputs, targets, vocab)
    synchronize(torch, device)
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds() - cpu0
    if profiler:
        profiler.__exit__(None, None, None)
        profiler.export_chrome_trace(args.profile)
    gpu_memory = {}
    if device.type == "cuda":
        # Read before the GEMM measurement below allocates its own matrices.
        gpu_memory = dict(
            peak_gpu_allocated_mib=torch.cuda.max_memory_allocated(device) / 1048576.0,
            peak_gpu_reserved_mib=torch.cuda.max_memory_reserved(device) / 1048576.0,
            gpu=torch.cuda.get_device_name(device))
    matmul_dtype = amp_dtype or torch.float32
    peak = peak_matmul_flops(torch, device, matmul_dtype)

    result = dict(
        side="pytorch" + ("-compile" if args.compile else ""), hparams_set=args.hparams_set,
        vocab=vocab, device=str(device), mixed_precision=args.mixed_precision,
        matmul_dtype=str(matmul_dtype).replace("torch.", ""), threads=threads, params=params,
        steps=args.steps, warmup_steps=args.warmup_steps, warmup_s=warmup_s, seconds=seconds,
        cpu_seconds=cpu,
        target_tokens_per_s=tokens / seconds, flops_per_s=flops / seconds,
        peak_matmul_flops_per_s=peak, fraction_of_peak=flops / seconds / peak,
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, **gpu_memory,
        first_loss=float(losses[0]), last_loss=float(losses[-1]),
        batches=fingerprint([t for b in host_batches for t in b]),
        torch=torch.__version__, omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""),
        preload=os.path.basename(os.environ.get("LD_PRELOAD", "")))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
