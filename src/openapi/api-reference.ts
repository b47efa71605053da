/**
 * The API reference page of `GET /docs`, rendered on the server from the OpenAPI document: plain HTML
 * and one style sheet served by cmi, no script, nothing fetched from elsewhere (docs/api.md#openapi).
 */
import { escapeHtml } from '../shared/escape-html.js';

type Schema = Record<string, unknown>;

/** A schema's text (a description, a name); '' where it has none. */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A schema in a few words: `integer`, `string or null`, `array of Role`, `one of active, suspended`. */
function typeText(schema: Schema | undefined): string {
  if (schema === undefined) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop() as string;
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
  }
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(typeText).join(' or ');
  if (Array.isArray(schema.enum)) return `one of ${(schema.enum as string[]).map((value) => `<code>${escapeHtml(value)}</code>`).join(', ')}`;
  if (schema.type === 'array') return `array of ${typeText(schema.items as Schema)}`;
  if (schema.type === 'object' && schema.properties) {
    return `{ ${Object.entries(schema.properties as Record<string, Schema>).map(([name, inner]) => `<code>${escapeHtml(name)}</code>: ${typeText(inner)}`).join(', ')} }`;
  }
  if (schema.format === 'date-time') return 'datetime';
  return escapeHtml(textOf(schema.type) || 'any');
}

function parametersTable(parameters: Schema[] | undefined): string {
  if (!parameters || parameters.length === 0) return '';
  const rows = parameters.map((p) => `<tr><td><code>${escapeHtml(textOf(p.name))}</code></td><td>${escapeHtml(textOf(p.in))}</td><td>${typeText(p.schema as Schema)}</td><td>${escapeHtml(textOf(p.description))}</td></tr>`);
  return `<table><thead><tr><th>parameter</th><th>in</th><th>type</th><th>meaning</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function responsesList(responses: Record<string, Schema>): string {
  const items = Object.entries(responses).map(([status, response]) => {
    const content = response.content as Record<string, { schema: Schema }> | undefined;
    const body = content ? Object.entries(content).map(([media, { schema }]) => ` <span class="media">${escapeHtml(media)}</span> ${typeText(schema)}`).join('') : '';
    const description = typeof response.$ref === 'string' ? `error body (${typeText(response)})` : escapeHtml(textOf(response.description));
    return `<li><strong>${escapeHtml(status)}</strong> ${description}${body}</li>`;
  });
  return `<ul class="responses">${items.join('')}</ul>`;
}

export function renderApiReference(document: Schema, stylesheetPath: string): string {
  const info = document.info as { title: string; version: string; description: string };
  const paths = document.paths as Record<string, Record<string, Schema>>;
  const sections: string[] = [];
  const index: string[] = [];
  for (const [path, item] of Object.entries(paths)) {
    // One entry a route: its JSON path stands for the XML one and the pagination segments.
    if (path.endsWith('.xml') || /\/(page|per_page)\/\{/.test(path)) continue;
    const twin = path.endsWith('.json') && paths[`${path.slice(0, -5)}.xml`] !== undefined;
    for (const [method, operation] of Object.entries(item)) {
      const id = String(operation.operationId);
      index.push(`<li><a href="#${escapeHtml(id)}"><span class="method">${method.toUpperCase()}</span> ${escapeHtml(path)}</a></li>`);
      sections.push(
        `<section id="${escapeHtml(id)}"><h3><span class="method">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>${twin ? ' <span class="also">also <code>.xml</code></span>' : ''}</h3>`
        + `<p>${escapeHtml(String(operation.summary))}. ${escapeHtml(String(operation.description))}</p>`
        + parametersTable(operation.parameters as Schema[] | undefined)
        + responsesList(operation.responses as Record<string, Schema>)
        + '</section>',
      );
    }
  }
  const schemas = (document.components as { schemas: Record<string, Schema> }).schemas;
  const schemaSections = Object.entries(schemas).map(([name, schema]) => {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const rows = Object.entries(properties).map(([field, inner]) => `<tr><td><code>${escapeHtml(field)}</code></td><td>${typeText(inner)}</td></tr>`);
    return `<section id="schema-${escapeHtml(name)}"><h3>${escapeHtml(name)}</h3><table><thead><tr><th>field</th><th>type</th></tr></thead><tbody>${rows.join('')}</tbody></table></section>`;
  });
  return '<!DOCTYPE html>\n'
    + `<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)} ${escapeHtml(info.version)} API reference</title>`
    + `<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="${escapeHtml(stylesheetPath)}"></head>`
    + `<body><header><h1>${escapeHtml(info.title)} API reference</h1><p>Version ${escapeHtml(info.version)}. ${escapeHtml(info.description)}`
    + ' The machine-readable document: <a href="/openapi.json">/openapi.json</a>.</p></header>'
    + `<nav><h2>Endpoints</h2><ul>${index.join('')}</ul></nav>`
    + `<main><h2>Endpoints</h2>${sections.join('\n')}<h2>Schemas</h2>${schemaSections.join('\n')}</main></body></html>\n`;
}

export const API_REFERENCE_CSS = `body { font: 15px/1.5 system-ui, sans-serif; margin: 0; display: grid; grid-template-columns: 20rem 1fr; color: #1c1c1c; }
header { grid-column: 1 / -1; padding: 1rem 2rem; background: #f3f4f6; border-bottom: 1px solid #d1d5db; }
nav { padding: 1rem; border-right: 1px solid #d1d5db; font-size: 13px; }
nav ul { list-style: none; padding: 0; }
main { padding: 1rem 2rem; max-width: 60rem; }
section { border-bottom: 1px solid #e5e7eb; padding-bottom: 1rem; }
.method { display: inline-block; min-width: 4rem; font-weight: 600; color: #1d4ed8; }
.also, .media { color: #6b7280; font-size: 13px; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #e5e7eb; padding: 0.2rem 0.5rem; text-align: left; vertical-align: top; }
code { font-family: ui-monospace, monospace; }
`;
