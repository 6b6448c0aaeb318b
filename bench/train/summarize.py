"""Turns the JSON lines of t2t-bench-train and reference_train.py into the
benchmark's table: medians over the runs of each side, our/their ratio and
the targets of issue 4 (set for the CPU). Exits non-zero when the two sides
did not train the same thing (parameter count, batches, device or mixed
precision differ).

  summarize.py results.jsonl
"""
import json
import statistics
import sys

# Ours / eager PyTorch, and the fraction of the matmul peak, per set.
TARGETS = {"transformer_tiny": (1.3, None), "transformer_small": (1.3, None),
           "transformer_base": (1.0, 0.5)}


def median(rows, key):
    return statistics.median(r[key] for r in rows)


def where(row):
    return row["device"], row["mixed_precision"]


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    for r in rows:  # lines written before the GPU options were CPU, float32
        r.setdefault("device", "cpu")
        r.setdefault("mixed_precision", "none")
    for r in rows:  # ours with an allocator preloaded is a row of its own
        if r["side"] == "t2t" and r.get("preload"):
            r["side"] = "t2t+" + r["preload"].split(".so")[0].replace("lib", "", 1)
    sets = list(dict.fromkeys(r["hparams_set"] for r in rows))
    sides = list(dict.fromkeys(r["side"] for r in rows))
    # The machine's peak is the best GEMM rate any process measured: one
    # process's own figure drops whenever something else takes a core.
    peak = max(r["peak_matmul_flops_per_s"] for r in rows)
    on_cpu = all(r["device"] == "cpu" and r["mixed_precision"] == "none" for r in rows)
    gpu = any("peak_gpu_allocated_mib" in r for r in rows)
    if not on_cpu:
        names = sorted({r.get("gpu", "") for r in rows} - {""})
        print("Device %s%s, mixed precision %s, matmul peak in %s\n" % (
            "/".join(sorted({r["device"] for r in rows})), " (%s)" % ", ".join(names) if names else "",
            "/".join(sorted({r["mixed_precision"] for r in rows})),
            "/".join(sorted({r.get("matmul_dtype", "float32") for r in rows}))))
    ok = True
    print("| set | side | runs | params | target tok/s | GFLOP/s | %% of matmul peak (%.0f GFLOP/s) " % (peak / 1e9)
          + "| peak RSS MiB " + ("| peak GPU MiB (allocated / reserved) " if gpu else "")
          + "| CPU s/step | ÷ PyTorch eager | target |")
    print("|---" * (12 if gpu else 11) + "|")
    for s in sets:
        by_side = {side: [r for r in rows if r["hparams_set"] == s and r["side"] == side]
                   for side in sides}
        eager = by_side.get("pytorch", [])
        ratio_target, peak_target = TARGETS.get(s, (None, None))
        for side, runs in by_side.items():
            if not runs:
                continue
            ratio, target = "", ""
            if eager and side != "pytorch":
                ratio = "%.2f×" % (median(runs, "target_tokens_per_s")
                                   / median(eager, "target_tokens_per_s"))
                if (runs[0]["params"], runs[0]["batches"]) != (eager[0]["params"], eager[0]["batches"]):
                    print("MISMATCH %s: %s has %d parameters and batches %d, pytorch %d and %d" % (
                        s, side, runs[0]["params"], runs[0]["batches"], eager[0]["params"],
                        eager[0]["batches"]), file=sys.stderr)
                    ok = False
                if {where(r) for r in runs + eager} != {where(eager[0])}:
                    print("MISMATCH %s: %s ran on %s, pytorch on %s" % (
                        s, side, sorted({where(r) for r in runs}), sorted({where(r) for r in eager})),
                        file=sys.stderr)
                    ok = False
            if side == "t2t" and ratio_target and on_cpu:
                target = "≥ %.1f×" % ratio_target
                if peak_target:
                    target += ", ≥ %d%% of peak" % (100 * peak_target)
            gpu_mib = ""
            if gpu:
                gpu_mib = " %.0f / %.0f |" % (median(runs, "peak_gpu_allocated_mib"),
                                              median(runs, "peak_gpu_reserved_mib"))
            # Milliseconds of host time per step on a GPU: two decimals of a second hide them.
            cpu_format = "%.2f" if on_cpu else "%.4f"
            print(("| %s | %s | %d | %s | %.0f | %.1f | %.1f%% | %.0f |%s " + cpu_format
                   + " | %s | %s |") % (
                s.replace("transformer_", ""), side, len(runs), f"{runs[0]['params']:,}",
                median(runs, "target_tokens_per_s"), median(runs, "flops_per_s") / 1e9,
                100 * median(runs, "flops_per_s") / peak, median(runs, "peak_rss_mib"), gpu_mib,
                statistics.median(r["cpu_seconds"] / r["steps"] for r in runs), ratio, target))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
