"""Table of bench/serve/run.sh's results: sentences/s of t2t-serve at each
concurrency against t2t-decoder's offline rate on the same file, against
t2t-bench-decode's rate for the search alone, and against concurrency 1, latency, the server's CPU per sentence, how many answers
equal t2t-decoder's translations, then the server's peak RSS, its exit on
SIGTERM and the two throughput targets.

  summarize.py --results=RESULTS.jsonl --offline=OFFLINE.json --decoder_rates=RATES.txt
               --reference=offline.zh --peak_rss_kb=N --server_exit=N [--threads --beam ...]
"""
import argparse
import json


def identical(reference, path):
    """Lines equal to the reference, and how many lines the run covered."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            got = f.read().splitlines()
    except OSError:
        return 0, 0
    return sum(a == b for a, b in zip(reference, got)), min(len(got), len(reference))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--results", required=True)
    p.add_argument("--offline", required=True)
    p.add_argument("--decoder_rates", required=True)
    p.add_argument("--reference", required=True)
    p.add_argument("--peak_rss_kb", type=float, required=True)
    p.add_argument("--server_exit", type=int, required=True)
    for name in ("threads", "beam", "batch", "max_batch_size", "delay_ms", "quiet_ms"):
        p.add_argument("--" + name, default="?")
    a = p.parse_args()

    with open(a.offline) as f:
        offline = json.loads(f.read().strip().splitlines()[-1])
    search_rate = offline["sentences_per_s"]
    with open(a.decoder_rates) as f:
        rates = [float(x) for x in f.read().split()]
    if not rates:
        raise SystemExit("no rate in %s: t2t-decoder's summary line changed?" % a.decoder_rates)
    offline_rate = max(rates)
    with open(a.reference, encoding="utf-8", errors="replace") as f:
        reference = f.read().splitlines()
    rows = [json.loads(line) for line in open(a.results) if line.strip()]
    by_c = {r["concurrency"]: r for r in rows}
    c1 = by_c.get(1, {}).get("sentences_per_second")

    print("t2t-serve, %s threads, beam %s, --max_batch_size=%s, --max_batch_delay_ms=%s, "
          "--batch_quiet_ms=%s; one sentence a request\n" % (
              a.threads, a.beam, a.max_batch_size, a.delay_ms, a.quiet_ms))
    print("| concurrency | sentences/s | / t2t-decoder | / search alone | / concurrency 1 "
          "| p50 ms | p99 ms | mean batch | sentences per server CPU-second | client CPU s "
          "| identical to t2t-decoder | failed requests |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: r["concurrency"]):
        rate = r["sentences_per_second"]
        same, covered = identical(reference, r["output"])
        cpu = r.get("server_cpu_seconds", 0)
        failed = sum(r["errors"].values())
        lat = r["latency_ms"]
        print("| %d | %.1f | %.2f× | %.2f× | %s | %s | %s | %s | %s | %s | %d/%d | %s |" % (
            r["concurrency"], rate, rate / offline_rate, rate / search_rate,
            "%.2f×" % (rate / c1) if c1 else "",
            "%.1f" % lat["p50"] if lat["p50"] is not None else "",
            "%.1f" % lat["p99"] if lat["p99"] is not None else "",
            "%.1f" % r["mean_batch"] if "mean_batch" in r else "",
            "%.0f" % (r["sentences"] / cpu) if cpu > 0 else "",
            "%.2f" % r["client_cpu_seconds"] if "client_cpu_seconds" in r else "",
            same, covered,
            ("%d (%s)" % (failed, ", ".join("%s: %d" % kv for kv in sorted(r["errors"].items())))
             if failed else "0") + (", stopped by MAX_SECONDS" if r.get("stopped_by_max_seconds")
                                    else "")))

    print("\nt2t-decoder on the file (batch %s, %s threads): %.1f sentences/s (best of %s)"
          % (a.batch, a.threads, offline_rate, ", ".join("%.1f" % r for r in rates)))
    print("search alone (t2t-bench-decode, batch %s, %s threads): %.1f sentences/s "
          "(%.0f per CPU-second), peak RSS %.0f MiB" % (
              a.batch, a.threads, search_rate,
              offline["sentences"] / offline["cpu_seconds"] if offline.get("cpu_seconds") else 0, offline["peak_rss_mib"]))
    print("t2t-serve peak RSS: %.0f MiB" % (a.peak_rss_kb / 1024))
    print("t2t-serve on SIGTERM: %s" % ("exited 0" if a.server_exit == 0
                                         else "exit status %d" % a.server_exit))

    c64 = by_c.get(64, {}).get("sentences_per_second")

    def check(name, value, bound):
        if value is None or bound is None:
            return "%s: not measured" % name
        return "%s: %.1f vs %.1f — %s" % (name, value, bound, "met" if value >= bound else "NOT met")

    print(check("concurrency 64 ≥ 0.8 × t2t-decoder", c64, 0.8 * offline_rate))
    print(check("concurrency 64 ≥ 4 × concurrency 1", c64, 4 * c1 if c1 else None))


if __name__ == "__main__":
    main()
