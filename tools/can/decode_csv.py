"""cantools' side of canlab's decode benchmark (canlab/bench/decode.ts).

    decode_csv.py <capture.log> <file.dbc> <out.csv>

Reads a candump log with python-can (CanutilsLogReader), decodes every frame with cantools
(Message.decode, value-table labels on, truncated payloads allowed so that signals past a short
payload are left out, as canlab does) and writes the CSV layout of `canlab decode`: a row per frame
the DBC defines, `timestamp,id,message` then `name=value` cells in the DBC's signal order, the label
in parentheses, values rounded to the decimals of factor and offset and printed the way JavaScript
prints numbers. Prints one JSON line: frames read, rows written, and the seconds the loop took (the
DBC load excluded).
"""

import json
import sys
import time
from decimal import ROUND_HALF_UP, Decimal

import can
import cantools
from cantools.database.namedsignalvalue import NamedSignalValue


def js_number(x):
    """A float as JavaScript's String(x) writes it (shortest round-trip digits, its exponent form)."""
    if x != x:
        return 'NaN'
    if x in (float('inf'), float('-inf')):
        return 'Infinity' if x > 0 else '-Infinity'
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if 'e' not in text:
        return text
    mantissa, exponent = text.split('e')
    exponent = int(exponent)
    if -7 < exponent < 21:
        return format(Decimal(text), 'f')
    return f"{mantissa.removesuffix('.0')}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


def decimals_of(x):
    """Decimal places that show multiples of x exactly, as canlab's decimalsOf computes them from
    JavaScript's toExponential() (the shortest digits of the double, which repr also gives)."""
    if x == 0 or x != x or x in (float('inf'), float('-inf')) or x == int(x):
        return 0
    digits, exponent = f'{Decimal(repr(x)).normalize():e}'.split('e')
    fraction = len(digits.split('.')[1]) if '.' in digits else 0
    return min(15, max(0, fraction - int(exponent)))


def physical(value, decimals):
    """canlab's formatPhysical: rounded half away from zero to `decimals`, printed as JavaScript does."""
    if decimals <= 0 or value != value or abs(value) >= 1e21 or value in (float('inf'), float('-inf')):
        return js_number(value)
    rounded = Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return js_number(float(rounded))


def cell(text):
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def main(capture, dbc_path, out_path):
    db = cantools.database.load_file(dbc_path, strict=False)
    # Cells follow the file's signal order; cantools decodes only with its signals sorted by start
    # bit (with sort_signals=None, Message.decode fails on little-endian signals out of order).
    file_order = {
        m.name: [s.name for s in m.signals]
        for m in cantools.database.load_file(dbc_path, strict=False, sort_signals=None).messages
    }
    formats = {}
    for message in db.messages:
        key = (message.frame_id, message.is_extended_frame)
        if key in formats:
            continue
        digits = 8 if message.is_extended_frame else 3
        head = f',0x{message.frame_id:0{digits}X},{cell(message.name)}'
        decimals = {}
        for s in message.signals:
            if s.name not in decimals:
                decimals[s.name] = -1 if s.is_float else max(decimals_of(s.scale), decimals_of(s.offset))
        signals = {s.name: s for s in message.signals}
        formats[key] = (message, head, decimals, [signals[name] for name in file_order[message.name]])
    frames = rows = 0
    start = time.perf_counter()
    with open(out_path, 'w', encoding='utf-8', newline='') as out:
        out.write('timestamp,id,message,signals\n')
        for msg in can.CanutilsLogReader(capture):
            frames += 1
            if msg.is_remote_frame or msg.is_error_frame:
                continue
            found = formats.get((msg.arbitration_id, msg.is_extended_id))
            if found is None:
                continue
            message, head, decimals, signals = found
            values = message.decode(bytes(msg.data), decode_choices=True, allow_truncated=True)
            parts = [f'{msg.timestamp:.6f}', head]
            for s in signals:
                if s.name not in values:
                    continue
                v = values[s.name]
                if isinstance(v, NamedSignalValue):
                    text = f'{s.name}={physical(s.conversion.raw_to_scaled(v.value, False), decimals[s.name])} ({v.name})'
                else:
                    text = f'{s.name}={physical(v, decimals[s.name])}'
                parts.append(',' + cell(text))
            out.write(''.join(parts) + '\n')
            rows += 1
    seconds = time.perf_counter() - start
    print(json.dumps({'frames': frames, 'rows': rows, 'seconds': seconds}))


if __name__ == '__main__':
    main(*sys.argv[1:4])
