"""The reference for the decoding benchmark: the model t2t-bench-decode
exported (--export_dir) decoded by plain PyTorch in Python, on the same
source ids, batched the same way, with the same search.

The network is models/transformer.cc's T2T v3 Transformer: pre-norm layers
(layer norm before each sub-layer, residual after, a final layer norm on each
stack), bias-free attention (fused query/key/value kernel for self-attention,
query and fused key/value kernels for encoder-decoder attention) through
F.scaled_dot_product_attention with queries scaled by (depth per head)^-0.5,
ReLU feed-forward, T2T's timing signal, embeddings times sqrt(hidden) with
id 0 embedding to zeros, T2T's target-space vector added to the inputs, and
the embedding/softmax matrices shared as the exported tensor names say.

Decoding is incremental with a key/value cache: the encoder and the
encoder-decoder keys/values run once per batch, each step appends its
self-attention key and value. The search is t2t's (t2t/search/beam_search.h,
T2T's semantics): beam > 1 keeps the 2·beam best candidates by
log-probability / ((5 + length) / 6)^alpha, separate alive and finished
sets, stops a sentence once no alive hypothesis can beat its best finished one;
beam 1 is greedy (argmax of the logits). A sentence of n source tokens gets
at most n + extra_length output tokens.

What a good PyTorch implementation does, and this one does:
torch.inference_mode; the model as plain tensors and functional calls (no
nn.Module dispatch per step); settled sentences leave the batch at once
(their rows are dropped from every cached tensor); the encoder-decoder
keys/values are reordered only when sentences leave, not at every beam
reordering (beams of one sentence share them, as fairseq does); the
self-attention cache grows by torch.cat and is reordered by index_select.
OMP_WAIT_POLICY=PASSIVE and a caching allocator (tcmalloc or jemalloc)
preloaded when installed (the script re-executes itself to set both before
the runtime starts; --no_tuning leaves them as they are).

  reference_decode.py --export_dir=W --beam_size=4 --batch_size=32
"""
import argparse
import json
import math
import os
import resource
import sys
import time

ALLOCATORS = ("libtcmalloc_minimal.so.4", "libtcmalloc.so.4", "libjemalloc.so.2")
LIB_DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
            "/lib")
EOS = 1
INF = 1e7  # T2T's stand-in for infinity, as t2t's beam search uses it


def reexec_tuned(allocator):
    """Sets what must be set before libgomp and malloc load, then restarts."""
    if os.environ.get("T2T_BENCH_TUNED") == "1":
        return
    env = dict(os.environ, T2T_BENCH_TUNED="1")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if "LD_PRELOAD" not in env and allocator != "none":
        names = ALLOCATORS if allocator == "auto" else (allocator,)
        for lib in names:
            found = [os.path.join(d, lib) for d in LIB_DIRS if os.path.exists(os.path.join(d, lib))]
            if found:
                env["LD_PRELOAD"] = found[0]
                break
    os.execve(sys.executable, [sys.executable] + sys.argv, env)


# Where the model and every tensor of the search live (--device), and the
# type its weights and activations are in (--dtype).
DEVICE = "cpu"
DTYPE = "float32"


# --- the model -----------------------------------------------------------------

class Model:
    """The exported transformer as tensors; encode() and step() are the
    forward passes of models/transformer.cc in eval mode."""

    def __init__(self, export_dir):
        import torch
        with open(os.path.join(export_dir, "model.json")) as f:
            meta = json.load(f)
        hp = meta["hparams"]
        unsupported = {k: hp[k] for k, want in (
            ("layer_preprocess_sequence", "n"), ("layer_postprocess_sequence", "da"),
            ("norm_type", "layer"), ("multiply_embedding_mode", "sqrt_depth"), ("pos", "timing"))
            if hp[k] != want}
        if unsupported:
            sys.exit("reference_decode.py implements T2T v3 (pre-norm, timing signal) only; "
                     "this model has %s" % unsupported)
        count = sum(math.prod(t["shape"]) for t in meta["tensors"])
        flat = torch.from_file(os.path.join(export_dir, "weights.bin"), size=count,
                               dtype=torch.float32)
        w = {t["name"]: flat[t["offset"]:t["offset"] + math.prod(t["shape"])].view(t["shape"])
             .to(DEVICE, getattr(torch, DTYPE)) for t in meta["tensors"]}
        self.name = meta["name"]
        self.params = count
        self.d = hp["hidden_size"]
        self.heads = hp["num_heads"]
        self.dk = hp["attention_key_channels"] or self.d
        self.dv = hp["attention_value_channels"] or self.d
        self.eps = hp["norm_epsilon"]
        self.scale = 1.0 / math.sqrt(self.dk // self.heads)
        # Which matrices are one tensor follows models/transformer.cc's names.
        self.target_emb = w["shared"] if "shared" in w else w["target_emb"]
        self.softmax = w["softmax"] if "softmax" in w else w["shared"]
        self.input_emb = w["input_emb"] if "input_emb" in w else w["shared"]
        self.target_space = w.get("target_space_embedding")

        def norm(prefix):
            return (w[prefix + ".layer_norm_0.weight"], w[prefix + ".layer_norm_0.bias"])

        def ffn(prefix):
            return (w[prefix + ".conv1.weight"], w[prefix + ".conv1.bias"],
                    w[prefix + ".conv2.weight"], w[prefix + ".conv2.bias"])

        def layers(stack):
            n = 0
            while "%s.%d.ffn.conv1.weight" % (stack, n) in w:
                n += 1
            return ["%s.%d." % (stack, i) for i in range(n)]

        self.encoder = [dict(
            self_norm=norm(p + "self_attention_pre"), qkv=w[p + "self_attention.qkv.weight"],
            self_out=w[p + "self_attention.output.weight"], ffn_norm=norm(p + "ffn_pre"),
            ffn=ffn(p + "ffn")) for p in layers("encoder")]
        self.decoder = [dict(
            self_norm=norm(p + "self_attention_pre"), qkv=w[p + "self_attention.qkv.weight"],
            self_out=w[p + "self_attention.output.weight"],
            memory_norm=norm(p + "encdec_attention_pre"), q=w[p + "encdec_attention.q.weight"],
            kv=w[p + "encdec_attention.kv.weight"],
            memory_out=w[p + "encdec_attention.output.weight"], ffn_norm=norm(p + "ffn_pre"),
            ffn=ffn(p + "ffn")) for p in layers("decoder")]
        self.encoder_norm = norm("encoder_final")
        self.decoder_norm = norm("decoder_final")
        self.timing = self.timing_signal(256)

    def timing_signal(self, length):
        """T2T's get_timing_signal_1d, as models/transformer_layers.cc computes it."""
        import torch
        n = self.d // 2
        increment = math.log(1.0e4) / max(n - 1, 1)
        position = torch.arange(0, length, dtype=torch.float32, device=DEVICE).unsqueeze(1)
        inv = torch.exp(torch.arange(n, dtype=torch.float32, device=DEVICE) * -increment)
        scaled = position * inv.unsqueeze(0)
        signal = torch.cat([scaled.sin(), scaled.cos()], 1)
        if self.d % 2:
            signal = torch.nn.functional.pad(signal, (0, 1))
        return signal.to(getattr(torch, DTYPE))

    def add_timing(self, x, start):
        end = start + x.shape[1]
        if end > self.timing.shape[0]:
            self.timing = self.timing_signal(max(end, 2 * self.timing.shape[0]))
        return x + self.timing[start:end]

    def embed(self, weights, ids):
        import torch.nn.functional as F
        scale = ids.ne(0).to(weights.dtype) * math.sqrt(self.d)
        return F.embedding(ids, weights) * scale.unsqueeze(-1)

    def split_heads(self, x):
        return x.view(x.shape[0], x.shape[1], self.heads, -1).transpose(1, 2)

    def attend(self, q, k, v, out_weight, mask=None):
        import torch.nn.functional as F
        o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=self.scale)
        return F.linear(o.transpose(1, 2).reshape(q.shape[0], q.shape[2], self.dv), out_weight)

    def layer_norm(self, x, params):
        import torch.nn.functional as F
        return F.layer_norm(x, (self.d,), params[0], params[1], self.eps)

    def feed_forward(self, x, params):
        import torch.nn.functional as F
        w1, b1, w2, b2 = params
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2)

    def encode(self, inputs):
        """-> State with the encoder-decoder keys/values of every decoder layer."""
        import torch.nn.functional as F
        padding = inputs.eq(0)
        x = self.embed(self.input_emb, inputs)
        if self.target_space is not None:
            x = x + self.target_space
        x = self.add_timing(x, 0)
        mask = padding.logical_not().logical_or(padding.all(1, keepdim=True))
        mask = mask.view(inputs.shape[0], 1, 1, inputs.shape[1])
        for layer in self.encoder:
            q, k, v = F.linear(self.layer_norm(x, layer["self_norm"]), layer["qkv"]).split(
                [self.dk, self.dk, self.dv], -1)
            x = self.attend(self.split_heads(q), self.split_heads(k), self.split_heads(v),
                            layer["self_out"], mask) + x
            x = self.feed_forward(self.layer_norm(x, layer["ffn_norm"]), layer["ffn"]) + x
        memory = self.layer_norm(x, self.encoder_norm)
        state = State(mask)
        for layer in self.decoder:
            k, v = F.linear(memory, layer["kv"]).split([self.dk, self.dv], -1)
            state.memory.append([self.split_heads(k), self.split_heads(v)])
            state.cache.append([None, None])
        return state

    def step(self, state, last_ids):
        """last_ids [rows] (0 before the first step) -> logits [rows, vocab]."""
        import torch
        import torch.nn.functional as F
        x = self.add_timing(self.embed(self.target_emb, last_ids.view(-1, 1)), state.length)
        for layer, cache, (mk, mv) in zip(self.decoder, state.cache, state.memory):
            q, k, v = F.linear(self.layer_norm(x, layer["self_norm"]), layer["qkv"]).split(
                [self.dk, self.dk, self.dv], -1)
            k, v = self.split_heads(k), self.split_heads(v)
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
            x = self.attend(self.split_heads(q), k, v, layer["self_out"]) + x
            q = F.linear(self.layer_norm(x, layer["memory_norm"]), layer["q"])
            x = self.attend(self.split_heads(q), mk, mv, layer["memory_out"], state.mask) + x
            x = self.feed_forward(self.layer_norm(x, layer["ffn_norm"]), layer["ffn"]) + x
        state.length += 1
        # Scores in float32, whatever the model computes in.
        return F.linear(self.layer_norm(x[:, 0], self.decoder_norm), self.softmax).float()


class State:
    def __init__(self, mask):
        self.mask = mask      # [rows, 1, 1, input_len] bool, true where attention is allowed
        self.memory = []      # per decoder layer [keys, values] from the encoder
        self.cache = []       # per decoder layer [keys, values] of the positions decoded
        self.length = 0

    def reorder_cache(self, index):
        """Beam reordering: only the self-attention cache moves."""
        for c in self.cache:
            c[0], c[1] = c[0].index_select(0, index), c[1].index_select(0, index)

    def keep(self, index):
        """Rows `index` of everything: sentences leaving the batch, or beams made."""
        self.mask = self.mask.index_select(0, index)
        for m in self.memory:
            m[0], m[1] = m[0].index_select(0, index), m[1].index_select(0, index)
        if self.cache and self.cache[0][0] is not None:
            self.reorder_cache(index)


# --- search --------------------------------------------------------------------

def decode_lengths(inputs, extra_length):
    return [max(1, n + extra_length) for n in inputs.ne(0).sum(1).tolist()]


def greedy(model, inputs, extra_length):
    """-> per sentence (ids without EOS, finished)."""
    import torch
    limit = decode_lengths(inputs, extra_length)
    state = model.encode(inputs)
    sentence = list(range(inputs.shape[0]))
    out = [[] for _ in sentence]
    finished = [False] * len(sentence)
    last = torch.zeros(inputs.shape[0], dtype=torch.long, device=DEVICE)
    step = 0
    while True:
        best = model.step(state, last).argmax(-1)
        open_rows = []
        for r, (s, i) in enumerate(zip(sentence, best.tolist())):
            if i == EOS:
                finished[s] = True
            else:
                out[s].append(i)
                if step + 1 < limit[s]:
                    open_rows.append(r)
        step += 1
        if not open_rows:
            return list(zip(out, finished))
        if len(open_rows) < len(sentence):
            index = torch.tensor(open_rows, device=DEVICE)
            state.keep(index)
            best = best.index_select(0, index)
            sentence = [sentence[r] for r in open_rows]
        last = best


def until_eos(ids):
    return ids[:ids.index(EOS)] if EOS in ids else ids


def beam(model, inputs, K, alpha, extra_length):
    """t2t/search/beam_search.cc's search, tensor for tensor -> per sentence
    (best ids without EOS, finished)."""
    import torch
    B = inputs.shape[0]
    limit = decode_lengths(inputs, extra_length)
    state = model.encode(inputs)
    state.keep(torch.arange(B, device=DEVICE).repeat_interleave(K))
    alive_seq = torch.empty(B, K, 0, dtype=torch.long, device=DEVICE)
    alive_lp = torch.full((B, K), -math.inf, device=DEVICE)
    alive_lp[:, 0] = 0.0
    fin_seq = torch.empty(B, K, 0, dtype=torch.long, device=DEVICE)
    fin_scores = torch.full((B, K), -INF, device=DEVICE)
    fin_flags = torch.zeros(B, K, dtype=torch.bool, device=DEVICE)
    max_penalty = torch.tensor([((5.0 + n) / 6.0) ** alpha for n in limit], dtype=torch.float32,
                               device=DEVICE)
    sentence = list(range(B))
    results = [None] * B
    k_range = torch.arange(K, device=DEVICE)
    i = 0
    while True:
        rows = alive_seq.shape[0]
        last = (torch.zeros(rows * K, dtype=torch.long, device=DEVICE) if i == 0
                else alive_seq[:, :, i - 1].reshape(-1))
        logits = model.step(state, last)
        V = logits.shape[1]
        log_probs = (torch.log_softmax(logits.float(), -1).view(rows, K, V)
                     + alive_lp.unsqueeze(2)).view(rows, K * V)
        top_scores, top_index = (log_probs / (((5.0 + i + 1) / 6.0) ** alpha)).topk(2 * K, 1)
        top_lp = log_probs.gather(1, top_index)
        top_beam = top_index.div(V, rounding_mode="floor")
        top_ids = top_index.remainder(V)
        top_seq = torch.cat([alive_seq.gather(1, top_beam.unsqueeze(2).expand(rows, 2 * K, i)),
                             top_ids.unsqueeze(2)], 2)
        top_finished = top_ids.eq(EOS)
        top_finished_f = top_finished.float()

        alive_pick = (top_scores - top_finished_f * INF).topk(K, 1)[1]
        alive_seq = top_seq.gather(1, alive_pick.unsqueeze(2).expand(rows, K, i + 1))
        alive_lp = top_lp.gather(1, alive_pick).masked_fill(top_finished.gather(1, alive_pick),
                                                            -math.inf)
        source = top_beam.gather(1, alive_pick) + (torch.arange(rows, device=DEVICE) * K).unsqueeze(1)
        state.reorder_cache(source.view(-1))

        pad = torch.zeros(rows, K, 1, dtype=torch.long, device=DEVICE)
        all_seq = torch.cat([torch.cat([fin_seq, pad], 2),
                             top_seq], 1)
        all_scores = torch.cat([fin_scores, top_scores - (1.0 - top_finished_f) * INF], 1)
        all_flags = torch.cat([fin_flags, top_finished], 1)
        fin_scores, fin_pick = all_scores.topk(K, 1)
        fin_seq = all_seq.gather(1, fin_pick.unsqueeze(2).expand(rows, K, i + 1))
        fin_flags = all_flags.gather(1, fin_pick)

        # T2T's stop_early: the best finished score (slots are sorted) beats
        # the best the best alive hypothesis could still reach.
        best = fin_scores[:, 0].masked_fill(fin_flags[:, 0].logical_not(), -INF)
        met = (best > alive_lp[:, 0] / max_penalty).tolist()
        i += 1
        open_rows = []
        for r, s in enumerate(sentence):
            if met[r] or i >= limit[s]:
                flags, scores = fin_flags[r].tolist(), fin_scores[r].tolist()
                k = next((k for k in range(K) if flags[k] and scores[k] > -INF), None)
                if k is not None:
                    results[s] = (until_eos(fin_seq[r, k].tolist()), True)
                else:
                    lp = alive_lp[r].tolist()
                    k = next((k for k in range(K) if math.isfinite(lp[k])), 0)
                    results[s] = (until_eos(alive_seq[r, k].tolist()), False)
            else:
                open_rows.append(r)
        if not open_rows:
            return results
        if len(open_rows) < rows:
            keep = torch.tensor(open_rows, device=DEVICE)
            alive_seq, alive_lp = alive_seq[keep], alive_lp[keep]
            fin_seq, fin_scores, fin_flags = fin_seq[keep], fin_scores[keep], fin_flags[keep]
            max_penalty = max_penalty[keep]
            state.keep((keep.mul(K).unsqueeze(1) + k_range).view(-1))
            sentence = [sentence[r] for r in open_rows]


# --- the benchmark -------------------------------------------------------------

def cpu_seconds():
    """User + system CPU seconds of this process so far (all threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def batches_of(sources, batch_size):
    """t2t::Decoder::translate's batches: longest first (stable)."""
    order = sorted(range(len(sources)), key=lambda i: -len(sources[i]))
    return [order[s:s + batch_size] for s in range(0, len(order), batch_size)]


def padded(sources, rows):
    import torch
    width = max(len(sources[r]) for r in rows)
    return torch.tensor([sources[r] + [0] * (width - len(sources[r])) for r in rows],
                        dtype=torch.long)


def fingerprint(rows):
    total, i = 0, 0
    for r in rows:
        for x in r:
            i += 1
            total += x * i
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--export_dir", required=True, help="written by t2t-bench-decode --export_dir")
    ap.add_argument("--beam_size", type=int, default=4, help="1: greedy")
    ap.add_argument("--batch_size", type=int, default=32)
    ap.add_argument("--alpha", type=float, default=0.6)
    ap.add_argument("--extra_length", type=int, default=100)
    ap.add_argument("--warmup_batches", type=int, default=1)
    ap.add_argument("--passes", type=int, default=1,
                    help="timed passes over all sources; the figures are per pass")
    ap.add_argument("--threads", type=int, default=0, help="0: all cores")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"],
                    help="the weights' and activations' type (as t2t-bench-decode --quantize=bf16)")
    ap.add_argument("--write_ids", default="", help="best ids, one sentence a line, source order")
    ap.add_argument("--profile", default="", help="write a chrome trace of the timed decoding")
    ap.add_argument("--allocator", default="auto",
                    help="auto (tcmalloc, else jemalloc, when installed), none, or a library name")
    ap.add_argument("--no_tuning", action="store_true",
                    help="leave OMP_WAIT_POLICY and the allocator as they are")
    args = ap.parse_args()
    if not args.no_tuning:
        reexec_tuned(args.allocator)

    import torch
    global DEVICE, DTYPE
    DEVICE, DTYPE = args.device, args.dtype
    threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
    torch.set_num_threads(threads)
    model = Model(args.export_dir)
    with open(os.path.join(args.export_dir, "sources.json")) as f:
        sources = json.load(f)
    batches = batches_of(sources, args.batch_size)
    inputs = [padded(sources, b).to(DEVICE) for b in batches]

    def search(x):
        if args.beam_size == 1:
            return greedy(model, x, args.extra_length)
        return beam(model, x, args.beam_size, args.alpha, args.extra_length)

    with torch.inference_mode():
        t0 = time.perf_counter()
        for x in inputs[:args.warmup_batches]:
            search(x)
        warmup_s = time.perf_counter() - t0
        results = [None] * len(sources)
        profiler = None
        if args.profile:
            profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
            profiler.__enter__()
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        for _ in range(args.passes):
            for rows, x in zip(batches, inputs):
                for r, result in zip(rows, search(x)):
                    results[r] = result
        seconds = (time.perf_counter() - t0) / args.passes
        cpu = (cpu_seconds() - cpu0) / args.passes
        if profiler:
            profiler.__exit__(None, None, None)
            profiler.export_chrome_trace(args.profile)

    output_tokens = sum(len(ids) + finished for ids, finished in results)
    if args.write_ids:
        with open(args.write_ids, "w") as f:
            for ids, _ in results:
                f.write(" ".join(map(str, ids)) + "\n")
    print(json.dumps(dict(
        side="pytorch", model=model.name + ("-bf16" if args.dtype == "bfloat16" else ""), beam_size=args.beam_size, batch_size=args.batch_size,
        alpha=args.alpha, extra_length=args.extra_length, threads=threads,
        device=args.device, dtype=args.dtype, sentences=len(sources), input_tokens=sum(map(len, sources)),
        output_tokens=output_tokens, finished=sum(f for _, f in results), passes=args.passes,
        warmup_s=warmup_s,
        seconds=seconds, cpu_seconds=cpu, sentences_per_s=len(sources) / seconds,
        output_tokens_per_s=output_tokens / seconds,
        peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        sources=fingerprint(sources), torch=torch.__version__,
        omp_wait_policy=os.environ.get("OMP_WAIT_POLICY", ""),
        preload=os.path.basename(os.environ.get("LD_PRELOAD", "")))))


if __name__ == "__main__":
    main()
