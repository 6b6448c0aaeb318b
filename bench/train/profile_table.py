"""Operator self times from chrome traces written with --profile by
t2t-bench-train and reference_train.py, side by side: where each side
spends its step, and where the two differ.

  profile_table.py t2t.json pytorch.json [--steps N] [--top 30]
"""
import argparse
import collections
import json


def self_times(path):
    """{op name: (self ms, calls)} over the CPU operator events: an event's
    self time is its duration less that of the events directly inside it
    on the same thread."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    by_thread = collections.defaultdict(list)
    for e in ops:
        by_thread[e["tid"]].append(e)
    totals = collections.defaultdict(lambda: [0.0, 0])
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []  # [event, child duration]
        for e in evs:
            while stack and e["ts"] >= stack[-1][0]["ts"] + stack[-1][0]["dur"]:
                done, children = stack.pop()
                totals[done["name"]][0] += (done["dur"] - children) / 1000.0
                totals[done["name"]][1] += 1
            if stack:
                stack[-1][1] += e["dur"]
            stack.append([e, 0.0])
        for done, children in stack:
            totals[done["name"]][0] += (done["dur"] - children) / 1000.0
            totals[done["name"]][1] += 1
    return totals


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--steps", type=int, default=1, help="divide times by this (per step)")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    tables = [self_times(p) for p in args.traces]
    names = sorted(set().union(*tables), key=lambda n: -max(t[n][0] for t in tables))
    print("%-44s" % "ms per step (calls)" + "".join("%22s" % p.split("/")[-1][:20] for p in args.traces))
    for n in names[: args.top]:
        print("%-44s" % n[:44] + "".join(
            "%14.1f (%5d)" % (t[n][0] / args.steps, t[n][1] // args.steps) for t in tables))
    print("%-44s" % "total" + "".join(
        "%14.1f        " % (sum(v[0] for v in t.values()) / args.steps) for t in tables))


if __name__ == "__main__":
    main()
