import { escapeHtml } from '../shared/escape-html.js';

/**
 * HTML written by the console (docs/console.md#security): every value put into a template is escaped
 * unless it is itself HTML built here (`Html`), so text from the data (an error message such as
 * `<img src=x onerror=alert(1)>`) is always shown as text.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export { escapeHtml };

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function piece(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(piece).join('');
  return escapeHtml(String(value));
}

/** The template tag: `html\`<p>${message}</p>\`` escapes `message`; nested `html` fragments stay as they are. */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] as string;
  values.forEach((value, i) => {
    out += piece(value) + (strings[i + 1] as string);
  });
  return new Html(out);
}

/**
 * Markup cmi drew itself (the SVG charts, whose text it escapes as it draws them); never call it on
 * anything that holds data not escaped already.
 */
export function trustedMarkup(text: string): Html {
  return new Html(text);
}
