# Writes te-l3-core-split.weights: TE's level-3 gfx950 table (../../simulate/te-gfx950-l3.weights)
# with the opaque `core` item (1251 s) replaced by the items of docs/adapters.md's three
# ctest suites (split=base, -j4 kept inside each item): 180 non-GEMM base names (60 % of
# core's time) and 60 per GEMM back-end (20 % each), durations lognormal (sigma given),
# scaled so that they add up to 1251 s exactly as today's wall of core, or FACTOR times
# that (FACTOR 4: every test alone on a GPU, none of -j4's sharing left). Usage:
#   python3 gen.py SIGMA SEED [FACTOR] > FILE
import math, random, sys

sigma, seed = float(sys.argv[1]), int(sys.argv[2])
factor = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
rng = random.Random(seed)
src = "../../simulate/te-gfx950-l3.weights"
rows = [l.split() for l in open(src) if l.strip() and not l.startswith("#")]
core = dict(rows)["core"]
total = float(core) * factor
split = [("core", 180, 0.60), ("core-hipblaslt", 60, 0.20), ("core-rocblas", 60, 0.20)]
print(f"# {src} with core ({core} s) split into 300 ctest items of {total:g} s, lognormal sigma={sigma} seed={seed} (gen.py)")
for k, w in rows:
    if k != "core":
        print(k, w)
for label, n, share in split:
    raw = [math.exp(rng.gauss(0, sigma)) for _ in range(n)]
    scale = total * share / sum(raw)
    ws = [max(0.1, round(r * scale, 1)) for r in raw]
    top = ws.index(max(ws))
    ws[top] = round(ws[top] + total * share - sum(ws), 1)  # the share exact after rounding
    for i, w in enumerate(ws):
        print(f"{label}/OperatorTest/Suite{i:03d}.Test {w}")
