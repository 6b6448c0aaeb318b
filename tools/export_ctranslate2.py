#!/usr/bin/env python3
"""Exports a trained t2t Transformer to a CTranslate2 model directory.

  export_ctranslate2.py --output_dir=RUN --ctranslate2_dir=RUN-ct2 [--quantization=int8]
  export_ctranslate2.py --checkpoint_path=RUN/model.ckpt-1000.pt --ctranslate2_dir=DIR

Run it with the Python of t2t's virtualenv (${XDG_CACHE_HOME:-~/.cache}/t2t/venv,
which tools/setup.sh creates with torch, pyyaml and ctranslate2).

What it reads
-------------
--output_dir is a t2t-trainer run: its latest checkpoint (the one its
`checkpoint` index names, else the highest model.ckpt-N.pt) and its
hparams.yaml, as t2t-decoder reads them; --checkpoint_path names one
checkpoint instead (hparams.yaml beside it, else the copy inside it).

A t2t checkpoint is a LibTorch torch::serialize::OutputArchive
(t2t/checkpoint/checkpoint.cc): a TorchScript zip whose root module holds
every tensor as an attribute named by its key: model/<parameter name>
(models/transformer.cc, models/transformer_layers.cc), meta/step,
meta/hparams_yaml (the hparams as YAML text in a uint8 tensor) and, in a
training checkpoint, the optimizer's state under a submodule. Python's
torch.jit.load() reads that archive; the tensors come back as the module's
named_parameters() (and named_buffers() for the integer ones t2t-avg-all
writes), under those same keys. The archive's code/ files only declare
those attributes (the module has no methods), and no method is called.

What it writes
--------------
The T2T v3 Transformer (pre-norm: layer_preprocess_sequence "n",
layer_postprocess_sequence "da") maps one to one onto CTranslate2's
TransformerSpec:

  t2t                                       CTranslate2
  {encoder,decoder}.N.self_attention_pre    layer_N/self_attention/layer_norm
  {encoder,decoder}.N.self_attention.qkv    layer_N/self_attention/linear_0 (fused q, k, v)
  {encoder,decoder}.N.self_attention.output layer_N/self_attention/linear_1
  decoder.N.encdec_attention_pre            layer_N/attention/layer_norm
  decoder.N.encdec_attention.q / .kv        layer_N/attention/linear_0 / linear_1 (fused k, v)
  decoder.N.encdec_attention.output         layer_N/attention/linear_2
  {encoder,decoder}.N.ffn_pre / ffn.conv1/2 layer_N/ffn/layer_norm / linear_0/1 (with biases)
  encoder_final / decoder_final             encoder/layer_norm, decoder/layer_norm
  input_emb | target_emb | shared | softmax encoder/embeddings, decoder/embeddings,
                                            decoder/projection (aliased when t2t shares them)

and the rest is set so that CTranslate2 computes the same function (its
kernels round differently, so logits agree to float32 rounding, not bit for
bit):
  - positions: t2t's timing signal (get_timing_signal_1d, computed here as
    t2t computes it) is given as explicit position_encodings tables of
    --max_positions rows, row p at position p; CTranslate2's built-in
    sinusoid would start at position 1, t2t's starts at 0. A model with
    relative position attention (transformer_relative, pos none) has no
    tables: its relative_keys / relative_values go to each self-attention's
    relative_position_keys / _values, which CTranslate2 uses as T2T does.
  - target space: t2t adds one learned vector t to every embedded source
    position after scaling, x = W[id] * sqrt(hidden) + t. The source
    embedding is stored as that sum, W * sqrt(hidden) + t, with the
    encoder's own scaling off, so each row is the very float32 sum t2t
    computes before it adds the timing signal (W + t / sqrt(hidden),
    scaled at run time, would be the same up to rounding).
  - decoder start: t2t's first decoder input is a zero vector; the decoder
    starts from a zero embedding (start_from_zero_embedding) with id 0 as
    its start token. When the target embedding is not also the softmax
    matrix its row 0 is zeroed too, since t2t embeds id 0 (padding) as
    zeros wherever it occurs; when it is (shared_embedding_and_softmax_weights,
    the default), row 0 stays, as the softmax needs it, and only a model
    that predicts padding mid-sentence, which training never rewards,
    would decode differently.
  - layer_norm_epsilon is the run's norm_epsilon (1e-6), attention has no
    biases and scales queries by (hidden / num_heads)^-0.5 on both sides.

The vocabulary is a placeholder of the model's size: token i is "<id_i>".
CTranslate2 only maps tokens to ids, so callers give and get t2t ids as
"<id_N>" tokens: 0 is padding and the decoder's start, 1 is EOS, and
"<id_2>" (t2t's SentencePiece <unk>; --unk_id to change) stands for
CTranslate2's unknown token. EOS is appended to the source by CTranslate2
itself (add_source_eos), so a source is the ids t2t's text encoder gives,
without the EOS t2t adds.

Refused, with the hparam or checkpoint key named: post-norm models
(transformer_base_v1), norm_type other than layer, other
attention types, other feed-forward layers, attention_key_channels /
attention_value_channels other than hidden_size, and any checkpoint tensor
this mapping does not consume.

Translating with it
-------------------
  import ctranslate2
  translator = ctranslate2.Translator("RUN-ct2", device="cpu")  # or "cuda"
  ids = [[52, 7, 301]]                       # t2t source ids, no EOS
  out = translator.translate_batch([["<id_%d>" % i for i in s] for s in ids],
                                   beam_size=1, min_decoding_length=0,
                                   max_decoding_length=256)
  target_ids = [int(t[4:-1]) for t in out[0].hypotheses[0]]   # no EOS

The vocabulary's SentencePiece model (t2t-datagen's vocab.*.spm.*.model)
gives the same ids as t2t's encoder, so the `sentencepiece` package can
turn text into ids and back. Greedy decoding (beam_size=1) gives t2t's
greedy translations, with two settings of CTranslate2's that differ from
t2t's: min_decoding_length defaults to 1 there, where t2t lets a sentence
end at once (an empty translation), hence the 0 above; and t2t limits each
sentence to its source length (EOS included) + extra_length ids, where
CTranslate2 has one max_decoding_length for the batch. Beam search works
too, but CTranslate2's length penalty is score / length^alpha, not T2T's
score / ((5 + length) / 6)^alpha, so beam results may differ from
t2t-decoder's. A source or translation longer than --max_positions is an
error of CTranslate2's ("No position encodings are defined for positions
>= N"); translate_batch also cuts sources at max_input_length (1024 by
default).

--quantization=int8 (or int8_float32, int16, float16, bfloat16,
int8_float16, int8_bfloat16) stores the weights quantized, by CTranslate2's
converter; the default keeps float32. The model directory is written
beside the destination under a temporary name and renamed into place, so
a reader never sees a half-written model; an existing destination is an
error unless --force replaces it.
"""
import argparse
import math
import os
import re
import shutil
import sys
import tempfile
import warnings

CHECKPOINT_RE = re.compile(r"^model\.ckpt-(\d+)\.pt$")
EOS_ID = 1


class ExportError(Exception):
    """A problem with the user's input, reported as one line without a traceback."""


# --- reading a t2t run --------------------------------------------------------

def latest_checkpoint(run_dir):
    """The checkpoint t2t-decoder would load from run_dir (t2t::latest_checkpoint)."""
    index = os.path.join(run_dir, "checkpoint")
    if os.path.isfile(index):
        with open(index, encoding="utf-8") as f:
            name = f.read().strip()
        if name and os.path.isfile(os.path.join(run_dir, name)):
            return os.path.join(run_dir, name)
    steps = []
    for name in os.listdir(run_dir):
        m = CHECKPOINT_RE.match(name)
        if m and os.path.isfile(os.path.join(run_dir, name)):
            steps.append((int(m.group(1)), name))
    return os.path.join(run_dir, max(steps)[1]) if steps else None


def read_checkpoint(path):
    """-> ({parameter name: float32 tensor}, embedded hparams YAML or None, step or None)."""
    import torch
    try:
        with warnings.catch_warnings():
            # torch.jit.load warns that TorchScript is deprecated; the
            # archive format it reads is still what LibTorch writes.
            warnings.simplefilter("ignore")
            archive = torch.jit.load(path, map_location="cpu")
    except Exception as e:  # torch raises RuntimeError or its own subclasses
        raise ExportError("cannot read checkpoint %s (%s); is it a t2t checkpoint?"
                          % (path, str(e).splitlines()[0] if str(e) else type(e).__name__))
    entries = dict(archive.named_parameters())
    entries.update(archive.named_buffers())
    tensors = {}
    for key, value in entries.items():
        if key.startswith("model/"):
            value = value.detach()
            if value.is_floating_point():
                value = value.to(torch.float32)
            tensors[key[len("model/"):]] = value.contiguous()
    if not tensors:
        raise ExportError("checkpoint %s holds no model/ tensors; is it a t2t checkpoint?" % path)
    hparams_yaml = None
    if "meta/hparams_yaml" in entries:
        hparams_yaml = bytes(entries["meta/hparams_yaml"].to(torch.uint8).tolist()).decode("utf-8")
    step = int(entries["meta/step"].item()) if "meta/step" in entries else None
    return tensors, hparams_yaml, step


def load_hparams(checkpoint, embedded_yaml):
    """The run's hparams: hparams.yaml beside the checkpoint, as t2t-decoder
    reads it, else the copy the checkpoint carries."""
    import yaml
    path = os.path.join(os.path.dirname(os.path.abspath(checkpoint)), "hparams.yaml")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            text, origin = f.read(), path
    elif embedded_yaml:
        text, origin = embedded_yaml, checkpoint + " (meta/hparams_yaml)"
    else:
        raise ExportError("no hparams.yaml beside %s and none inside it" % checkpoint)
    hp = yaml.safe_load(text)
    if not isinstance(hp, dict):
        raise ExportError("%s is not a YAML mapping of hparams" % origin)
    return hp, origin


# --- checking what can be mapped ----------------------------------------------

def hparam(hp, origin, name, default=None):
    if name in hp:
        return hp[name]
    if default is None:
        raise ExportError("%s lacks hparam %s" % (origin, name))
    return default


def as_float(hp, origin, name, default=None):
    # t2t writes 1e-06 and the like, which YAML 1.1 reads as a string.
    value = hparam(hp, origin, name, default)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ExportError("hparam %s=%r in %s is not a number" % (name, value, origin))


def as_int(hp, origin, name, default=None):
    value = hparam(hp, origin, name, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExportError("hparam %s=%r in %s is not an integer" % (name, value, origin))
    return value


def as_bool(value):
    return value if isinstance(value, bool) else str(value).lower() == "true"


def without_dropout(letters):
    # "d" is dropout, nothing at inference; "none" is no processing.
    return "" if letters == "none" else letters.replace("d", "")


def check_hparams(hp, origin):
    """-> the settings the mapping needs; ExportError naming the first hparam
    whose value CTranslate2's TransformerSpec cannot reproduce."""
    def refuse(name, value, supported):
        raise ExportError("hparam %s=%r (%s) cannot be exported to CTranslate2: this exporter "
                          "maps the pre-norm T2T Transformer only (%s)"
                          % (name, value, origin, supported))

    pre = str(hparam(hp, origin, "layer_preprocess_sequence"))
    post = str(hparam(hp, origin, "layer_postprocess_sequence"))
    if without_dropout(pre) != "n":
        refuse("layer_preprocess_sequence", pre, "'n', as transformer_base_v2/v3 and later")
    if without_dropout(post) != "a":
        refuse("layer_postprocess_sequence", post, "'da', as transformer_base_v2/v3 and later")
    for name, want in (("norm_type", "layer"), ("ffn_layer", "dense_relu_dense")):
        value = str(hparam(hp, origin, name, want))
        if value != want:
            refuse(name, value, want)
    attention = str(hparam(hp, origin, "self_attention_type", "dot_product"))
    if attention not in ("dot_product", "dot_product_relative"):
        refuse("self_attention_type", attention, "dot_product or dot_product_relative")
    # CTranslate2's relative position representations are T2T's (Shaw et
    # al.): one key and one value table of 2 * max + 1 rows shared by the heads.
    relative = as_int(hp, origin, "max_relative_position", 0) \
        if attention == "dot_product_relative" else 0
    if not as_bool(hparam(hp, origin, "causal_decoder_self_attention", True)):
        refuse("causal_decoder_self_attention", hp["causal_decoder_self_attention"], "true")
    pos = str(hparam(hp, origin, "pos", "timing"))
    if pos not in ("timing", "none"):
        refuse("pos", pos, "timing or none")
    embedding_mode = str(hparam(hp, origin, "multiply_embedding_mode"))
    if embedding_mode not in ("sqrt_depth", "none"):
        refuse("multiply_embedding_mode", embedding_mode, "sqrt_depth or none")
    hidden = as_int(hp, origin, "hidden_size")
    heads = as_int(hp, origin, "num_heads")
    for name in ("attention_key_channels", "attention_value_channels"):
        channels = as_int(hp, origin, name, 0)
        if channels not in (0, hidden):
            refuse(name, channels, "0 or hidden_size: CTranslate2 projects queries, keys and "
                   "values to hidden_size")
    if hidden % heads != 0:
        raise ExportError("hparam hidden_size=%d is not divisible by num_heads=%d (%s)"
                          % (hidden, heads, origin))
    if attention == "dot_product_relative" and relative <= 0:
        refuse("max_relative_position", relative, "positive with dot_product_relative")
    if relative and pos != "none":
        refuse("pos", pos, "none with relative attention: CTranslate2 adds no position "
               "encodings to a model with relative positions")
    return dict(hidden=hidden, heads=heads, epsilon=as_float(hp, origin, "norm_epsilon"),
                timing=pos == "timing", sqrt_depth=embedding_mode == "sqrt_depth",
                relative=relative)


# --- the mapping --------------------------------------------------------------

def timing_signal(length, channels):
    """T2T's get_timing_signal_1d for positions [0, length), computed with the
    same float32 operations as models/transformer_layers.cc's timing_signal_1d."""
    import torch
    timescales = channels // 2
    increment = math.log(1.0e4) / max(timescales - 1, 1)
    position = torch.arange(0, length, dtype=torch.float32).unsqueeze(1)
    inv_timescales = torch.exp(torch.arange(timescales, dtype=torch.float32) * -increment)
    scaled_time = position * inv_timescales.unsqueeze(0)
    signal = torch.cat([scaled_time.sin(), scaled_time.cos()], 1)
    if channels % 2:
        signal = torch.nn.functional.pad(signal, (0, 1))
    return signal


class Tensors:
    """The checkpoint's tensors; each is taken once, so that what is left at
    the end is what the mapping does not know."""

    def __init__(self, tensors, origin):
        self.tensors = dict(tensors)
        self.left = set(tensors)
        self.origin = origin

    def has(self, name):
        return name in self.tensors

    def shape(self, name):
        return tuple(self.take(name).shape)

    def take(self, name, shape=None):
        if name not in self.tensors:
            raise ExportError("checkpoint %s lacks model/%s, which a pre-norm T2T Transformer "
                              "has" % (self.origin, name))
        t = self.tensors[name]
        if shape is not None and tuple(t.shape) != tuple(shape):
            raise ExportError("checkpoint %s: model/%s has shape %s, expected %s from the "
                              "hparams" % (self.origin, name, list(t.shape), list(shape)))
        self.left.discard(name)
        return t

    def count_layers(self, stack):
        pattern = re.compile(r"^%s\.(\d+)\." % stack)
        found = {int(m.group(1)) for m in map(pattern.match, self.tensors) if m}
        if not found:
            raise ExportError("checkpoint %s has no %s layers (model/%s.0.*)"
                              % (self.origin, stack, stack))
        if found != set(range(len(found))):
            raise ExportError("checkpoint %s: %s layers %s are not numbered 0..N-1"
                              % (self.origin, stack, sorted(found)))
        return len(found)

    def check_all_taken(self):
        if self.left:
            names = sorted(self.left)
            shown = ", ".join("model/" + n for n in names[:8])
            more = " and %d more" % (len(names) - 8) if len(names) > 8 else ""
            raise ExportError("checkpoint %s holds %s%s, which this exporter cannot map to "
                              "CTranslate2 (a layer type or setting it does not know)"
                              % (self.origin, shown, more))


def set_layer_norm(spec, w, prefix, hidden):
    spec.gamma = w.take(prefix + ".layer_norm_0.weight", (hidden,))
    spec.beta = w.take(prefix + ".layer_norm_0.bias", (hidden,))


def set_linear(spec, w, name, shape, bias=False):
    spec.weight = w.take(name + ".weight", shape)
    if bias:
        spec.bias = w.take(name + ".bias", shape[:1])


def set_ffn(spec, w, prefix, hidden):
    set_layer_norm(spec.layer_norm, w, prefix + "ffn_pre", hidden)
    filter_size = w.shape(prefix + "ffn.conv1.weight")[0]
    set_linear(spec.linear_0, w, prefix + "ffn.conv1", (filter_size, hidden), bias=True)
    set_linear(spec.linear_1, w, prefix + "ffn.conv2", (hidden, filter_size), bias=True)


def set_self_attention(spec, w, prefix, cfg):
    hidden = cfg["hidden"]
    set_layer_norm(spec.layer_norm, w, prefix + "self_attention_pre", hidden)
    set_linear(spec.linear[0], w, prefix + "self_attention.qkv", (3 * hidden, hidden))
    set_linear(spec.linear[1], w, prefix + "self_attention.output", (hidden, hidden))
    if cfg["relative"]:
        table = (2 * cfg["relative"] + 1, hidden // cfg["heads"])
        spec.relative_position_keys = w.take(prefix + "self_attention.relative_keys", table)
        spec.relative_position_values = w.take(prefix + "self_attention.relative_values", table)


def build_spec(w, cfg, max_positions, unk_id):
    """-> a filled ctranslate2.specs.TransformerSpec from the tensors `w`."""
    import torch
    from ctranslate2.specs import transformer_spec

    hidden, heads = cfg["hidden"], cfg["heads"]
    num_encoder = w.count_layers("encoder")
    num_decoder = w.count_layers("decoder")
    relative = bool(cfg["relative"])
    encoder = transformer_spec.TransformerEncoderSpec(num_encoder, heads, pre_norm=True,
                                                      relative_position=relative)
    decoder = transformer_spec.TransformerDecoderSpec(num_decoder, heads, pre_norm=True,
                                                      relative_position=relative)
    spec = transformer_spec.TransformerSpec(encoder, decoder)

    for i, layer in enumerate(encoder.layer):
        prefix = "encoder.%d." % i
        set_self_attention(layer.self_attention, w, prefix, cfg)
        set_ffn(layer.ffn, w, prefix, hidden)
    for i, layer in enumerate(decoder.layer):
        prefix = "decoder.%d." % i
        set_self_attention(layer.self_attention, w, prefix, cfg)
        set_layer_norm(layer.attention.layer_norm, w, prefix + "encdec_attention_pre", hidden)
        set_linear(layer.attention.linear[0], w, prefix + "encdec_attention.q", (hidden, hidden))
        set_linear(layer.attention.linear[1], w, prefix + "encdec_attention.kv",
                   (2 * hidden, hidden))
        set_linear(layer.attention.linear[2], w, prefix + "encdec_attention.output",
                   (hidden, hidden))
        set_ffn(layer.ffn, w, prefix, hidden)
    set_layer_norm(encoder.layer_norm, w, "encoder_final", hidden)
    set_layer_norm(decoder.layer_norm, w, "decoder_final", hidden)

    # models/transformer.cc names the matrices by what they are shared as.
    target_emb = w.take("target_emb") if w.has("target_emb") else w.take("shared")
    # No softmax of its own: shared with everything, or with the target
    # embedding alone (shared_target_embedding_and_softmax_weights).
    softmax = w.take("softmax") if w.has("softmax") else (
        w.take("shared") if w.has("shared") else target_emb)
    input_emb = w.take("input_emb") if w.has("input_emb") else w.take("shared")
    for name, t in (("input embedding", input_emb), ("target embedding", target_emb),
                    ("softmax", softmax)):
        if t.dim() != 2 or t.shape[1] != hidden:
            raise ExportError("checkpoint %s: the %s has shape %s, expected [vocab, %d]"
                              % (w.origin, name, list(t.shape), hidden))
    if softmax.shape[0] != target_emb.shape[0]:
        raise ExportError("checkpoint %s: softmax has %d rows, the target embedding %d"
                          % (w.origin, softmax.shape[0], target_emb.shape[0]))

    if target_emb is not softmax:
        # t2t embeds id 0 as zeros at every position; the softmax keeps its own row.
        zeroed = target_emb.clone()
        zeroed[0] = 0
        if input_emb is target_emb:
            input_emb = zeroed  # row 0 is padding on the source side too
        target_emb = zeroed
    decoder.embeddings.weight = target_emb
    decoder.scale_embeddings = cfg["sqrt_depth"]
    decoder.start_from_zero_embedding = True
    decoder.projection.weight = softmax

    target_space = w.take("target_space_embedding", (hidden,)) if w.has(
        "target_space_embedding") else None
    if target_space is not None:
        # x = W[id] * sqrt(hidden) + t, as models/transformer.cc's encode()
        # computes it (a float32 scale times float32 rows, then the add).
        scale = math.sqrt(hidden) if cfg["sqrt_depth"] else 1.0
        encoder.embeddings[0].weight = input_emb * torch.tensor(scale, dtype=torch.float32) \
            + target_space
        encoder.scale_embeddings = False
    else:
        encoder.embeddings[0].weight = input_emb
        encoder.scale_embeddings = cfg["sqrt_depth"]

    if not relative:  # with relative positions CTranslate2 has no position tables
        positions = timing_signal(max_positions, hidden) if cfg["timing"] else \
            torch.zeros(max_positions, hidden)
        encoder.position_encodings.encodings = positions
        decoder.position_encodings.encodings = positions

    w.check_all_taken()

    source_size, target_size = input_emb.shape[0], target_emb.shape[0]
    if not 2 <= unk_id < min(source_size, target_size):
        # 0 and 1 are padding and EOS.
        raise ExportError("--unk_id=%d is not an id from 2 to %d (the vocabularies have %d and "
                          "%d ids)" % (unk_id, min(source_size, target_size) - 1, source_size,
                                       target_size))
    spec.register_source_vocabulary(["<id_%d>" % i for i in range(source_size)])
    spec.register_target_vocabulary(["<id_%d>" % i for i in range(target_size)])
    spec.config.unk_token = "<id_%d>" % unk_id
    spec.config.bos_token = "<id_0>"
    spec.config.eos_token = "<id_%d>" % EOS_ID
    spec.config.decoder_start_token = "<id_0>"
    spec.config.add_source_eos = True
    spec.config.layer_norm_epsilon = cfg["epsilon"]
    return spec


def check_vocab_mapping(path):
    """A vmap for this model's vocabulary names tokens <id_N>: CTranslate2
    maps any other name to its unknown token, silently."""
    if not os.path.isfile(path):
        raise ExportError("--vocab_mapping=%s: no such file" % path)
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            if "\t" not in line:
                raise ExportError("--vocab_mapping=%s line %d: no tab; a vmap line is "
                                  "'src_1 ... src_n<TAB>tgt_1 ... tgt_k'" % (path, number))
            for token in line.split():
                if not re.fullmatch(r"<id_\d+>", token):
                    raise ExportError("--vocab_mapping=%s line %d: token %r is not <id_N>; "
                                      "write the shortlist with t2t-shortlist --tokens=ids"
                                      % (path, number, token))
            return


def make_converter(spec):
    """A ctranslate2 Converter whose model is the spec built here: its
    convert() validates, aliases shared tensors, quantizes and saves."""
    from ctranslate2.converters.converter import Converter

    class T2TConverter(Converter):
        def _load(self):
            return spec

    return T2TConverter()


# --- the command --------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Export a trained t2t Transformer (pre-norm, T2T v3) to a CTranslate2 "
                    "model directory.",
        epilog="Translate with ctranslate2.Translator(DIR).translate_batch([['<id_5>', ...]], "
               "beam_size=1): tokens are t2t ids written <id_N>, the source without EOS. "
               "See this script's docstring for the details.")
    ap.add_argument("--output_dir", default="",
                    help="a t2t-trainer run: its latest checkpoint and hparams.yaml")
    ap.add_argument("--checkpoint_path", default="",
                    help="this checkpoint instead of the run's latest (hparams.yaml beside it, "
                         "else the copy inside it)")
    ap.add_argument("--ctranslate2_dir", required=True,
                    help="the CTranslate2 model directory to create")
    ap.add_argument("--quantization", default="float32",
                    help="weight type: float32 (default), int8, int8_float32, int16, float16, "
                         "bfloat16, int8_float16 or int8_bfloat16 (CTranslate2's converter "
                         "quantizes)")
    ap.add_argument("--max_positions", type=int, default=2048,
                    help="rows of the position tables: the longest source (EOS included) "
                         "and the longest translation the model can be given (default 2048)")
    ap.add_argument("--unk_id", type=int, default=2,
                    help="the id CTranslate2 treats as its unknown token (default 2, t2t's "
                         "SentencePiece <unk>)")
    ap.add_argument("--vocab_mapping", default="",
                    help="a lexical shortlist in vmap format naming tokens <id_N> (t2t-shortlist "
                         "--tokens=ids writes one): saved in the model, which then decodes with "
                         "translate_batch(..., use_vmap=True) over the targets it lists")
    ap.add_argument("--force", action="store_true",
                    help="replace --ctranslate2_dir when it exists")
    return ap.parse_args(argv)


def export(args):
    try:
        import ctranslate2
        from ctranslate2.specs.model_spec import ACCEPTED_MODEL_TYPES
    except ImportError:
        raise ExportError("the ctranslate2 package is not installed in %s; "
                          "pip install ctranslate2" % sys.executable)
    if bool(args.output_dir) == bool(args.checkpoint_path):
        raise ExportError("give --output_dir (a run) or --checkpoint_path (one checkpoint)")
    if args.quantization not in ACCEPTED_MODEL_TYPES:
        raise ExportError("--quantization=%s is not one of %s"
                          % (args.quantization, ", ".join(ACCEPTED_MODEL_TYPES)))
    if args.max_positions < 1:
        raise ExportError("--max_positions must be positive")
    if args.vocab_mapping:
        check_vocab_mapping(args.vocab_mapping)
    destination = os.path.abspath(args.ctranslate2_dir)
    # Checked first, so that a mistyped destination costs no loading.
    if os.path.lexists(destination) and not args.force:
        raise ExportError("%s already exists; choose another --ctranslate2_dir or give --force "
                          "to replace it" % destination)

    if args.checkpoint_path:
        checkpoint = args.checkpoint_path
        if not os.path.isfile(checkpoint):
            raise ExportError("--checkpoint_path=%s: no such file" % checkpoint)
    else:
        if not os.path.isdir(args.output_dir):
            raise ExportError("--output_dir=%s is not a directory" % args.output_dir)
        checkpoint = latest_checkpoint(args.output_dir)
        if checkpoint is None:
            raise ExportError("--output_dir=%s holds no checkpoint (model.ckpt-N.pt)"
                              % args.output_dir)

    tensors, embedded_yaml, step = read_checkpoint(checkpoint)
    hp, origin = load_hparams(checkpoint, embedded_yaml)
    cfg = check_hparams(hp, origin)
    spec = build_spec(Tensors(tensors, checkpoint), cfg, args.max_positions, args.unk_id)

    parent = os.path.dirname(destination)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".%s.tmp-" % os.path.basename(destination), dir=parent)
    try:
        written = os.path.join(staging, "model")
        make_converter(spec).convert(written, vmap=args.vocab_mapping or None,
                                     quantization=args.quantization)
        if os.path.lexists(destination):  # --force
            os.rename(destination, os.path.join(staging, "replaced"))
        os.rename(written, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print("exported %s (step %s: %d encoder and %d decoder layers, hidden_size %d) as %s to %s "
          "(ctranslate2 %s)" % (checkpoint, "?" if step is None else step, len(spec.encoder.layer),
                                len(spec.decoder.layer), cfg["hidden"], args.quantization,
                                destination, ctranslate2.__version__))


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        export(args)
    except ExportError as e:
        print("export_ctranslate2.py: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
