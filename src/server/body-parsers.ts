import type { FastifyInstance } from 'fastify';
import { XMLParser } from 'fast-xml-parser';
import { Unprocessable } from '../domain/errors.js';

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

const xmlParser = new XMLParser({
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

export function parseXmlBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  checkXmlShape(text);
  let parsed: unknown;
  try {
    parsed = xmlParser.parse(text, true);
  } catch {
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

/** JSON and XML request bodies, chosen by Content-Type; an empty body is no body (OnApp clients send those). */
export function registerBodyParsers(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json'], { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  app.addContentTypeParser(['application/xml', 'text/xml'], { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseXmlBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
