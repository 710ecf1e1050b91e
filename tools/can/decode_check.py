"""Whether cantools takes a DBC and decodes a capture with it, for canlab's draft-DBC test
(canlab/test/eval/draft-cantools.test.ts).

    decode_check.py <capture> <file.dbc>

Loads the DBC as cantools does by default (strict: signals must fit their message and not overlap
within one multiplexer page), reads the capture with python-can's LogReader (any format it knows by
extension), and decodes every data frame whose id the DBC defines with Message.decode and its
defaults (value-table labels on, scaling on, no truncated payloads), the call a user makes. Prints
one JSON line: `frames` read, `decoded`, `undefined` (frames of ids the DBC does not define), and
`error` (null, or the first failure: the DBC load's message, or the frame's index, id, data and
cantools' message), then exits 0 either way; the test reads the verdict from the JSON.
"""

import json
import sys

import can
import cantools


def main(capture, dbc_path):
    out = {'frames': 0, 'decoded': 0, 'undefined': 0, 'error': None}
    try:
        db = cantools.database.load_file(dbc_path)
    except Exception as e:  # cantools raises several error types while loading; the text is the verdict
        out['error'] = f'load: {e}'
        print(json.dumps(out))
        return
    with can.LogReader(capture) as reader:
        for index, msg in enumerate(reader):
            if msg.is_error_frame or msg.is_remote_frame:
                continue
            out['frames'] += 1
            try:
                message = db.get_message_by_frame_id(msg.arbitration_id)
            except KeyError:
                out['undefined'] += 1
                continue
            try:
                message.decode(bytes(msg.data))
            except Exception as e:  # DecodeError and friends: report the frame and stop
                out['error'] = f'frame {index} id 0x{msg.arbitration_id:X} data {bytes(msg.data).hex()}: {e}'
                break
            out['decoded'] += 1
    print(json.dumps(out))


if __name__ == '__main__':
    if len(sys.argv) != 3:
        sys.exit('usage: decode_check.py <capture> <file.dbc>')
    main(sys.argv[1], sys.argv[2])
