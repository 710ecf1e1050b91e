"""Static int8 quantization of the PII pass's licence-plate text detector, PP-OCRv4's DB-net
(docs/pii.md "int8").

    quantize-pii.py <source.onnx> <out.onnx> <calibration folder>

The calibration reader feeds the model what the pass feeds it, built from the images in the
folder (tools/models/pii-calibration.ts writes them): the same channel order, normalisation and
input sizes (multiples of 32; crops of the images at the size of the search's packed inputs, and
whole images at the whole-frame search's size). Weights int8 per output channel, activations uint8 (the u8·s8 kernels that AVX-512 VNNI
and AVX-VNNI run), QDQ format, which onnxruntime fuses into QLinearConv when it loads the model.
Writes out.onnx only when the whole run succeeds.
"""

import os
import sys
from collections import defaultdict
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper, version_converter
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from onnxruntime.quantization.shape_inference import quant_pre_process
from PIL import Image

# Channel order BGR, planar; value scale, mean and std per BGR channel (activities/pii/detector.ts DB_NORM).
SCALE, MEAN, STD = 1 / 255, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

OPSET = 14

# The largest packed input of the search (activities/pii/detector.ts PACKING).
TILE = (768, 416)


def bgr_planar(rgb: np.ndarray) -> np.ndarray:
    bgr = rgb[:, :, ::-1].astype(np.float32) * SCALE
    bgr = (bgr - np.array(MEAN, np.float32)) / np.array(STD, np.float32)
    return np.ascontiguousarray(bgr.transpose(2, 0, 1)[None])


def fit32(img: Image.Image, max_side: int) -> Image.Image:
    """The image at most max_side on its longer side, both sides a multiple of 32 (as the pass sizes inputs)."""
    k = min(1.0, max_side / max(img.size))
    w = max(32, round(img.width * k / 32) * 32)
    h = max(32, round(img.height * k / 32) * 32)
    return img.resize((w, h), Image.BILINEAR)


def tiles(img: Image.Image) -> list[Image.Image]:
    """Crops of the search's input size over the image, as vehicle bands and person crops reach the models."""
    tw, th = TILE
    out = []
    for top in range(0, max(1, img.height - th + 1), th):
        for left in range(0, max(1, img.width - tw + 1), tw):
            out.append(img.crop((left, top, min(img.width, left + tw), min(img.height, top + th))))
    return [fit32(t, max(TILE)) for t in out]


def samples(folder: Path) -> list[np.ndarray]:
    images = [Image.open(f).convert("RGB") for f in sorted(folder.iterdir()) if f.is_file()]
    if not images:
        raise SystemExit(f"no calibration images in {folder}")
    out: list[np.ndarray] = []
    for img in images:
        # Whole images at the size the whole-frame search sees frames at, and crops at full resolution.
        out.append(bgr_planar(np.asarray(fit32(img, 1280))))
        out += [bgr_planar(np.asarray(t)) for t in tiles(img)]
    return out


class Reader(CalibrationDataReader):
    def __init__(self, name: str, data: list[np.ndarray]):
        self.items = iter([{name: d} for d in data])

    def get_next(self):
        return next(self.items, None)


def simplify(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same function in fewer nodes (exact up to float rounding): PP-LCNetV3's learnable affine
    after a convolution (Conv → Mul by a scalar → Add of a scalar) folded into the convolution's
    weights and bias, and hard-swish exported as x·clip(x + 3, 0, 6)/6 (four element-wise nodes,
    some 30 % of DB-net's time, and four quantize/dequantize pairs once quantized) made one HardSwish
    node (opset 14)."""
    model = version_converter.convert_version(model, OPSET)
    g = model.graph
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in g.node if n.op_type == "Constant"}
    consts.update({i.name: numpy_helper.to_array(i) for i in g.initializer})
    users: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for n in g.node:
        for x in n.input:
            users[x].append(n)

    def only_user(name: str, op: str) -> onnx.NodeProto | None:
        u = users[name]
        return u[0] if len(u) == 1 and u[0].op_type == op else None

    def scalar_of(n: onnx.NodeProto | None) -> tuple[float, str] | None:
        """The node's scalar constant operand and its other input."""
        if n is None or len(n.input) != 2:
            return None
        for k, x in enumerate(n.input):
            if x in consts and consts[x].size == 1:
                return float(consts[x].reshape(-1)[0]), n.input[1 - k]
        return None

    drop: set[int] = set()
    for conv in g.node:
        if conv.op_type != "Conv" or conv.input[1] not in consts:
            continue
        mul = only_user(conv.output[0], "Mul")
        scale = scalar_of(mul)
        add = only_user(mul.output[0], "Add") if mul and scale else None
        shift = scalar_of(add)
        if not shift:
            continue
        w = consts[conv.input[1]]
        b = consts[conv.input[2]] if len(conv.input) > 2 else np.zeros(w.shape[0], np.float32)
        names = (f"{conv.output[0]}_w", f"{conv.output[0]}_b")
        g.initializer.extend(
            [
                numpy_helper.from_array((w * scale[0]).astype(np.float32), names[0]),
                numpy_helper.from_array((b * scale[0] + shift[0]).astype(np.float32), names[1]),
            ]
        )
        inputs = [conv.input[0], *names]
        del conv.input[:]
        conv.input.extend(inputs)
        conv.output[0] = add.output[0]
        drop |= {id(mul), id(add)}
    swishes = []
    for add in g.node:
        plus = scalar_of(add) if add.op_type == "Add" and id(add) not in drop else None
        if not plus or plus[0] != 3:
            continue
        x = plus[1]
        clip = only_user(add.output[0], "Clip")
        bounds = [float(consts[i]) if i in consts else None for i in clip.input[1:]] if clip else []
        mul = only_user(clip.output[0], "Mul") if bounds == [0, 6] else None
        div = only_user(mul.output[0], "Div") if mul and x in mul.input else None
        six = scalar_of(div)
        if not six or six[0] != 6 or div.input[0] != mul.output[0]:
            continue
        swishes.append(helper.make_node("HardSwish", [x], [div.output[0]], name=f"{div.output[0]}_hardswish"))
        drop |= {id(add), id(clip), id(mul), id(div)}
    kept = [n for n in g.node if id(n) not in drop]
    used = {x for n in kept + swishes for x in n.input} | {o.name for o in g.output}
    kept = [n for n in kept if n.op_type != "Constant" or n.output[0] in used]
    live = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(live)
    del g.node[:]
    g.node.extend(kept + swishes)
    # Nodes appended out of order: put the graph back in topological order for the checker.
    return onnx.shape_inference.infer_shapes(topological(model))


def topological(model: onnx.ModelProto) -> onnx.ModelProto:
    g = model.graph
    ready = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    pending, ordered = list(g.node), []
    while pending:
        rest = []
        for n in pending:
            (ordered if all(x in ready for x in n.input) else rest).append(n)
            if all(x in ready for x in n.input):
                ready |= set(n.output)
        if len(rest) == len(pending):
            raise SystemExit("simplify left a graph with a cycle or a missing input")
        pending = rest
    del g.node[:]
    g.node.extend(ordered)
    return model


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    source, out, folder = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    model = onnx.load(str(source))
    inp = model.graph.input[0]
    data = samples(folder)
    with tempfile.TemporaryDirectory() as tmp:
        # Per-channel DequantizeLinear (its axis) needs opset 13, HardSwish 14; DB-net ships at opset 11.
        upgraded = Path(tmp) / "simple.onnx"
        onnx.save(simplify(model), str(upgraded))
        pre = Path(tmp) / "pre.onnx"
        # Shape inference and constant folding first, as onnxruntime's quantization guide asks.
        quant_pre_process(str(upgraded), str(pre), skip_symbolic_shape=True)
        staged = Path(tmp) / "int8.onnx"
        quantize_static(
            str(pre),
            str(staged),
            Reader(inp.name, data),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, out) if staged.stat().st_dev == out.parent.stat().st_dev else out.write_bytes(
            staged.read_bytes()
        )
    print(f"{out}: {len(data)} calibration inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
