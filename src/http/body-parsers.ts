import type { FastifyInstance } from 'fastify';
import { createRequire } from 'node:module';
import { MalformedRequest, Unprocessable, UnsupportedCharset } from '../shared/problems.js';

/** How deep elements may nest in an XML body, the root counting as the first (docs/limits.md#request-bodies). */
export const MAX_XML_DEPTH = 32;

type SaxesModule = typeof import('saxes');
/** saxes, loaded with the first XML body (most processes never see one: start-up stays short). */
let saxes: SaxesModule | undefined;
function saxesModule(): SaxesModule {
  saxes ??= createRequire(import.meta.url)('saxes') as SaxesModule;
  return saxes;
}

/** Any Unicode scalar value: a character reference to U+0000 is read, and refused by the field's own check (docs/limits.md#nul-characters). */
function isScalar(code: number): boolean {
  return code >= 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff);
}

/** Element names JavaScript reserves for an object's prototype. */
const RESERVED_NAMES = new Set(['constructor', 'prototype', '__proto__']);

/** An element being read: its child elements' values so far, by name in the order they came, and its text. */
interface OpenElement {
  nil: boolean;
  text: string;
  children: Map<string, unknown[]> | undefined;
}

function addChild(parent: OpenElement, name: string, value: unknown): void {
  parent.children ??= new Map();
  const values = parent.children.get(name);
  if (values === undefined) parent.children.set(name, [value]);
  else values.push(value);
}

/**
 * An element's plain value: `<x nil="true"/>` is null, an element without child elements is its text
 * (`''` when it has none), one with child elements is an object of them (its own text dropped), a name
 * given twice an array; attributes other than nil are dropped (validators decide types).
 */
function valueOf(element: OpenElement): unknown {
  if (element.nil) return null;
  if (element.children === undefined) return element.text;
  return Object.fromEntries([...element.children].map(([name, values]) => [name, values.length === 1 ? values[0] : values]));
}

/**
 * Reads an XML body with saxes, a streaming, conforming XML parser: one pass, linear in the body's
 * size. The depth is counted on the elements the parser opens, so no markup inside an attribute value,
 * comment or CDATA section can hide a level; the first element past MAX_XML_DEPTH stops the reading.
 * DTDs are refused (no entities but the five predefined ones and character references).
 */
export function parseXmlBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new Unprocessable({ base: ['XML body must not contain a DTD or entity declarations'] });
  // Loaded outside the try: a reader that cannot load is a fault of cmi (500), not a client's bad XML.
  const { SaxesParser } = saxesModule();
  const parser = new SaxesParser({ position: false });
  // Character references are checked by isScalar, not by XML's Char production (see isScalar);
  // saxes sets its check again when it reads an XML declaration.
  const internals = parser as unknown as { isChar: (code: number) => boolean; setXMLVersion: (version: string) => void };
  const setXMLVersion = internals.setXMLVersion.bind(parser);
  internals.setXMLVersion = (version) => {
    setXMLVersion(version);
    internals.isChar = isScalar;
  };
  internals.isChar = isScalar;
  const open: OpenElement[] = [];
  let root: Record<string, unknown> | undefined;
  parser.on('doctype', () => {
    throw new Unprocessable({ base: ['XML body must not contain a DTD or entity declarations'] });
  });
  parser.on('opentag', (tag) => {
    if (open.length >= MAX_XML_DEPTH) throw new MalformedRequest(400, `XML body is nested deeper than ${MAX_XML_DEPTH} levels`);
    if (RESERVED_NAMES.has(tag.name)) {
      throw new Unprocessable({ base: [`XML element <${tag.name}> is not allowed: constructor, prototype and __proto__ are reserved names`] });
    }
    const element: OpenElement = { nil: tag.attributes['nil'] === 'true', text: '', children: undefined };
    open.push(element);
  });
  const addText = (chunk: string) => {
    const element = open[open.length - 1];
    if (element !== undefined) element.text += chunk;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', (tag) => {
    const element = open.pop() as OpenElement;
    const parent = open[open.length - 1];
    if (parent === undefined) root = { [tag.name]: valueOf(element) };
    else addChild(parent, tag.name, valueOf(element));
  });
  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof Unprocessable || error instanceof MalformedRequest) throw error;
    throw new Unprocessable({ base: ['Request body is not well-formed XML'] });
  }
  return root;
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
