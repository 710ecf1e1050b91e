#!/usr/bin/env python3
"""canlab's Wireshark-side test fixtures, and what Wireshark reads in them.

1. Writes small SocketCAN captures (LINKTYPE_CAN_SOCKETCAN, 227) with scapy, the packet tool that
   writes pcap and pcapng with that link type (python-can writes neither):
   - socketcan-usec-le.pcap   pcap, microsecond timestamps, little-endian;
   - socketcan-nsec-be.pcap   pcap, nanosecond timestamps, big-endian, counted from 1.123456789 s
                              (near zero, where a double holds nanoseconds: a relative capture);
   - socketcan-nsec.pcapng    the previous one converted by Wireshark's editcap, which writes an
                              if_tsresol of 9 (nanoseconds);
   - socketcan-interfaces.pcapng  several interfaces (two CAN ones and an Ethernet one between them),
                              packet directions (epb_flags), a Simple Packet Block;
   - socketcan-tsoffset-be.pcapng  a big-endian section whose interface has a binary if_tsresol (2^-30 s)
                              and an if_tsoffset, with tick counts above 2^53;
   - ethernet.pcap, ethernet.pcapng  an Ethernet capture (a link type canlab refuses), and editcap's
                              pcapng of it.
   Every capture holds standard and extended ids, data, remote and error frames, and CAN FD frames
   with and without BRS/ESI; some classic frames are padded to 16 bytes as Linux captures them, one
   carries len8_dlc 12.
   They go to canlab/test/fixtures/formats/pcap/.
2. Reads every capture, and the hand-written BUSMASTER logs in ../busmaster/ (Wireshark reads those too),
   with tshark, the reference reader, and writes what it shows, frame by frame, to
   <fixture>.tshark.json, which canlab's pcap and BUSMASTER tests compare with canlab's reading.
   tshark runs with TZ=UTC: BUSMASTER logs carry local times without a zone and canlab reads them as
   UTC.

Needs scapy (pinned in tools/can/requirements.txt, installed by infra/can-tools.sh) and Debian's
tshark and editcap (`apt-get install tshark`). From the repository root:

    "$(bash infra/can-tools.sh path)" canlab/tools/wireshark_fixtures.py
"""

import json
import os
import struct
import subprocess
import sys
from decimal import Decimal

from scapy.layers.can import CAN, CANFD
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import EDecimal, PcapNgWriter, PcapWriter, RawPcapNgWriter

FORMATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'fixtures', 'formats')
FIXTURES = os.path.join(FORMATS, 'pcap')
BUSMASTER_LOGS = [os.path.join(FORMATS, 'busmaster', name)
                  for name in ['busmaster-hex-system.log', 'busmaster-dec-sessions.log']]


def padded(pkt, size=16):
    """A classic frame as Linux captures it: the SocketCAN header and 8 data bytes, zero-padded."""
    raw = bytes(pkt)
    return Raw(raw + b'\0' * (size - len(raw)))


def frames(base):
    """The frames every capture holds, `base` + offsets as exact decimals (scapy turns them into ticks)."""
    out = [
        CAN(identifier=0x123, data=bytes.fromhex('deadbeef')),
        padded(CAN(flags='extended', identifier=0x18FF00AA, data=bytes(range(1, 9)))),
        CAN(identifier=0x7FF, data=b''),
        padded(CAN(flags='remote_transmission_request', identifier=0x456, length=4)),
        CAN(flags='extended+remote_transmission_request', identifier=0x1ABCDEF0, length=0),
        # error frame: controller problem (0x04) and bus error (0x80), RX warning in data[1]
        CAN(flags='error', identifier=0x84, data=bytes([0, 0x04, 0, 0, 0, 0, 0, 0])),
        CANFD(identifier=0x300, fd_flags='bit_rate_switch+fd_frame', data=bytes(range(0x80, 0x8C))),
        CANFD(flags='extended', identifier=0x1C4D80A7, fd_flags='bit_rate_switch+error_state_indicator+fd_frame',
              data=bytes((i * 7) & 0xFF for i in range(64))),
        CANFD(identifier=0x301, fd_flags='fd_frame', data=bytes(range(0x10, 0x15))),
        # classic 8-byte frame with len8_dlc 12 (Linux >= 5.11, CAN_CTRLMODE_CC_LEN8_DLC)
        Raw(struct.pack('>IBBBB', 0x321, 8, 0, 0, 12) + bytes(range(0x40, 0x48))),
        CAN(identifier=0x000, data=bytes([0x55])),
    ]
    for i, pkt in enumerate(out):
        pkt.time = base + Decimal(i) * Decimal('0.001237')
    return out


def write_pcaps():
    usec = PcapWriter(os.path.join(FIXTURES, 'socketcan-usec-le.pcap'), linktype=227, endianness='<')
    for pkt in frames(EDecimal('1718000000.000123')):
        usec.write(pkt)
    usec.close()

    nsec_path = os.path.join(FIXTURES, 'socketcan-nsec-be.pcap')
    nsec = PcapWriter(nsec_path, linktype=227, endianness='>', nano=True)
    for pkt in frames(EDecimal('1.123456789')):
        nsec.write(pkt)
    nsec.close()
    subprocess.run(['editcap', '-F', 'pcapng', nsec_path, os.path.join(FIXTURES, 'socketcan-nsec.pcapng')],
                   check=True)

    eth = PcapWriter(os.path.join(FIXTURES, 'ethernet.pcap'))
    pkt = Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src='10.0.0.1', dst='10.0.0.2') / UDP(
        sport=29536, dport=29536) / Raw(b'not CAN')
    pkt.time = EDecimal('1718000002')
    eth.write(pkt)
    eth.close()
    subprocess.run(['editcap', '-F', 'pcapng', os.path.join(FIXTURES, 'ethernet.pcap'),
                    os.path.join(FIXTURES, 'ethernet.pcapng')], check=True)


def write_interfaces():
    """can0, then eth0, then can1; directions on some packets; a Simple Packet Block at the end."""
    path = os.path.join(FIXTURES, 'socketcan-interfaces.pcapng')
    w = PcapNgWriter(path)
    pkts = frames(EDecimal('1718000003.5'))
    for i, pkt in enumerate(pkts):
        pkt.sniffed_on = 'can0' if i % 2 == 0 else 'can1'
        if i % 3 != 2:
            pkt.direction = 1 if i % 3 == 0 else 2
        if i == 1:
            eth = Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / Raw(b'between')
            eth.time = pkt.time
            eth.sniffed_on = 'eth0'
            w.write(eth)
        w.write(pkt)
    # interface 0 (scapy's unnamed first interface, SocketCAN) gets a packet without a timestamp
    w._write_block_spb(bytes(CAN(identifier=0x5A5, data=bytes([1, 2, 3]))))
    w.close()


def write_tsoffset():
    """A big-endian section, an interface counting 2^-30 s ticks from if_tsoffset seconds."""
    path = os.path.join(FIXTURES, 'socketcan-tsoffset-be.pcapng')
    w = RawPcapNgWriter(path)
    w.endian = '>'
    w.endian_magic = b'\x1a\x2b\x3c\x4d'
    w.header_present = True  # written here, with the options scapy's own header would lack
    w._write_block_shb()
    offset = 1700000000
    w.tsresol = 2 ** 30
    opts = struct.pack('>HHB3x', 9, 1, 0x80 | 30) + struct.pack('>HHq', 14, 8, offset) + struct.pack('>HH', 0, 0)
    w.f.write(w.build_block(struct.pack('>I', 1), struct.pack('>HHI', 227, 0, 262144), options=opts))
    for pkt in frames(EDecimal('18000004.25')):
        w._write_block_epb(bytes(pkt), ifid=0, timestamp=pkt.time)
    w.close()


def flag(layer, name):
    value = find(layer, name)
    return value == '1' if value is not None else None


def find(tree, key):
    """The value of `key` anywhere in a tshark JSON layer tree, or None."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        for value in tree.values():
            found = find(value, key)
            if found is not None:
                return found
    return None


def error_class(layer):
    """The error class bits of an error frame: the masks of the can.err.* flags tshark shows set."""
    mask = 0
    for key, raw in layer.items():
        if key.startswith('can.err.') and key.endswith('_raw') and layer.get(key[:-4]) == '1':
            mask |= raw[3]
    return mask


def tshark_frames(path):
    env = dict(os.environ, TZ='UTC')
    out = subprocess.run(['tshark', '-r', path, '-T', 'json', '-x'], check=True, capture_output=True, env=env)
    packets = json.loads(out.stdout)
    result = []
    for packet in packets:
        layers = packet['_source']['layers']
        can = layers.get('canfd') or layers.get('can')
        if can is None:
            continue  # a packet of another interface (Ethernet)
        frame = layers['frame']
        fd = 'canfd' in layers
        error = flag(can, 'can.flags.err') is True
        remote = flag(can, 'can.flags.rtr') is True
        length = int(find(can, 'can.len'))
        # The payload follows the 8-byte SocketCAN header in the bytes the can/canfd dissector got
        # (for BUSMASTER logs, the frame Wireshark builds from the line); taken from those because
        # Wireshark hands the payload to whichever dissector claims it (data, autosar-nm...), and an
        # error frame's to none.
        raw = bytes.fromhex((layers.get('canfd_raw') or layers['can_raw'])[0])
        # Wireshark shows zeros for BUSMASTER remote frames; a remote frame carries no data
        data = None if remote else raw[8:8 + length].hex()
        reserved = find(can, 'can.reserved')
        direction = find(frame, 'frame.packet_flags_direction')
        result.append({
            'time': find(frame, 'frame.time_epoch'),
            'interface': int(find(frame, 'frame.interface_id')) if find(frame, 'frame.interface_id') else None,
            'direction': {'0x00000001': 'rx', '0x00000002': 'tx'}.get(direction),
            'id': error_class(can) if error else int(find(can, 'can.id')),
            'extended': flag(can, 'can.flags.xtd') is True,
            'remote': remote,
            'error': error,
            'fd': fd,
            'brs': flag(can, 'canfd.flags.brs') is True,
            'esi': flag(can, 'canfd.flags.esi') is True,
            'length': length,
            # classic frames: the last byte of the 3 reserved ones is len8_dlc
            'len8_dlc': int(reserved.split(':')[-1], 16) if reserved and not fd else 0,
            'data': data,
        })
    return result


def main():
    os.makedirs(FIXTURES, exist_ok=True)
    write_pcaps()
    write_interfaces()
    write_tsoffset()
    version = subprocess.run(['tshark', '--version'], check=True, capture_output=True, text=True).stdout
    captures = [os.path.join(FIXTURES, name) for name in [
        'socketcan-usec-le.pcap', 'socketcan-nsec-be.pcap', 'socketcan-nsec.pcapng',
        'socketcan-interfaces.pcapng', 'socketcan-tsoffset-be.pcapng']]
    for path in captures + BUSMASTER_LOGS:
        name = os.path.basename(path)
        listing = {
            'reader': version.splitlines()[0],
            'command': f'TZ=UTC tshark -r {name} -T json -x',
            'frames': tshark_frames(path),
        }
        with open(path + '.tshark.json', 'w') as f:
            json.dump(listing, f, indent=1)
            f.write('\n')
        print(f'{name}: {len(listing["frames"])} frames', file=sys.stderr)


if __name__ == '__main__':
    main()
