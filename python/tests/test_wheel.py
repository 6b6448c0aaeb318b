"""pip install --no-build-isolation ./python gives a package that works outside
the build tree: its module, and t2t.train through the tools the wheel holds.
Run alone by CTest (it reconfigures the shared build directory)."""
import os
import subprocess
import sys

from conftest import HPARAMS, PROBLEM, SOURCE

CHECK = """
import sys, t2t
assert t2t._build.BIN_DIR is None, t2t._build.BIN_DIR
assert t2t.__file__.startswith(sys.argv[1]), t2t.__file__
tr = t2t.Translator(sys.argv[2], data_dir=sys.argv[3], problem=sys.argv[4])
print(tr.translate(["I do not like fish."]))
t2t.train(problem=sys.argv[4], model="transformer", hparams_set="transformer_tiny",
          hparams=eval(sys.argv[5]), data_dir=sys.argv[3], output_dir=sys.argv[6],
          train_steps=5, schedule="train", threads=1)
"""


def test_pip_install_gives_a_working_package(run, tmp_path):
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                        "--no-deps", f"--target={target}", os.path.join(SOURCE, "python")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for part in ("bin/t2t-trainer", "lib", "_build.py"):
        assert (target / "t2t" / part).exists(), part
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "T2T_TEST_BIN_DIR")}
    env["PYTHONPATH"] = str(target)
    out = tmp_path / "trained"
    r = subprocess.run([sys.executable, "-c", CHECK, str(target), run.out, run.data, PROBLEM,
                        repr(HPARAMS), str(out)], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "model.ckpt-5.pt").exists()
