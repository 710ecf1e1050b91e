#!/usr/bin/env python3
"""Reference numbers for core/govern/drift.ts, written beside its fixtures.

    "$(tools/reference/mot-tools.sh path)" tools/reference/drift_reference.py [--generate]

(any Python with scipy==1.17.1, the version tools/reference/requirements.txt and
mot-requirements.txt pin, gives the same numbers.)

Reads core/govern/fixtures/drift.input.json and writes drift.reference.json:

- chi2: scipy.stats.chi2_contingency on the 2 x k table of each case (categories seen on neither side
  dropped, columns in sorted order, Yates' correction as scipy applies it by default: only when
  df = 1) -> statistic, p-value, dof.
- ks: scipy.stats.ks_2samp(x, y, method='asymp') -> statistic, p-value.

The unit tests compare core/govern/drift.ts against these stored numbers and never run Python.
--generate first rewrites the inputs from the seeded generator below (deterministic).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy import stats

FIXTURES = Path(__file__).resolve().parents[2] / "core" / "govern" / "fixtures"


def generate() -> dict:
    rng = np.random.default_rng(20261201)
    chi2 = [
        {"name": "two categories (Yates)", "a": {"car": 120, "person": 80}, "b": {"car": 90, "person": 110}},
        {"name": "two categories, no difference", "a": {"day": 50, "night": 50}, "b": {"day": 51, "night": 49}},
        {
            "name": "five classes, one seen only recently, one on neither side",
            "a": {"car": 400, "person": 150, "bus": 30, "bicycle": 20, "truck": 0},
            "b": {"car": 310, "person": 260, "bus": 25, "bicycle": 10, "animal": 12},
        },
        {
            "name": "lighting, a strong shift",
            "a": {"dark": 40, "normal": 900, "bright": 60},
            "b": {"dark": 300, "normal": 650, "bright": 50},
        },
        {
            "name": "small counts",
            "a": {"rain": 3, "clear": 20, "fog": 1},
            "b": {"rain": 6, "clear": 14, "fog": 2},
        },
    ]
    ks = [
        {
            "name": "normal against a shifted normal",
            "x": rng.normal(120, 20, 200).round(3).tolist(),
            "y": rng.normal(128, 20, 150).round(3).tolist(),
        },
        {
            "name": "same distribution, different sizes",
            "x": rng.normal(0.6, 0.1, 1000).round(4).tolist(),
            "y": rng.normal(0.6, 0.1, 40).round(4).tolist(),
        },
        {
            "name": "ties (integers)",
            "x": rng.integers(0, 12, 300).astype(float).tolist(),
            "y": rng.integers(2, 14, 250).astype(float).tolist(),
        },
        {
            "name": "confidences, a skewed shift",
            "x": rng.beta(5, 2, 500).round(4).tolist(),
            "y": rng.beta(3, 2, 400).round(4).tolist(),
        },
        {
            "name": "large samples, a slight shift (scipy's Pelz-Good region)",
            "x": rng.normal(100, 15, 1000).round(3).tolist(),
            "y": rng.normal(101.5, 15, 800).round(3).tolist(),
        },
        {
            "name": "sharpness, heavy tails",
            "x": rng.lognormal(5, 1, 120).round(2).tolist(),
            "y": rng.lognormal(5.4, 1.2, 90).round(2).tolist(),
        },
    ]
    return {"chi2": chi2, "ks": ks}


def reference(inputs: dict) -> dict:
    chi2_out = []
    for case in inputs["chi2"]:
        a, b = case["a"], case["b"]
        cats = sorted(c for c in set(a) | set(b) if a.get(c, 0) + b.get(c, 0) > 0)
        table = np.array([[a.get(c, 0) for c in cats], [b.get(c, 0) for c in cats]], dtype=float)
        res = stats.chi2_contingency(table)
        chi2_out.append(
            {"name": case["name"], "categories": cats, "statistic": float(res.statistic),
             "p_value": float(res.pvalue), "df": int(res.dof)}
        )
    ks_out = []
    for case in inputs["ks"]:
        res = stats.ks_2samp(case["x"], case["y"], method="asymp")
        ks_out.append({"name": case["name"], "statistic": float(res.statistic), "p_value": float(res.pvalue)})
    return {"scipy": scipy.__version__, "chi2": chi2_out, "ks": ks_out}


def main() -> None:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    src = FIXTURES / "drift.input.json"
    if "--generate" in sys.argv:
        src.write_text(json.dumps(generate(), indent=1) + "\n")
    inputs = json.loads(src.read_text())
    (FIXTURES / "drift.reference.json").write_text(json.dumps(reference(inputs), indent=1) + "\n")


if __name__ == "__main__":
    main()
