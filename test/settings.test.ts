import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig, type Setting, SETTINGS } from '../src/config.js';
import { refusedPort } from '../src/alerts/sender.js';
import { BEGIN, DOCUMENT, END, settingsTable } from '../tools/settings-table.js';

const declared = Object.entries(SETTINGS) as Array<[string, Setting]>;

/** The ConfigError message loadConfig stops with, given `source`. */
function refusal(source: Record<string, string>): string {
  try {
    loadConfig(source);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`loadConfig accepted ${JSON.stringify(source)}`);
}

// Every setting is declared once, in src/config.ts SETTINGS (docs/architecture.md#settings).
describe('the one declaration of every setting', () => {
  it('docs/operations.md holds the settings table written from it', () => {
    const document = readFileSync(DOCUMENT, 'utf8');
    const begin = document.indexOf(BEGIN);
    const end = document.indexOf(END);
    assert.ok(begin >= 0 && end > begin, `docs/operations.md has no ${BEGIN} ... ${END} markers`);
    const table = document.slice(begin + BEGIN.length, end).trim();
    assert.equal(table, settingsTable(), 'docs/operations.md\'s settings table differs from src/config.ts SETTINGS: run npm run docs:settings (node --import tsx tools/settings-table.ts --write) and commit docs/operations.md');
  });

  it('the table has a row for every setting, in the declaration\'s order, with its default and bounds', () => {
    const rows = settingsTable().split('\n').slice(2);
    assert.deepEqual(rows.map((row) => /^\| `(\w+)` \|/.exec(row)?.[1]), Object.keys(SETTINGS));
    assert.equal(rows[0], '| `PORT` | `--port` | `3000` | an integer 0–65535 | port to listen on (0: any free port) |');
    assert.ok(rows.includes('| `CMI_TRUST_PROXY` | – | `false` | `true`, `false`, `1` or `0` | believe `X-Forwarded-For` and `X-Forwarded-Proto` (set it only behind a proxy that overwrites them) |'));
    assert.ok(rows.includes('| `CMI_LOG_FORMAT` | `--log-format` | `pretty` | `json` or `pretty` | how `cmi serve` writes its [start-up and stop lines](#log-format): `pretty` for people, `json` one object a line |'));
    assert.ok(rows.some((row) => row.startsWith('| `CMI_ALERT_WEBHOOK_URL` | – | unset | an `http` or `https` URL of at most 2048 characters, on a port fetch sends to ([the outbox](reporting-and-alerts.md#the-outbox)) |')));
  });

  it('every default is a value its own setting accepts', () => {
    const config = loadConfig({});
    assert.deepEqual(
      [config.port, config.host, config.databaseUrl, config.maxPerPage, config.defaultPerPage, config.logLevel, config.workers, config.trustProxy, config.openApi, config.logFormat, config.faultInjection, config.onappVersion],
      [3000, '127.0.0.1', 'sqlite:./data/cmi.sqlite3', 1000, 25, 'info', 1, false, true, 'pretty', 'off', '6.7'],
    );
    assert.deepEqual([config.adminPassword, config.metrics, config.webhooks.reportUrl, config.webhooks.alertUrl, config.publicUrl], [undefined, { token: undefined, port: undefined }, undefined, undefined, undefined]);
  });

  it('an integer setting refuses a value past either bound with the message its bounds give', () => {
    for (const [name, setting] of declared) {
      if (setting.kind !== 'integer') continue;
      const message = (got: string) => `${name} must be an integer from ${setting.min} to ${setting.max} (got ${JSON.stringify(got)})`;
      assert.equal(refusal({ [name]: String(setting.max + 1) }), message(String(setting.max + 1)));
      if (setting.min > 0) assert.equal(refusal({ [name]: String(setting.min - 1) }), message(String(setting.min - 1)));
      assert.equal(refusal({ [name]: '1.5' }), message('1.5'));
    }
  });

  it('a boolean, enum or URL setting refuses anything else with the message its kind gives', () => {
    for (const [name, setting] of declared) {
      if (setting.kind === 'boolean') assert.equal(refusal({ [name]: 'yes' }), `${name} must be true, false, 1 or 0 (got "yes")`);
      if (setting.kind === 'enum') assert.equal(refusal({ [name]: 'other' }), `${name} must be one of ${setting.values.join(', ')} (got "other")`);
      if (setting.kind === 'url') assert.equal(refusal({ [name]: 'ftp://example.com/x', CMI_WEBHOOK_SECRET: 'a-secret-of-16-chars' }), `${name} must be an http or https URL of at most 2048 characters (got "ftp://example.com/…")`);
    }
  });

  it('a webhook URL on a port fetch never sends to is refused at start; the ports are exactly those fetch refuses', async () => {
    for (const name of ['CMI_REPORT_WEBHOOK_URL', 'CMI_ALERT_WEBHOOK_URL']) {
      assert.equal(refusal({ [name]: 'http://hooks.example.com:6667/x', CMI_WEBHOOK_SECRET: 'a-secret-of-16-chars' }), `${name} names port 6667, which webhooks are never sent to (a port fetch refuses): use another port (got "http://hooks.example.com:6667/…")`);
    }
    assert.equal(loadConfig({ CMI_PUBLIC_URL: 'http://cmi.example.com:6667' }).publicUrl, 'http://cmi.example.com:6667', 'cmi\'s own address is not sent to');
    // Node's own fetch says which ports it refuses: each one listed, and none of their neighbours unlisted.
    const refusedByFetch = async (port: number) => {
      const error = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) }).then(() => undefined, (e: unknown) => e as { cause?: { message?: string } });
      return error?.cause?.message === 'bad port';
    };
    const listed = Array.from({ length: 10_081 }, (_, port) => port).filter((port) => port > 0 && refusedPort(new URL(`http://127.0.0.1:${port}/`)) !== undefined);
    assert.equal(listed.length, 82);
    const checked = [...new Set(listed.flatMap((port) => [port - 1, port, port + 1]))].filter((port) => port > 0);
    for (const port of checked) assert.equal(await refusedByFetch(port), listed.includes(port), `port ${port}`);
  });

  it('a flag of cmi serve belongs to a setting of the declaration, each flag once', () => {
    const flags = declared.flatMap(([, setting]) => (setting.flag === undefined ? [] : [setting.flag.split(' ')[0]]));
    assert.deepEqual(flags, ['--port', '--host', '--database-url', '--default-per-page', '--max-per-page', '--log-level', '--workers', '--log-format']);
  });
});
