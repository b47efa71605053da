import type { FastifyInstance } from 'fastify';
import { createRequire } from 'node:module';
import type { XMLParser } from 'fast-xml-parser';
import { Unprocessable, UnsupportedCharset } from '../shared/problems.js';

const MAX_XML_DEPTH = 32;

/** Refuses DTDs and entity declarations (no XXE, no entity bombs) and nesting deeper than 32. */
function checkXmlShape(text: string): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new Unprocessable({ base: ['XML body must not contain a DTD or entity declarations'] });
  let depth = 0;
  for (const tag of text.matchAll(/<(\/?)[A-Za-z_][^<>]*?(\/?)>/g)) {
    if (tag[1] === '/') depth -= 1;
    else if (tag[2] !== '/') depth += 1;
    if (depth > MAX_XML_DEPTH) throw new Unprocessable({ base: [`XML body is nested deeper than ${MAX_XML_DEPTH} levels`] });
  }
}

/** The XML reader, loaded with the first XML body (most processes never see one: start-up stays short). */
let xmlParser: XMLParser | undefined;
function xmlReader(): XMLParser {
  if (xmlParser === undefined) {
    const { XMLParser: Parser } = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
    xmlParser = new Parser({
      ignoreAttributes: false,
      attributeNamePrefix: '@',
      parseTagValue: false,
      parseAttributeValue: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      // Entities are decoded below, in one pass, so `&amp;#65;` stays `&#65;` as XML 1.0 says.
      processEntities: false,
      htmlEntities: false,
      trimValues: false,
    });
  }
  return xmlParser;
}

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const REFERENCE = /&(lt|gt|amp|quot|apos|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});/g;

/** The five predefined entities and character references (`&#65;`, `&#x41;`); nothing else is expanded. */
export function decodeXmlText(text: string): string {
  return text.replace(REFERENCE, (whole, name: string) => {
    if (!name.startsWith('#')) return PREDEFINED[name] as string;
    const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
    return code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * Parsed XML to plain values: `<x nil="true"/>` is null, an element's text is a string, type
 * attributes are dropped (validators decide types).
 */
function plainXml(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(plainXml);
  if (typeof node === 'string') return decodeXmlText(node);
  if (typeof node !== 'object' || node === null) return node;
  const entries = Object.entries(node as Record<string, unknown>);
  if ((node as Record<string, unknown>)['@nil'] === 'true') return null;
  const children = entries.filter(([key]) => !key.startsWith('@'));
  if (children.length === 0) return '';
  if (children.length === 1 && children[0]?.[0] === '#text') return plainXml(children[0][1]);
  return Object.fromEntries(children.filter(([key]) => key !== '#text').map(([key, value]) => [key, plainXml(value)]));
}

/** Element names fast-xml-parser refuses, since they would reach an object's prototype. */
const RESERVED_ELEMENT = /<(constructor|prototype|__proto__)[\s/>]/;

export function parseXmlBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  checkXmlShape(text);
  // Loaded outside the try: a reader that cannot load is a fault of cmi (500), not a client's bad XML.
  const reader = xmlReader();
  let parsed: unknown;
  try {
    parsed = reader.parse(text, true);
  } catch {
    const reserved = RESERVED_ELEMENT.exec(text)?.[1];
    if (reserved !== undefined) {
      throw new Unprocessable({ base: [`XML element <${reserved}> is not allowed: constructor, prototype and __proto__ are reserved names`] });
    }
    throw new Unprocessable({ base: ['Request body is not well-formed XML'] });
  }
  return plainXml(parsed);
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Unprocessable({ base: ['Request body is not valid JSON'] });
  }
}

const CHARSET = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i;
const UTF8 = /^utf-?8$/i;
/** Strict: invalid UTF-8 is an error, not U+FFFD; a leading byte-order mark is dropped. */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A body's text: UTF-8 only (docs/limits.md#request-bodies). A `charset` parameter naming anything
 * else is 415; bytes that are not UTF-8 are 422; a byte-order mark is allowed.
 */
export function decodeBody(contentType: string | undefined, body: Buffer): string {
  const charset = CHARSET.exec(contentType ?? '');
  const name = charset?.[1] ?? charset?.[2];
  if (name !== undefined && !UTF8.test(name)) throw new UnsupportedCharset(name);
  try {
    return utf8.decode(body);
  } catch {
    throw new Unprocessable({ base: ['Request body is not valid UTF-8'] });
  }
}

/** JSON and XML request bodies, chosen by Content-Type; an empty body is no body (OnApp clients send those). */
export function registerBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json'], { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    try {
      done(null, parseJsonBody(decodeBody(request.headers['content-type'], body as Buffer)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'buffer', bodyLimit }, (request, body, done) => {
    try {
      done(null, parseXmlBody(decodeBody(request.headers['content-type'], body as Buffer)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
