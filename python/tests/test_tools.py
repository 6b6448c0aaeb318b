"""t2t.train and t2t.datagen run the binaries: flags as keyword arguments, logs
through logging, Ctrl-C as the binary takes it, failures as t2t.Error."""
import logging
import os
import signal
import subprocess
import sys
import threading

import pytest

import t2t
from conftest import HPARAMS, PROBLEM


def test_train_logs_through_logging_and_refuses_bad_flags(run, tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="t2t"):
        t2t.train(problem=PROBLEM, model="transformer", hparams_set="transformer_tiny",
                  hparams=HPARAMS, data_dir=run.data, output_dir=str(tmp_path / "r"),
                  train_steps=10, schedule="train", threads=1)
    assert any("step 10" in r.getMessage() for r in caplog.records)
    assert os.path.exists(tmp_path / "r" / "model.ckpt-10.pt")
    with pytest.raises(t2t.Error, match="no_such_flag"):
        t2t.train(problem=PROBLEM, no_such_flag=3)
    with pytest.raises(t2t.Error, match="hparams_set"):
        t2t.train(problem=PROBLEM, model="transformer", data_dir=run.data,
                  output_dir=str(tmp_path / "r2"))
    # A list is the flag once per value: a list flag takes them all, another refuses.
    with pytest.raises(t2t.Error, match="--train_steps is given 2 times"):
        t2t.train(problem=PROBLEM, train_steps=[10, 20])
    with pytest.raises(t2t.Error, match="--decode_reference is for --eval_bleu"):
        t2t.train(problem=PROBLEM, model="transformer", hparams_set="transformer_tiny",
                  data_dir=run.data, output_dir=str(tmp_path / "r3"),
                  decode_reference=["a.zh", "b.zh"])


def test_keyboard_interrupt_saves_a_checkpoint_and_returns(run, tmp_path, caplog):
    out = tmp_path / "stopped"
    # Ctrl-C: SIGINT to this process while the trainer runs.
    timer = threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with caplog.at_level(logging.INFO, logger="t2t"):
            t2t.train(problem=PROBLEM, model="transformer", hparams_set="transformer_tiny",
                      hparams=HPARAMS, data_dir=run.data, output_dir=str(out),
                      train_steps=1000000, schedule="train", threads=1,
                      save_checkpoints_steps=1000000)
    finally:
        timer.cancel()
    said = [r.getMessage() for r in caplog.records]
    assert any("(SIGINT): saved" in m for m in said), said[-5:]
    assert any(f.startswith("model.ckpt-") for f in os.listdir(out))


def test_import_refuses_another_torch(tmp_path):
    # A copy of the package whose module says it was built against another torch.
    import shutil
    package = os.path.dirname(t2t.__file__)
    copy = tmp_path / "t2t"
    shutil.copytree(package, copy)
    build = (copy / "_build.py").read_text().replace(t2t._build.TORCH_VERSION, "1.0.0+other")
    (copy / "_build.py").write_text(build)
    r = subprocess.run([sys.executable, "-c", "import t2t"], cwd=tmp_path, capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode != 0
    assert "ImportError" in r.stderr
    assert "1.0.0+other" in r.stderr and t2t._build.TORCH_VERSION.split("+")[0] in r.stderr
