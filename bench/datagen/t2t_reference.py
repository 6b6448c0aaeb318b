"""T2T's own Python text encoder as the reference for the datagen benchmark.

T2T's datagen encodes every pair with SubwordTextEncoder.encode in one
Python process (then writes tf.Examples through TensorFlow). This measures
that encoding step alone, with T2T 1.15.7's own code and the very
vocabulary files our run wrote (our subword vocabularies are T2T's, id for
id), on the same corpus: the reference at its best, since TensorFlow's
record writing is left out.

tensor2tensor is installed from PyPI without its dependencies into a
virtualenv under $T2T_CACHE; the few TensorFlow calls its text encoder makes
(tf.gfile, tf.logging) are served by a small stand-in module written here,
so TensorFlow itself is not needed.

  t2t_reference.py --check                       exit 0 if it can run
  t2t_reference.py --corpus DIR --vocab_dir D --pairs N --ours RATE
"""
import argparse
import os
import subprocess
import sys
import time

CACHE = os.environ.get("T2T_CACHE", os.path.join(
    os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "t2t"))
VENV = os.path.join(CACHE, "bench-t2t-venv")
SHIM = os.path.join(CACHE, "bench-t2t-shim")

SHIM_V1 = '''
import glob as _glob, logging as _logging
class gfile:
    Open = staticmethod(lambda name, mode="r": open(name, mode, encoding=None if "b" in mode else "utf-8"))
    Exists = staticmethod(lambda name: __import__("os").path.exists(name))
    Glob = staticmethod(lambda pattern: _glob.glob(pattern))
logging = _logging.getLogger("t2t-reference")
flags = None
'''


def python():
    return os.path.join(VENV, "bin", "python")


def ensure_environment():
    if not os.path.exists(python()):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    probe = [python(), "-c", "import tensor2tensor, six, numpy"]
    if subprocess.call(probe, stderr=subprocess.DEVNULL) != 0:
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.check_call([python(), "-m", "pip", "install", "-q", "--no-deps",
                               "tensor2tensor==1.15.7"], **quiet)
        subprocess.check_call([python(), "-m", "pip", "install", "-q", "six", "numpy"], **quiet)
    os.makedirs(os.path.join(SHIM, "tensorflow", "compat"), exist_ok=True)
    for rel, text in (("tensorflow/__init__.py", "from .compat import v1 as _v1\n"),
                      ("tensorflow/compat/__init__.py", ""),
                      ("tensorflow/compat/v1.py", SHIM_V1)):
        with open(os.path.join(SHIM, rel), "w") as f:
            f.write(text)


MEASURE = r'''
import sys, time
sys.path.insert(0, sys.argv[1])
from tensor2tensor.data_generators import text_encoder
src = text_encoder.SubwordTextEncoder(sys.argv[2])
tgt = text_encoder.SubwordTextEncoder(sys.argv[3])
en = open(sys.argv[4], encoding="utf-8").read().splitlines()[:int(sys.argv[6])]
zh = open(sys.argv[5], encoding="utf-8").read().splitlines()[:int(sys.argv[6])]
t = time.time()
for a, b in zip(en, zh):
    src.encode(a.strip()) + [1]
    tgt.encode(b.strip()) + [1]
print(len(en) / (time.time() - t))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--corpus")
    ap.add_argument("--vocab_dir")
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--ours", type=float)
    args = ap.parse_args()
    try:
        ensure_environment()
    except (subprocess.CalledProcessError, OSError) as e:
        print("cannot set up T2T's encoder:", e, file=sys.stderr)
        sys.exit(1)
    if args.check:
        return
    vocab = [os.path.join(args.vocab_dir, f) for f in sorted(os.listdir(args.vocab_dir))
             if ".subwords." in f]
    en_vocab = next(v for v in vocab if v.endswith(".en"))
    zh_vocab = next(v for v in vocab if v.endswith(".zh"))
    out = subprocess.check_output(
        [python(), "-c", MEASURE, SHIM, en_vocab, zh_vocab,
         os.path.join(args.corpus, "train.en"), os.path.join(args.corpus, "train.zh"),
         str(args.pairs)], text=True)
    theirs = float(out.strip().splitlines()[-1])
    print(f"REFERENCE T2T 1.15.7 SubwordTextEncoder (Python, 1 process, encoding only, "
          f"{args.pairs} pairs): {theirs:.0f} pairs/s")
    if args.ours:
        print(f"RATIO t2t encode+write / T2T encode: {args.ours / theirs:.1f}x")


if __name__ == "__main__":
    main()
