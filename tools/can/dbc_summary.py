"""What cantools makes of a DBC file, for canlab's DBC tests (canlab/test/dbc/).

    dbc_summary.py <file.dbc> [<id>[x]#<hex data> ...]

Prints one JSON object: `strict` and `lenient`, "ok" or cantools' error when loading the file with
strict=True (its signal overlap and fit checks) and strict=False; when the lenient load succeeds,
`messages` (name, id, extended, length, and per signal its name, whether it is a multiplexer switch,
its multiplexer values and switch; signals in cantools' order, by start bit, the only order in which
its decoder works); and `decoded`, one entry per frame
given (`1F0#C006E0`, an `x` after the id for a 29-bit one): the signal values cantools decodes
(labels off, truncated payloads allowed) or its error.
"""

import json
import sys

import cantools


def load(path, strict):
    try:
        return cantools.database.load_file(path, strict=strict), 'ok'
    except Exception as e:  # cantools' errors vary by stage; the text is what the tests compare
        return None, str(e)


def main(path, frames):
    _, strict = load(path, True)
    db, lenient = load(path, False)
    out = {'strict': strict, 'lenient': lenient}
    if db is not None:
        out['messages'] = [
            {
                'name': m.name,
                'id': m.frame_id,
                'extended': m.is_extended_frame,
                'length': m.length,
                'signals': [
                    {
                        'name': s.name,
                        'is_multiplexer': s.is_multiplexer,
                        'multiplexer_ids': s.multiplexer_ids,
                        'multiplexer_signal': s.multiplexer_signal,
                    }
                    for s in m.signals
                ],
            }
            for m in db.messages
        ]
        decoded = []
        for frame in frames:
            ident, data = frame.split('#')
            extended = ident.endswith('x')
            frame_id = int(ident.rstrip('x'), 16)
            try:
                message = next(
                    m for m in db.messages if m.frame_id == frame_id and m.is_extended_frame == extended
                )
                decoded.append(message.decode(bytes.fromhex(data), decode_choices=False, allow_truncated=True))
            except Exception as e:
                decoded.append({'error': str(e) or type(e).__name__})
        out['decoded'] = decoded
    print(json.dumps(out))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
