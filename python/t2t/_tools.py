"""t2t.train and t2t.datagen: the t2t-trainer and t2t-datagen binaries, run as
child processes with the same flags as keyword arguments.

A child process, not a call into the library in this process: a run keeps the
signal handling its binary has (Ctrl-C saves a checkpoint at the step it is
at), its threads and memory go with it, and a failing run cannot take a
notebook's interpreter down.
"""
import logging
import os
import re
import signal
import subprocess

import torch

from . import _build
from ._t2t import Error

_LINE = re.compile(r"^\[[0-9-]+ [0-9:.]+\] \[(\w+)\] (.*)$")
_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
           "error": logging.ERROR, "critical": logging.CRITICAL}


def _binary(name: str) -> str:
    if _build.BIN_DIR:
        path = os.path.join(_build.BIN_DIR, name)
    else:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)
    if not os.access(path, os.X_OK):
        raise Error(f"{path} is missing: this t2t package was installed without its tools "
                    f"(reinstall with pip install ./python from t2t's checkout)")
    return path


def overrides_text(overrides) -> str:
    """hparams overrides as --hparams takes them: a "key=value,..." string
    as it is, or a dict (booleans as true/false, lists joined by ';')."""
    if isinstance(overrides, str):
        return overrides

    def text(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (list, tuple)):
            return ";".join(str(x) for x in v)
        return str(v)
    return ",".join(f"{k}={text(v)}" for k, v in overrides.items())


def _argv(name: str, flags: dict) -> list:
    argv = [_binary(name)]
    for key, value in flags.items():
        if value is None or value is False:
            continue
        if value is True:
            argv.append(f"--{key}")
        elif isinstance(value, dict):
            argv.append(f"--{key}={overrides_text(value)}")
        elif isinstance(value, (list, tuple)):
            # A list flag takes each value (decode_reference=[ref_a, ref_b]).
            argv.extend(f"--{key}={v}" for v in value)
        else:
            argv.append(f"--{key}={value}")
    return argv


def _run(name: str, flags: dict) -> None:
    env = dict(os.environ)
    # The tools' launchers find LibTorch here: the torch this Python imports.
    env["T2T_TORCH_LIB"] = os.path.join(os.path.dirname(torch.__file__), "lib")
    logger = logging.getLogger("t2t." + name)
    errors = []

    def drain(stream):
        for line in stream:
            line = line.rstrip("\n")
            m = _LINE.match(line)
            if m:
                level = _LEVELS.get(m.group(1), logging.INFO)
                text = m.group(2)
            else:
                level = logging.ERROR if ": error: " in line else logging.INFO
                text = line
            if level >= logging.ERROR:
                errors.append(text)
            logger.log(level, "%s", text)

    proc = subprocess.Popen(_argv(name, flags), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", env=env)
    interrupted = False
    while True:
        try:
            drain(proc.stdout)
            status = proc.wait()
            break
        except KeyboardInterrupt:
            # What Ctrl-C does to the binary: stop after the current step with
            # a checkpoint (a second one, a second or more later, at once).
            interrupted = True
            proc.send_signal(signal.SIGINT)
    if interrupted and status in (0, -signal.SIGINT, 128 + signal.SIGINT):
        logger.info("%s stopped by KeyboardInterrupt", name)
        return None
    if status != 0:
        said = errors[-1] if errors else "no error line; see the log of logger t2t." + name
        raise Error(f"{name} failed (exit status {status}): {said}")
    return None


def train(**flags) -> None:
    """Runs t2t-trainer with these flags (problem="...", model="transformer",
    hparams_set="...", data_dir="...", output_dir="...", train_steps=..., ...;
    True for a flag without a value, a dict for hparams). Its log goes to the
    logging module (logger "t2t.t2t-trainer"). KeyboardInterrupt stops it as
    Ctrl-C stops the binary, with a checkpoint, and returns. Raises t2t.Error
    with the binary's error when it fails."""
    _run("t2t-trainer", flags)


def datagen(**flags) -> None:
    """Runs t2t-datagen with these flags (problem="...", data_dir="...",
    tmp_dir="...", ...), as train() runs t2t-trainer."""
    _run("t2t-datagen", flags)
