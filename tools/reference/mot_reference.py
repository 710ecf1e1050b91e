#!/usr/bin/env python3
"""Reference numbers for core/metrics/mot from py-motmetrics and TrackEval, written beside the fixtures.

    "$(tools/reference/mot-tools.sh path)" tools/reference/mot_reference.py [--generate]

--generate first rewrites the inputs under core/metrics/mot/fixtures/:

- `tud-campus.gt.json`, `tud-campus.test.json`, `tud-stadtmitte.gt.json`, `tud-stadtmitte.test.json`:
  the MOT15 TUD sequences' ground truth and the tracker output that py-motmetrics ships in its wheel
  (motmetrics/data/TUD-*/{gt,test}.txt), rows (frame, id, x, y, w, h) turned into
  {frame, id, box: [x1, y1, x2, y2]} with x2 = x + w, y2 = y + h. Licence: see fixtures/README.md.
- `tud-campus.detections.json`: detections derived from the TUD-Campus ground truth by the seeded
  generator `derive_detections` below (numpy default_rng(SEED)): each box dropped with probability
  DROP; kept boxes jittered (centre by N(0, JITTER * size), width and height scaled by
  N(1, JITTER)), scored high (U(0.6, 1)) or, with probability LOW, low (U(0.15, 0.5), the
  second-stage boxes ByteTrack recovers); per frame, with probability CLUTTER, one false box of a
  random ground-truth box's size at a random place, scored U(0.1, 0.7). No identities.
- `tud-campus.bytetrack.json`: OUR tracker (core/tracking) run on those detections, written by
  `npx tsx tools/reference/mot-track.ts`, so the tracker's MOTA, IDF1 and HOTA are measured by the
  references too.
- `hand-built.json`: small sequences that exercise identity switches, fragments, empty frames,
  ties at the 0.5 IoU threshold and a hypothesis-only sequence.

Then, for every case in CASES, it writes `reference.json`: py-motmetrics' MOTAccumulator fed frame
by frame with 1 - IoU distances (motmetrics.distances.iou_matrix, max_iou 0.5: a pair matches at
IoU >= 0.5) and its metrics (mota, motp, idf1, idp, idr, num_switches, num_false_positives,
num_misses, num_matches, num_objects, num_predictions), and TrackEval's HOTA metric
(trackeval.metrics.HOTA.eval_sequence on box IoUs from TrackEval's own _calculate_box_ious, every
box kept: none of the MOTChallenge distractor preprocessing) with HOTA, DetA, AssA, LocA, DetRe,
DetPr, AssRe, AssPr per alpha and their means. motmetrics reports MOTP as a mean distance
(1 - IoU); ours is the mean IoU, and the test compares 1 - motp.

The unit tests (core/metrics/mot/evaluate.test.ts) compare our numbers with these and never run
Python. The JSON is laid out by the repository's prettier.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

# motmetrics 1.4 calls np.asfarray, which numpy 2 removed; TrackEval 1.3 needs numpy >= 2.3. The
# alias did exactly this.
if not hasattr(np, "asfarray"):
    np.asfarray = lambda a, dtype=float: np.asarray(a, dtype=dtype)  # type: ignore[attr-defined]

import motmetrics as mm  # noqa: E402
from trackeval.datasets._base_dataset import _BaseDataset  # noqa: E402
from trackeval.metrics import HOTA  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "core" / "metrics" / "mot" / "fixtures"
MM_DATA = Path(mm.__file__).resolve().parent / "data"

SEED = 20
DROP = 0.1
JITTER = 0.04
LOW = 0.15
CLUTTER = 0.2

CASES = [
    ("tud-campus-shipped", "tud-campus.gt.json", "tud-campus.test.json"),
    ("tud-stadtmitte-shipped", "tud-stadtmitte.gt.json", "tud-stadtmitte.test.json"),
    ("tud-campus-bytetrack", "tud-campus.gt.json", "tud-campus.bytetrack.json"),
]
HAND_BUILT = "hand-built.json"


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value) + "\n")
    subprocess.run(["npx", "prettier", "--write", "--log-level", "warn", str(path)], cwd=ROOT, check=True)


def read_json(name: str):
    return json.loads((FIXTURES / name).read_text())


# ---------------------------------------------------------------- inputs


def mot_rows(path: Path) -> list[dict]:
    boxes = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        f, i, x, y, w, h = (float(v) for v in line.split(",")[:6])
        boxes.append({"frame": int(f), "id": str(int(i)), "box": [x, y, x + w, y + h]})
    return boxes


def shipped(sequence: str, name: str, what: str) -> dict:
    return {
        "source": f"py-motmetrics {version('motmetrics')} wheel, motmetrics/data/{sequence}/{name}.txt ({what})",
        "boxes": mot_rows(MM_DATA / sequence / f"{name}.txt"),
    }


def derive_detections(gt: list[dict]) -> list[dict]:
    rng = np.random.default_rng(SEED)
    frames = sorted({b["frame"] for b in gt})
    sizes = [(b["box"][2] - b["box"][0], b["box"][3] - b["box"][1]) for b in gt]
    xmax = max(b["box"][2] for b in gt)
    ymax = max(b["box"][3] for b in gt)
    out = []
    for f in frames:
        for b in (b for b in gt if b["frame"] == f):
            if rng.random() < DROP:
                continue
            x1, y1, x2, y2 = b["box"]
            w, h = x2 - x1, y2 - y1
            cx = (x1 + x2) / 2 + rng.normal(0, JITTER * w)
            cy = (y1 + y2) / 2 + rng.normal(0, JITTER * h)
            w *= max(0.5, rng.normal(1, JITTER))
            h *= max(0.5, rng.normal(1, JITTER))
            score = rng.uniform(0.15, 0.5) if rng.random() < LOW else rng.uniform(0.6, 1.0)
            out.append({"frame": f, "box": [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], "score": score})
        if rng.random() < CLUTTER:
            w, h = sizes[int(rng.integers(len(sizes)))]
            x, y = rng.uniform(0, xmax - w), rng.uniform(0, ymax - h)
            out.append({"frame": f, "box": [x, y, x + w, y + h], "score": rng.uniform(0.1, 0.7)})
    return [{**d, "box": [round(v, 3) for v in d["box"]], "score": round(d["score"], 4)} for d in out]


def hand_built() -> dict:
    def box(x, y, w=10.0, h=20.0):
        return [x, y, x + w, y + h]

    # Two objects crossing: the hypothesis swaps their identities at frame 3 (two switches), loses
    # one for frame 4 (a miss, then a fragment with a new id), adds a false box, and one pair sits at
    # IoU 0.5 exactly (x shifted by a third of the width: 2/3 / (4/3) = 0.5).
    gt, hyp = [], []
    for f in range(1, 7):
        gt.append({"frame": f, "id": "a", "box": box(10 + 5 * f, 50)})
        gt.append({"frame": f, "id": "b", "box": box(60 - 5 * f, 52)})
    for f in range(1, 7):
        a, b = box(11 + 5 * f, 50), box(59 - 5 * f, 53)
        if f < 3:
            hyp += [{"frame": f, "id": "1", "box": a}, {"frame": f, "id": "2", "box": b}]
        elif f == 4:
            hyp.append({"frame": f, "id": "2", "box": a})
        else:
            hyp += [
                {"frame": f, "id": "2", "box": a},
                {"frame": f, "id": "1" if f < 5 else "3", "box": b},
            ]
    hyp.append({"frame": 5, "id": "9", "box": box(200, 200)})
    gt.append({"frame": 7, "id": "c", "box": box(100, 100, 30, 30)})
    hyp.append({"frame": 7, "id": "4", "box": box(110, 100, 30, 30)})
    # A frame with ground truth only, and one with a hypothesis only.
    gt.append({"frame": 8, "id": "c", "box": box(100, 100, 30, 30)})
    hyp.append({"frame": 9, "id": "4", "box": box(100, 100, 30, 30)})
    return {
        "cases": [
            {"name": "crossing", "gt": gt, "hyp": hyp},
            {"name": "no-hypothesis", "gt": gt, "hyp": []},
            {"name": "no-ground-truth", "gt": [], "hyp": hyp},
        ]
    }


def generate() -> None:
    for seq, stem in (("TUD-Campus", "tud-campus"), ("TUD-Stadtmitte", "tud-stadtmitte")):
        write_json(FIXTURES / f"{stem}.gt.json", shipped(seq, "gt", "ground truth"))
        write_json(FIXTURES / f"{stem}.test.json", shipped(seq, "test", "a tracker's output shipped with it"))
    gt = read_json("tud-campus.gt.json")["boxes"]
    write_json(
        FIXTURES / "tud-campus.detections.json",
        {
            "source": f"tools/reference/mot_reference.py derive_detections(seed {SEED}, drop {DROP}, jitter {JITTER}, low {LOW}, clutter {CLUTTER}) from tud-campus.gt.json",
            "detections": derive_detections(gt),
        },
    )
    write_json(FIXTURES / HAND_BUILT, hand_built())
    subprocess.run(["npx", "tsx", "tools/reference/mot-track.ts"], cwd=ROOT, check=True)


# ---------------------------------------------------------------- references


def by_frame(boxes: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for b in boxes:
        out.setdefault(b["frame"], []).append(b)
    return out


def xywh(boxes: list[dict]) -> np.ndarray:
    return np.array([[b["box"][0], b["box"][1], b["box"][2] - b["box"][0], b["box"][3] - b["box"][1]] for b in boxes])


def motmetrics_numbers(gt: list[dict], hyp: list[dict]) -> dict:
    acc = mm.MOTAccumulator(auto_id=False)
    g, h = by_frame(gt), by_frame(hyp)
    # py-motmetrics keeps identities as floats: each id is fed as its index in sorted order.
    gid = {i: k for k, i in enumerate(sorted({b["id"] for b in gt}))}
    hid = {i: k for k, i in enumerate(sorted({b["id"] for b in hyp}))}
    for f in sorted(set(g) | set(h)):
        gf, hf = g.get(f, []), h.get(f, [])
        dists = mm.distances.iou_matrix(xywh(gf), xywh(hf), max_iou=0.5) if gf and hf else np.empty((len(gf), len(hf)))
        acc.update([gid[b["id"]] for b in gf], [hid[b["id"]] for b in hf], dists, frameid=f)
    names = [
        "mota",
        "motp",
        "idf1",
        "idp",
        "idr",
        "num_switches",
        "num_false_positives",
        "num_misses",
        "num_matches",
        "num_objects",
        "num_predictions",
        "num_unique_objects",
    ]
    summary = mm.metrics.create().compute(acc, metrics=names, name="case")
    # Without ground truth motmetrics says MOTA -inf; ours is null, as JSON must be.
    return {n: (float(v) if np.isfinite(v) else None) for n, v in ((n, summary[n].iloc[0]) for n in names)}


def trackeval_numbers(gt: list[dict], hyp: list[dict]) -> dict:
    g, h = by_frame(gt), by_frame(hyp)
    frames = sorted(set(g) | set(h))
    gt_ids = {i: k for k, i in enumerate(sorted({b["id"] for b in gt}))}
    hyp_ids = {i: k for k, i in enumerate(sorted({b["id"] for b in hyp}))}
    data = {
        "num_timesteps": len(frames),
        "num_gt_ids": len(gt_ids),
        "num_tracker_ids": len(hyp_ids),
        "num_gt_dets": len(gt),
        "num_tracker_dets": len(hyp),
        "gt_ids": [],
        "tracker_ids": [],
        "similarity_scores": [],
    }
    for f in frames:
        gf, hf = g.get(f, []), h.get(f, [])
        data["gt_ids"].append(np.array([gt_ids[b["id"]] for b in gf], dtype=int))
        data["tracker_ids"].append(np.array([hyp_ids[b["id"]] for b in hf], dtype=int))
        sim = (
            _BaseDataset._calculate_box_ious(
                np.array([b["box"] for b in gf], dtype=float), np.array([b["box"] for b in hf], dtype=float), box_format="x0y0x1y1"
            )
            if gf and hf
            else np.zeros((len(gf), len(hf)))
        )
        data["similarity_scores"].append(sim)
    res = HOTA().eval_sequence(data)
    fields = ["HOTA", "DetA", "AssA", "LocA", "DetRe", "DetPr", "AssRe", "AssPr"]
    return {
        "alphas": [float(a) for a in HOTA().array_labels],
        **{f: float(np.mean(res[f])) for f in fields},
        "perAlpha": {f: [float(v) for v in res[f]] for f in fields + ["HOTA_TP", "HOTA_FN", "HOTA_FP"]},
    }


def reference(name: str, gt: list[dict], hyp: list[dict]) -> dict:
    return {"name": name, "motmetrics": motmetrics_numbers(gt, hyp), "trackeval": trackeval_numbers(gt, hyp)}


def main() -> None:
    if "--generate" in sys.argv:
        generate()
    cases = [
        {"gtFile": gt_file, "hypFile": hyp_file, **reference(name, read_json(gt_file)["boxes"], read_json(hyp_file)["boxes"])}
        for name, gt_file, hyp_file in CASES
    ]
    cases += [
        {"handBuilt": c["name"], **reference(f"hand-built-{c['name']}", c["gt"], c["hyp"])} for c in read_json(HAND_BUILT)["cases"]
    ]
    write_json(
        FIXTURES / "reference.json",
        {"versions": {"motmetrics": version("motmetrics"), "trackeval": version("trackeval")}, "cases": cases},
    )
    for c in cases:
        m, t = c["motmetrics"], c["trackeval"]
        print(f"{c['name']}: MOTA {m['mota']} MOTP(1-IoU) {m['motp']} IDF1 {m['idf1']} HOTA {t['HOTA']:.4f}")


if __name__ == "__main__":
    main()
