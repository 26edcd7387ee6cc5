# The pytest adapter's listing (docs/adapters.md): pytest --collect-only, run in
# process so that what plain -q output cannot say comes back exactly: the rootdir the
# node ids are relative to, the directory pytest was started in, and which
# arguments pytest itself took for path operands. Printed after pytest returns,
# as the last line: "<marker> <json>". Exit 97: pytest cannot be imported.
import json
import os
import sys

try:
    import pytest
except Exception as e:  # ImportError, or a broken install
    sys.stderr.write("sgpu-queue: %s cannot import pytest: %s\n" % (sys.executable, e))
    sys.exit(97)


class Probe:
    record = None
    # Files that failed to collect (an import error), with what pytest said: with
    # --continue-on-collection-errors each becomes an item of its own, which fails
    # with its traceback while the other files run.
    errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            Probe.errors.append({"nodeid": report.nodeid, "longrepr": str(report.longreprtext)[-4000:]})

    def pytest_collection_finish(self, session):
        config = session.config
        rootdir = getattr(config, "rootpath", None) or config.rootdir
        params = getattr(config, "invocation_params", None)
        start = params.dir if params is not None else os.getcwd()
        Probe.record = {
            "rootdir": str(rootdir),
            "invocation_dir": str(start),
            "operands": [str(a) for a in (config.option.file_or_dir or [])],
            "items": [item.nodeid for item in session.items],
            "errors": Probe.errors,
        }


rc = int(pytest.main(sys.argv[1:], plugins=[Probe()]))
if Probe.record is not None:
    sys.stdout.write("\nsgpu-queue-pytest-collection " + json.dumps(Probe.record) + "\n")
    sys.stdout.flush()
sys.exit(rc)
