#!/usr/bin/env python3
"""Reference numbers for core/metrics/coco from pycocotools, written beside the committed fixtures.

    "$(infra/reference-tools.sh path)" tools/reference/coco_reference.py [--generate]

For each evaluation case `core/metrics/coco/fixtures/<case>.input.json` (COCO images, categories,
annotations and detections, plus the iouType) it runs pycocotools' COCOeval (evaluate, accumulate,
summarize) and writes `<case>.reference.json`: the twelve stats, per-category AP (IoU .50:.95),
AP50 and AR@100 read from eval['precision'] / eval['recall'] the usual way (area all, maxDets 100,
mean over entries > -1, -1 when none), the per-(threshold, category, area, maxDets) mean precision
and recall, and for small cases the whole precision array. For `masks.input.json` it writes what
pycocotools' mask API makes of each shape (runs, compressed string, area, box) and IoU matrices.

The unit tests compare core/metrics/coco against these stored numbers and never run Python. The
JSON is laid out by the repository's prettier (needs `npx`, run from anywhere in the checkout).
--generate first rewrites the inputs from the seeded generators below (deterministic: the same
inputs every run); without it the committed inputs are read as they are.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import subprocess
import sys
from pathlib import Path
from importlib.metadata import version

import numpy as np
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "core" / "metrics" / "coco" / "fixtures"
# Cases small enough to store the whole [T][R][K][A][M] precision array.
FULL_PRECISION_LIMIT = 50_000


# ---------------------------------------------------------------- evaluation references


def run_cocoeval(case: dict) -> COCOeval:
    gt = COCO()
    gt.dataset = {
        "images": copy.deepcopy(case["images"]),
        "categories": copy.deepcopy(case["categories"]),
        "annotations": copy.deepcopy(case["annotations"]),
    }
    with contextlib.redirect_stdout(io.StringIO()):
        gt.createIndex()
        dt = gt.loadRes(copy.deepcopy(case["detections"]))
        ev = COCOeval(gt, dt, case["iouType"])
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def mean_valid(values: np.ndarray) -> float:
    valid = values[values > -1]
    return float(np.mean(valid)) if valid.size else -1.0


def reference_for(name: str, case: dict) -> dict:
    ev = run_cocoeval(case)
    precision = ev.eval["precision"]  # [T, R, K, A, M]
    recall = ev.eval["recall"]  # [T, K, A, M]
    per_category = []
    for k, category_id in enumerate(ev.params.catIds):
        per_category.append(
            {
                "categoryId": int(category_id),
                "ap": round(mean_valid(precision[:, :, k, 0, -1]), 10),
                "ap50": round(mean_valid(precision[0, :, k, 0, -1]), 10),
                "ar100": round(mean_valid(recall[:, k, 0, -1]), 10),
            }
        )
    # Mean over recall thresholds of each precision row, -1 rows staying -1.
    ap_by_setting = np.where(precision[:, 0] > -1, precision.mean(axis=1), -1.0)
    reference = {
        "case": name,
        "iouType": case["iouType"],
        "producedBy": f"pycocotools {version('pycocotools')} COCOeval, tools/reference/coco_reference.py",
        "counts": {"T": precision.shape[0], "R": precision.shape[1], "K": precision.shape[2], "A": precision.shape[3], "M": precision.shape[4]},
        "iouThresholds": [float(x) for x in ev.params.iouThrs],
        "recallThresholds": [float(x) for x in ev.params.recThrs],
        "stats": rounded(ev.stats),
        "perCategory": per_category,
        "apBySetting": rounded(ap_by_setting),
        "recall": rounded(recall),
    }
    if precision.size <= FULL_PRECISION_LIMIT:
        reference["precision"] = rounded(precision)
    return reference


# ---------------------------------------------------------------- mask API references


def runs_of(binary: np.ndarray) -> list[int]:
    """Column-major run lengths starting with zeros, from the decoded mask itself."""
    flat = binary.flatten(order="F")
    runs, value, run = [], 0, 0
    for pixel in flat:
        if pixel != value:
            runs.append(run)
            run, value = 0, pixel
        run += 1
    runs.append(run)
    return runs


def to_rle(shape: dict) -> dict:
    segmentation, height, width = shape["segmentation"], shape["height"], shape["width"]
    if isinstance(segmentation, list):
        return mask_utils.merge(mask_utils.frPyObjects(segmentation, height, width))
    if isinstance(segmentation["counts"], list):
        return mask_utils.frPyObjects(segmentation, height, width)
    return segmentation


def mask_reference(case: dict) -> dict:
    rles = [to_rle(shape) for shape in case["shapes"]]
    shapes = []
    for rle in rles:
        counts = rle["counts"]
        shapes.append(
            {
                "runs": runs_of(mask_utils.decode(rle)),
                "compressed": counts.decode() if isinstance(counts, bytes) else counts,
                "area": int(mask_utils.area(rle)),
                "bbox": [float(x) for x in mask_utils.toBbox(rle)],
            }
        )
    ious = []
    for pair in case["iouPairs"]:
        dt = [rles[i] for i in pair["dt"]]
        gt = [rles[i] for i in pair["gt"]]
        ious.append(np.asarray(mask_utils.iou(dt, gt, pair["iscrowd"])).tolist())
    box_ious = np.asarray(mask_utils.iou(case["boxes"]["dt"], case["boxes"]["gt"], case["boxes"]["iscrowd"])).tolist()
    return {
        "case": "masks",
        "producedBy": f"pycocotools {version('pycocotools')} mask API, tools/reference/coco_reference.py",
        "shapes": shapes,
        "ious": ious,
        "boxIous": box_ious,
    }


# ---------------------------------------------------------------- seeded input generators

CATEGORY_NAMES = ["car", "person", "bicycle", "truck", "bus", "motorcycle", "traffic light", "stop sign", "dog", "train"]


def hand_built() -> dict:
    """Every rule named in one small dataset; each block says what it exercises."""
    images = [{"id": i, "width": 640, "height": 480} for i in range(1, 9)]
    categories = [{"id": 1, "name": "car"}, {"id": 2, "name": "person"}, {"id": 3, "name": "bicycle"}, {"id": 4, "name": "truck"}]
    gts: list[dict] = []
    dts: list[dict] = []

    def gt(gid, image, cat, box, area=None, iscrowd=0, **extra):
        gts.append({"id": gid, "image_id": image, "category_id": cat, "bbox": box, "area": box[2] * box[3] if area is None else area, "iscrowd": iscrowd, **extra})

    def dt(image, cat, box, score):
        dts.append({"image_id": image, "category_id": cat, "bbox": box, "score": score})

    # Image 1: a medium car found exactly and again at IoU exactly .50 with the same score (tie);
    # a small car found at IoU exactly .75; a crowd region with detections inside it.
    gt(1, 1, 1, [10, 10, 100, 50])
    gt(2, 1, 1, [200, 200, 20, 20])
    gt(3, 1, 1, [300, 100, 200, 200], iscrowd=1)
    dt(1, 1, [10, 10, 100, 50], 0.9)
    dt(1, 1, [10, 10, 50, 50], 0.9)
    dt(1, 1, [200, 200, 20, 15], 0.7)
    dt(1, 1, [320, 120, 40, 40], 0.95)
    dt(1, 1, [350, 150, 60, 30], 0.8)
    dt(1, 1, [310, 110, 150, 150], 0.5)
    # A bicycle detection where no bicycle exists anywhere (a category without ground truth).
    dt(1, 3, [400, 400, 30, 30], 0.6)
    # Image 2: ground truth id 0 (pycocotools counts its match as unmatched); a person with the
    # `ignore` flag but not crowd (pycocotools overwrites ignore with iscrowd: a regular object);
    # areas on the range bounds (exactly 32² and 96²); a box whose area field is its mask's.
    gt(0, 2, 1, [20, 20, 60, 40])
    gt(4, 2, 2, [50, 300, 60, 120], ignore=1)
    gt(5, 2, 2, [400, 50, 32, 32])
    gt(6, 2, 2, [100, 100, 96, 96])
    gt(7, 2, 1, [500, 300, 40, 40], area=900)
    dt(2, 1, [21, 21, 60, 40], 0.5)
    dt(2, 2, [52, 302, 60, 118], 0.5)
    dt(2, 2, [402, 52, 30, 30], 0.5)
    dt(2, 2, [110, 110, 90, 90], 0.85)
    dt(2, 1, [505, 305, 38, 38], 0.65)
    # Unmatched detections whose own area sits on the bounds (32² exactly, 96² exactly).
    dt(2, 2, [600, 10, 32, 32], 0.3)
    dt(2, 2, [300, 300, 96, 96], 0.3)
    # Image 3: 110 car detections on three cars (beyond maxDets 100), scores in steps so that many tie.
    rng = random.Random(3)
    cars3 = [[30, 40, 80, 60], [200, 220, 150, 90], [420, 60, 25, 25]]
    for n, box in enumerate(cars3):
        gt(10 + n, 3, 1, box)
    for n in range(110):
        base = cars3[n % 3]
        jitter = [round(rng.uniform(-6, 6), 1) for _ in range(4)]
        box = [base[0] + jitter[0], base[1] + jitter[1], max(2, base[2] + jitter[2]), max(2, base[3] + jitter[3])]
        dt(3, 1, box, round(rng.choice([0.2, 0.4, 0.5, 0.6, 0.8]) + 0.01 * (n % 4), 2))
    # Image 4: 12 people in a row, 14 detections: maxDets 1 and 10 cut them; score ties with image 1.
    for n in range(12):
        gt(20 + n, 4, 2, [10 + 50 * n, 200, 40, 100])
    for n in range(14):
        dt(4, 2, [12 + 50 * (n % 12), 203, 40, 95 + n % 3], 0.9 - 0.05 * (n // 2))
    # Image 5: two crowds of people, overlapping regular people, and detections between them.
    gt(40, 5, 2, [0, 0, 300, 300], iscrowd=1)
    gt(41, 5, 2, [100, 100, 60, 150])
    gt(42, 5, 2, [250, 250, 200, 200], iscrowd=1)
    gt(43, 5, 2, [260, 260, 50, 120])
    dt(5, 2, [102, 98, 58, 150], 0.75)
    dt(5, 2, [105, 105, 55, 140], 0.74)
    dt(5, 2, [20, 20, 40, 40], 0.74)
    dt(5, 2, [262, 258, 50, 124], 0.6)
    dt(5, 2, [280, 280, 100, 100], 0.61)
    dt(5, 2, [500, 20, 60, 60], 0.61)
    # Image 6: nothing at all. Image 7: detections, no ground truth. Image 8: ground truth, no detections.
    dt(7, 1, [100, 100, 50, 50], 0.99)
    dt(7, 2, [10, 10, 8, 8], 0.2)
    dt(7, 3, [200, 100, 120, 90], 0.4)
    gt(50, 8, 1, [10, 10, 200, 150])
    gt(51, 8, 2, [300, 300, 10, 25])
    return {"description": "hand-built: every rule once", "iouType": "bbox", "images": images, "categories": categories, "annotations": gts, "detections": dts}


def random_boxes(seed: int, n_images: int, n_categories: int, width: int = 640, height: int = 480) -> dict:
    """A seeded detector run: sizes spanning all three area ranges, crowd regions, noisy copies of
    the ground truth plus false alarms, coarse scores (ties), some images empty on either side,
    one category with detections but no ground truth, one image past maxDets."""
    rng = random.Random(seed)
    images = [{"id": 1000 + 7 * i, "width": width, "height": height} for i in range(n_images)]
    categories = [{"id": 1 + 2 * k, "name": CATEGORY_NAMES[k % len(CATEGORY_NAMES)]} for k in range(n_categories)]
    without_gt = categories[-1]["id"]
    gts: list[dict] = []
    dts: list[dict] = []
    r1 = lambda x: round(x, 1)  # noqa: E731

    def random_box():
        side = np.exp(rng.uniform(np.log(4), np.log(320)))
        aspect = np.exp(rng.uniform(-0.7, 0.7))
        w, h = min(width - 1, side * aspect), min(height - 1, side / aspect)
        return [r1(rng.uniform(0, width - w)), r1(rng.uniform(0, height - h)), r1(w), r1(h)]

    for im in images:
        roll = rng.random()
        n_gt = 0 if roll < 0.1 else rng.randint(1, 12)
        own = []
        for _ in range(n_gt):
            cat = rng.choice(categories[:-1])["id"]
            box = random_box()
            crowd = 1 if rng.random() < 0.05 else 0
            if crowd:
                box = [r1(rng.uniform(0, width / 2)), r1(rng.uniform(0, height / 2)), r1(width / 2 * rng.uniform(0.4, 1)), r1(height / 2 * rng.uniform(0.4, 1))]
            # The area field is a mask's, a little under the box's.
            area = r1(box[2] * box[3] * rng.uniform(0.6, 1.0))
            ann = {"id": len(gts) + 1, "image_id": im["id"], "category_id": cat, "bbox": box, "area": area, "iscrowd": crowd}
            if rng.random() < 0.03:
                ann["ignore"] = 1
            gts.append(ann)
            own.append(ann)
        if 0.1 <= roll < 0.18:
            continue  # ground truth, no detections
        for ann in own:
            for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
                x, y, w, h = ann["bbox"]
                s = 0.15 * rng.random()
                box = [r1(x + rng.gauss(0, s * w)), r1(y + rng.gauss(0, s * h)), r1(max(1, w * (1 + rng.gauss(0, s)))), r1(max(1, h * (1 + rng.gauss(0, s))))]
                cat = ann["category_id"] if rng.random() < 0.9 else rng.choice(categories)["id"]
                dts.append({"image_id": im["id"], "category_id": cat, "bbox": box, "score": round(rng.betavariate(4, 2), 2)})
        for _ in range(rng.randint(0, 8)):
            cat = rng.choice(categories)["id"]
            dts.append({"image_id": im["id"], "category_id": cat, "bbox": random_box(), "score": round(rng.betavariate(1.5, 4), 2)})
        dts.append({"image_id": im["id"], "category_id": without_gt, "bbox": random_box(), "score": 0.5})
    crowded = images[1]["id"]
    for _ in range(130):
        dts.append({"image_id": crowded, "category_id": categories[0]["id"], "bbox": random_box(), "score": round(rng.random(), 1)})
    rng.shuffle(dts)
    return {"description": f"seeded random boxes (seed {seed})", "iouType": "bbox", "images": images, "categories": categories, "annotations": gts, "detections": dts}


def star_polygon(rng: random.Random, cx: float, cy: float, radius: float) -> list[float]:
    n = rng.randint(5, 12)
    points = []
    for i in range(n):
        angle = 2 * np.pi * (i + rng.uniform(-0.3, 0.3)) / n
        r = radius * rng.uniform(0.5, 1.0)
        points += [round(cx + r * np.cos(angle), 2), round(cy + r * np.sin(angle), 2)]
    return points


def blob_counts(rng: random.Random, height: int, width: int) -> tuple[list[int], np.ndarray]:
    """An uncompressed RLE of a few random ellipses (a crowd region as COCO files store it)."""
    yy, xx = np.mgrid[0:height, 0:width]
    mask = np.zeros((height, width), dtype=np.uint8)
    for _ in range(rng.randint(2, 4)):
        cx, cy = rng.uniform(0, width), rng.uniform(0, height)
        rx, ry = rng.uniform(8, 40), rng.uniform(8, 30)
        mask |= (((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1).astype(np.uint8)
    return runs_of(mask), mask


def polygon_extent(polygons: list[list[float]]) -> list[float]:
    xs = [x for p in polygons for x in p[0::2]]
    ys = [y for p in polygons for y in p[1::2]]
    return [round(min(xs), 2), round(min(ys), 2), round(max(xs) - min(xs), 2), round(max(ys) - min(ys), 2)]


def segm_case(seed: int) -> dict:
    """Polygons (several per object, some past the image edge), crowd regions as uncompressed and
    compressed RLE and as a polygon, detections as polygons, as a compressed RLE and as bare boxes."""
    rng = random.Random(seed)
    width, height = 240, 180
    images = [{"id": i + 1, "width": width, "height": height} for i in range(16)]
    categories = [{"id": 1, "name": "car"}, {"id": 2, "name": "person"}, {"id": 3, "name": "bicycle"}]
    gts: list[dict] = []
    dts: list[dict] = []
    for im in images:
        if im["id"] == 16:
            continue  # no ground truth
        for _ in range(rng.randint(1, 5)):
            cat = rng.choice([1, 2])
            radius = np.exp(rng.uniform(np.log(3), np.log(90)))
            cx, cy = rng.uniform(-10, width + 10), rng.uniform(-10, height + 10)
            polygons = [star_polygon(rng, cx, cy, radius)]
            if rng.random() < 0.25:
                polygons.append(star_polygon(rng, cx + radius, cy, radius / 2))
            rle = mask_utils.merge(mask_utils.frPyObjects(polygons, height, width))
            area = float(mask_utils.area(rle))
            if area == 0:
                continue
            gt = {"id": len(gts) + 1, "image_id": im["id"], "category_id": cat, "segmentation": polygons, "bbox": [float(x) for x in mask_utils.toBbox(rle)], "area": area, "iscrowd": 0}
            gts.append(gt)
            if im["id"] == 15:
                continue  # ground truth, no detections
            for _ in range(rng.choice([0, 1, 1, 2])):
                shift = radius * 0.15
                moved = [[round(v + rng.gauss(0, shift), 2) for v in p] for p in polygons]
                det = {"image_id": im["id"], "category_id": cat, "segmentation": moved, "bbox": polygon_extent(moved), "score": round(rng.uniform(0.3, 1), 1)}
                if rng.random() < 0.15:
                    del det["segmentation"]  # evaluated as its box
                dts.append(det)
        if rng.random() < 0.5:
            counts, mask = blob_counts(rng, height, width)
            compressed = rng.random() < 0.4
            rle_obj = mask_utils.encode(np.asfortranarray(mask))
            segmentation = {"size": [height, width], "counts": rle_obj["counts"].decode() if compressed else counts}
            bbox = [float(x) for x in mask_utils.toBbox(rle_obj)]
            gts.append({"id": len(gts) + 1, "image_id": im["id"], "category_id": 2, "segmentation": segmentation, "bbox": bbox, "area": float(mask.sum()), "iscrowd": 1})
            x, y, w, h = bbox
            for _ in range(2):
                dx, dy = rng.uniform(x, x + w / 2), rng.uniform(y, y + h / 2)
                box = [round(dx, 1), round(dy, 1), round(w / 3, 1), round(h / 3, 1)]
                dts.append({"image_id": im["id"], "category_id": 2, "segmentation": [star_polygon(rng, dx + w / 6, dy + h / 6, min(w, h) / 6)], "bbox": box, "score": 0.6})
        if rng.random() < 0.3:
            dts.append({"image_id": im["id"], "category_id": 3, "bbox": [10, 10, 20, 20], "score": 0.4})
    crowd_polygon = [[20, 20, 60, 20, 60, 70, 20, 70]]
    gts.append({"id": len(gts) + 1, "image_id": 16, "category_id": 1, "segmentation": crowd_polygon, "bbox": [20, 20, 40, 50], "area": 2000.0, "iscrowd": 1})
    dts.append({"image_id": 16, "category_id": 1, "segmentation": [[25, 25, 45, 25, 45, 40, 25, 40]], "bbox": [25, 25, 20, 15], "score": 0.9})
    blob = np.zeros((height, width), dtype=np.uint8)
    blob[30:60, 40:90] = 1
    rle = mask_utils.encode(np.asfortranarray(blob))
    dts.append({"image_id": 3, "category_id": 1, "segmentation": {"size": [height, width], "counts": rle["counts"].decode()}, "bbox": [40, 30, 50, 30], "score": 0.55})
    return {"description": f"seeded polygons and run lengths (seed {seed})", "iouType": "segm", "images": images, "categories": categories, "annotations": gts, "detections": dts}


def masks_case() -> dict:
    """Shapes for the mask API port: fractional, degenerate, repeated-vertex and off-image polygons,
    multi-polygon objects, uncompressed RLE (with zero-length runs) and compressed strings."""
    h, w = 40, 50
    rng = random.Random(11)
    shapes = [
        {"segmentation": [[5.3, 4.1, 30.7, 6.2, 28.4, 30.9, 7.7, 25.5]], "height": h, "width": w},
        {"segmentation": [[10, 10, 20, 10, 20, 20, 10, 20]], "height": h, "width": w},
        {"segmentation": [[-5, -5, 60, -5, 60, 12.5, -5, 12.5]], "height": h, "width": w},
        {"segmentation": [[12, 12, 12, 12, 25, 12.04, 25, 30, 12, 30]], "height": h, "width": w},
        {"segmentation": [[0, 0, 49, 39, 0, 39]], "height": h, "width": w},
        {"segmentation": [[3, 3, 3.1, 3, 3.1, 3.1]], "height": h, "width": w},
        {"segmentation": [[2, 30, 15, 30, 15, 38, 2, 38], [35, 2, 48, 2, 48, 15, 35, 15]], "height": h, "width": w},
        {"segmentation": [[0.5, 0.5, 49.5, 0.5, 49.5, 39.5, 0.5, 39.5]], "height": h, "width": w},
        {"segmentation": {"size": [h, w], "counts": [100, 0, 30, 5, 0, 0, 200, 60, 1605]}, "height": h, "width": w},
        {"segmentation": {"size": [h, w], "counts": [0, 45, 1955]}, "height": h, "width": w},
    ]
    for _ in range(6):
        shapes.append({"segmentation": [star_polygon(rng, rng.uniform(0, w), rng.uniform(0, h), rng.uniform(3, 25))], "height": h, "width": w})
    blob = np.zeros((h, w), dtype=np.uint8)
    blob[5:35, 10:12] = 1
    blob[0:h, 30:33] = 1
    shapes.append({"segmentation": {"size": [h, w], "counts": mask_utils.encode(np.asfortranarray(blob))["counts"].decode()}, "height": h, "width": w})
    n = len(shapes)
    pairs = [
        {"dt": list(range(n)), "gt": list(range(n)), "iscrowd": [0] * n},
        {"dt": list(range(n)), "gt": [2, 8, 16, 6], "iscrowd": [1, 1, 0, 1]},
    ]
    boxes = {
        "dt": [[10, 10, 100, 50], [10, 10, 50, 50], [200.5, 200.25, 20.1, 15.7], [0, 0, 1, 1], [5, 5, 0, 10]],
        "gt": [[10, 10, 100, 50], [200, 200, 20, 20], [0, 0, 300, 300], [110, 60, 10, 10]],
        "iscrowd": [0, 0, 1, 0],
    }
    return {"description": "mask API shapes", "shapes": shapes, "iouPairs": pairs, "boxes": boxes}


GENERATORS = {
    "hand-built": hand_built,
    "random-bbox": lambda: random_boxes(seed=7, n_images=60, n_categories=6),
    "random-bbox-medium": lambda: random_boxes(seed=21, n_images=250, n_categories=10),
    "segm": lambda: segm_case(seed=5),
    "masks": masks_case,
}


def write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, separators=(",", ":")) + "\n")


def rounded(values) -> list[float]:
    """Ten decimals: far inside the tests' 1e-4 and a third of the bytes of a full repr."""
    return [round(float(x), 10) for x in np.asarray(values).ravel()]


def main() -> None:
    generate = "--generate" in sys.argv[1:]
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, generator in GENERATORS.items():
        input_path = FIXTURES / f"{name}.input.json"
        if generate:
            write_json(input_path, generator())
        case = json.loads(input_path.read_text())
        reference = mask_reference(case) if name == "masks" else reference_for(name, case)
        write_json(FIXTURES / f"{name}.reference.json", reference)
        print(f"{name}: stats {reference.get('stats')}")
    # The repository's prettier lays the JSON out (`npm run lint` checks it).
    subprocess.run(["npx", "prettier", "--log-level", "warn", "--write", str(FIXTURES / "*.json")], cwd=ROOT, check=True)


if __name__ == "__main__":
    main()
