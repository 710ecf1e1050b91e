#!/usr/bin/env python3
"""Reference numbers for core/quality (agreement, statistics, calibration), written beside the fixtures.

    "$(infra/reference-tools.sh path)" tools/reference/stats_reference.py [--generate]

Reads core/quality/fixtures/{agreement,stats,calibration}.input.json and writes the matching
`.reference.json` files, each number from the reference implementation named beside it:

- agreement: each case's annotations are matched and grouped into units HERE, from the raw
  annotations, by the rule documented in core/quality/agreement.ts (per frame and annotator pair an
  optimal assignment, scipy.optimize.linear_sum_assignment, maximising IoU + 1e-9 per same-class pair
  over pairs with IoU >= iou_thr; units by constrained single linkage over those matches, strongest
  first) — so a bug in the TypeScript unit-building shows up as a difference. Then Cohen's kappa per
  pair (sklearn.metrics.cohen_kappa_score), Fleiss' kappa over units rated by every annotator
  (statsmodels fleiss_kappa on aggregate_raters), Krippendorff's alpha over all units
  (krippendorff.alpha, nominal), mean IoUs, unmatched counts, the units themselves (as member
  descriptions, so interchangeable identical objects compare equal), and for the crowded case how
  many frame pairs a greedy matching gets differently (it must be some, or the case proves nothing).
- stats: statsmodels proportion_confint(method='wilson'); scipy.stats.wilcoxon(zero_method='wilcox',
  correction=False, method='asymptotic' — scipy's current name for 'approx'); scipy.special ndtri and
  erfc on a grid; numpy np.percentile(method='linear') of the means of OUR resamples (the index matrix
  drawn by core/quality/stats.ts resampleIndices, stored in the input); scipy.stats.bootstrap(
  method='percentile') with a large n_resamples and the Monte-Carlo spread of its bounds over 30 seeds
  (the tolerance the test allows between its interval and ours); scipy.stats.permutation_test exact
  p-values of the paired sign-flip test.
- calibration: per class (>= 25 verdicts) and global, T from scipy.optimize.minimize_scalar(
  method='bounded') on the same NLL, sklearn IsotonicRegression(increasing=True, y_min=0, y_max=1,
  out_of_bounds='clip') breakpoints and predictions, and ECE / reliability tables by numpy before and
  after calibration.

The unit tests compare core/quality against these stored numbers and never run Python. --generate
first rewrites the inputs from the seeded generators below (deterministic); it also runs
`npx tsx` once to store our bootstrap resample indices. Without it the committed inputs are read.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import krippendorff
import numpy as np
from scipy import optimize, special, stats
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "core" / "quality" / "fixtures"
CLASS_TIE_WEIGHT = 1e-9


def nan_to_none(x):
    x = float(x)
    return None if math.isnan(x) else x


def write(name: str, data) -> None:
    (FIXTURES / name).write_text(json.dumps(data) + "\n")
    # The repository's prettier lays the JSON out (`npm run lint` checks it).
    subprocess.run(["npx", "prettier", "--log-level", "warn", "--write", str(FIXTURES / name)], cwd=ROOT, check=True)


def read(name: str):
    return json.loads((FIXTURES / name).read_text())


def versions() -> dict:
    return {p: version(p) for p in ["numpy", "scipy", "scikit-learn", "statsmodels", "krippendorff"]}


# ---------------------------------------------------------------- agreement inputs


def ann(annotator, frame, cls, box):
    # + 0.0 turns rounding's -0.0 into 0.0, which JSON and both languages print alike.
    return {"annotator": annotator, "frame_id": frame, "class": cls, "bbox": [float(v) + 0.0 for v in box]}


def case_three_annotators():
    """3 annotators, missing objects, class disagreements, and a transitive conflict that must split."""
    a = []
    # f1: three objects, C misses one, B calls the truck a bus.
    for who, dx, cls2 in [("ann_a", 0, "truck"), ("ann_b", 1, "bus"), ("ann_c", -1, "truck")]:
        a.append(ann(who, "f1", "car", [10 + dx, 10, 60 + dx, 50]))
        a.append(ann(who, "f1", cls2, [100, 20 + dx, 180, 90 + dx]))
        if who != "ann_c":
            a.append(ann(who, "f1", "pedestrian", [200 + dx, 30, 220 + dx, 80]))
    # f2: A and B agree, C draws a false positive elsewhere and disagrees on class.
    a.append(ann("ann_a", "f2", "car", [0, 0, 40, 40]))
    a.append(ann("ann_b", "f2", "car", [2, 1, 41, 40]))
    a.append(ann("ann_c", "f2", "truck", [1, 0, 40, 41]))
    a.append(ann("ann_c", "f2", "cyclist", [300, 300, 320, 340]))
    # f3: the chain A-B (0.82), B-c2 (0.67), A-c1 (0.60): one component holding two of C's objects;
    # the weakest link (A-c1) is cut, leaving {a1, b1, c2} and {c1}.
    a.append(ann("ann_a", "f3", "car", [0, 0, 10, 10]))
    a.append(ann("ann_b", "f3", "car", [1, 0, 11, 10]))
    a.append(ann("ann_c", "f3", "car", [-2.5, 0, 7.5, 10]))
    a.append(ann("ann_c", "f3", "van", [3, 0, 13, 10]))
    # f4: only B annotated anything.
    a.append(ann("ann_b", "f4", "pedestrian", [5, 5, 15, 35]))
    return {"annotations": a, "iou_thr": 0.5}


def case_crowded(rng):
    """4 annotators on crowded frames (many overlapping boxes) where greedy and optimal matching differ."""
    classes = ["car", "truck", "van"]
    out = []
    for f in range(12):
        truth = []
        x = 0.0
        for _ in range(8):
            x += rng.uniform(4, 8)
            w = rng.uniform(12, 18)
            truth.append(([x, 0.0, x + w, rng.uniform(18, 24)], classes[int(rng.integers(0, 3))]))
        for who in ["r1", "r2", "r3", "r4"]:
            for box, cls in truth:
                if rng.random() < 0.1:
                    continue
                j = rng.normal(0, 2.2, 4)
                b = [round(box[0] + j[0], 1), round(box[1] + j[1], 1), round(box[2] + j[2], 1), round(box[3] + j[3], 1)]
                if b[2] <= b[0] or b[3] <= b[1]:
                    continue
                label = cls if rng.random() > 0.15 else classes[int(rng.integers(0, 3))]
                out.append(ann(who, f"c{f:02d}", label, b))
    return {"annotations": out, "iou_thr": 0.5}


def case_ties():
    """Exact ties: identical boxes of different classes, a box halfway between two, interchangeable copies."""
    a = []
    # t1: A drew one box twice (car, truck); B says truck, C car. Class agreement decides the tie.
    a += [ann("A", "t1", "car", [0, 0, 10, 10]), ann("A", "t1", "truck", [0, 0, 10, 10])]
    a += [ann("B", "t1", "truck", [0, 0, 10, 10]), ann("C", "t1", "car", [0, 0, 10, 10])]
    # t2: B's box halfway between two of A's (IoU 1/3 with each; iou_thr 0.3): B's class picks.
    a += [ann("A", "t2", "car", [0, 0, 10, 10]), ann("A", "t2", "bus", [10, 0, 20, 10])]
    a += [ann("B", "t2", "bus", [5, 0, 15, 10]), ann("C", "t2", "car", [0, 0, 10, 10])]
    # t3: two identical copies each; whichever copy is matched, the figures are the same.
    a += [ann("A", "t3", "car", [50, 50, 90, 80]), ann("A", "t3", "car", [50, 50, 90, 80])]
    a += [ann("B", "t3", "car", [50, 50, 90, 80]), ann("B", "t3", "van", [50, 50, 90, 80])]
    a += [ann("C", "t3", "van", [51, 50, 90, 80])]
    # t4: the same IoU for two candidate partners of the same class.
    a += [ann("A", "t4", "car", [0, 0, 10, 10]), ann("B", "t4", "car", [-2, 0, 8, 10]), ann("B", "t4", "car", [2, 0, 12, 10])]
    a += [ann("C", "t4", "car", [0, 0, 10, 10])]
    return {"annotations": a, "iou_thr": 0.3}


def case_degenerate():
    """One class between A and B (kappa undefined), D matches nobody (no matches, no complete unit)."""
    a = []
    for f in range(3):
        a.append(ann("A", f"d{f}", "car", [0, 0, 20, 20]))
        a.append(ann("B", f"d{f}", "car", [1, 1, 21, 21]))
        a.append(ann("D", f"d{f}", "truck", [500, 500, 520, 520 + f]))
    return {"annotations": a, "iou_thr": 0.5}


def case_random(rng):
    """40 frames, 4 annotators, numeric classes: jitter, misses, extra boxes, class noise."""
    out = []
    for f in range(40):
        n = int(rng.integers(2, 9))
        truth = []
        for _ in range(n):
            x, y = rng.uniform(0, 600), rng.uniform(0, 300)
            truth.append(([x, y, x + rng.uniform(20, 120), y + rng.uniform(20, 90)], int(rng.integers(0, 5))))
        for who in ["w", "x", "y", "z"]:
            for box, cls in truth:
                if rng.random() < 0.12:
                    continue
                j = rng.normal(0, 4, 4)
                label = cls if rng.random() > 0.2 else int(rng.integers(0, 5))
                out.append(ann(who, f"r{f:02d}", label, [round(box[k] + j[k], 2) for k in range(4)]))
            if rng.random() < 0.2:
                x, y = rng.uniform(0, 600), rng.uniform(0, 300)
                out.append(ann(who, f"r{f:02d}", int(rng.integers(0, 5)), [round(x, 2), round(y, 2), round(x + 30, 2), round(y + 30, 2)]))
    return {"annotations": out, "iou_thr": 0.5}


# ---------------------------------------------------------------- agreement reference


def iou(a, b):
    # The same operations in the same order as core/geometry/boxes.ts, so thresholds fall alike.
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    area = lambda r: max(0.0, r[2] - r[0]) * max(0.0, r[3] - r[1])
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0


def label_key(c):
    return (0, c, "") if isinstance(c, (int, float)) else (1, 0, c)


def match_pair(anns, rows, cols, thr):
    ious = np.array([[iou(anns[r]["bbox"], anns[c]["bbox"]) for c in cols] for r in rows])
    if not (ious >= thr).any():
        return []
    same = np.array([[anns[r]["class"] == anns[c]["class"] for c in cols] for r in rows])
    weight = np.where(ious >= thr, ious + CLASS_TIE_WEIGHT * same, 0.0)
    ri, ci = optimize.linear_sum_assignment(weight, maximize=True)
    return [(int(i), int(j), float(ious[i, j])) for i, j in zip(ri, ci) if ious[i, j] >= thr]


def greedy_pair(anns, rows, cols, thr):
    cand = sorted(
        ((iou(anns[r]["bbox"], anns[c]["bbox"]), i, j) for i, r in enumerate(rows) for j, c in enumerate(cols)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_r, used_c, out = set(), set(), []
    for v, i, j in cand:
        if v >= thr and i not in used_r and j not in used_c:
            used_r.add(i), used_c.add(j), out.append((i, j))
    return sorted(out)


def describe(a):
    # The test builds the same string: numbers to 6 decimals (JavaScript toFixed(6)).
    return f"{a['annotator']}|{a['class']}|{','.join(f'{v:.6f}' for v in a['bbox'])}"


def agreement_reference(case):
    anns, thr = case["annotations"], case["iou_thr"]
    annotators = sorted({a["annotator"] for a in anns})
    k = len(annotators)
    frames = {}
    for i, a in enumerate(anns):
        frames.setdefault(a["frame_id"], [[] for _ in annotators])[annotators.index(a["annotator"])].append(i)
    pair_list = [(p, q) for p in range(k) for q in range(p + 1, k)]
    pair_matches = {pq: [] for pq in pair_list}
    units, greedy_differs = [], 0
    for fid in sorted(frames):
        lists = frames[fid]
        for lst in lists:
            lst.sort(key=lambda i: (*anns[i]["bbox"], *label_key(anns[i]["class"]), i))
        edges = []
        for p, q in pair_list:
            if not lists[p] or not lists[q]:
                continue
            m = match_pair(anns, lists[p], lists[q], thr)
            if sorted((i, j) for i, j, _ in m) != greedy_pair(anns, lists[p], lists[q], thr):
                greedy_differs += 1
            for i, j, v in m:
                pair_matches[(p, q)].append((lists[p][i], lists[q][j], v))
                edges.append((p, i, q, j, v))
        # Constrained single linkage: strongest match first, never two objects of one annotator.
        node = {}
        for p, lst in enumerate(lists):
            for r in range(len(lst)):
                node[(p, r)] = len(node)
        parent = list(range(len(node)))
        holds = [{p} for (p, _r) in node]

        def find(x):
            while parent[x] != x:
                x = parent[x]
            return x

        for p, i, q, j, _v in sorted(edges, key=lambda e: (-e[4], e[0], e[1], e[2], e[3])):
            u, w = find(node[(p, i)]), find(node[(q, j)])
            if u == w or holds[u] & holds[w]:
                continue
            parent[u] = w
            holds[w] |= holds[u]
        groups = {}
        for (p, r), nid in node.items():
            groups.setdefault(find(nid), []).append(lists[p][r])
        units += [{"frame_id": fid, "members": sorted(g, key=lambda i: annotators.index(anns[i]["annotator"]))} for g in groups.values()]

    labels = sorted({a["class"] for a in anns}, key=label_key)
    code = {c: n for n, c in enumerate(labels)}
    objects = {name: sum(a["annotator"] == name for a in anns) for name in annotators}
    matched = set()
    pairs, all_ious = [], []
    for p, q in pair_list:
        m = pair_matches[(p, q)]
        ya = [anns[i]["class"] for i, _, _ in m]
        yb = [anns[j]["class"] for _, j, _ in m]
        ious = [v for _, _, v in m]
        all_ious += ious
        matched |= {i for i, _, _ in m} | {j for _, j, _ in m}
        kappa = None
        if m:
            # Map to codes so mixed-type labels sort; sklearn's NaN (undefined) becomes null.
            kappa = nan_to_none(cohen_kappa_score([code[c] for c in ya], [code[c] for c in yb]))
        pairs.append(
            {
                "annotators": [annotators[p], annotators[q]],
                "matches": len(m),
                "unmatched": [objects[annotators[p]] - len(m), objects[annotators[q]] - len(m)],
                "observed_agreement": (sum(x == y for x, y in zip(ya, yb)) / len(m)) if m else None,
                "cohen_kappa": kappa,
                "mean_iou": float(np.mean(ious)) if m else None,
            }
        )
    ratings = [[anns[i]["class"] for i in u["members"]] for u in units]
    complete = [r for r in ratings if len(r) == k]
    fleiss = None
    if complete:
        table, _cats = aggregate_raters(np.array([[code[c] for c in r] for r in complete]))
        with np.errstate(divide="ignore", invalid="ignore"):
            fleiss = nan_to_none(fleiss_kappa(table, method="fleiss"))
    reliability = np.full((k, len(units)), np.nan)
    for u_i, u in enumerate(units):
        for i in u["members"]:
            reliability[annotators.index(anns[i]["annotator"]), u_i] = code[anns[i]["class"]]
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            alpha = nan_to_none(krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal"))
    except ValueError:
        alpha = None
    return {
        "counts": {
            "frames": len(frames),
            "annotators": k,
            "objects": len(anns),
            "units": len(units),
            "pairable_units": sum(len(r) >= 2 for r in ratings),
            "complete_units": len(complete),
            "matches": len(all_ious),
        },
        "fleiss_kappa": fleiss,
        "krippendorff_alpha": alpha,
        "mean_iou": float(np.mean(all_ious)) if all_ious else None,
        "pairs": pairs,
        "annotators": [
            {"annotator": n, "objects": objects[n], "unmatched": sum(1 for i, a in enumerate(anns) if a["annotator"] == n and i not in matched)}
            for n in annotators
        ],
        "units": sorted(sorted(describe(anns[i]) for i in u["members"]) for u in units),
        "greedy_differs": greedy_differs,
    }


# ---------------------------------------------------------------- statistics


def our_resample_indices(n: int, n_boot: int, seed: int) -> list[int]:
    script = (
        "import { resampleIndices } from './core/quality/stats';"
        f"process.stdout.write(JSON.stringify(Array.from(resampleIndices({n}, {{ nBoot: {n_boot}, seed: {seed} }}))));"
    )
    out = subprocess.run(["npx", "tsx", "-e", script], cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def stats_inputs(rng):
    def paired(n, scale, shift, tie_round):
        a = np.round(rng.normal(0.6, scale, n), tie_round)
        b = np.round(a - shift + rng.normal(0, scale, n), tie_round)
        return a.tolist(), b.tolist()

    percentile_values = np.round(rng.normal(0.5, 0.2, 12), 4).tolist()
    return {
        "wilson": [[0, 10, 0.05], [10, 10, 0.05], [7, 25, 0.05], [1, 1, 0.05], [50, 200, 0.1], [999, 1000, 0.01], [3, 7, 0.32], [24, 25, 0.05]],
        "ndtri_p": [1e-300, 1e-20, 1e-10, 1e-5, 0.001, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.425, 0.5, 0.6, 0.8, 0.9, 0.975, 0.999, 1 - 1e-12],
        "erfc_x": [-6.0, -3.0, -1.0, -0.5, -0.46875, -0.1, 0.0, 1e-10, 0.1, 0.3, 0.46875, 0.47, 1.0, 2.5, 3.9, 4.0, 4.1, 6.0, 10.0, 20.0, 26.0, 27.0],
        "wilcoxon": [
            {"name": "ties-and-zeros", "a": [0.5, 0.6, 0.7, 0.8, 0.9, 0.55, 0.65, 0.75, 0.85, 0.95, 0.4, 0.3], "b": [0.5, 0.5, 0.6, 0.8, 0.7, 0.6, 0.55, 0.75, 0.8, 0.9, 0.5, 0.35]},
            {"name": "per-image-ap", **dict(zip(["a", "b"], paired(60, 0.1, 0.03, 2)))},
            {"name": "no-difference-mostly", **dict(zip(["a", "b"], paired(25, 0.05, 0.0, 1)))},
            {"name": "all-zero", "a": [0.1, 0.2, 0.3], "b": [0.1, 0.2, 0.3]},
        ],
        "percentile": {"values": percentile_values, "n_boot": 50, "seed": 7, "alpha": 0.05, "indices": our_resample_indices(12, 50, 7)},
        "bootstrap": {"values": np.round(rng.lognormal(0, 0.6, 40), 4).tolist(), "alpha": 0.05, "n_boot": 20000, "seed": 2024},
        "permutation_exact": {**dict(zip(["a", "b"], paired(10, 0.08, 0.04, 3))), "n_perm": 10000, "seed": 12345},
        "permutation_mc": {**dict(zip(["a", "b"], paired(16, 0.08, 0.03, 3))), "n_perm": 20000, "seed": 99},
    }


def stats_reference(inp):
    wilson = []
    for count, n, alpha in inp["wilson"]:
        lo, hi = proportion_confint(count, n, alpha=alpha, method="wilson")
        wilson.append({"successes": count, "n": n, "alpha": alpha, "lo": float(lo), "hi": float(hi)})
    wilcoxon = []
    for case in inp["wilcoxon"]:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = stats.wilcoxon(case["a"], case["b"], zero_method="wilcox", correction=False, method="asymptotic")
        wilcoxon.append({"name": case["name"], "statistic": float(r.statistic), "p_value": nan_to_none(r.pvalue), "zstatistic": nan_to_none(r.zstatistic)})

    pc = inp["percentile"]
    values = np.array(pc["values"])
    idx = np.array(pc["indices"]).reshape(pc["n_boot"], len(values))
    means = values[idx].mean(axis=1)
    a = pc["alpha"]
    percentile = {
        "method": "linear",
        "lo": float(np.percentile(means, 100 * a / 2, method="linear")),
        "hi": float(np.percentile(means, 100 * (1 - a / 2), method="linear")),
        "mean": float(values.mean()),
    }

    bs = inp["bootstrap"]
    x = np.array(bs["values"])

    def scipy_ci(seed):
        r = stats.bootstrap((x,), np.mean, n_resamples=bs["n_boot"], confidence_level=1 - bs["alpha"], method="percentile", rng=np.random.default_rng(seed))
        return r.confidence_interval.low, r.confidence_interval.high

    lo, hi = scipy_ci(0)
    spread = np.array([scipy_ci(s) for s in range(1, 31)])
    sd_lo, sd_hi = spread.std(axis=0, ddof=1)
    bootstrap = {
        "lo": float(lo),
        "hi": float(hi),
        "mc_sd_lo": float(sd_lo),
        "mc_sd_hi": float(sd_hi),
        # Two independent Monte-Carlo estimates differ with sd sqrt(2)·sd; 4 of those is the allowance.
        "tol_lo": float(4 * math.sqrt(2) * sd_lo),
        "tol_hi": float(4 * math.sqrt(2) * sd_hi),
    }

    def exact_p(a, b):
        d = np.array(a) - np.array(b)
        r = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
        return float(r.pvalue)

    pe, pm = inp["permutation_exact"], inp["permutation_mc"]
    p_mc_exact = exact_p(pm["a"], pm["b"])
    return {
        "versions": versions(),
        "wilson": wilson,
        "ndtri": [float(special.ndtri(p)) for p in inp["ndtri_p"]],
        "erfc": [float(special.erfc(v)) for v in inp["erfc_x"]],
        "wilcoxon": wilcoxon,
        "percentile": percentile,
        "bootstrap": bootstrap,
        "permutation_exact": {"p_value": exact_p(pe["a"], pe["b"])},
        "permutation_mc": {
            "exact_p_value": p_mc_exact,
            # Binomial sd of a Monte-Carlo p over n_perm flips, times 4, plus the +1 of the estimator.
            "tol": 4 * math.sqrt(p_mc_exact * (1 - p_mc_exact) / pm["n_perm"]) + 1 / (pm["n_perm"] + 1),
        },
    }


# ---------------------------------------------------------------- calibration

T_BOUNDS = (0.01, 100.0)
CONF_CLIP = 1e-6
EDGES = [k / 10 for k in range(11)]


def calibration_inputs(rng):
    samples = []

    def draw(class_id, n, true_t, conf_round):
        conf = np.round(rng.beta(5, 2, n), conf_round)
        z = special.logit(np.clip(conf, CONF_CLIP, 1 - CONF_CLIP))
        right = rng.random(n) < special.expit(z / true_t)
        samples.extend({"class_id": class_id, "conf": float(c), "correct": bool(r)} for c, r in zip(conf, right))

    draw(0, 300, 2.0, 3)  # overconfident, ties from rounding
    draw(1, 80, 0.6, 2)  # underconfident, many ties
    draw(2, 12, 1.0, 3)  # too few verdicts: global fallback
    draw(7, 40, 1.5, 2)
    # Edges: exact 0 and 1, confidences on bin edges.
    for c, r in [(0.0, False), (1.0, True), (1.0, False), (0.3, True), (0.7, False), (0.9, True), (0.1, False), (0.5, True)]:
        samples.append({"class_id": 0, "conf": c, "correct": r})
    return {"samples": samples, "probe": [0.0, 0.001, 0.05, 0.1, 0.3, 0.333, 0.5, 0.62, 0.7, 0.85, 0.9, 0.95, 0.999, 1.0]}


def nll(t, z, y):
    u = z / t
    return float(np.sum(np.where(y, np.logaddexp(0, -u), np.logaddexp(0, u))))


def fit_temperature(conf, y):
    z = special.logit(np.clip(conf, CONF_CLIP, 1 - CONF_CLIP))
    r = optimize.minimize_scalar(lambda t: nll(t, z, y), bounds=T_BOUNDS, method="bounded", options={"xatol": 1e-10})
    return float(r.x)


def apply_temperature(t, conf):
    return special.expit(special.logit(np.clip(conf, CONF_CLIP, 1 - CONF_CLIP)) / t)


def reliability(conf, y):
    conf, y = np.asarray(conf, float), np.asarray(y, bool)
    k = np.clip(np.searchsorted(EDGES, conf, side="right") - 1, 0, 9)
    bins, ece = [], 0.0
    for b in range(10):
        sel = k == b
        n = int(sel.sum())
        mc = float(conf[sel].mean()) if n else None
        acc = float(y[sel].mean()) if n else None
        if n:
            ece += n / len(conf) * abs(acc - mc)
        bins.append({"lo": EDGES[b], "hi": EDGES[b + 1], "count": n, "mean_conf": mc, "accuracy": acc})
    return {"ece": ece, "bins": bins}


def calibration_reference(inp):
    s = inp["samples"]
    conf = np.array([x["conf"] for x in s])
    y = np.array([x["correct"] for x in s])
    cls = np.array([x["class_id"] for x in s])
    probe = np.array(inp["probe"])

    def fits(c, yy):
        iso = IsotonicRegression(increasing=True, y_min=0, y_max=1, out_of_bounds="clip").fit(c, yy.astype(float))
        return {"temperature": fit_temperature(c, yy), "iso": iso}

    glob = fits(conf, y)
    per_class = {}
    for c in sorted(set(cls.tolist())):
        sel = cls == c
        per_class[c] = fits(conf[sel], y[sel]) if sel.sum() >= 25 else None

    def used(c):
        return per_class[c] or glob

    after_t = np.array([apply_temperature(used(c)["temperature"], v) for c, v in zip(cls, conf)])
    after_i = np.array([used(c)["iso"].predict([v])[0] for c, v in zip(cls, conf)])

    def describe_fit(f):
        return {
            "temperature": f["temperature"],
            "isotonic": {"x": f["iso"].X_thresholds_.tolist(), "y": f["iso"].y_thresholds_.tolist()},
            "isotonic_probe": f["iso"].predict(probe).tolist(),
            "temperature_probe": apply_temperature(f["temperature"], probe).tolist(),
        }

    classes = []
    for c in sorted(per_class):
        sel = cls == c
        classes.append(
            {
                "class_id": c,
                "samples": int(sel.sum()),
                "source": "class" if per_class[c] else "global",
                "fit": describe_fit(per_class[c]) if per_class[c] else None,
                "ece_before": reliability(conf[sel], y[sel])["ece"],
                "ece_after": {"temperature": reliability(after_t[sel], y[sel])["ece"], "isotonic": reliability(after_i[sel], y[sel])["ece"]},
            }
        )
    return {
        "versions": versions(),
        "global": describe_fit(glob),
        "classes": classes,
        "before": reliability(conf, y),
        "after": {"temperature": reliability(after_t, y), "isotonic": reliability(after_i, y)},
    }


# ---------------------------------------------------------------- main


def main() -> None:
    if "--generate" in sys.argv:
        rng = np.random.default_rng(20240611)
        write(
            "agreement.input.json",
            {
                "three-annotators": case_three_annotators(),
                "crowded": case_crowded(rng),
                "ties": case_ties(),
                "degenerate": case_degenerate(),
                "random": case_random(rng),
            },
        )
        write("stats.input.json", stats_inputs(rng))
        write("calibration.input.json", calibration_inputs(rng))
    cases = read("agreement.input.json")
    refs = {name: agreement_reference(case) for name, case in cases.items()}
    assert refs["crowded"]["greedy_differs"] > 0, "the crowded case must have frames where greedy matching differs"
    write("agreement.reference.json", {"versions": versions(), "cases": refs})
    write("stats.reference.json", stats_reference(read("stats.input.json")))
    write("calibration.reference.json", calibration_reference(read("calibration.input.json")))


if __name__ == "__main__":
    main()
