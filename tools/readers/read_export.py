#!/usr/bin/env python3
"""Reads a dataset export back with the reference tools of each format and prints one JSON summary.

    read_export.py coco    <instances.json>
    read_export.py yolo    <dir with data.yaml> <split>
    read_export.py parquet <file.parquet>
    read_export.py duckdb  <file.parquet> [sql]

The export tests (through testkit/readers.ts) compare these summaries with what the platform holds,
so an export is proved readable by pycocotools, globox (the Ultralytics YOLO layout), pyarrow and
DuckDB, not by our own code. Installed by infra/reader-tools.sh; pinned in requirements.txt.

One JSON object goes to stdout; on any read error a message goes to stderr and the exit status is 1
(2 for a usage error). Values JSON cannot hold exactly are made strings: NaN and infinities, integers
past 2^53, decimals, dates, bytes (hex).
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import io
import json
import math
import os
import sys
import uuid
from pathlib import Path
from typing import Any

USAGE = (
    "usage: read_export.py coco <instances.json> | yolo <dir with data.yaml> <split>"
    " | parquet <file.parquet> | duckdb <file.parquet> [sql]"
)

MAX_SAFE_INTEGER = 2**53 - 1


class ReadError(Exception):
    """An export that the reference tool reads but that breaks the format's rules."""


def jsonable(value: Any) -> Any:
    """A JSON-serialisable copy of a value from pyarrow, DuckDB or numpy, exact where JSON allows."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) <= MAX_SAFE_INTEGER else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return jsonable(value.item())
    if hasattr(value, "tolist"):  # numpy arrays
        return jsonable(value.tolist())
    return str(value)


# --- COCO ---------------------------------------------------------------------------------------


def read_coco(instances: str) -> dict[str, Any]:
    from pycocotools import mask as mask_utils
    from pycocotools.coco import COCO

    # pycocotools reports its progress on stdout, which carries the JSON summary: dropped.
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(instances)

    categories = [
        {"id": c["id"], "name": c["name"], "supercategory": c.get("supercategory")}
        for c in coco.loadCats(coco.getCatIds())
    ]
    names = {c["id"]: c["name"] for c in categories}
    per_category = {c["name"]: 0 for c in categories}
    bbox_sum = 0.0
    area_sum = 0.0
    segm_annotations = 0
    segm_area_sum = 0
    for ann in coco.loadAnns(coco.getAnnIds()):
        if ann.get("image_id") not in coco.imgs:
            raise ReadError(f"annotation {ann.get('id')} refers to unknown image {ann.get('image_id')}")
        if ann.get("category_id") not in names:
            raise ReadError(f"annotation {ann.get('id')} refers to unknown category {ann.get('category_id')}")
        per_category[names[ann["category_id"]]] += 1
        bbox = ann.get("bbox") or []
        if len(bbox) != 4:
            raise ReadError(f"annotation {ann.get('id')} has bbox {bbox!r}, not [x, y, width, height]")
        bbox_sum += float(sum(bbox))
        area_sum += float(ann.get("area", 0))
        segmentation = ann.get("segmentation")
        if isinstance(segmentation, list) and segmentation:
            # Rasterises the polygons at the image's size: proves them decodable by the reference API.
            segm_annotations += 1
            try:
                segm_area_sum += int(mask_utils.area(coco.annToRLE(ann)))
            except Exception as e:  # noqa: BLE001 - pycocotools raises bare Exceptions
                raise ReadError(f"annotation {ann.get('id')}: polygons not decodable: {e}") from e

    return {
        "images": len(coco.imgs),
        "annotations": len(coco.anns),
        "categories": categories,
        "per_category": per_category,
        "bbox_sum": bbox_sum,
        "area_sum": area_sum,
        "segm_annotations": segm_annotations,
        "segm_area_sum": segm_area_sum,
    }


# --- YOLO (Ultralytics layout) ------------------------------------------------------------------

# The image suffixes Ultralytics reads (ultralytics/data/utils.py IMG_FORMATS).
IMG_FORMATS = {".bmp", ".dng", ".jpeg", ".jpg", ".mpo", ".png", ".tif", ".tiff", ".webp", ".pfm", ".heic"}


def class_names(data: dict[str, Any]) -> list[str]:
    names = data.get("names")
    if isinstance(names, list):
        result = [str(n) for n in names]
    elif isinstance(names, dict):
        ids = sorted(int(k) for k in names)
        if ids != list(range(len(ids))):
            raise ReadError(f"data.yaml names has ids {ids}, not 0..{len(ids) - 1}")
        result = [str(names[k] if k in names else names[str(k)]) for k in ids]
    else:
        raise ReadError("data.yaml has no names (a list, or a mapping of class id to name)")
    if "nc" in data and int(data["nc"]) != len(result):
        raise ReadError(f"data.yaml nc is {data['nc']} but names has {len(result)} entries")
    return result


def split_images(root: Path, entry: Any) -> list[Path]:
    """The images of a split, as Ultralytics finds them: directories searched recursively, or .txt
    files listing image paths (relative ones relative to the list file's directory)."""
    entries = entry if isinstance(entry, list) else [entry]
    images: list[Path] = []
    for item in entries:
        p = Path(str(item))
        if not p.is_absolute():
            p = root / p
        if p.is_dir():
            images += [f for f in p.rglob("*") if f.is_file() and f.suffix.lower() in IMG_FORMATS]
        elif p.is_file() and p.suffix == ".txt":
            for line in p.read_text().splitlines():
                line = line.strip()
                if line:
                    f = Path(line)
                    images.append(f if f.is_absolute() else p.parent / f)
        else:
            raise ReadError(f"split path {p} is neither a directory nor a .txt list of images")
    return sorted(images)


def label_path(image: Path) -> Path:
    """Ultralytics' img2label_paths: the last /images/ of the path becomes /labels/, suffix .txt."""
    sa, sb = f"{os.sep}images{os.sep}", f"{os.sep}labels{os.sep}"
    s = str(image)
    if sa not in s:
        raise ReadError(f"image {image} is not under an images/ directory, so it has no labels/ path")
    return Path(sb.join(s.rsplit(sa, 1))).with_suffix(".txt")


def read_yolo(directory: str, split: str) -> dict[str, Any]:
    import yaml
    from globox import Annotation
    from globox.image_utils import get_image_size

    base = Path(directory)
    yaml_path = base if base.suffix in (".yaml", ".yml") else base / "data.yaml"
    if not yaml_path.is_file():
        raise ReadError(f"{yaml_path} does not exist")
    with yaml_path.open() as f:
        data = yaml.safe_load(f)
    if not isinstance(data, dict):
        raise ReadError(f"{yaml_path} is not a YAML mapping")
    names = class_names(data)
    # `path` is the dataset root; a relative one is taken relative to data.yaml's directory.
    root = Path(str(data.get("path") or "."))
    if not root.is_absolute():
        root = yaml_path.parent / root
    if not data.get(split):
        raise ReadError(f"data.yaml has no {split!r} split (keys: {sorted(data)})")
    images = split_images(root, data[split])
    if not images:
        raise ReadError(f"split {split!r} has no images")

    per_class = {n: 0 for n in names}
    boxes = polygons = label_files = 0
    normalised_ok = True
    for image in images:
        if not image.is_file():
            raise ReadError(f"image {image} is missing")
        labels = label_path(image)
        if not labels.is_file():
            continue  # a background image: Ultralytics reads a missing label file as no objects
        label_files += 1
        lines = [line.split() for line in labels.read_text().splitlines() if line.strip()]
        if not lines:
            continue
        seg = [len(v) > 5 for v in lines]
        if any(seg) and not all(seg):
            # Ultralytics reads every line of a file holding one polygon as a polygon.
            raise ReadError(f"{labels} mixes box lines and polygon lines")
        try:
            size = get_image_size(image)
        except Exception as e:  # noqa: BLE001 - globox raises its own UnknownImageFormat and OSErrors
            raise ReadError(f"cannot read the size of image {image}: {e}") from e
        # globox parses the lines (class, then normalised cx cy w h, or a polygon) against the image.
        if all(seg):
            annotation = Annotation.from_yolo_seg(labels, image_id=image.name, image_size=size)
            polygons += len(annotation.boxes)
        else:
            annotation = Annotation.from_yolo_v5(labels, image_id=image.name, image_size=size)
        for values in lines:
            coords = [float(v) for v in values[1:]]
            if not all(0.0 <= c <= 1.0 for c in coords):
                normalised_ok = False
        for box in annotation.boxes:
            try:
                class_id = int(box.label)
            except ValueError as e:
                raise ReadError(f"{labels}: class {box.label!r} is not an integer") from e
            if not 0 <= class_id < len(names):
                raise ReadError(f"{labels}: class {class_id} is not in data.yaml names (0..{len(names) - 1})")
            per_class[names[class_id]] += 1
            boxes += 1

    return {
        "names": names,
        "images": len(images),
        "label_files": label_files,
        "boxes": boxes,
        "polygons": polygons,
        "per_class": per_class,
        "normalised_ok": normalised_ok,
    }


# --- Parquet ------------------------------------------------------------------------------------


def read_parquet(file: str) -> dict[str, Any]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import pyarrow.types as pt

    table = pq.read_table(file)
    sums: dict[str, Any] = {}
    for field in table.schema:
        if pt.is_integer(field.type) or pt.is_floating(field.type) or pt.is_decimal(field.type):
            sums[field.name] = jsonable(pc.sum(table.column(field.name)).as_py())
    return {
        "rows": table.num_rows,
        "columns": table.column_names,
        "schema": {field.name: str(field.type) for field in table.schema},
        "sums": sums,
    }


def read_duckdb(file: str, sql: str | None) -> dict[str, Any]:
    import duckdb

    if not Path(file).is_file():
        raise ReadError(f"{file} does not exist")
    quoted = file.replace("'", "''")
    # The file is also a view named `export`, so a query need not repeat read_parquet('<path>').
    duckdb.sql(f"create or replace view export as select * from read_parquet('{quoted}')")
    relation = duckdb.sql(sql or f"select count(*) from read_parquet('{quoted}')")
    if relation is None:
        return {"columns": [], "rows": []}
    return {"columns": list(relation.columns), "rows": jsonable(relation.fetchall())}


def main(argv: list[str]) -> int:
    mode, args = (argv[0], argv[1:]) if argv else ("", [])
    readers = {
        "coco": (read_coco, 1, 1),
        "yolo": (read_yolo, 2, 2),
        "parquet": (read_parquet, 1, 1),
        "duckdb": (lambda f, sql=None: read_duckdb(f, sql), 1, 2),
    }
    if mode not in readers or not readers[mode][1] <= len(args) <= readers[mode][2]:
        print(USAGE, file=sys.stderr)
        return 2
    reader = readers[mode][0]
    try:
        result = reader(*args)
        out = json.dumps(jsonable(result), allow_nan=False)
    except Exception as e:  # noqa: BLE001 - any failure to read is the answer, reported on stderr
        print(f"read_export {mode}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
