/**
 * In-memory model of a DBC signal database. The parser produces it, the writer serialises it, the
 * codec encodes and decodes with it, and the detectors' draft builder emits it. Names follow the
 * DBC keywords so a reader of the file format finds their way.
 */

/** Intel = little endian (`@1`), Motorola = big endian (`@0`). */
export type ByteOrder = 'little_endian' | 'big_endian';

/** Numeric type of a signal's raw value: integer (signed per `signed`) or IEEE float (`SIG_VALTYPE_` 1 / 2). */
export type ValueType = 'integer' | 'float32' | 'float64';

export type AttributeValue = string | number;

/** `SG_MUL_VAL_` entry: this signal is active when `multiplexer` holds a value inside one of `ranges`. */
export interface ExtendedMultiplexing {
  multiplexer: string;
  ranges: Array<[number, number]>;
}

export interface DbcSignal {
  name: string;
  /** DBC start bit: for big endian the most significant bit in the sawtooth numbering; for little endian the least significant bit. */
  startBit: number;
  length: number;
  byteOrder: ByteOrder;
  signed: boolean;
  valueType: ValueType;
  factor: number;
  offset: number;
  minimum: number;
  maximum: number;
  unit: string;
  receivers: string[];
  /** True for the multiplexer switch (`M`). A signal may be both a switch and multiplexed (`m3M`). */
  isMultiplexer: boolean;
  /** Multiplexer value selecting this signal (`m<N>`), or undefined for an always-present signal. */
  multiplexerValue?: number;
  /**
   * Written `m` (or `mM`) without a value: multiplexed, with the switch values only in its
   * `SG_MUL_VAL_` entry, as cantools reads such a signal; without one it is never decoded.
   */
  multiplexedWithoutValue?: true;
  /** Extended multiplexing from `SG_MUL_VAL_`, when present. */
  extendedMultiplexing?: ExtendedMultiplexing;
  /** `VAL_` table: raw value → label. */
  valueTable?: Map<number, string>;
  comment?: string;
  attributes: Record<string, AttributeValue>;
  /**
   * The name as the `SG_` line writes it, when a `SystemSignalLongSymbol` attribute gave the long
   * one in `name` (DBC names stop at 32 characters; Vector tools and cantools use the long one).
   */
  shortName?: string;
}

export interface DbcMessage {
  /** Arbitration id without the DBC's extended flag bit (bit 31 in the file). */
  id: number;
  extended: boolean;
  /**
   * The file wrote this 29-bit id without the extended flag (an id above 0x7FF cannot be an
   * 11-bit one): read as extended, as opendbc and SavvyCAN match it, and written back as it was.
   */
  idWithoutExtendedFlag?: true;
  name: string;
  /** Payload length in bytes (up to 64 for CAN FD messages). */
  length: number;
  sender: string;
  signals: DbcSignal[];
  comment?: string;
  attributes: Record<string, AttributeValue>;
  /** Transmitters beyond the sender (`BO_TX_BU_`). */
  transmitters?: string[];
  /** The name as the `BO_` line writes it, when a `SystemMessageLongSymbol` attribute gave the long one in `name`. */
  shortName?: string;
}

export interface DbcNode {
  name: string;
  comment?: string;
  attributes: Record<string, AttributeValue>;
}

/** `BA_DEF_` definition: which object kind it applies to and its value type text as written. */
export interface AttributeDefinition {
  name: string;
  objectType: '' | 'BU_' | 'BO_' | 'SG_' | 'EV_';
  /** The type and range as written after the name, e.g. `INT 0 65535` or `ENUM "a","b"`. */
  definition: string;
  defaultValue?: AttributeValue;
}

export interface DbcDatabase {
  version: string;
  /** `NS_` symbols, kept verbatim so a rewrite preserves them. */
  newSymbols: string[];
  /** `BS_` bit timing, usually empty. */
  bitTiming: string;
  nodes: DbcNode[];
  /** `VAL_TABLE_` named tables. */
  valueTables: Map<string, Map<number, string>>;
  messages: DbcMessage[];
  /**
   * Vector's `VECTOR__INDEPENDENT_SIG_MSG` pseudo-message, which holds signals not assigned to any
   * message: kept (with its comments, attributes and value tables) so a rewrite preserves it, but
   * outside `messages` because no frame carries it (cantools drops it too).
   */
  independentSignals?: DbcMessage;
  comment?: string;
  attributeDefinitions: AttributeDefinition[];
  /** Attributes set on the network (`BA_ "name" value;`). */
  attributes: Record<string, AttributeValue>;
  /**
   * Statements the model has no structure for, kept verbatim (keyword to `;`) so that a rewrite
   * preserves them: `EV_`, `ENVVAR_DATA_`, `SGTYPE_`, `SIG_GROUP_`, `BA_DEF_REL_`, `BA_REL_`,
   * `BA_DEF_DEF_REL_`, `CAT_`, `FILTER`, comments and attributes of environment variables, and
   * `CM_`/`BA_`/`VAL_` statements naming a message, signal or node the file does not define.
   * Absent when there are none.
   */
  unparsedStatements?: string[];
}
