"""A small trained run shared by the tests: the bundled sample's data made
and trained on by t2t.datagen and t2t.train (the binaries), once a session."""
import os
import subprocess

import pytest

import t2t

BIN = os.environ.get("T2T_TEST_BIN_DIR") or t2t._build.BIN_DIR
SOURCE = os.environ.get("T2T_TEST_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
SAMPLE_EN = os.path.join(SOURCE, "data", "sample", "dev.en")
SAMPLE_ZH = os.path.join(SOURCE, "data", "sample", "dev.zh")
PROBLEM = "translate_enzh_sample"
HPARAMS = {"hidden_size": 64, "filter_size": 128, "num_heads": 2, "batch_size": 512,
           "learning_rate_warmup_steps": 50}


class Run:
    def __init__(self, root):
        self.root = root
        self.data = os.path.join(root, "data")
        self.out = os.path.join(root, "run")

    def tool(self, name, *flags):
        """Runs a built binary; returns its stdout (stderr joins it on failure)."""
        r = subprocess.run([os.path.join(BIN, name), *flags], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def decoder(self, *flags):
        return self.tool("t2t-decoder", f"--problem={PROBLEM}", "--model=transformer",
                         f"--data_dir={self.data}", f"--output_dir={self.out}", "--threads=2",
                         *flags)


@pytest.fixture(scope="session")
def run(tmp_path_factory):
    r = Run(str(tmp_path_factory.mktemp("t2t_python")))
    t2t.datagen(problem=PROBLEM, data_dir=r.data)
    t2t.train(problem=PROBLEM, model="transformer", hparams_set="transformer_tiny",
              hparams=HPARAMS, data_dir=r.data, output_dir=r.out, train_steps=300,
              schedule="train", threads=2)
    return r


def lines(path, n=40):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][:n]


@pytest.fixture(scope="session")
def sources():
    return lines(SAMPLE_EN)


@pytest.fixture(scope="session")
def references():
    return lines(SAMPLE_ZH)
