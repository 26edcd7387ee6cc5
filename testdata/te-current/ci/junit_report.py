#!/usr/bin/env python3
"""Fixture in the shape of TransformerEngine's ci/junit_report.py (written here, not
copied): sums the JUnit files of one directory into the step summary.

    junit_report.py DIR [--title TITLE]

Reads DIR/*.xml (one file per test invocation, as TE's scripts write them with
JUNITXML_PREFIX), appends a Markdown digest to $GITHUB_STEP_SUMMARY (else stdout) and
prints one ::error per failed test case. Informational: it always exits 0.
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def main():
    if len(sys.argv) < 2:
        print("usage: junit_report.py <results-dir> [--title TITLE]", file=sys.stderr)
        return 0
    results = sys.argv[1]
    title = sys.argv[sys.argv.index("--title") + 1] if "--title" in sys.argv else "Test Results"
    files = sorted(glob.glob(os.path.join(results, "*.xml")))
    lines = ["## %s\n" % title]
    failures = []
    if not files:
        lines.append("> :warning: **No JUnit XML files were produced.**\n")
    else:
        passed = 0
        for f in files:
            for case in ET.parse(f).getroot().iter("testcase"):
                if case.find("failure") is not None or case.find("error") is not None:
                    failures.append("%s::%s" % (case.get("classname", ""), case.get("name", "")))
                else:
                    passed += 1
        lines.append("**%d tests** -- %d passed, %d failed -- across %d files\n" % (passed + len(failures), passed, len(failures), len(files)))
    text = "\n".join(lines) + "\n"
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    for f in failures:
        print("::error title=failed: %s::%s" % (f, f))
    return 0


if __name__ == "__main__":
    sys.exit(main())
