#!/usr/bin/env python3
"""Writes the seed corpus of each harness (fuzz/corpus/<harness>/) from the
project's own fixtures and small hand-made files: valid inputs the fuzzer
starts from. Run from anywhere; it rewrites the files it makes and leaves the
rest alone: the SentencePiece seeds (corpus/sentencepiece/*.model, 100-piece
unigram and BPE models that t2t's SentencePieceEncoder::train made from the
first 400 lines of data/sample/train.en) and the findings in regressions/.
The checkpoint harness's seed (a run's checkpoint with its Adam state) is
written by t2t itself: the ordinary build's t2t_tests must be in build/.

  python3 fuzz/make_corpus.py
"""
import gzip
import io
import json
import os
import struct
import subprocess
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")


def write(harness, name, data):
    os.makedirs(os.path.join(CORPUS, harness), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(CORPUS, harness, name), "wb") as f:
        f.write(data)


def fixture(*parts):
    with open(os.path.join(FIXTURES, *parts), "rb") as f:
        return f.read()


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire, payload):
    key = varint(number << 3 | wire)
    return key + (varint(len(payload)) + payload if wire == 2 else payload)


def example(features):
    """A tf.train.Example of int64 lists, in protobuf's wire format."""
    entries = b""
    for key, values in sorted(features.items()):
        packed = b"".join(varint(v & (2 ** 64 - 1)) for v in values)
        int64_list = field(1, 2, packed)
        feature = field(3, 2, int64_list)
        entry = field(1, 2, key.encode()) + field(2, 2, feature)
        entries += field(1, 2, entry)
    return field(1, 2, entries)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(records):
    out = b""
    for r in records:
        length = struct.pack("<Q", len(r))
        out += length + struct.pack("<I", masked_crc(length)) + r + struct.pack("<I", masked_crc(r))
    return out


def main():
    ex1 = example({"inputs": [5, 17, 3, 1], "targets": [9, 2, 1]})
    ex2 = example({"inputs": [1], "targets": [], "alignment": [0, 0, 1, 1, 2, 2]})
    write("example", "two_features", ex1)
    write("example", "alignment", ex2)
    write("tfrecord", "two_records", tfrecord([ex1, ex2]))
    write("tfrecord", "empty_record", tfrecord([b""]))

    for kind in ("typed", "multiblock"):
        index = fixture("tf_checkpoint", kind, "model.ckpt-1234.index")
        data = fixture("tf_checkpoint", kind, "model.ckpt-1234.data-00000-of-00001")
        write("sstable", kind, index)
        write("tf_checkpoint", kind, index + b"T2TFUZZDATA" + data)

    write("hparams_json", "t2t_run", fixture("t2t_run", "train", "hparams.json"))
    write("hparams_json", "small", json.dumps({"hidden_size": 64, "learning_rate": 0.1,
                                               "optimizer": "adafactor",
                                               "problem_hparams_list": [3, 4]}))
    write("hparams_yaml", "set", "hidden_size: 64\nlearning_rate: 0.05\nname: tiny\n")
    write("hparams_yaml", "overrides", "hidden_size=128,learning_rate=2e-3,name=big")
    write("hparams_yaml", "nested", "a: [1, 2, 3]\nb: {c: d}\nc: !!binary aGVsbG8=\n")

    write("reader_state", "state", (
        "epoch: 2\nfile_position: 1\nrecord_in_file: 37\nrng: \"12345 678\"\n"
        "shuffle_buffer: [[0, 128], [1, 4096]]\nbucketed: [[0, 0]]\nbatch_rng: \"\"\n"
        "batch_buffer: []\nbatch_buffer_rows: []\nnum_files: 2\nworker: 0\nnum_workers: 1\n"
        "training: true\n"))
    write("reader_state", "mix", (
        "epoch: 1\nfile_position: 0\nrecord_in_file: 0\nrng: \"12345 678\"\n"
        "shuffle_buffer: [2, 5]\nbucketed: []\nnum_files: 3\nworker: 0\nnum_workers: 1\n"
        "training: true\nmix:\n"
        "  - {part: real, weight: 1, num_files: 2, epoch: 3, file_position: 1, record_in_file: 9, "
        "taken: 120}\n"
        "  - {part: bt, weight: 0.5, num_files: 1, epoch: 1, file_position: 0, record_in_file: 4, "
        "taken: 60}\n"))

    write("subword_vocab", "fixture",
          fixture("t2t_run_shared", "data", "vocab.translate_enzh_shared_fixture.512.subwords"))
    write("subword_vocab", "small", "'<pad>'\n'<EOS>'\n'a_'\n'b'\n'\\\\u_'\n'\\\\92;'\n")

    # The first byte: bit 0 Marian's format, bit 1 tokens named <id_N>.
    write("shortlist", "vmap", b"\x00" + "\tt5 t6 t7\ns3\tt10 t11 t12\ns3 s4\tt20 t21\n"
          "s9\t\n".encode())
    write("shortlist", "vmap_ids", b"\x02" + b"\t<id_5> <id_6>\n<id_3>\t<id_10> <id_11>\n")
    write("shortlist", "marian", b"\x09" + b"t10 s3 0.2\nt11 s3 0.7\nNULL s4 0.5\n"
          b"t14 s4 4e-1\n")

    write("sgm", "newstest", (
        '<srcset setid="newstest2021" srclang="en">\n<doc sysid="ref" docid="1">\n'
        '<p>\n<seg id="1">Hello &amp; welcome.</seg>\n<seg id="2"> Two </seg>\n</p>\n'
        '</doc>\n</srcset>\n'))

    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode="w:gz") as t:
        for name, text in (("corpus/train.en", b"hello\n"), ("corpus/train.zh", b"\xe4\xbd\xa0\n")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            info.mtime = 0
            t.addfile(info, io.BytesIO(text))
    write("archive", "tar_gz", tar.getvalue())
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr(zipfile.ZipInfo("cmn.txt", (1980, 1, 1, 0, 0, 0)), "Hi.\t嗨。\tCC-BY\n")
    write("archive", "zip", zipped.getvalue())
    write("archive", "gz", gzip.compress(b"one line\n", mtime=0))

    with open(os.path.join(ROOT, "configs", "problems", "sample_bpe.yaml"), "rb") as f:
        write("yaml_problem", "sample_bpe", f.read())
    write("yaml_problem", "every_key", (
        "name: fuzz_enzh\ndescription: d\nsource_language: en\ntarget_language: zh\n"
        "train: {source: train.en, target: train.zh}\ndev: {tsv: dev.tsv}\n"
        "vocab: {type: sentencepiece, size: 8000, model_type: unigram, separate: true}\n"
        "shards: {train: 10, dev: 1}\nmax_line_bytes: 4096\n"))
    write("yaml_problem", "parts", (
        "name: fuzz_mix\ntrain:\n  - {name: real, source: a.en, target: a.zh, shards: 2}\n"
        "  - {name: bt, tsv: bt.tsv, weight: 0.5, tag: '<BT>'}\n"
        "  - {name: more, tsv: m.tsv, epochs: 2}\nshards: {train: 3}\n"))

    write("translate_request", "texts", json.dumps({"texts": ["Hello world.", "你好"]}))
    write("translate_request", "options", json.dumps({
        "texts": ["a", "b"], "beam_size": 4, "alpha": 0.6, "n_best": 2,
        "no_repeat_ngram_size": 3, "repetition_penalty": 1.2, "alignment": True,
        "alignment_threshold": 0.3, "glossary": [{"source": "a", "target": "b"}],
        "prefixes": ["x", ""], "constraints": [["y"], []]}))

    body = json.dumps({"text": ["Hello world."]})
    write("http_framing", "get", "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    write("http_framing", "post_length", (
        "POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: %d\r\n\r\n%s" % (len(body), body)))
    write("http_framing", "chunked_expect", (
        "POST /v1/translate HTTP/1.1\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n"
        "\r\n5;ext=1\r\n{\"tex\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body) - 5, body[5:])))
    write("http_framing", "pipelined", (
        "GET /health HTTP/1.1\r\n\r\nPOST /v1/translate HTTP/1.1\r\nContent-Length: 2\r\n"
        "\r\n{}"))
    subprocess.run([os.path.join(ROOT, "build", "t2t_tests"), "[.write-fuzz-seeds]"], check=True,
                   env=dict(os.environ, T2T_FUZZ_SEED_DIR=os.path.join(CORPUS, "checkpoint")),
                   stdout=subprocess.DEVNULL)
    with zipfile.ZipFile(os.path.join(CORPUS, "checkpoint", "adam_run.pt")) as z:
        write("pickle", "adam_run", z.read(next(n for n in z.namelist()
                                                if n.endswith("/data.pkl"))))


if __name__ == "__main__":
    main()
