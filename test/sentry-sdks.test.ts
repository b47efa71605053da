import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, listenLocally, type TestApp } from './support/app.js';
import { ERRORS } from './support/error-reports.js';
import { fingerprint } from '../src/tracker/grouping.js';

/**
 * Real Sentry SDKs report to a listening cmi (docs/sentry.md): @sentry/node (a dev dependency) and,
 * where Debian's packages are installed (.ci/run installs them), python3-sentry-sdk, sentry-go and
 * ruby-sentry-raven. Each sends the same exception three times and one message, with its own defaults
 * (Node: envelopes with sentry_key in the query, chunked; Python and Go: store with X-Sentry-Auth,
 * Python gzipped; Ruby: base64 of zlib with sentry_version=5).
 */
const SDKS = join(dirname(fileURLToPath(import.meta.url)), 'support', 'sentry-sdks');
const works = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;
const PYTHON = '/usr/bin/python3';
const GOPATH = '/usr/share/gocode';
const hasPython = existsSync(PYTHON) && works(PYTHON, ['-c', 'import sentry_sdk']);
const hasGo = works('go', ['version']) && existsSync(join(GOPATH, 'src/github.com/getsentry/sentry-go'));
const hasRuby = works('ruby', ['-e', "require 'raven'"]);

interface Recorded {
  error_class: string;
  message: string;
  backtrace: string;
  counter: number;
  fingerprint: string;
  occurrences: Array<{ host: string | null; component: string | null; context: Record<string, unknown> }>;
}

describe('real Sentry SDKs report into cmi', () => {
  let t: TestApp;
  let dsn: string;
  beforeEach(async () => {
    t = await createTestApp();
    const port = await listenLocally(t.app);
    const made = await t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/ingest_keys.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { ingest_key: { label: 'sdk', component: 'from-key' } } });
    const key = made.json<{ ingest_key: { id: number; public_key: string } }>().ingest_key;
    dsn = `http://${key.public_key}@127.0.0.1:${port}/${key.id}`;
  });
  afterEach(() => t.close());

  /** Runs an SDK's script to its end with the DSN; it must exit 0. */
  async function report(command: string, args: string[], env: Record<string, string> = {}): Promise<void> {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, SENTRY_DSN: dsn };
    delete childEnv.NODE_TEST_CONTEXT;
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(command, args, { cwd: SDKS, env: childEnv, timeout: 120_000 }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }));
    });
    assert.equal(code, 0, output);
  }

  /** Every error recorded, by class, with its occurrences (newest first). */
  async function recorded(): Promise<Map<string, Recorded>> {
    const auth = { authorization: t.adminAuth };
    const list = (await t.app.inject({ method: 'GET', url: `${ERRORS}.json`, headers: auth })).json<Array<{ infrastructure_error: Recorded & { id: number } }>>();
    const out = new Map<string, Recorded>();
    for (const { infrastructure_error: error } of list) {
      const occurrences = (await t.app.inject({ method: 'GET', url: `${ERRORS}/${error.id}/occurrences.json`, headers: auth })).json<Array<{ occurrence: Recorded['occurrences'][number] }>>();
      out.set(error.error_class, { ...error, occurrences: occurrences.map(({ occurrence }) => occurrence) });
    }
    return out;
  }

  /** The error's own fields, and its occurrences' host, component and context (the event id aside, which must be 32 hex digits). */
  function assertRecorded(error: Recorded | undefined, expected: { message: string; backtrace: string; counter: number; host: string; component: string; context: Record<string, unknown> }): void {
    assert.ok(error, 'recorded');
    assert.deepEqual([error.message, error.backtrace, error.counter], [expected.message, expected.backtrace, expected.counter]);
    assert.equal(error.fingerprint, fingerprint(error.error_class, error.backtrace, error.message));
    assert.equal(error.occurrences.length, expected.counter);
    const ids = new Set<unknown>();
    for (const occurrence of error.occurrences) {
      const { event_id: eventId, ...context } = occurrence.context;
      assert.match(String(eventId), /^[0-9a-f]{32}$/);
      ids.add(eventId);
      assert.deepEqual([occurrence.host, occurrence.component, context], [expected.host, expected.component, expected.context]);
    }
    assert.equal(ids.size, expected.counter, 'each event its own id');
  }

  it('@sentry/node 11: envelopes with sentry_key in the query', async () => {
    await report(process.execPath, [join(SDKS, 'report.cjs')]);
    const errors = await recorded();
    assert.deepEqual([...errors.keys()].sort(), ['Message', 'TypeError']);
    const script = join(SDKS, 'report.cjs');
    const sdk = { name: 'sentry.javascript.node', version: '11.12.0' };
    const typeError = errors.get('TypeError');
    // Innermost first: the script's frames, then Node's own (whose lines depend on the Node version).
    const [first, second, ...internal] = typeError?.backtrace.split('\n') ?? [];
    assert.deepEqual([first, second], [`${script}:14:in 'chargeCard'`, `${script}:19:in 'Object.?'`]);
    assert.ok(internal.length > 0 && internal.every((line) => line.startsWith('node:internal/')), typeError?.backtrace);
    assertRecorded(typeError, {
      message: 'card is undefined', backtrace: typeError?.backtrace ?? '', counter: 3, host: 'node-host', component: 'checkout',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'error', platform: 'node', sdk, tags: { component: 'checkout' } },
    });
    const message = errors.get('Message');
    assert.equal(message?.backtrace.split('\n')[0], `${script}:24:in 'Object.?'`);
    assertRecorded(message, {
      message: 'cache warmed', backtrace: message?.backtrace ?? '', counter: 1, host: 'node-host', component: 'from-key',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'info', platform: 'node', sdk, tags: {} },
    });
  });

  it('python3-sentry-sdk 1.9 (Debian): store, X-Sentry-Auth, gzip, module beside type', { skip: !hasPython && 'python3-sentry-sdk is not installed' }, async () => {
    await report(PYTHON, [join(SDKS, 'report.py')]);
    const errors = await recorded();
    assert.deepEqual([...errors.keys()].sort(), ['Message', '__main__.PaymentDeclined']);
    const sdk = { name: 'sentry.python', version: '1.9.10' };
    const tags = { component: 'payments' };
    assertRecorded(errors.get('__main__.PaymentDeclined'), {
      message: 'card 4242 declined', backtrace: "report.py:12:in 'charge_card'\nreport.py:19:in '<module>'", counter: 3, host: 'python-host', component: 'payments',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'error', platform: 'python', sdk, tags },
    });
    assertRecorded(errors.get('Message'), {
      message: 'cache warmed', backtrace: '', counter: 1, host: 'python-host', component: 'payments',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'info', platform: 'python', sdk, tags },
    });
  });

  it('sentry-go 0.11 (Debian): store, plain JSON, exception a bare list, abs_path frames', { skip: !hasGo && 'golang-github-getsentry-sentry-go-dev is not installed' }, async () => {
    const cache = mkdtempSync(join(tmpdir(), 'cmi-gocache-'));
    try {
      await report('go', ['run', join(SDKS, 'report.go')], { GOPATH, GO111MODULE: 'off', GOFLAGS: '', GOCACHE: cache });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
    const errors = await recorded();
    assert.deepEqual([...errors.keys()].sort(), ['*errors.errorString', 'Message']);
    const sdk = { name: 'sentry.go', version: '0.11.0' };
    const tags = { component: 'billing-go' };
    assertRecorded(errors.get('*errors.errorString'), {
      message: 'card declined', backtrace: `${join(SDKS, 'report.go')}:23:in 'main'`, counter: 3, host: 'go-host', component: 'billing-go',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'error', platform: 'go', sdk, tags },
    });
    assertRecorded(errors.get('Message'), {
      message: 'cache warmed', backtrace: '', counter: 1, host: 'go-host', component: 'billing-go',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'info', platform: 'go', sdk, tags },
    });
  });

  it('raven-ruby 3 (Debian): store, sentry_version=5, base64 of zlib, message and logentry', { skip: !hasRuby && 'ruby-sentry-raven is not installed' }, async () => {
    await report('ruby', [join(SDKS, 'report.rb')]);
    const errors = await recorded();
    assert.deepEqual([...errors.keys()].sort(), ['Message', 'PaymentDeclined']);
    const sdk = { name: 'raven-ruby', version: '3.1.2' };
    const tags = { component: 'billing-ruby' };
    assertRecorded(errors.get('PaymentDeclined'), {
      message: 'card declined', backtrace: "report.rb:7:in 'charge_card'\nreport.rb:20:in 'block in <main>'\nreport.rb:19:in 'times'\nreport.rb:19:in '<main>'", counter: 3, host: 'ruby-host', component: 'billing-ruby',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'error', platform: 'ruby', sdk, tags },
    });
    assertRecorded(errors.get('Message'), {
      message: 'cache warmed', backtrace: '', counter: 1, host: 'ruby-host', component: 'billing-ruby',
      context: { release: 'shop@1.2.3', environment: 'test', level: 'error', platform: 'ruby', sdk, tags },
    });
  });
});
