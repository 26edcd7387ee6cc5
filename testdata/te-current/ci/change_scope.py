#!/usr/bin/env python3
"""Fixture in the shape of TransformerEngine's ci/change_scope.py (written here, not
copied): which suites of ci/ci_sgpu_queue.conf and ci/ci_mgpu_queue.conf a change needs.

    git diff --name-status --no-renames BASE...HEAD | change_scope.py --github-output FILE [--summary FILE]
    change_scope.py --all EVENT --github-output FILE [--summary FILE]

Writes run_build, sgpu_suites and mgpu_suites (labels separated by spaces) to the
--github-output file, as a step's GITHUB_OUTPUT.
"""
import argparse
import os
import sys

CI = os.path.dirname(os.path.abspath(__file__))

# path prefix -> the suites it touches; a path under no prefix touches nothing.
SCOPES = [
    ("transformer_engine/pytorch/", {"torch", "torch-mgpu", "examples"}),
    ("transformer_engine/jax/", {"jax", "jax-mgpu", "examples"}),
    ("transformer_engine/common/", None),  # everything
    ("tests/cpp/", {"core"}),
    ("ci/", None),
    ("docs/", set()),
]


def labels(conf):
    out = []
    with open(os.path.join(CI, conf)) as f:
        for line in f:
            words = line.split()
            if words and not words[0].startswith("#"):
                out.append(words[0])
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--all", metavar="EVENT")
    p.add_argument("--github-output", required=True)
    p.add_argument("--summary")
    a = p.parse_args()
    sgpu, mgpu = labels("ci_sgpu_queue.conf"), labels("ci_mgpu_queue.conf")
    if a.all is not None:
        wanted, why = set(sgpu + mgpu), "every suite (%s)" % a.all
    else:
        wanted, why = set(), "the changed paths"
        for line in sys.stdin:
            path = line.split("\t")[-1].strip()
            for prefix, suites in SCOPES:
                if path.startswith(prefix):
                    wanted |= set(sgpu + mgpu) if suites is None else suites
                    break
    s = " ".join(l for l in sgpu if l in wanted)
    m = " ".join(l for l in mgpu if l in wanted)
    with open(a.github_output, "a") as f:
        f.write("run_build=%s\nsgpu_suites=%s\nmgpu_suites=%s\n" % ("true" if wanted else "false", s, m))
    if a.summary:
        with open(a.summary, "a") as f:
            f.write("## Change scope: %s\n\nsGPU: %s\n\nmGPU: %s\n" % (why, s or "none", m or "none"))
    print("sgpu_suites=%s mgpu_suites=%s" % (s, m))


if __name__ == "__main__":
    main()
