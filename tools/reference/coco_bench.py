#!/usr/bin/env python3
"""Times pycocotools and faster-coco-eval on one COCO ground-truth file and one results file.

    "$(infra/reference-tools.sh path)" tools/reference/coco_bench.py <gt.json> <dt.json> [bbox|segm]

bench/coco-eval.ts runs it on the files it generates, beside our own evaluator. For each library it
times loading (COCO(gt) and loadRes(dt)) apart from COCOeval's evaluate(), accumulate() and
summarize(), and keeps the twelve stats. One JSON object goes to stdout:

    {"pycocotools": {"version", "load_s", "evaluate_s", "accumulate_s", "summarize_s", "stats": [12]},
     "faster_coco_eval": {...the same...}}

The libraries' own progress printing goes to stderr. Writes no files.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from importlib.metadata import version


def timed(results: dict, key: str, step):
    start = time.perf_counter()
    value = step()
    results[key] = time.perf_counter() - start
    return value


def bench(package: str, coco_class, eval_class, gt_path: str, dt_path: str, iou_type: str) -> dict:
    results: dict = {"version": version(package)}
    with contextlib.redirect_stdout(sys.stderr):
        start = time.perf_counter()
        gt = coco_class(gt_path)
        dt = gt.loadRes(dt_path)
        results["load_s"] = time.perf_counter() - start
        ev = eval_class(gt, dt, iou_type)
        timed(results, "evaluate_s", ev.evaluate)
        timed(results, "accumulate_s", ev.accumulate)
        timed(results, "summarize_s", ev.summarize)
    results["stats"] = [float(x) for x in ev.stats]
    return results


def main() -> None:
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    gt_path, dt_path = sys.argv[1], sys.argv[2]
    iou_type = sys.argv[3] if len(sys.argv) == 4 else "bbox"

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    import faster_coco_eval

    out = {
        "pycocotools": bench("pycocotools", COCO, COCOeval, gt_path, dt_path, iou_type),
        "faster_coco_eval": bench(
            "faster-coco-eval", faster_coco_eval.COCO, faster_coco_eval.COCOeval_faster, gt_path, dt_path, iou_type
        ),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
