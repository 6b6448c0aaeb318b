"""Tables of bench/vs_t2t/run.sh: steps/s, training loss and dev BLEU, T2T beside t2t.

  python summarize.py --work=/tmp/t2t_vs_t2t --seed=1 --minutes=20
"""
import argparse
import collections
import os
import re

# T2T (TensorFlow's estimator) logs the loss of one batch every 100 steps,
# and its speed; t2t logs the mean loss of the last 100 steps.
T2T_LOSS = re.compile(r"loss = ([0-9.]+), step = ([0-9]+)")
T2T_RATE = re.compile(r"global_step/sec: ([0-9.]+)")
OUR_LOSS = re.compile(r"step ([0-9]+): loss ([0-9.]+).*?([0-9.]+) steps/s")


def read_losses(path, ours):
  losses, rates = {}, []
  with open(path, errors="replace") as f:
    for line in f:
      if ours:
        m = OUR_LOSS.search(line)
        if m:
          losses[int(m.group(1))] = float(m.group(2))
          rates.append(float(m.group(3)))
      else:
        m = T2T_LOSS.search(line)
        if m:
          losses[int(m.group(2))] = float(m.group(1))
        m = T2T_RATE.search(line)
        if m:
          rates.append(float(m.group(1)))
  return losses, rates


def window_means(losses, width):
  """Mean of the losses logged in each (k - width, k]."""
  sums = collections.defaultdict(list)
  for step, loss in losses.items():
    sums[((step - 1) // width + 1) * width].append(loss)
  return {k: sum(v) / len(v) for k, v in sums.items()}


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  p.add_argument("--work", required=True)
  p.add_argument("--seed", default="1")
  p.add_argument("--minutes", type=float, default=20)
  p.add_argument("--window", type=int, default=500)
  p.add_argument("--dev_sentences", type=int, default=1000)
  args = p.parse_args()
  logs = os.path.join(args.work, "logs")
  sides = {"t2t-real": False, "t2t": True}
  names = {"t2t-real": "T2T 1.15.7", "t2t": "t2t"}
  losses, rates, bleu = {}, {}, collections.defaultdict(dict)
  for side, ours in sides.items():
    losses[side], rates[side] = read_losses(
        os.path.join(logs, "train-%s-%s.log" % (side, args.seed)), ours)
  with open(os.path.join(args.work, "bleu-%s.tsv" % args.seed)) as f:
    for line in f:
      side, step, score = line.rstrip("\n").split("\t")
      bleu[side][int(step)] = float(score)

  print("## %g minutes, one core each, seed %s\n" % (args.minutes, args.seed))
  print("| | last step | steps/s (median of the logged rates) | last checkpoint | its dev BLEU |")
  print("|---|---|---|---|---|")
  for side in sides:
    last = max(losses[side]) if losses[side] else 0
    r = sorted(rates[side])
    rate = r[len(r) // 2] if r else float("nan")
    ckpt = max(bleu[side]) if bleu[side] else 0
    print("| %s | %d | %.2f | %d | %.2f |" % (names[side], last, rate, ckpt,
                                             bleu[side].get(ckpt, float("nan"))))
  r_real, r_ours = sorted(rates["t2t-real"]), sorted(rates["t2t"])
  if r_real and r_ours:
    print("\nt2t / T2T steps/s: %.2fx" % (r_ours[len(r_ours) // 2] / r_real[len(r_real) // 2]))

  seconds = collections.defaultdict(list)
  path = os.path.join(args.work, "decode-seconds-%s.tsv" % args.seed)
  if os.path.exists(path):
    with open(path) as f:
      for line in f:
        side, _, secs = line.rstrip("\n").split("\t")
        seconds[side].append(float(secs))
  if seconds["t2t-real"] and seconds["t2t"]:
    def median(v):
      v = sorted(v)
      return v[len(v) // 2]
    real, ours = median(seconds["t2t-real"]), median(seconds["t2t"])
    print("\nDecoding the dev set (%d sentences, beam 4, all cores, start-up included), median "
          "over the checkpoints: T2T %.0f s (%.1f sentences/s), t2t %.0f s (%.1f sentences/s): "
          "%.1fx" % (args.dev_sentences, real, args.dev_sentences / real, ours,
                     args.dev_sentences / max(ours, 1), real / max(ours, 1)))

  print("\n| step | T2T loss | t2t loss | T2T dev BLEU | t2t dev BLEU |")
  print("|---|---|---|---|---|")
  # T2T's first sample is the untrained model's loss at step 1, which t2t's
  # first mean holds as one part in 100: left out, it would count as one
  # part in five of T2T's first window.
  w_real = window_means({s: l for s, l in losses["t2t-real"].items() if s > 1}, args.window)
  w_ours = window_means(losses["t2t"], args.window)
  steps = sorted(set(w_real) | set(w_ours) | set(bleu["t2t-real"]) | set(bleu["t2t"]))

  def fmt(table, step, digits):
    return ("%%.%df" % digits) % table[step] if step in table else ""
  for step in steps:
    print("| %d | %s | %s | %s | %s |" % (step, fmt(w_real, step, 3), fmt(w_ours, step, 3),
                                          fmt(bleu["t2t-real"], step, 2),
                                          fmt(bleu["t2t"], step, 2)))
  print("\nLoss: the mean of the losses each side logged in the %d steps up to the row's "
        "step (T2T logs one batch's every 100 steps, its step 1 left out; t2t the mean of the "
        "last 100)." %
        args.window)


if __name__ == "__main__":
  main()
