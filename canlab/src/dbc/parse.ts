/**
 * DBC parser. A tokenizer turns the text into identifiers, numbers, strings and punctuation (with
 * line numbers); a statement parser dispatches on the leading keyword. Every keyword of the DBC
 * format is known: the ones the model has structure for are parsed into it, the rest (`EV_`,
 * `SIG_GROUP_`, `BA_DEF_REL_`, ...) are kept verbatim in `unparsedStatements` so a rewrite keeps
 * them. A keyword outside the format, or a statement that does not follow its grammar, throws
 * CanlabInputError with `file:line`.
 */
import { readFile } from 'node:fs/promises';
import { CanlabInputError } from '../errors';
import type {
  AttributeDefinition,
  AttributeValue,
  DbcDatabase,
  DbcMessage,
  DbcNode,
  DbcSignal,
  ValueType,
} from './model';

type TokenKind = 'id' | 'num' | 'str' | 'punct';

interface Token {
  kind: TokenKind;
  /** Identifier / punctuation text, a number's source text, or a string's unescaped content. */
  text: string;
  line: number;
  /** Offsets into the source, for verbatim slices. */
  start: number;
  end: number;
  /** First token on its line. */
  lineStart: boolean;
}

/** Keywords whose statements the model stores verbatim. All end with `;`. */
const VERBATIM_KEYWORDS = new Set([
  'EV_',
  'ENVVAR_DATA_',
  'EV_DATA_',
  'SGTYPE_',
  'SGTYPE_VAL_',
  'SIG_TYPE_REF_',
  'SIGTYPE_VALTYPE_',
  'BA_DEF_SGTYPE_',
  'BA_SGTYPE_',
  'BA_DEF_REL_',
  'BA_REL_',
  'BA_DEF_DEF_REL_',
  'BU_SG_REL_',
  'BU_EV_REL_',
  'BU_BO_REL_',
  'CAT_DEF_',
  'CAT_',
  'FILTER',
  'SIG_GROUP_',
  'NS_DESC_',
]);

const STRUCTURED_KEYWORDS = new Set([
  'VERSION',
  'NS_',
  'BS_',
  'BU_',
  'VAL_TABLE_',
  'BO_',
  'SG_',
  'BO_TX_BU_',
  'CM_',
  'BA_DEF_',
  'BA_DEF_DEF_',
  'BA_',
  'VAL_',
  'SIG_VALTYPE_',
  'SG_MUL_VAL_',
]);

/** Every keyword that may start a DBC statement. */
export const DBC_KEYWORDS: ReadonlySet<string> = new Set([...STRUCTURED_KEYWORDS, ...VERBATIM_KEYWORDS]);

const EXTENDED_FLAG = 0x80000000;
const MAX_STANDARD_ID = 0x7ff;
const MAX_EXTENDED_ID = 0x1fffffff;
/** Vector's pseudo-message for signals that belong to no message (CANdb++ writes it with id 0xC0000000). */
const INDEPENDENT_SIGNALS = 'VECTOR__INDEPENDENT_SIG_MSG';

export type DbcFindingLevel = 'error' | 'warning' | 'note';

/** Something worth knowing about a DBC that parses: what canlab made of it, and what will not work. */
export interface DbcFinding {
  /** Line of the statement the finding is about. */
  line: number;
  /** error: part of the file can never decode; warning: it decodes, maybe not as meant; note: for information. */
  level: DbcFindingLevel;
  /** Stable identifier, e.g. `id-without-extended-flag`. */
  code: string;
  message: string;
  /** True when it changes which frames or signals `canlab decode` writes (decode prints those). */
  decoding: boolean;
}

/** A parsed DBC with what the parser found and where each message and signal is defined. */
export interface ParsedDbc {
  db: DbcDatabase;
  findings: DbcFinding[];
  /** The line of each message's `BO_` and each signal's `SG_`. */
  lines: Map<DbcMessage | DbcSignal, number>;
}

function isIdStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
function isIdChar(c: number): boolean {
  return isIdStart(c) || isDigit(c);
}

const NUMBER_RE = /[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;

function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineHasToken = false;
  const n = text.length;
  const push = (kind: TokenKind, value: string, start: number, end: number, startLine: number): void => {
    tokens.push({ kind, text: value, line: startLine, start, end, lineStart: !lineHasToken });
    lineHasToken = true;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      lineHasToken = false;
      i++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13 || c === 12 || c === 11 || c === 0xfeff) {
      i++;
      continue;
    }
    if (c === 47 && text.charCodeAt(i + 1) === 47) {
      // `//` comment to the end of the line.
      while (i < n && text.charCodeAt(i) !== 10) i++;
      continue;
    }
    if (c === 34) {
      const startLine = line;
      const start = i;
      i++;
      let value = '';
      let segment = i;
      for (;;) {
        if (i >= n) throw new CanlabInputError(`${file}:${startLine}`, 'unterminated string');
        const d = text.charCodeAt(i);
        if (d === 34) break;
        if (d === 92) {
          const e = text.charCodeAt(i + 1);
          if (e === 34 || e === 92) {
            value += text.slice(segment, i) + text[i + 1];
            i += 2;
            segment = i;
            continue;
          }
        }
        if (d === 10) line++;
        i++;
      }
      value += text.slice(segment, i);
      i++;
      push('str', value.replace(/\r\n/g, '\n'), start, i, startLine);
      continue;
    }
    if (isIdStart(c)) {
      const start = i;
      while (i < n && isIdChar(text.charCodeAt(i))) i++;
      push('id', text.slice(start, i), start, i, line);
      continue;
    }
    const signed = c === 45 || c === 43;
    if (isDigit(c) || c === 46 || signed) {
      // A sign starts a number only after whitespace or an opening delimiter: `@1-` and `8-8` are
      // punctuation followed by (or preceded by) a number.
      const prev = i > 0 ? text.charCodeAt(i - 1) : 32;
      const signAllowed = !(isIdChar(prev) || prev === 46 || prev === 41);
      if (!signed || signAllowed) {
        NUMBER_RE.lastIndex = i;
        const m = NUMBER_RE.exec(text);
        if (m && m[0] !== '+' && m[0] !== '-') {
          const end = i + m[0].length;
          // A number running straight into identifier characters is a name like `3rd_gear`.
          if (end < n && isIdStart(text.charCodeAt(end)) && !signed) {
            let j = end;
            while (j < n && isIdChar(text.charCodeAt(j))) j++;
            push('id', text.slice(i, j), i, j, line);
            i = j;
            continue;
          }
          push('num', m[0], i, end, line);
          i = end;
          continue;
        }
      }
    }
    push('punct', text[i]!, i, i + 1, line);
    i++;
  }
  return tokens;
}

function describe(tok: Token | undefined): string {
  if (!tok) return 'end of file';
  if (tok.kind === 'str')
    return `string "${tok.text.length > 20 ? tok.text.slice(0, 20) + '...' : tok.text}"`;
  return `'${tok.text}'`;
}

interface StatementText {
  line: number;
  text: string;
}

class DbcParser {
  private pos = 0;
  private readonly db: DbcDatabase = {
    version: '',
    newSymbols: [],
    bitTiming: '',
    nodes: [],
    valueTables: new Map(),
    messages: [],
    attributeDefinitions: [],
    attributes: {},
  };
  private readonly unparsed: string[] = [];
  private readonly findings: DbcFinding[] = [];
  private readonly lines = new Map<DbcMessage | DbcSignal, number>();
  private readonly messagesByFileId = new Map<number, DbcMessage>();
  private readonly nodesByName = new Map<string, DbcNode>();
  private currentMessage: DbcMessage | undefined;
  /** Statement being parsed, for error messages. */
  private statement = '';

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  parse(): ParsedDbc {
    while (this.pos < this.tokens.length) {
      const tok = this.tokens[this.pos]!;
      if (tok.kind === 'punct' && tok.text === ';') {
        // Stray semicolon (some writers put one after a blank statement).
        this.pos++;
        continue;
      }
      if (tok.kind !== 'id') this.fail(tok, `expected a keyword, found ${describe(tok)}`);
      this.statement = tok.text;
      if (tok.text !== 'SG_') this.currentMessageEnds(tok.text);
      this.pos++;
      this.dispatch(tok);
    }
    if (this.unparsed.length > 0) this.db.unparsedStatements = this.unparsed;
    this.applyLongNames();
    this.checkMultiplexing();
    const independent = this.db.independentSignals;
    if (independent !== undefined) {
      const n = independent.signals.length;
      this.find(
        this.lines.get(independent)!,
        'note',
        'independent-signals',
        `BO_ ${INDEPENDENT_SIGNALS}: ${n} signal${n === 1 ? '' : 's'} assigned to no message, kept for a rewrite, never decoded`,
      );
    }
    return { db: this.db, findings: this.findings, lines: this.lines };
  }

  private find(line: number, level: DbcFindingLevel, code: string, message: string, decoding = false): void {
    this.findings.push({ line, level, code, message, decoding });
  }

  /** A statement about something the file does not define: kept verbatim (a rewrite keeps it), with no effect. */
  private orphan(keyword: Token, text: string, target: string): void {
    this.unparsed.push(text);
    this.find(
      keyword.line,
      'warning',
      'unknown-target',
      `${keyword.text} for ${target}, which the file does not define: kept as written, without effect`,
    );
  }

  /**
   * `SystemMessageLongSymbol` / `SystemSignalLongSymbol` carry names longer than the 32 characters
   * DBC names allow; Vector tools and cantools show the long name, and so does canlab. Applied once
   * the whole file is read, because every statement names the object by its short name.
   */
  private applyLongNames(): void {
    const messages = [
      ...this.db.messages,
      ...(this.db.independentSignals ? [this.db.independentSignals] : []),
    ];
    for (const message of messages) {
      const messageName = longName(message, 'SystemMessageLongSymbol');
      if (messageName !== undefined) {
        this.find(
          this.lines.get(message)!,
          'note',
          'long-name',
          `BO_ ${message.name}: named ${messageName} (SystemMessageLongSymbol)`,
        );
        message.shortName = message.name;
        message.name = messageName;
      }
      const renamed = new Map<string, string>();
      for (const signal of message.signals) {
        const signalName = longName(signal, 'SystemSignalLongSymbol');
        if (signalName === undefined) continue;
        this.find(
          this.lines.get(signal)!,
          'note',
          'long-name',
          `SG_ ${signal.name} of ${message.name}: named ${signalName} (SystemSignalLongSymbol)`,
        );
        if (!renamed.has(signal.name)) renamed.set(signal.name, signalName);
        signal.shortName = signal.name;
        signal.name = signalName;
      }
      for (const signal of message.signals) {
        const mux = signal.extendedMultiplexing;
        const switchName = mux && renamed.get(mux.multiplexer);
        if (mux && switchName !== undefined) mux.multiplexer = switchName;
      }
    }
  }

  /** What a bare `m` means depends on SG_MUL_VAL_, which comes after the signal. */
  private checkMultiplexing(): void {
    for (const message of this.db.messages) {
      for (const signal of message.signals) {
        if (!signal.multiplexedWithoutValue) continue;
        const line = this.lines.get(signal)!;
        const indicator = signal.isMultiplexer ? 'mM' : 'm';
        if (signal.extendedMultiplexing) {
          const { multiplexer, ranges } = signal.extendedMultiplexing;
          const values = ranges.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(', ');
          this.find(
            line,
            'note',
            'multiplexed-by-sg-mul-val',
            `SG_ ${signal.name} of ${message.name}: '${indicator}' without a value; SG_MUL_VAL_ selects it when ${multiplexer} is ${values}`,
          );
        } else {
          this.find(
            line,
            'warning',
            'multiplexed-without-values',
            `SG_ ${signal.name} of ${message.name}: '${indicator}' without a value and no SG_MUL_VAL_ to give one: never decoded`,
            true,
          );
        }
      }
    }
  }

  private currentMessageEnds(keyword: string): void {
    if (keyword !== 'BO_') this.currentMessage = undefined;
  }

  private dispatch(tok: Token): void {
    switch (tok.text) {
      case 'VERSION':
        this.db.version = this.expectKind('str', 'version string').text;
        return;
      case 'NS_':
        return this.parseNewSymbols();
      case 'BS_':
        return this.parseBitTiming(tok);
      case 'BU_':
        return this.parseNodes();
      case 'VAL_TABLE_':
        return this.parseValueTable();
      case 'BO_':
        return this.parseMessage();
      case 'SG_':
        return this.parseSignal(tok);
      case 'BO_TX_BU_':
        return this.parseTransmitters(tok);
      case 'CM_':
        return this.parseComment(tok);
      case 'BA_DEF_':
        return this.parseAttributeDefinition();
      case 'BA_DEF_DEF_':
        return this.parseAttributeDefault(tok);
      case 'BA_':
        return this.parseAttribute(tok);
      case 'VAL_':
        return this.parseValueDescriptions(tok);
      case 'SIG_VALTYPE_':
        return this.parseSignalValueType(tok);
      case 'SG_MUL_VAL_':
        return this.parseExtendedMultiplexing(tok);
      default:
        if (VERBATIM_KEYWORDS.has(tok.text)) {
          this.unparsed.push(this.skipStatement(tok));
          return;
        }
        this.fail(tok, `unknown keyword '${tok.text}'`);
    }
  }

  // ---- token helpers ----

  private fail(tok: Token | undefined, message: string): never {
    const line = tok ? tok.line : (this.tokens[this.tokens.length - 1]?.line ?? 1);
    throw new CanlabInputError(`${this.file}:${line}`, message);
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.pos + offset];
  }

  private next(what: string): Token {
    const tok = this.tokens[this.pos];
    if (!tok) this.fail(undefined, `${this.statement}: expected ${what}, found end of file`);
    this.pos++;
    return tok;
  }

  private expectKind(kind: TokenKind, what: string): Token {
    const tok = this.tokens[this.pos];
    if (!tok || tok.kind !== kind) {
      this.fail(
        tok ?? this.tokens[this.pos - 1],
        `${this.statement}: expected ${what}, found ${describe(tok)}`,
      );
    }
    this.pos++;
    return tok;
  }

  private expectPunct(p: string, what = `'${p}'`): Token {
    const tok = this.tokens[this.pos];
    if (!tok || tok.kind !== 'punct' || tok.text !== p) {
      this.fail(
        tok ?? this.tokens[this.pos - 1],
        `${this.statement}: expected ${what}, found ${describe(tok)}`,
      );
    }
    this.pos++;
    return tok;
  }

  private isPunct(p: string, offset = 0): boolean {
    const tok = this.peek(offset);
    return tok !== undefined && tok.kind === 'punct' && tok.text === p;
  }

  private isKeyword(tok: Token | undefined): boolean {
    return tok !== undefined && tok.kind === 'id' && DBC_KEYWORDS.has(tok.text);
  }

  private number(what: string): number {
    const tok = this.expectKind('num', what);
    return Number(tok.text);
  }

  private integer(what: string): number {
    const tok = this.expectKind('num', what);
    const value = Number(tok.text);
    if (!Number.isInteger(value))
      this.fail(tok, `${this.statement}: ${what} must be an integer, not ${tok.text}`);
    return value;
  }

  /** At the end of a statement: `;`, end of file, or (for files that omit the `;`) a keyword starting a line. */
  private atStatementEnd(): boolean {
    const tok = this.peek();
    return (
      tok === undefined ||
      (tok.kind === 'punct' && tok.text === ';') ||
      (tok.lineStart && this.isKeyword(tok))
    );
  }

  /** Consume the `;` ending a statement; a missing one is tolerated before a keyword starting a line. */
  private semicolon(): void {
    if (this.isPunct(';')) {
      this.pos++;
      return;
    }
    if (!this.atStatementEnd()) this.expectPunct(';', "';' at the end of the statement");
  }

  /** Skip to and over the `;` ending the statement; returns its source text from the keyword. */
  private skipStatement(keyword: Token): string {
    while (this.pos < this.tokens.length) {
      const tok = this.tokens[this.pos]!;
      this.pos++;
      if (tok.kind === 'punct' && tok.text === ';') return this.text.slice(keyword.start, tok.end);
      const following = this.tokens[this.pos];
      if (following && following.lineStart && this.isKeyword(following)) return this.statementText(keyword);
    }
    if (this.pos > 0 && this.tokens[this.pos - 1] !== keyword) return this.statementText(keyword);
    this.fail(keyword, `${keyword.text}: missing ';' at the end of the statement`);
  }

  private attributeValue(): AttributeValue {
    const tok = this.next('an attribute value');
    if (tok.kind === 'num') return Number(tok.text);
    if (tok.kind === 'str') return tok.text;
    this.fail(tok, `${this.statement}: expected a number or string value, found ${describe(tok)}`);
  }

  private messageFor(fileId: number): DbcMessage | undefined {
    return this.messagesByFileId.get(fileId);
  }

  // ---- statements ----

  private parseNewSymbols(): void {
    this.expectPunct(':');
    const colonLine = this.tokens[this.pos - 1]!.line;
    while (this.pos < this.tokens.length) {
      const tok = this.tokens[this.pos]!;
      if (tok.kind !== 'id') break;
      if (tok.text === 'BS_' || tok.text === 'BU_' || tok.text === 'BO_') break;
      // Symbols are listed indented on the lines after `NS_ :`; a keyword at the start of an
      // unindented line ends the list.
      if (tok.lineStart && tok.line !== colonLine && this.text[tok.start - 1] === '\n') break;
      this.db.newSymbols.push(tok.text);
      this.pos++;
    }
  }

  private parseBitTiming(keyword: Token): void {
    this.expectPunct(':');
    const parts: Token[] = [];
    while (this.pos < this.tokens.length && this.tokens[this.pos]!.line === keyword.line) {
      parts.push(this.tokens[this.pos]!);
      this.pos++;
    }
    const last = parts[parts.length - 1];
    if (last && last.kind === 'punct' && last.text === ';') parts.pop();
    const first = parts[0];
    const end = parts[parts.length - 1];
    this.db.bitTiming = first && end ? this.text.slice(first.start, end.end).trim() : '';
  }

  private parseNodes(): void {
    this.expectPunct(':');
    for (;;) {
      const tok = this.peek();
      if (!tok) break;
      if (tok.kind === 'punct' && tok.text === ',') {
        this.pos++;
        continue;
      }
      if (tok.kind !== 'id' || this.isKeyword(tok)) break;
      this.pos++;
      const node: DbcNode = { name: tok.text, attributes: {} };
      this.db.nodes.push(node);
      if (!this.nodesByName.has(node.name)) this.nodesByName.set(node.name, node);
    }
    if (this.isPunct(';')) this.pos++;
  }

  private valueDescriptionPairs(): Map<number, string> {
    const table = new Map<number, string>();
    while (!this.atStatementEnd()) {
      const tok = this.peek();
      if (!tok || tok.kind !== 'num') {
        this.fail(
          tok ?? this.tokens[this.pos - 1],
          `${this.statement}: expected a value or ';', found ${describe(tok)}`,
        );
      }
      const value = this.number('a value');
      const label = this.expectKind('str', 'a value description string').text;
      table.set(value, label);
    }
    this.semicolon();
    return table;
  }

  private parseValueTable(): void {
    const name = this.expectKind('id', 'a value table name').text;
    this.db.valueTables.set(name, this.valueDescriptionPairs());
  }

  private parseMessage(): void {
    const idTok = this.expectKind('num', 'a message id');
    const fileId = Number(idTok.text);
    if (!Number.isInteger(fileId) || fileId < 0 || fileId > 0xffffffff) {
      this.fail(idTok, `BO_: invalid message id ${idTok.text}`);
    }
    const name = this.expectKind('id', 'a message name').text;
    this.expectPunct(':');
    const length = this.integer('the message length');
    const senderTok = this.expectKind('id', 'the sending node');
    const flagged = fileId >= EXTENDED_FLAG;
    const id = flagged ? fileId - EXTENDED_FLAG : fileId;
    const message: DbcMessage = {
      id,
      extended: flagged,
      name,
      length,
      sender: senderTok.text,
      signals: [],
      attributes: {},
    };
    const hex = `0x${id.toString(16).toUpperCase()}`;
    if (name === INDEPENDENT_SIGNALS && this.db.independentSignals === undefined) {
      this.db.independentSignals = message;
    } else {
      this.db.messages.push(message);
      if (!flagged && id > MAX_STANDARD_ID && id <= MAX_EXTENDED_ID) {
        message.extended = true;
        message.idWithoutExtendedFlag = true;
        this.find(
          idTok.line,
          'warning',
          'id-without-extended-flag',
          `BO_ ${fileId} ${name}: id ${hex} needs 29 bits but lacks the extended flag (bit 31); ` +
            `read as the 29-bit id ${hex}, as opendbc and SavvyCAN match it (cantools and canmatrix refuse ` +
            `the file); write ${fileId + EXTENDED_FLAG} to say so`,
          true,
        );
      } else if (id > MAX_EXTENDED_ID) {
        this.find(
          idTok.line,
          'error',
          'id-out-of-range',
          `BO_ ${fileId} ${name}: id ${hex} is wider than 29 bits: no frame carries it, never decoded`,
          true,
        );
      }
    }
    this.lines.set(message, idTok.line);
    if (!this.messagesByFileId.has(fileId)) this.messagesByFileId.set(fileId, message);
    this.currentMessage = message;
  }

  private parseSignal(keyword: Token): void {
    this.statement = 'malformed SG_ line';
    const message = this.currentMessage;
    if (!message) this.fail(keyword, 'SG_ outside a BO_ message definition');
    const name = this.expectKind('id', 'a signal name').text;
    let isMultiplexer = false;
    let multiplexerValue: number | undefined;
    let withoutValue = false;
    let tok = this.peek();
    if (tok && tok.kind === 'id') {
      // `m` without a value is what cantools' grammar reads as a signal multiplexed by SG_MUL_VAL_
      const m = /^(?:(M)|m(\d*)(M?))$/.exec(tok.text);
      if (!m)
        this.fail(tok, `malformed SG_ line: bad multiplexer indicator '${tok.text}' for signal ${name}`);
      if (m[1]) isMultiplexer = true;
      else {
        if (m[2] === '') withoutValue = true;
        else multiplexerValue = Number(m[2]);
        isMultiplexer = m[3] === 'M';
      }
      this.pos++;
    }
    this.expectPunct(':', `':' after the signal name ${name}`);
    const startBit = this.integer('the start bit');
    this.expectPunct('|', "'|' between start bit and length");
    const length = this.integer('the signal length');
    this.expectPunct('@', "'@' before the byte order");
    tok = this.next('the byte order');
    if (tok.kind !== 'num' || (tok.text !== '0' && tok.text !== '1')) {
      this.fail(tok, `malformed SG_ line: byte order must be 0 or 1, found ${describe(tok)}`);
    }
    const byteOrder = tok.text === '0' ? 'big_endian' : 'little_endian';
    tok = this.next("the sign '+' or '-'");
    if (tok.kind !== 'punct' || (tok.text !== '+' && tok.text !== '-')) {
      this.fail(tok, `malformed SG_ line: expected '+' or '-' after the byte order, found ${describe(tok)}`);
    }
    const signed = tok.text === '-';
    this.expectPunct('(', "'(' before the factor");
    const factor = this.number('the factor');
    this.expectPunct(',', "',' between factor and offset");
    const offset = this.number('the offset');
    this.expectPunct(')', "')' after the offset");
    this.expectPunct('[', "'[' before the minimum");
    const minimum = this.number('the minimum');
    this.expectPunct('|', "'|' between minimum and maximum");
    const maximum = this.number('the maximum');
    this.expectPunct(']', "']' after the maximum");
    const unit = this.expectKind('str', 'the unit string').text;
    const receivers: string[] = [];
    for (;;) {
      const r = this.peek();
      if (!r) break;
      if (r.kind === 'punct' && r.text === ',') {
        this.pos++;
        continue;
      }
      if (r.kind !== 'id' || this.isKeyword(r)) break;
      receivers.push(r.text);
      this.pos++;
    }
    if (length < 1 || length > 512)
      this.fail(keyword, `malformed SG_ line: signal ${name} has length ${length}`);
    if (startBit < 0 || startBit >= 512) {
      this.fail(keyword, `malformed SG_ line: signal ${name} has start bit ${startBit}`);
    }
    const signal: DbcSignal = {
      name,
      startBit,
      length,
      byteOrder,
      signed,
      valueType: 'integer',
      factor,
      offset,
      minimum,
      maximum,
      unit,
      receivers,
      isMultiplexer,
      attributes: {},
    };
    if (multiplexerValue !== undefined) signal.multiplexerValue = multiplexerValue;
    if (withoutValue) signal.multiplexedWithoutValue = true;
    message.signals.push(signal);
    this.lines.set(signal, keyword.line);
  }

  private parseTransmitters(keyword: Token): void {
    const fileId = this.integer('a message id');
    this.expectPunct(':');
    const names: string[] = [];
    while (!this.atStatementEnd()) {
      const tok = this.next("a node name or ';'");
      if (tok.kind === 'punct' && tok.text === ',') continue;
      if (tok.kind !== 'id') this.fail(tok, `BO_TX_BU_: expected a node name, found ${describe(tok)}`);
      names.push(tok.text);
    }
    this.semicolon();
    const message = this.messageFor(fileId);
    if (!message) {
      this.orphan(keyword, this.statementText(keyword), `message ${fileId}`);
      return;
    }
    message.transmitters = [...(message.transmitters ?? []), ...names];
  }

  private signalFor(fileId: number, name: string): DbcSignal | undefined {
    return this.messageFor(fileId)?.signals.find((s) => s.name === name);
  }

  private endStatement(keyword: Token): StatementText {
    this.semicolon();
    return { line: keyword.line, text: this.statementText(keyword) };
  }

  /** Source text from `keyword` to the last consumed token, ending with `;`. */
  private statementText(keyword: Token): string {
    const end = this.tokens[this.pos - 1]!;
    const text = this.text.slice(keyword.start, end.end);
    return end.kind === 'punct' && end.text === ';' ? text : text + ';';
  }

  private parseComment(keyword: Token): void {
    const tok = this.next('a comment');
    if (tok.kind === 'str') {
      this.db.comment = tok.text;
      this.semicolon();
      return;
    }
    if (tok.kind !== 'id')
      this.fail(tok, `CM_: expected BU_, BO_, SG_, EV_ or a string, found ${describe(tok)}`);
    switch (tok.text) {
      case 'BU_': {
        const name = this.expectKind('id', 'a node name').text;
        const comment = this.expectKind('str', 'the comment string').text;
        const stmt = this.endStatement(keyword);
        const node = this.nodesByName.get(name);
        if (node) node.comment = comment;
        else this.orphan(keyword, stmt.text, `node ${name}`);
        return;
      }
      case 'BO_': {
        const fileId = this.integer('a message id');
        const comment = this.expectKind('str', 'the comment string').text;
        const stmt = this.endStatement(keyword);
        const message = this.messageFor(fileId);
        if (message) message.comment = comment;
        else this.orphan(keyword, stmt.text, `message ${fileId}`);
        return;
      }
      case 'SG_': {
        const fileId = this.integer('a message id');
        const name = this.expectKind('id', 'a signal name').text;
        const comment = this.expectKind('str', 'the comment string').text;
        const stmt = this.endStatement(keyword);
        const signal = this.signalFor(fileId, name);
        if (signal) signal.comment = comment;
        else this.orphan(keyword, stmt.text, `signal ${name} of message ${fileId}`);
        return;
      }
      case 'EV_':
        this.unparsed.push(this.skipStatement(keyword));
        return;
      default:
        this.fail(tok, `CM_: expected BU_, BO_, SG_, EV_ or a string, found ${describe(tok)}`);
    }
  }

  private parseAttributeDefinition(): void {
    let objectType: AttributeDefinition['objectType'] = '';
    const tok = this.peek();
    if (tok && tok.kind === 'id') {
      if (tok.text !== 'BU_' && tok.text !== 'BO_' && tok.text !== 'SG_' && tok.text !== 'EV_') {
        this.fail(tok, `BA_DEF_: unknown object type '${tok.text}'`);
      }
      objectType = tok.text;
      this.pos++;
    }
    const name = this.expectKind('str', 'the attribute name').text;
    let definition = '';
    let afterComma = false;
    while (!this.atStatementEnd()) {
      const t = this.next("the attribute type or ';'");
      if (t.kind === 'punct' && t.text === ',') {
        definition += ',';
        afterComma = true;
        continue;
      }
      const text = t.kind === 'str' ? quote(t.text) : t.text;
      definition += definition === '' || afterComma ? text : ' ' + text;
      afterComma = false;
    }
    this.semicolon();
    if (definition === '') this.fail(tok, `BA_DEF_: attribute "${name}" has no type`);
    this.db.attributeDefinitions.push({ name, objectType, definition });
  }

  private parseAttributeDefault(keyword: Token): void {
    const name = this.expectKind('str', 'the attribute name').text;
    const value = this.attributeValue();
    const stmt = this.endStatement(keyword);
    const def = this.db.attributeDefinitions.find((d) => d.name === name && d.defaultValue === undefined);
    if (def) def.defaultValue = value;
    else this.orphan(keyword, stmt.text, `attribute "${name}"`);
  }

  private parseAttribute(keyword: Token): void {
    const name = this.expectKind('str', 'the attribute name').text;
    const tok = this.peek();
    let target: Record<string, AttributeValue> | undefined;
    let object = 'the network';
    if (tok && tok.kind === 'id') {
      this.pos++;
      switch (tok.text) {
        case 'BU_': {
          const node = this.expectKind('id', 'a node name').text;
          target = this.nodesByName.get(node)?.attributes;
          object = `node ${node}`;
          break;
        }
        case 'BO_': {
          const fileId = this.integer('a message id');
          target = this.messageFor(fileId)?.attributes;
          object = `message ${fileId}`;
          break;
        }
        case 'SG_': {
          const fileId = this.integer('a message id');
          const signal = this.expectKind('id', 'a signal name').text;
          target = this.signalFor(fileId, signal)?.attributes;
          object = `signal ${signal} of message ${fileId}`;
          break;
        }
        case 'EV_':
          this.unparsed.push(this.skipStatement(keyword));
          return;
        default:
          this.fail(tok, `BA_: expected BU_, BO_, SG_, EV_ or a value, found ${describe(tok)}`);
      }
    } else {
      target = this.db.attributes;
    }
    const value = this.attributeValue();
    const stmt = this.endStatement(keyword);
    if (target) target[name] = value;
    else this.orphan(keyword, stmt.text, `"${name}" of ${object}`);
  }

  private parseValueDescriptions(keyword: Token): void {
    const tok = this.peek();
    if (!tok || tok.kind !== 'num') {
      // Value descriptions of an environment variable.
      this.unparsed.push(this.skipStatement(keyword));
      return;
    }
    const fileId = this.integer('a message id');
    const name = this.expectKind('id', 'a signal name').text;
    const table = this.valueDescriptionPairs();
    const signal = this.signalFor(fileId, name);
    if (signal) signal.valueTable = table;
    else this.orphan(keyword, this.statementText(keyword), `signal ${name} of message ${fileId}`);
  }

  private parseSignalValueType(keyword: Token): void {
    const fileId = this.integer('a message id');
    const name = this.expectKind('id', 'a signal name').text;
    if (this.isPunct(':')) this.pos++;
    const tok = this.expectKind('num', 'the value type 0, 1 or 2');
    const stmt = this.endStatement(keyword);
    const types: Record<string, ValueType> = { '0': 'integer', '1': 'float32', '2': 'float64' };
    const valueType = types[tok.text];
    if (!valueType) this.fail(tok, `SIG_VALTYPE_: value type must be 0, 1 or 2, not ${tok.text}`);
    const signal = this.signalFor(fileId, name);
    if (!signal) {
      this.orphan(keyword, stmt.text, `signal ${name} of message ${fileId}`);
      return;
    }
    const need = valueType === 'float32' ? 32 : valueType === 'float64' ? 64 : 0;
    if (need && signal.length !== need) {
      this.fail(
        tok,
        `SIG_VALTYPE_: signal ${name} is ${signal.length} bits long; ${valueType} needs ${need}`,
      );
    }
    signal.valueType = valueType;
  }

  private parseExtendedMultiplexing(keyword: Token): void {
    const fileId = this.integer('a message id');
    const name = this.expectKind('id', 'a signal name').text;
    const multiplexer = this.expectKind('id', 'the multiplexer switch name').text;
    const ranges: Array<[number, number]> = [];
    while (!this.atStatementEnd()) {
      if (ranges.length > 0) this.expectPunct(',', "',' between ranges");
      const lo = this.integer('a range start');
      let hi: number;
      const tok = this.peek();
      if (tok && tok.kind === 'num' && tok.text.startsWith('-')) {
        // `8 -8` tokenizes as two numbers.
        this.pos++;
        hi = -Number(tok.text);
      } else {
        this.expectPunct('-', "'-' inside a range");
        hi = this.integer('a range end');
      }
      ranges.push([lo, hi]);
    }
    const stmt = this.endStatement(keyword);
    const signal = this.signalFor(fileId, name);
    if (signal) signal.extendedMultiplexing = { multiplexer, ranges };
    else this.orphan(keyword, stmt.text, `signal ${name} of message ${fileId}`);
  }
}

/** The long name an attribute gives `object`, when it gives one that differs from its name. */
function longName(object: DbcMessage | DbcSignal, attribute: string): string | undefined {
  const value = object.attributes[attribute];
  return typeof value === 'string' && value !== '' && value !== object.name ? value : undefined;
}

/** Quote a string the way the writer does: `"` and a backslash that could be read as an escape are escaped. */
export function quote(text: string): string {
  return '"' + text.replace(/\\(?=["\\]|$)|"/g, (m) => '\\' + m) + '"';
}

/** Parse DBC text, with the findings of the parse and the line of every message and signal. */
export function parseDbcSource(text: string, fileName = '<dbc>'): ParsedDbc {
  const normalized = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
  return new DbcParser(normalized, tokenize(normalized, fileName), fileName).parse();
}

/** Parse DBC text. `fileName` is used in error locations (`file:line`). */
export function parseDbc(text: string, fileName = '<dbc>'): DbcDatabase {
  return parseDbcSource(text, fileName).db;
}

/** Decode DBC file bytes: UTF-8 when valid, otherwise latin1 (DBC files are often cp1252). */
export function decodeDbcBytes(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  }
}

/** Read and parse a DBC file, with the findings of the parse (see parseDbcSource). */
export async function loadDbcSource(path: string): Promise<ParsedDbc> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (code ?? String(err));
    throw new CanlabInputError(path, `cannot read DBC file: ${reason}`);
  }
  return parseDbcSource(decodeDbcBytes(bytes), path);
}

/** Read and parse a DBC file (UTF-8, or latin1 when the bytes are not valid UTF-8). */
export async function loadDbc(path: string): Promise<DbcDatabase> {
  return (await loadDbcSource(path)).db;
}
