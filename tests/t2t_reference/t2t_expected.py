"""What real T2T 1.15.7 computes, for t2t's equivalence tests.

Run with the Python of ../shared/t2t-reference-env (TensorFlow 2.15, T2T
1.15.7); make_fixtures.sh gives the exact command. From a checkpoint that
T2T's own trainer wrote (--output_dir), it builds T2T's Transformer and
T2T's optimizer exactly as t2t-trainer's model_fn does, with every dropout
off, and records:

  batch/inputs, batch/targets  a padded batch of the dev shard (int64)
  logits                      [batch, target_len, vocab]
  loss                        the training loss (label smoothing, padding)
  step_before                 global_step of the checkpoint
  learning_rate               the schedule at step_before (T2T's update
                              applies the rate of step_before + 1)
  target_space_id             the problem's row of target_space_embedding
  grad/<variable>             d loss / d variable, dense
  after/<variable>            every variable after one training step,
                              Adam's slots, step counters and global_step
                              included
  lr_schedule/<name>          the learning rate at lr_schedule/steps
  init/<dims>/mean/<variable>, init/<dims>/var/<variable>
                              mean and variance of T2T's initial values
  keep/fraction, keep/scale   the fraction of nonzero entries, and their
                              mean, of T2T's dropout at rate 0.3 on ones
  batches/eval_shapes         T2T's batches of the dev shard in EVAL mode,
                              (examples, input width, target width) each
  batches/boundaries, batches/batch_sizes
                              the run's batching scheme

into one TensorFlow checkpoint (--out prefix): t2t reads it with its own
checkpoint reader, so the tests need no TensorFlow.
"""
import argparse
import json
import os

import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()  # must come before T2T is imported

import numpy as np  # pylint: disable=g-import-not-at-top
from tensor2tensor import models  # noqa: F401  (registers the models and hparams sets)
from tensor2tensor.layers import common_layers
from tensor2tensor.utils import data_reader
from tensor2tensor.utils import learning_rate as t2t_learning_rate
from tensor2tensor.utils import registry
from tensor2tensor.utils import trainer_lib
from tensor2tensor.utils import usr_dir

NO_DROPOUT = "layer_prepostprocess_dropout=0.0,attention_dropout=0.0,relu_dropout=0.0"


def read_batch(data_dir, problem_name, size):
  """The first `size` examples of the dev shard, padded as T2T pads them."""
  path = os.path.join(data_dir, "%s-dev-00000-of-00001" % problem_name)
  pairs = []
  for record in tf.io.tf_record_iterator(path):
    ex = tf.train.Example.FromString(record)
    f = ex.features.feature
    pairs.append((list(f["inputs"].int64_list.value), list(f["targets"].int64_list.value)))
    if len(pairs) == size:
      break

  def pad(rows):
    out = np.zeros([len(rows), max(len(r) for r in rows)], np.int64)
    for i, r in enumerate(rows):
      out[i, :len(r)] = r
    return out
  return pad([p[0] for p in pairs]), pad([p[1] for p in pairs])


def features_of(hparams, inputs, targets):
  # As T2T's input pipeline hands them to the model: [batch, length, 1, 1].
  ph = hparams.problem_hparams
  return {
      "inputs": tf.constant(inputs[:, :, None, None]),
      "targets": tf.constant(targets[:, :, None, None]),
      "target_space_id": tf.constant(ph.target_space_id, tf.int32),
      "input_space_id": tf.constant(ph.input_space_id, tf.int32),
  }


def one_step(args, overrides, inputs, targets):
  """Logits, loss, gradients and one update from the run's checkpoint."""
  out = {}
  graph = tf.Graph()
  with graph.as_default():
    hparams = trainer_lib.create_hparams(
        args.hparams_set, ",".join(x for x in [overrides, NO_DROPOUT] if x),
        data_dir=args.data_dir, problem_name=args.problem)
    # As T2T's trainer adds it (create_experiment): the run's --train_steps.
    hparams.add_hparam("train_steps", args.train_steps)
    global_step = tf.train.get_or_create_global_step()
    # What T2TModel.estimator_model_fn does in TRAIN mode.
    model = registry.model(args.model)(hparams, tf.estimator.ModeKeys.TRAIN)
    logits, losses = model(features_of(hparams, inputs, targets))
    loss = sum(losses[k] for k in sorted(losses))
    rate = t2t_learning_rate.learning_rate_schedule(model.hparams)
    trainable = tf.trainable_variables()
    grads = [tf.convert_to_tensor(g) for g in tf.gradients(loss, trainable)]
    train_op = model.optimize(loss, num_async_replicas=1, use_tpu=False)

    ckpt = tf.train.latest_checkpoint(args.output_dir)
    stored = tf.train.load_checkpoint(ckpt).get_variable_to_shape_map()
    names = {v.op.name: v for v in tf.global_variables()}
    missing = sorted(n for n in names if n not in stored)
    if missing:
      raise SystemExit("the graph has variables the checkpoint lacks: %s" % missing)
    saver = tf.train.Saver(var_list=names)
    with tf.Session() as sess:
      saver.restore(sess, ckpt)
      got = sess.run({"logits": logits, "loss": loss, "rate": rate,
                      "grads": grads, "step": global_step})
      sess.run(train_op)
      after = sess.run(names)
    out["logits"] = np.squeeze(got["logits"], axis=(2, 3))
    out["loss"] = np.float32(got["loss"])
    out["learning_rate"] = np.float32(got["rate"])
    out["step_before"] = np.int64(got["step"])
    out["target_space_id"] = np.int64(hparams.problem_hparams.target_space_id)
    for v, g in zip(trainable, got["grads"]):
      out["grad/" + v.op.name] = g
    for name, value in after.items():
      out["after/" + name] = np.asarray(value)
  return out


def schedule_steps():
  """The steps the schedules are compared at: all of the warmup, then every 10th."""
  return np.array(list(range(0, 500)) + list(range(500, 10000, 10)), np.int64)


def lr_schedule(hparams_set, overrides, train_steps=None):
  """T2T's learning rate at schedule_steps(); train_steps as T2T's trainer
  adds it, for the schedules that read it."""
  graph = tf.Graph()
  with graph.as_default():
    hparams = trainer_lib.create_hparams(hparams_set, overrides)
    if train_steps is not None:
      hparams.add_hparam("train_steps", train_steps)
    step = tf.train.get_or_create_global_step()
    rate = t2t_learning_rate.learning_rate_schedule(hparams)
    # The schedule reads the step through the variable's value, which can be fed.
    read = step.value()
    with tf.Session() as sess:
      return np.array([sess.run(rate, {read: s}) for s in schedule_steps()], np.float32)


def init_stats(args, overrides, tag):
  """Per-variable mean and variance of a freshly initialised model."""
  out = {}
  graph = tf.Graph()
  with graph.as_default():
    tf.set_random_seed(1)
    hparams = trainer_lib.create_hparams(
        args.hparams_set, overrides, data_dir=args.data_dir, problem_name=args.problem)
    model = registry.model(args.model)(hparams, tf.estimator.ModeKeys.TRAIN)
    inputs = np.array([[3, 4, 1]], np.int64)
    model(features_of(hparams, inputs, inputs))
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      values = sess.run({v.op.name: v for v in tf.trainable_variables()})
  for name, value in values.items():
    out["init/%s/mean/%s" % (tag, name)] = np.float64(value.mean())
    out["init/%s/var/%s" % (tag, name)] = np.float64(value.var())
  return out


def dropout_keep(rate):
  """T2T's dropout as its layers call it, on ones: kept fraction and scale."""
  out = {}
  graph = tf.Graph()
  with graph.as_default():
    tf.set_random_seed(1)
    x = tf.ones([64, 64, 64])
    plain = common_layers.dropout_with_broadcast_dims(x, 1.0 - rate, broadcast_dims=None)
    with tf.Session() as sess:
      y = sess.run(plain)
  kept = y[y != 0]
  out["keep/fraction"] = np.float64(kept.size / y.size)
  out["keep/scale"] = np.float64(kept.mean())
  return out


def eval_batches(args, overrides):
  """T2T's batches over the dev shard in EVAL mode (file order, no shuffling):
  [batches, 3] of (examples, input width, target width), and the bucket
  boundaries and batch sizes of its batching scheme."""
  graph = tf.Graph()
  with graph.as_default():
    hparams = trainer_lib.create_hparams(
        args.hparams_set, overrides, data_dir=args.data_dir, problem_name=args.problem)
    dataset = hparams.problem.input_fn(tf.estimator.ModeKeys.EVAL, hparams,
                                       data_dir=args.data_dir)
    features = tf.data.make_one_shot_iterator(dataset).get_next()
    if isinstance(features, tuple):
      features = features[0]
    shapes = []
    with tf.Session() as sess:
      while True:
        try:
          got = sess.run({"inputs": features["inputs"], "targets": features["targets"]})
        except tf.errors.OutOfRangeError:
          break
        shapes.append([got["inputs"].shape[0], got["inputs"].shape[1], got["targets"].shape[1]])
    scheme = data_reader.hparams_to_batching_scheme(hparams)
  return {"batches/eval_shapes": np.array(shapes, np.int64),
          "batches/boundaries": np.array(scheme["boundaries"], np.int64),
          "batches/batch_sizes": np.array(scheme["batch_sizes"], np.int64)}


def save(prefix, tensors):
  names = sorted(tensors)
  graph = tf.Graph()
  with graph.as_default():
    op = tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                           tensors=[tf.constant(np.asarray(tensors[n])) for n in names])
    with tf.Session() as sess:
      sess.run(op)


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  p.add_argument("--t2t_usr_dir", required=True)
  p.add_argument("--problem", required=True)
  p.add_argument("--data_dir", required=True)
  p.add_argument("--output_dir", required=True, help="the T2T run to start from")
  p.add_argument("--model", default="transformer")
  p.add_argument("--hparams_set", required=True)
  p.add_argument("--hparams", default="", help="the run's --hparams")
  p.add_argument("--batch_size", type=int, default=5, help="dev examples in the batch")
  p.add_argument("--train_steps", type=int, default=20, help="the run's --train_steps")
  p.add_argument("--out", required=True, help="prefix of the checkpoint to write")
  args = p.parse_args()
  usr_dir.import_usr_dir(args.t2t_usr_dir)

  inputs, targets = read_batch(args.data_dir, args.problem, args.batch_size)
  tensors = {"batch/inputs": inputs, "batch/targets": targets}
  tensors.update(one_step(args, args.hparams, inputs, targets))
  # The README's Tatoeba recipe and transformer_base, over their first steps.
  recipe = "batch_size=2048,max_length=64,learning_rate_warmup_steps=400"
  tensors["lr_schedule/steps"] = schedule_steps()
  tensors["lr_schedule/transformer_tiny_recipe"] = lr_schedule("transformer_tiny", recipe)
  tensors["lr_schedule/transformer_base"] = lr_schedule("transformer_base", "")
  tensors["lr_schedule/transformer_base_v1"] = lr_schedule("transformer_base_v1", "")
  if args.model == "evolved_transformer":
    # Its cosine decays read train_steps: 20,000 ends past the steps compared.
    tensors["lr_schedule/evolved_transformer_tiny"] = lr_schedule(
        "evolved_transformer_tiny", "", 20000)
    tensors["lr_schedule/evolved_transformer_base"] = lr_schedule(
        "evolved_transformer_base", "", 20000)
  # Initial values at transformer_tiny's own sizes, on the fixture's vocabularies.
  tensors.update(init_stats(args, "", "tiny"))
  tensors.update(dropout_keep(0.3))
  tensors.update(eval_batches(args, args.hparams))
  save(args.out, tensors)
  print(json.dumps({"tensors": len(tensors), "loss": float(tensors["loss"]),
                    "learning_rate": float(tensors["learning_rate"])}))


if __name__ == "__main__":
  main()
