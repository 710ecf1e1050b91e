/**
 * A minimal XML 1.0 writer for documents the platform generates (OpenSCENARIO). The repository has
 * no XML library of its own (fast-xml-parser and xmlbuilder are only minio's dependencies), and a
 * generated document needs just elements, attributes and correct escaping.
 */

export type XmlAttributeValue = string | number | boolean;

export interface XmlElement {
  name: string;
  attributes: ReadonlyArray<readonly [string, XmlAttributeValue]>;
  children: readonly XmlElement[];
}

/** Attributes keep their order, so the document reads in the order the standard lists them. */
export function element(
  name: string,
  attributes: Record<string, XmlAttributeValue | null | undefined> = {},
  children: ReadonlyArray<XmlElement | null | undefined | false> = [],
): XmlElement {
  if (!XML_NAME.test(name)) throw new Error(`not an XML name: ${JSON.stringify(name)}`);
  const attrs: Array<readonly [string, XmlAttributeValue]> = [];
  for (const [key, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue;
    if (!XML_NAME.test(key)) throw new Error(`not an XML attribute name: ${JSON.stringify(key)}`);
    attrs.push([key, value]);
  }
  return { name, attributes: attrs, children: children.filter((c): c is XmlElement => Boolean(c)) };
}

/** ASCII names only: every name here is the standard's, never the data's. */
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/**
 * Anything outside XML 1.0's Char production (§2.2): C0 controls but tab, LF and CR, lone
 * surrogates, U+FFFE/U+FFFF. A session name can hold them, so they become U+FFFD instead of a
 * document no reader accepts. The `u` flag reads by code point, so a surrogate pair passes whole.
 */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Escapes an attribute value. Tab, LF and CR are written as character references because a reader
 * normalises literal ones to spaces (XML 1.0 §3.3.3), which would change the value.
 */
export function escapeAttribute(value: string): string {
  return value.replace(NOT_XML_CHAR, '\uFFFD').replace(/[&<>"\t\n\r]/g, (c) => ATTRIBUTE_ESCAPES[c]!);
}

const ATTRIBUTE_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** The shortest decimal that reads back as the same double; NaN and infinities have no xsd:double form here. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return Object.is(value, -0) ? '0' : String(value);
}

function attributeText(value: XmlAttributeValue): string {
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return escapeAttribute(value);
}

/** The document, UTF-8 declared, indented two spaces per level. */
export function serializeXml(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  const write = (node: XmlElement, depth: number): void => {
    const indent = '  '.repeat(depth);
    const attrs = node.attributes.map(([k, v]) => ` ${k}="${attributeText(v)}"`).join('');
    if (node.children.length === 0) {
      out.push(`${indent}<${node.name}${attrs}/>\n`);
      return;
    }
    out.push(`${indent}<${node.name}${attrs}>\n`);
    for (const child of node.children) write(child, depth + 1);
    out.push(`${indent}</${node.name}>\n`);
  };
  write(root, 0);
  return out.join('');
}
