/**
 * Every capture format canlab reads, in the order `readCapture` tries their `sniff`: a format whose
 * content test is stricter comes before one whose test is looser (the generic `id,data` CSV test
 * is the loosest, so it is last). A new reader adds one entry here, usually one `reader(…)` line.
 */
import type { CanFrame } from '../frame';
import { AscWriter, readAsc, readAscBatches } from './asc';
import { BlfWriter, readBlf, readBlfBatches } from './blf';
import { readBusmaster, readBusmasterBatches, sniffBusmaster } from './busmaster';
import { CandumpWriter, readCandump, readCandumpBatches } from './candump';
import type { CaptureWriter } from './common';
import { readCrtd, readCrtdBatches, sniffCrtd } from './crtd';
import { CsvWriter, readCsv, readCsvBatches, sniffGvret } from './csv';
import { readPcap, readPcapBatches, sniffPcap, sniffPcapng } from './pcap';
import { readCabana, readCabanaBatches, sniffCabana } from './cabana';
import { readCanHacker, readCanHackerBatches, sniffCanHacker } from './canhacker';
import { readClx000, readClx000Batches, sniffClx000 } from './clx000';
import { readGenericCsv, readGenericCsvBatches, sniffGenericCsv } from './generic-csv';
import {
  readKvaserDec,
  readKvaserDecBatches,
  readKvaserHex,
  readKvaserHexBatches,
  sniffKvaserDec,
  sniffKvaserHex,
} from './kvaser';
import { readLawicel, readLawicelBatches, sniffLawicel } from './lawicel';
import { readMicrochip, readMicrochipBatches, sniffMicrochip } from './microchip';
import { sniffAsc, sniffBlf, sniffCandump } from './sniff';
import { readTrc, readTrcBatches, sniffTrc } from './trc';
import { readVectorTrace, readVectorTraceBatches, sniffVectorTrace } from './vector-trace';

/** One capture format: how to recognise its files and how to read (and maybe write) them. */
export interface CaptureFormat {
  /** Named in messages and in every parse error (`file:line: <name>: <what>`). */
  name: string;
  /** The extensions its files usually carry, lower case with the dot (`.trc`); breaks sniff ties. */
  extensions: readonly string[];
  /**
   * Whether a file starting with `head` (its first SNIFF_BYTES bytes, fewer for a short file) looks
   * like this format. Must be cheap and must not throw; false positives are settled by list order.
   */
  sniff(head: Buffer): boolean;
  /** Streams the frames of a file, for callers that know the format. */
  read(file: string): AsyncIterable<CanFrame>;
  /** The same frames in arrays; `readCapture` and `readCaptureBatches` go through this one. */
  readBatches(file: string): AsyncIterable<CanFrame[]>;
  /** Opens a writer, for formats canlab writes (`convert` picks it by the output's extension). */
  open?(file: string): Promise<CaptureWriter>;
}

/** A read-only entry: the reader's two entry points, named once. */
function reader(
  name: string,
  extensions: readonly string[],
  sniff: (head: Buffer) => boolean,
  read: (file: string) => AsyncIterable<CanFrame>,
  readBatches: (file: string) => AsyncIterable<CanFrame[]>,
): CaptureFormat {
  return { name, extensions, sniff, read, readBatches };
}

export const CAPTURE_FORMATS: CaptureFormat[] = [
  { ...reader('Vector BLF', ['.blf'], sniffBlf, readBlf, readBlfBatches), open: (f) => BlfWriter.open(f) },
  {
    ...reader('candump log', ['.log'], sniffCandump, readCandump, readCandumpBatches),
    open: (f) => CandumpWriter.open(f),
  },
  { ...reader('Vector ASC', ['.asc'], sniffAsc, readAsc, readAscBatches), open: (f) => AscWriter.open(f) },
  reader('PCAN TRC', ['.trc'], sniffTrc, readTrc, readTrcBatches),
  reader('pcap', ['.pcap'], sniffPcap, readPcap, readPcapBatches),
  reader('pcapng', ['.pcapng'], sniffPcapng, readPcap, readPcapBatches),
  reader('BUSMASTER log', ['.log'], sniffBusmaster, readBusmaster, readBusmasterBatches),
  reader('CRTD', ['.crtd', '.crt'], sniffCrtd, readCrtd, readCrtdBatches),
  reader('Vector trace', ['.trace'], sniffVectorTrace, readVectorTrace, readVectorTraceBatches),
  { ...reader('GVRET CSV', ['.csv'], sniffGvret, readCsv, readCsvBatches), open: (f) => CsvWriter.open(f) },
  reader('cabana CSV', ['.csv'], sniffCabana, readCabana, readCabanaBatches),
  reader('CLX000 log', ['.txt'], sniffClx000, readClx000, readClx000Batches),
  reader('Kvaser text (hex)', ['.txt'], sniffKvaserHex, readKvaserHex, readKvaserHexBatches),
  reader('Kvaser text (decimal)', ['.txt'], sniffKvaserDec, readKvaserDec, readKvaserDecBatches),
  reader(
    'Microchip CAN BUS Analyzer log',
    ['.log', '.can'],
    sniffMicrochip,
    readMicrochip,
    readMicrochipBatches,
  ),
  reader('CANHacker trace', ['.trc'], sniffCanHacker, readCanHacker, readCanHackerBatches),
  reader('Lawicel/SLCAN log', ['.log', '.txt'], sniffLawicel, readLawicel, readLawicelBatches),
  // the loosest content test, so last
  reader('generic ID,data CSV', ['.csv'], sniffGenericCsv, readGenericCsv, readGenericCsvBatches),
];
