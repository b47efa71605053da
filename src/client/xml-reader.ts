import { XMLParser } from 'fast-xml-parser';
import { parseDatetime } from './datetime.js';
import { CmiProtocolError } from './errors.js';

/**
 * Reads an XML answer (Rails `to_xml` style, docs/api.md#formats) into plain values: `type="integer"`,
 * `"boolean"`, `"datetime"`, `"decimal"`/`"float"` become numbers, booleans and `Date`s, `nil="true"` is
 * null, `type="array"` an array of its children's values, an element with children an object, any other
 * element its text. A DOCTYPE or entity declaration is refused, never expanded.
 */
const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Decoded here (decodeReferences), in one pass, so `&amp;#65;` stays the text `&#65;`.
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

type Node = Record<string, unknown> & { ':@'?: Record<string, string> };

const DECLARATIONS = /<!(?:DOCTYPE|ENTITY|ELEMENT|ATTLIST)/i;

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The five predefined entities and character references (Rails' builder writes `&#233;`); anything else is refused. */
function decodeReferences(text: string): string {
  return text.replace(/&(?:([a-z]+)|#(\d{1,7})|#x([0-9a-fA-F]{1,6}));/g, (reference, name?: string, decimal?: string, hex?: string) => {
    if (name !== undefined) {
      const character = PREDEFINED[name];
      if (character === undefined) throw new CmiProtocolError(`the XML answer uses the undeclared entity ${reference}`);
      return character;
    }
    const code = decimal !== undefined ? Number(decimal) : Number.parseInt(hex!, 16);
    if (code > 0x10ffff) throw new CmiProtocolError(`the XML answer holds a bad character reference ${reference}`);
    return String.fromCodePoint(code);
  });
}

function elementName(node: Node): string | undefined {
  return Object.keys(node).find((key) => key !== ':@' && key !== '#text');
}

function valueOf(node: Node, name: string): unknown {
  const attributes = node[':@'] ?? {};
  const children = (node[name] as Node[] | undefined) ?? [];
  if (attributes.nil === 'true') return null;
  const elements = children.filter((child) => elementName(child) !== undefined);
  const text = decodeReferences(children.map((child) => (typeof child['#text'] === 'string' ? child['#text'] : '')).join(''));
  const type = attributes.type;
  if (type === 'array') return elements.map((child) => valueOf(child, elementName(child)!));
  if (elements.length > 0) {
    const record: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    // A repeated element (`<errors><error>..</error><error>..</error></errors>`) becomes an array.
    const repeated = new Set<string>();
    for (const child of elements) {
      const childName = elementName(child)!;
      const value = valueOf(child, childName);
      if (!(childName in record)) record[childName] = value;
      else if (repeated.has(childName)) (record[childName] as unknown[]).push(value);
      else {
        record[childName] = [record[childName], value];
        repeated.add(childName);
      }
    }
    return record;
  }
  switch (type) {
    case undefined:
    case 'string':
      return text;
    case 'integer':
      if (!/^-?\d+$/.test(text.trim())) throw new CmiProtocolError(`<${name}> is not an integer: ${JSON.stringify(text)}`);
      return Number(text.trim());
    case 'decimal':
    case 'float': {
      const number = Number(text.trim());
      if (text.trim() === '' || Number.isNaN(number)) throw new CmiProtocolError(`<${name}> is not a number: ${JSON.stringify(text)}`);
      return number;
    }
    case 'boolean':
      if (text.trim() !== 'true' && text.trim() !== 'false') throw new CmiProtocolError(`<${name}> is not a boolean: ${JSON.stringify(text)}`);
      return text.trim() === 'true';
    case 'datetime': {
      const date = parseDatetime(text.trim());
      if (date === undefined) throw new CmiProtocolError(`<${name}> is not a datetime: ${JSON.stringify(text)}`);
      return date;
    }
    default:
      throw new CmiProtocolError(`<${name}> has an unknown type ${JSON.stringify(type)}`);
  }
}

/** The root element's name and value. */
export function readXml(text: string): { name: string; value: unknown } {
  if (DECLARATIONS.test(text)) throw new CmiProtocolError('the XML answer holds a DOCTYPE or entity declaration; refused');
  let nodes: Node[];
  try {
    nodes = parser.parse(text) as Node[];
  } catch (error) {
    throw new CmiProtocolError(`the answer is not XML: ${(error as Error).message}`);
  }
  const root = nodes.find((node) => elementName(node) !== undefined);
  if (root === undefined) throw new CmiProtocolError('the XML answer has no root element');
  const name = elementName(root)!;
  return { name, value: valueOf(root, name) };
}
