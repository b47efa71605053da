import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterEach } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { XMLParser } from 'fast-xml-parser';
import { cmiVersion } from '../../src/version/version.js';
import { documentPath, openApiDocument } from '../../src/openapi/openapi-document.js';
import { ROUTES } from '../../src/app/api-routes.js';
import { isBesideApi, type RouteSpec } from '../../src/http/route-spec.js';
import { METRICS_ROUTE } from '../../src/metrics/metrics.routes.js';
import { OPENAPI_ROUTES } from '../../src/openapi/openapi.routes.js';

/**
 * Every response a test app sends is checked against cmi's OpenAPI document (docs/api.md#openapi):
 * createTestApp installs this on every app, so every HTTP test checks that the document tells the
 * truth without saying so. A mismatch fails the test it happened in.
 */
type Schema = Record<string, unknown>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ALL_ROUTES: readonly RouteSpec[] = [...ROUTES, ...OPENAPI_ROUTES, METRICS_ROUTE];

/** The document for every route the app may have (those a setting turns off are simply not asked for). */
export function fullDocument(routes: readonly RouteSpec[] = ALL_ROUTES): Schema {
  return openApiDocument({ version: cmiVersion(), routes });
}

const XML = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, parseAttributeValue: false, ignoreDeclaration: true });

/** A value that no schema of the document admits, naming what was wrong. */
function invalid(reason: string): Schema {
  return { '!invalid XML': reason };
}

/**
 * One element as the document describes XML (openapi/openapi-document.ts): `nil="true"` is null, `type="integer"`
 * a number, `type="boolean"` a boolean, `type="array"` the array of its children, an element with
 * children an object (a repeated child an array), any other element its text.
 */
function xmlValue(node: unknown): unknown {
  if (typeof node === 'string') return node;
  if (typeof node !== 'object' || node === null) return invalid(`unexpected ${typeof node}`);
  const element = node as Record<string, unknown>;
  const attributes = Object.keys(element).filter((key) => key.startsWith('@_'));
  const children = Object.keys(element).filter((key) => !key.startsWith('@_') && key !== '#text');
  const text = typeof element['#text'] === 'string' ? element['#text'] : '';
  const type = element['@_type'] as string | undefined;
  if (attributes.some((key) => key !== '@_type' && key !== '@_nil')) return invalid(`attributes ${attributes.join(' ')}`);
  if (element['@_nil'] !== undefined) {
    return element['@_nil'] === 'true' && type === undefined && children.length === 0 && text === '' ? null : invalid('nil with a type or content');
  }
  if (type === 'array') {
    if (children.length > 1 || text !== '') return invalid('an array with mixed children');
    const items = children.length === 0 ? [] : [element[children[0] as string]].flat();
    return items.map(xmlValue);
  }
  if (type !== undefined) {
    if (children.length > 0) return invalid(`type="${type}" with children`);
    if (type === 'integer') return /^-?\d+$/.test(text) ? Number(text) : invalid(`integer "${text}"`);
    if (type === 'decimal') return /^-?\d+(\.\d+)?(e[+-]?\d+)?$/.test(text) ? Number(text) : invalid(`decimal "${text}"`);
    if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : invalid(`boolean "${text}"`);
    if (type === 'datetime') return text;
    return invalid(`type="${type}"`);
  }
  if (children.length === 0) return text;
  if (text !== '') return invalid('text mixed with elements');
  return Object.fromEntries(children.map((name) => {
    const value = element[name];
    return [name, Array.isArray(value) ? value.map(xmlValue) : xmlValue(value)];
  }));
}

/** An XML body read into the shape the document gives it: `{ <root element>: <its value> }`. */
export function readXmlBody(text: string): unknown {
  const parsed = XML.parse(text) as Record<string, unknown>;
  const roots = Object.keys(parsed);
  if (roots.length !== 1) return invalid(`${roots.length} root elements`);
  const root = roots[0] as string;
  return { [root]: xmlValue(parsed[root]) };
}

export interface ResponseChecker {
  /** The problem with this response, or undefined when the document admits it. */
  check(response: { method: string; route: string | undefined; status: number; contentType: string | undefined; body: string }): string | undefined;
}

/** Compiles the document's schemas (each once) and checks responses against it. */
export function responseChecker(document: Schema, routes: readonly RouteSpec[] = ALL_ROUTES): ResponseChecker {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addKeyword('xml');
  ajv.addKeyword('components');
  const components = document.components as { schemas: Schema; responses: Record<string, Schema> };
  const paths = document.paths as Record<string, Record<string, { responses: Record<string, Schema> }>>;
  const compiled = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: Schema): ValidateFunction => {
    let validate = compiled.get(key);
    if (!validate) {
      validate = ajv.compile({ ...schema, components: { schemas: components.schemas } });
      compiled.set(key, validate);
    }
    return validate;
  };
  const resolve = (response: Schema): Schema => {
    const target = response.$ref;
    return typeof target === 'string' ? (components.responses[target.split('/').pop() as string] as Schema) : response;
  };

  return {
    check({ method, route, status, contentType, body }) {
      const media = contentType?.split(';')[0]?.trim();
      const format = media === 'application/xml' ? 'xml' : 'json';
      let response: Schema | undefined;
      let where: string;
      const spec = route === undefined ? undefined : routes.find((candidate) => candidate.path === route && candidate.method === method);
      if (spec === undefined) {
        // No route matched (or `/`, beside the API): only an error can be answered.
        if (route !== undefined && !isBesideApi(route)) return `${method} ${route} is not in the route table`;
        where = `unmatched ${format}`;
        response = components.responses[format === 'json' ? 'ErrorJson' : 'ErrorXml'];
      } else {
        const path = documentPath(spec, format);
        where = `${method} ${path} ${status}`;
        const responses = paths[path]?.[method.toLowerCase()]?.responses;
        if (!responses) return `${method} ${path} is not in the document`;
        response = responses[String(status)] ?? responses.default;
      }
      if (!response) return `${where}: no such response in the document`;
      const content = resolve(response).content as Record<string, { schema: Schema }> | undefined;
      if (content === undefined) return body === '' ? undefined : `${where}: the document says no body, got ${body.length} characters`;
      if (media === undefined || content[media] === undefined) return `${where}: content type ${String(contentType)} is not in the document (${Object.keys(content).join(', ')})`;
      if (media !== 'application/json' && media !== 'application/xml') return undefined;
      let value: unknown;
      try {
        value = media === 'application/json' ? JSON.parse(body) : readXmlBody(body);
      } catch (error) {
        return `${where}: unreadable ${media} body: ${(error as Error).message}`;
      }
      const validate = validator(`${where} ${media}`, content[media].schema);
      if (validate(value)) return undefined;
      return `${where} ${media}: ${ajv.errorsText(validate.errors)}; body ${body.slice(0, 300)}`;
    },
  };
}

let shared: ResponseChecker | undefined;
/** Mismatches not yet reported. */
const mismatches: string[] = [];

/** The mismatches found since the last call, as an Error, or undefined when there were none. */
export function takeMismatches(): Error | undefined {
  if (mismatches.length === 0) return undefined;
  return new Error(`responses the OpenAPI document does not admit:\n${mismatches.splice(0).join('\n')}`);
}

// Each test that got a response the document does not admit fails, after it ran (a mismatch in a
// before hook fails the test after it; createTestApp's close reports any left at the end).
afterEach(() => {
  const error = takeMismatches();
  if (error) throw error;
});

/** Adds the check to an app, before it is ready (buildApp's `extend`). */
export function validateResponses() {
  shared ??= responseChecker(fullDocument());
  const checker = shared;
  return (app: FastifyInstance): void => {
    app.addHook('onSend', (request, reply, payload, done) => {
      // The console's HTML pages are not the API's (docs/console.md); what it answers in JSON or XML is checked.
      const html = isBesideApi(request.url.split('?')[0] as string) && !/^application\/(json|xml)/.test(String(reply.getHeader('content-type') ?? ''));
      if (!html && request.method !== 'HEAD' && reply.statusCode !== 304 && (payload === null || payload === undefined || typeof payload === 'string' || payload instanceof Buffer)) {
        const problem = checker.check({
          method: request.method,
          route: request.routeOptions.url,
          status: reply.statusCode,
          contentType: reply.getHeader('content-type') as string | undefined,
          body: payload === null || payload === undefined ? '' : payload.toString(),
        });
        if (problem !== undefined) mismatches.push(`${request.method} ${request.url}: ${problem}`);
      }
      done(null, payload);
    });
  };
}
