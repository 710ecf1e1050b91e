"""Writes the reference capture files of canlab's format tests.

1. With the tool that owns the format, where the project can run it: python-can's TRCWriter writes
   PEAK TRC 1.0 and 2.1 (the versions it writes; it reads more) into
   canlab/test/fixtures/formats/python-can/, each beside a JSON of the messages it was given and of
   what python-can reads back.
2. Faithful reconstructions where the owning tool cannot run here (Windows-only or hardware-bound
   loggers): the layouts of Kvaser's text export, CSS Electronics' CLX000 logs, CANHacker traces,
   Lawicel/SLCAN serial logs, cabana's CSV export (both generations) and SavvyCAN's current GVRET
   CSV, each written as its owner's source or published description lays it out (the function
   comments name the source). The frames are the first 43 rows of SavvyCAN's own example capture
   (test/fixtures/formats/savvycan/GVRET_Log.csv) plus a few that exercise what each layout can
   say beyond them (29-bit ids, Tx, a second bus, remote and CAN FD frames). Each file goes to
   canlab/test/fixtures/formats/reconstructed/ beside a JSON of the frames it holds.

Run: "$(infra/can-tools.sh path)" canlab/tools/formats_fixtures.py   (from the repository root)
"""

import json
import logging
import os
import sys

import can
from can.io.trc import TRCFileVersion, TRCWriter

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "formats", "python-can")

# Classic frames only: TRCWriter logs no remote, error or CAN FD frames (it warns and drops them).
# Channels 0 and 1 (written as bus 1 and 2), Rx and Tx, 11- and 29-bit ids, every data length.
START = 1700000000.25


def messages():
    out = []
    t = START
    for i in range(24):
        t += 0.001 + (i % 5) * 0.0137
        extended = i % 3 == 1
        arbitration_id = (0x18FF0000 + i * 0x111) if extended else (0x100 + i * 0x35) & 0x7FF
        dlc = i % 9
        out.append(
            can.Message(
                timestamp=round(t, 6),
                arbitration_id=arbitration_id,
                is_extended_id=extended,
                dlc=dlc,
                data=bytes((i * 37 + k * 11) & 0xFF for k in range(dlc)),
                channel=i % 2,
                is_rx=i % 4 != 3,
            )
        )
    return out


def as_json(msg):
    return {
        "timestamp": msg.timestamp,
        "id": msg.arbitration_id,
        "extended": msg.is_extended_id,
        "dlc": msg.dlc,
        "data": msg.data.hex(),
        "channel": msg.channel,
        "rx": msg.is_rx,
    }


def write_trc(name, version, msgs):
    path = os.path.join(OUT, name)
    with TRCWriter(path) as writer:
        writer.file_version = version
        for msg in msgs:
            writer.on_message_received(msg)
    # what python-can itself reads back, so a test can also hold canlab to the owner's reading
    with can.TRCReader(path) as reader:
        back = [as_json(m) for m in reader]
    with open(path + ".json", "w") as f:
        json.dump({"written": [as_json(m) for m in msgs], "python_can_reads": back}, f, indent=1)
        f.write("\n")


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "fixtures", "formats")
RECON = os.path.join(FIXTURES, "reconstructed")


def savvycan_frames():
    """The rows of SavvyCAN's example capture (older GVRET layout: no Dir column, padded to D8)."""
    out = []
    with open(os.path.join(FIXTURES, "savvycan", "GVRET_Log.csv")) as f:
        next(f)
        for row in f:
            cols = row.rstrip("\n").split(",")
            length = int(cols[4])
            out.append(frame(int(cols[0]) / 1e6, int(cols[1], 16), bytes(int(b, 16) for b in cols[5 : 5 + length])))
    return out


def frame(t, can_id, data, extended=None, channel=0, tx=False, remote=False, dlc=None, fd=False, brs=False):
    return {
        "timestamp": round(t, 6),
        "id": can_id,
        "extended": can_id > 0x7FF if extended is None else extended,
        "remote": remote,
        "fd": fd,
        "brs": brs,
        "dlc": len(data) if dlc is None else dlc,
        "data": data.hex(),
        "channel": channel,
        "direction": "tx" if tx else "rx",
    }


BASE = savvycan_frames()
EXT = frame(166.090125, 0x18FEF100, bytes([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]), channel=1, tx=True)
EMPTY = frame(166.091, 0x7FF, b"")


def write_recon(name, text, frames, keep):
    """Writes a reconstructed file and the frames it holds, with only the fields its layout records."""
    os.makedirs(RECON, exist_ok=True)
    with open(os.path.join(RECON, name), "w", newline="") as f:
        f.write(text)
    with open(os.path.join(RECON, name + ".json"), "w") as f:
        json.dump([{k: v for k, v in fr.items() if k in keep} for fr in frames], f, indent=0)
        f.write("\n")


def kvaser(radix):
    """Kvaser's text export, at the columns SavvyCAN's loadKvaserFile reads (Chn 0-2, Identifier
    4-13, Flg 14-20, DLC 21-23, D0..D7 from 25 every 4, Time 57-70, Dir 72)."""
    frames = BASE + [
        EXT,
        frame(166.0905, 0x123, bytes([0xAB, 0xCD]), extended=True, channel=1),
        frame(166.0907, 0x321, b"", remote=True, dlc=4, tx=True),
        EMPTY,
    ]
    num = (lambda v, w: format(v, "X").zfill(w)) if radix == 16 else (lambda v, w: str(v))
    lines = ["Chn Identifier Flg   DLC  D0...1...2...3...4...5...6..D7       Time     Dir"]
    for fr in frames:
        flags = " ".join(f for f, on in (("X", fr["extended"] and fr["id"] <= 0x7FF), ("R", fr["remote"])) if on)
        data = bytes.fromhex(fr["data"])
        cells = "".join(num(b, 2).rjust(3) + " " for b in data).ljust(32)
        lines.append(
            f"{fr['channel']:>2}  {num(fr['id'], 8):>10} {flags:<6}{fr['dlc']:>3} {cells}{fr['timestamp']:>14.6f} {'T' if fr['direction'] == 'tx' else 'R'}"
        )
    keep = {"timestamp", "id", "extended", "remote", "dlc", "data", "channel", "direction"}
    write_recon(f"kvaser_{'hex' if radix == 16 else 'dec'}.txt", "\n".join(lines) + "\n", frames, keep)


def clx000():
    """A CL2000 log as cllog.c (Wireshark, from CSS Electronics' plugin) reads it: 16 "# key: value"
    lines, the column line, then rows; time format 4 (day, time, ms) with a T date/time separator."""
    frames = [dict(fr, timestamp=round(1604404800 + fr["timestamp"] - 166, 3)) for fr in BASE + [EXT, EMPTY]]
    header = [
        "# Logger type: CL2000",
        "# HW rev: 3.0",
        "# FW rev: 4.80",
        "# Logger ID: 6BFF6A8E",
        "# Session No.: 12",
        "# Split No.: 1",
        "# Time: 20201103T120000",
        '# Value separator: ";"',
        "# Time format: 4",
        '# Time separator: ""',
        '# Time separator ms: ""',
        '# Date separator: ""',
        '# Time and date separator: "T"',
        "# Bit-rate: 500000",
        "# Silent mode: true",
        "# Cyclic mode: false",
        "Timestamp;Type;ID;Data",
    ]
    rows = []
    for fr in frames:
        ms = round(fr["timestamp"] * 1000)
        sec, milli = divmod(ms, 1000)
        t = __import__("time").gmtime(sec)
        stamp = f"{t.tm_mday:02}T{t.tm_hour:02}{t.tm_min:02}{t.tm_sec:02}{milli:03}"
        kind = (8 if fr["direction"] == "tx" else 0) + (1 if fr["extended"] else 0)
        rows.append(f"{stamp};{kind};{fr['id']:0{8 if fr['extended'] else 3}X};{fr['data'].upper()}")
    keep = {"timestamp", "id", "extended", "dlc", "data", "direction"}
    write_recon("clx000.txt", "\n".join(header + rows) + "\n", frames, keep)


def canhacker():
    """A CANHacker trace as SavvyCAN's loadCANHackerFile reads it: header, then seconds within the
    minute (SS.mmm), the id (8 hex digits when 29-bit), DLC and bytes."""
    frames = BASE + [EXT, EMPTY]
    lines = ["Time   ID     DLC Data                    Comment"]
    for fr in frames:
        data = " ".join(fr["data"][i : i + 2].upper() for i in range(0, len(fr["data"]), 2))
        can_id = f"{fr['id']:08X}" if fr["extended"] else f"{fr['id']:03X}"
        lines.append(f"{fr['timestamp'] % 60:06.3f} {can_id} {fr['dlc']} {data}".rstrip())
    keep = {"timestamp", "id", "extended", "dlc", "data"}
    write_recon("canhacker.trc", "\n".join(lines) + "\n", frames, keep)


def lawicel():
    """What a Lawicel/SLCAN adapter sends with timestamps on (Z1): one message per CR, 4 hex digits of
    milliseconds (0-EA5F) at the end; the acknowledgements z/Z of the host's own sends in between."""
    fd = frame(166.0912, 0x0F0, bytes(range(12)), fd=True, brs=True, dlc=9)
    frames = BASE + [EXT, frame(166.0909, 0x100, b"", remote=True, dlc=2), fd, EMPTY]
    out = []
    for i, fr in enumerate(frames):
        ext = fr["extended"]
        kind = ("B" if ext else "b") if fr["fd"] else ("R" if ext else "r") if fr["remote"] else ("T" if ext else "t")
        can_id = f"{fr['id']:08X}" if ext else f"{fr['id']:03X}"
        out.append(f"{kind}{can_id}{fr['dlc']:X}{fr['data'].upper()}{round(fr['timestamp'] * 1000) % 60000:04X}")
        if i == 5:
            out.append("z")
    keep = {"timestamp", "id", "extended", "remote", "fd", "brs", "dlc", "data"}
    write_recon("lawicel.log", "\r".join(out) + "\r", frames, keep)


def cabana():
    """cabana's CSV, as openpilot's tools/cabana/utils/export.cc writes it (time with 3 decimals,
    0x hex addr, bus, 0x and upper-case hex data; std::uppercase set by the first row's data stays
    on for later addrs) and as the older web cabana's "Save Log" wrote it (decimal addr, bare hex)."""
    fd = frame(166.0913, 0x50, bytes(range(0x40, 0x4C)), fd=True, dlc=9, channel=2)
    frames = BASE + [dict(EXT, direction="rx"), fd, EMPTY]
    new = ["time,addr,bus,data"]
    old = ["time,addr,bus,data"]
    for i, fr in enumerate(frames):
        addr = f"{fr['id']:x}" if i == 0 else f"{fr['id']:X}"
        new.append(f"{fr['timestamp']:.3f},0x{addr},{fr['channel']},0x{fr['data'].upper()}")
        old.append(f"{fr['timestamp']},{fr['id']},{fr['channel']},{fr['data']}")
    keep = {"timestamp", "id", "extended", "fd", "dlc", "data", "channel"}
    write_recon("cabana.csv", "\n".join(new) + "\n", frames, keep)
    write_recon("cabana_web.csv", "\n".join(old) + "\n", frames, keep)


def gvret_current():
    """SavvyCAN's current GVRET layout, as saveNativeCSVFile writes it: a Dir column, the ID with 8
    hex digits, Bus, LEN, and all eight D columns padded with 00, each followed by a comma."""
    frames = BASE[:12] + [EXT, frame(166.0911, 0x55, bytes([1, 2, 3]), channel=1, tx=True), EMPTY]
    lines = ["Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8"]
    for fr in frames:
        data = bytes.fromhex(fr["data"])
        cells = "".join(f"{data[k]:02X}," if k < len(data) else "00," for k in range(8))
        lines.append(
            f"{round(fr['timestamp'] * 1e6)},{fr['id']:08X},{'true' if fr['extended'] else 'false'},"
            f"{'Tx' if fr['direction'] == 'tx' else 'Rx'},{fr['channel']},{len(data)},{cells}"
        )
    keep = {"timestamp", "id", "extended", "dlc", "data", "channel", "direction"}
    write_recon("gvret_current.csv", "\n".join(lines) + "\n", frames, keep)


def main():
    logging.basicConfig(level=logging.ERROR)
    os.makedirs(OUT, exist_ok=True)
    msgs = messages()
    write_trc("v1_0.trc", TRCFileVersion.V1_0, msgs)
    write_trc("v2_1.trc", TRCFileVersion.V2_1, msgs)
    print(f"wrote {len(msgs)} messages per file to {os.path.normpath(OUT)} with python-can {can.__version__}")
    kvaser(16)
    kvaser(10)
    clx000()
    canhacker()
    lawicel()
    cabana()
    gvret_current()
    print(f"wrote the reconstructed layouts to {os.path.normpath(RECON)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
