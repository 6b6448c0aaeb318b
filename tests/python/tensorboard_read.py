"""Loads t2t's event files with TensorBoard's own reader.

  tensorboard_read.py DIR   print what TensorBoard's scalar dashboard finds
                            in the run directory DIR: the file version, then
                            "step STEP TAG VALUE PLUGIN" per point

The reader is the one `tensorboard --logdir` serves from: the plugin event
accumulator, which migrates TF1-style simple_value summaries into scalar
tensors of the "scalars" plugin. Needs the tensorboard package (not
TensorFlow, whose absence tensorboard works around with its own stub).
"""
import sys

from tensorboard.backend.event_processing import plugin_event_accumulator as pea
from tensorboard.util import tensor_util


def main():
    # 0: keep every point, where the default samples them down.
    acc = pea.EventAccumulator(sys.argv[1], size_guidance={pea.TENSORS: 0})
    acc.Reload()
    print("file_version", acc.file_version)
    for tag in sorted(acc.Tags()[pea.TENSORS]):
        plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        for event in acc.Tensors(tag):
            value = tensor_util.make_ndarray(event.tensor_proto).item()
            print("step %d %s %.4f %s" % (event.step, tag, value, plugin))


if __name__ == "__main__":
    main()
