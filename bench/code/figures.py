#!/usr/bin/env python3
"""Figures of the code's shape, for bench/README.md's "Code figures".

Run from anywhere: python3 bench/code/figures.py [TREE] [BEFORE_TREE]
(default: this tree). Prints a Markdown table; with BEFORE_TREE (e.g. a
`git worktree add` of an older commit) a column for each. Counts are of the
files in the trees as they are.
"""
import os
import re
import sys

ROOT = (os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BEFORE = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
LIBRARY = ["t2t", "models", "problems", "hparams"]
FRONT_ENDS = ["tools", "python/src", "bench"]


def sources(tops, exts=(".cc", ".h")):
    for top in tops:
        for d, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(d, f), ROOT)


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
        return f.read()


def lines(path):
    return read(path).count("\n")


def folder_lines(folder):
    return sum(lines(p) for p in sources([folder]))


# A string literal naming a command-line flag: "--name" inside quotes, in
# code (not in a comment). The library names options ("{name}" in an
# OptionError); a command it suggests running is built by
# t2t::command_suggestion, so neither shows up here.
FLAG_LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*?--[a-z][a-z0-9_]*(?:[^"\\\n]|\\.)*"')


def code_without_comments(text):
    out = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("//"):
            continue
        out.append(line)
    return "\n".join(out)


def flag_literals(tops):
    count = 0
    for p in sources(tops):
        if p.startswith("t2t/cuda/"):
            continue
        count += len(FLAG_LITERAL.findall(code_without_comments(read(p))))
    return count


def comment_share(paths):
    comment = total = 0
    for p in paths:
        for line in read(p).splitlines():
            if not line.strip():
                continue
            total += 1
            comment += line.lstrip().startswith("//")
    return comment / max(total, 1)


def files_calling(names, tops):
    pattern = re.compile(r"\b(" + "|".join(names) + r")\s*\(")
    return sorted({os.path.dirname(p) + "/" for p in sources(tops) if pattern.search(read(p))})


def class_body(name, tops):
    """The text of `class name ... { ... };` in the first header that defines it."""
    start = re.compile(r"\bclass\s+" + name + r"\b[^;{]*\{")
    for p in sources(tops, (".h",)):
        text = code_without_comments(read(p))
        m = start.search(text)
        if not m:
            continue
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        return text[m.end():i]
    return ""


def virtual_methods(name):
    body = class_body(name, LIBRARY)
    return len([m for m in re.findall(r"\bvirtual\b[^;{]*", body) if "~" not in m])


def public_tensor_methods(name):
    """Public methods returning a tensor: the ways in to an attention layer."""
    body = class_body(name, LIBRARY)
    public = body.split("private:")[0].split("protected:")[0]
    return len(re.findall(r"^\s*torch::Tensor\s+\w+\s*\(", public, re.M))


def figures():
    rows = []
    rows.append(("lines in models/ (models only)", folder_lines("models")))
    rows.append(("lines in t2t/kernels/ (the CPU kernels)", folder_lines("t2t/kernels")))
    rows.append(("string literals naming a --flag in the library (t2t/, models/, problems/, "
                 "hparams/)", flag_literals(LIBRARY)))
    loaders = files_calling(["load_model", "prepare_model", "load_for_decoding",
                             "prepare_for_decoding"],
                            LIBRARY + FRONT_ENDS)
    rows.append(("folders that load or ready a model for decoding", ", ".join(loaders)))
    rows.append(("lines of t2t/train/trainer.cc", lines("t2t/train/trainer.cc")))
    rows.append(("lines of t2t/data/batch_reader.cc", lines("t2t/data/batch_reader.cc")))
    rows.append(("virtual methods of T2TModel (destructor aside)", virtual_methods("T2TModel")))
    rows.append(("public calls of MultiheadAttention that attend",
                 public_tensor_methods("MultiheadAttentionImpl")))
    rows.append(("files named cuda_graph.h", len([p for p in sources(LIBRARY, (".h",))
                                                  if os.path.basename(p) == "cuda_graph.h"])))
    max_diff = re.compile(r"^\S.*\bmax_diff\s*\([^;]*\)\s*\{", re.M)
    rows.append(("test files defining max_diff",
                 len([p for p in sources(["tests"]) if max_diff.search(read(p))])))
    headers = [p for p in sources(LIBRARY, (".h",))]
    rows.append(("share of comment lines in the library's headers",
                 "{:.0%}".format(comment_share(headers))))
    test_dirs = sorted({os.path.dirname(p) for p in sources(["tests"], (".cc",))})
    rows.append(("test folders", len(test_dirs)))
    rows.append(("lines of bench/README.md", lines("bench/README.md")))
    return rows


def main():
    global ROOT
    now = figures()
    if BEFORE is None:
        print("| figure | value |")
        print("|---|---|")
        for name, value in now:
            print("| {} | {} |".format(name, value))
        return 0
    here, ROOT = ROOT, BEFORE
    before = dict(figures())
    ROOT = here
    print("| figure | before | now |")
    print("|---|---|---|")
    for name, value in now:
        print("| {} | {} | {} |".format(name, before.get(name, ""), value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
