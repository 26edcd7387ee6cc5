#!/bin/bash
# Two 4-GPU items that must run at once (each waits for the other) and each bind
# 127.0.0.1:$PET_MASTER_PORT as torchrun's rendezvous store does: two items given
# one port fail the bind (exit 3). $TE_FIXTURE_DIR holds their ready files.
DIR=$(dirname "$0")
. "$DIR/_utils.sh"
setup_once
for tag in rdv.a rdv.b; do
    check_test_filter "$tag" || continue
    if [ -n "$TE_CI_LIST_ITEMS" ]; then echo "TE_CI_ITEM $tag 4"; continue; fi
    fixture_trace "$tag"
    exec python3 - "$tag" <<'PY'
import os, socket, sys, time
tag = sys.argv[1]
if os.environ.get("JUNITXML_PREFIX"):  # its JUnit file, as pytest_run writes it
    with open(os.environ["JUNITXML_PREFIX"] + tag + os.environ.get("JUNITXML_SUFFIX", ""), "w") as f:
        f.write('<testsuite name="rdv" tests="1"><testcase classname="rdv" name="%s"/></testsuite>\n' % tag)
other = "rdv.b" if tag == "rdv.a" else "rdv.a"
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(os.environ["PET_MASTER_PORT"])))
    s.listen(1)
except OSError as e:
    print(f"{tag}: bind {os.environ['PET_MASTER_PORT']}: {e}")
    sys.exit(3)
d = os.environ["TE_FIXTURE_DIR"]
open(os.path.join(d, "ready." + tag), "w").close()
for _ in range(1200):
    if os.path.exists(os.path.join(d, "ready." + other)):
        print(f"{tag}: met {other}")
        sys.exit(0)
    time.sleep(0.05)
print(f"{tag}: {other} never came")
sys.exit(4)
PY
done
