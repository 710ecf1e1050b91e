/**
 * DBC writer: serialises a DbcDatabase in the section order Vector tools use, so that
 * parseDbc(writeDbc(db)) equals db. Statements kept verbatim by the parser are re-emitted in the
 * section their keyword belongs to.
 */
import type { AttributeValue, DbcDatabase, DbcMessage, DbcSignal } from './model';
import { quote } from './parse';

const EXTENDED_FLAG = 0x80000000;

/** The usual `NS_` list, written when a model (e.g. a drafted one) has none. */
export const DEFAULT_NEW_SYMBOLS: readonly string[] = [
  'NS_DESC_',
  'CM_',
  'BA_DEF_',
  'BA_',
  'VAL_',
  'CAT_DEF_',
  'CAT_',
  'FILTER',
  'BA_DEF_DEF_',
  'EV_DATA_',
  'ENVVAR_DATA_',
  'SGTYPE_',
  'SGTYPE_VAL_',
  'BA_DEF_SGTYPE_',
  'BA_SGTYPE_',
  'SIG_TYPE_REF_',
  'VAL_TABLE_',
  'SIG_GROUP_',
  'SIG_VALTYPE_',
  'SIGTYPE_VALTYPE_',
  'BO_TX_BU_',
  'BA_DEF_REL_',
  'BA_REL_',
  'BA_DEF_DEF_REL_',
  'BU_SG_REL_',
  'BU_EV_REL_',
  'BU_BO_REL_',
  'SG_MUL_VAL_',
];

/** Number as the DBC text: shortest form that reads back to the same double. */
export function formatNumber(n: number): string {
  if (Object.is(n, -0)) return '-0';
  if (Number.isNaN(n)) throw new RangeError('a DBC number cannot be NaN');
  if (!Number.isFinite(n)) throw new RangeError('a DBC number cannot be infinite');
  return String(n).replace('e', 'E');
}

function fileId(message: DbcMessage): number {
  return message.extended && !message.idWithoutExtendedFlag ? message.id + EXTENDED_FLAG : message.id;
}

/** The name the file uses: the short one while the long-name attribute still holds the model's name. */
function fileName(object: DbcMessage | DbcSignal, longNameAttribute: string): string {
  return object.shortName !== undefined && object.attributes[longNameAttribute] === object.name
    ? object.shortName
    : object.name;
}

const messageName = (m: DbcMessage): string => fileName(m, 'SystemMessageLongSymbol');
const signalName = (s: DbcSignal): string => fileName(s, 'SystemSignalLongSymbol');

function attributeValue(value: AttributeValue): string {
  return typeof value === 'number' ? formatNumber(value) : quote(value);
}

function muxIndicator(signal: DbcSignal): string {
  if (signal.multiplexedWithoutValue) return signal.isMultiplexer ? ' mM' : ' m';
  if (signal.multiplexerValue !== undefined)
    return ` m${signal.multiplexerValue}${signal.isMultiplexer ? 'M' : ''}`;
  return signal.isMultiplexer ? ' M' : '';
}

function valueDescriptions(table: Map<number, string>): string {
  let out = '';
  for (const [value, label] of table) out += ` ${formatNumber(value)} ${quote(label)}`;
  return out;
}

/** Section of a verbatim statement, by its keyword. */
function sectionOf(statement: string): string {
  const keyword = /^[A-Za-z_][A-Za-z0-9_]*/.exec(statement)?.[0] ?? '';
  switch (keyword) {
    case 'EV_':
    case 'ENVVAR_DATA_':
    case 'EV_DATA_':
    case 'SGTYPE_':
    case 'SGTYPE_VAL_':
    case 'SIG_TYPE_REF_':
    case 'NS_DESC_':
    case 'BU_SG_REL_':
    case 'BU_EV_REL_':
    case 'BU_BO_REL_':
      return 'before_cm';
    case 'BO_TX_BU_':
      return 'tx';
    case 'CM_':
      return 'cm';
    case 'BA_DEF_SGTYPE_':
    case 'BA_DEF_REL_':
      return 'ba_def';
    case 'BA_DEF_DEF_':
    case 'BA_DEF_DEF_REL_':
      return 'ba_def_def';
    case 'BA_':
    case 'BA_SGTYPE_':
    case 'BA_REL_':
      return 'ba';
    case 'VAL_':
      return 'val';
    case 'SIG_VALTYPE_':
    case 'SIGTYPE_VALTYPE_':
      return 'valtype';
    case 'SG_MUL_VAL_':
      return 'mux';
    default:
      // CAT_DEF_, CAT_, FILTER, SIG_GROUP_ and anything else.
      return 'after_val';
  }
}

export function writeDbc(db: DbcDatabase): string {
  const out: string[] = [];
  const messages = db.independentSignals ? [...db.messages, db.independentSignals] : db.messages;
  const extra = new Map<string, string[]>();
  for (const statement of db.unparsedStatements ?? []) {
    const section = sectionOf(statement);
    const list = extra.get(section) ?? [];
    list.push(statement);
    extra.set(section, list);
  }
  const emitExtra = (section: string): void => {
    for (const statement of extra.get(section) ?? []) out.push(statement);
  };

  out.push(`VERSION ${quote(db.version)}`, '', '');
  out.push('NS_ : ');
  for (const symbol of db.newSymbols) out.push(`\t${symbol}`);
  out.push('');
  out.push(db.bitTiming ? `BS_: ${db.bitTiming}` : 'BS_:');
  out.push('');
  out.push(`BU_:${db.nodes.map((n) => ' ' + n.name).join('')}`);
  for (const [name, table] of db.valueTables) out.push(`VAL_TABLE_ ${name}${valueDescriptions(table)} ;`);
  out.push('', '');

  for (const message of messages) {
    out.push(`BO_ ${fileId(message)} ${messageName(message)}: ${message.length} ${message.sender}`);
    for (const s of message.signals) {
      const receivers = s.receivers.length > 0 ? s.receivers.join(',') : 'Vector__XXX';
      out.push(
        ` SG_ ${signalName(s)}${muxIndicator(s)} : ${s.startBit}|${s.length}@${s.byteOrder === 'little_endian' ? '1' : '0'}` +
          `${s.signed ? '-' : '+'} (${formatNumber(s.factor)},${formatNumber(s.offset)}) ` +
          `[${formatNumber(s.minimum)}|${formatNumber(s.maximum)}] ${quote(s.unit)} ${receivers}`,
      );
    }
    out.push('');
  }

  for (const message of messages) {
    if (message.transmitters && message.transmitters.length > 0) {
      out.push(`BO_TX_BU_ ${fileId(message)} : ${message.transmitters.join(',')};`);
    }
  }
  emitExtra('tx');
  out.push('', '');
  emitExtra('before_cm');

  if (db.comment !== undefined) out.push(`CM_ ${quote(db.comment)};`);
  for (const node of db.nodes) {
    if (node.comment !== undefined) out.push(`CM_ BU_ ${node.name} ${quote(node.comment)};`);
  }
  for (const message of messages) {
    if (message.comment !== undefined) out.push(`CM_ BO_ ${fileId(message)} ${quote(message.comment)};`);
    for (const s of message.signals) {
      if (s.comment !== undefined)
        out.push(`CM_ SG_ ${fileId(message)} ${signalName(s)} ${quote(s.comment)};`);
    }
  }
  emitExtra('cm');

  for (const def of db.attributeDefinitions) {
    const object = def.objectType ? `${def.objectType}  ` : ' ';
    out.push(`BA_DEF_ ${object}${quote(def.name)} ${def.definition};`);
  }
  emitExtra('ba_def');
  for (const def of db.attributeDefinitions) {
    if (def.defaultValue !== undefined)
      out.push(`BA_DEF_DEF_  ${quote(def.name)} ${attributeValue(def.defaultValue)};`);
  }
  emitExtra('ba_def_def');

  for (const [name, value] of Object.entries(db.attributes))
    out.push(`BA_ ${quote(name)} ${attributeValue(value)};`);
  for (const node of db.nodes) {
    for (const [name, value] of Object.entries(node.attributes)) {
      out.push(`BA_ ${quote(name)} BU_ ${node.name} ${attributeValue(value)};`);
    }
  }
  for (const message of messages) {
    for (const [name, value] of Object.entries(message.attributes)) {
      out.push(`BA_ ${quote(name)} BO_ ${fileId(message)} ${attributeValue(value)};`);
    }
    for (const s of message.signals) {
      for (const [name, value] of Object.entries(s.attributes)) {
        out.push(`BA_ ${quote(name)} SG_ ${fileId(message)} ${signalName(s)} ${attributeValue(value)};`);
      }
    }
  }
  emitExtra('ba');

  for (const message of messages) {
    for (const s of message.signals) {
      if (s.valueTable)
        out.push(`VAL_ ${fileId(message)} ${signalName(s)}${valueDescriptions(s.valueTable)} ;`);
    }
  }
  emitExtra('val');
  emitExtra('after_val');

  for (const message of messages) {
    for (const s of message.signals) {
      if (s.valueType !== 'integer') {
        out.push(`SIG_VALTYPE_ ${fileId(message)} ${signalName(s)} : ${s.valueType === 'float32' ? 1 : 2};`);
      }
    }
  }
  emitExtra('valtype');

  for (const message of messages) {
    for (const s of message.signals) {
      const mux = s.extendedMultiplexing;
      if (mux) {
        const ranges = mux.ranges.map(([lo, hi]) => `${lo}-${hi}`).join(', ');
        const switchSignal = message.signals.find((x) => x.name === mux.multiplexer);
        const switchName = switchSignal ? signalName(switchSignal) : mux.multiplexer;
        out.push(`SG_MUL_VAL_ ${fileId(message)} ${signalName(s)} ${switchName} ${ranges};`);
      }
    }
  }
  emitExtra('mux');
  out.push('');
  return out.join('\n');
}
