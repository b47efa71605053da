import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { ERRORS, forbiddenJson, JSON_TYPE, NOT_FOUND_JSON, report, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';
import { eventually } from './support/eventually.js';
import { type WebhookReceiver, webhookReceiver } from './support/webhook-receiver.js';

// Reporting an error (docs/reporting-and-alerts.md#reporting-an-error) against a real receiver on a
// free port: what it is sent, signed, and what cmi answers and keeps for each way it can answer.

const SECRET = 'test-secret-0123456789';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FAULT = { error_class: 'TypeError', message: 'Cannot read properties of undefined', backtrace: "src/store/users.ts:42:in 'findUser'", host: 'web-1' };

describe('reporting an error', { timeout: 600_000 }, () => {
  let receiver: WebhookReceiver;
  let t: TestApp;

  before(async () => {
    receiver = await webhookReceiver(SECRET);
    t = await createTestApp({
      CMI_REPORT_WEBHOOK_URL: receiver.url,
      CMI_WEBHOOK_SECRET: SECRET,
      CMI_WEBHOOK_TIMEOUT: '300',
      CMI_REPORT_BACKOFF: '10',
      CMI_PUBLIC_URL: 'https://cmi.example.com/',
    });
  });
  after(async () => {
    await t.close();
    await receiver.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer(() => ({ status: 200 }));
  });

  let faults = 0;
  /** A new error (a message of its own), reported twice; answers its id. */
  const newError = async (): Promise<number> => {
    faults += 1;
    const message = `${FAULT.message} #${faults}`;
    const backtrace = `src/store/users.ts:42:in 'find${faults}'`;
    const first = await report(t, { ...FAULT, message, backtrace });
    assert.equal(first.statusCode, 201, first.body);
    assert.equal((await report(t, { ...FAULT, message, backtrace, host: 'web-2' })).statusCode, 200);
    return (JSON.parse(first.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
  };
  const reportIt = (id: number, format = 'json', authorization = t.adminAuth) =>
    t.app.inject({ method: 'POST', url: `${ERRORS}/${id}/report.${format}`, headers: { authorization } });
  const reportedFlag = async (id: number) =>
    Number((await t.database.db.selectFrom('infrastructure_errors').select('reported').where('id', '=', id).executeTakeFirstOrThrow()).reported);
  const deliveryRows = (errorId: number) =>
    t.database.db.selectFrom('webhook_deliveries').select(['kind', 'state', 'attempts', 'last_status', 'delivery_id', 'delivered_at']).where('error_id', '=', errorId).execute();

  it('delivers the record, its latest occurrences and its 7-day histogram, signed, then marks it reported (200)', async () => {
    const id = await newError();
    const res = await reportIt(id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    const record = (JSON.parse(res.body) as { infrastructure_error: Record<string, unknown> }).infrastructure_error;
    assert.equal(record.reported, true);
    assert.equal(record.counter, 2);
    assert.equal(await reportedFlag(id), 1);

    assert.equal(receiver.received.length, 1);
    const [got] = receiver.received;
    assert.equal(got!.path, '/hooks');
    assert.equal(got!.headers['content-type'], 'application/json');
    assert.match(String(got!.headers['x-cmi-delivery']), UUID);
    assert.equal(got!.headers['x-cmi-timestamp'], String(Math.floor(t.time.clock().getTime() / 1000)));
    assert.equal(got!.signatureValid, true);
    const body = got!.json;
    assert.deepEqual(Object.keys(body), ['event', 'text', 'infrastructure_error', 'url', 'console_url', 'occurrences', 'histogram']);
    assert.equal(body.event, 'report');
    assert.equal(body.url, `https://cmi.example.com${ERRORS}/${id}.json`);
    assert.equal(body.console_url, `https://cmi.example.com/console/errors/${id}`);
    assert.equal(body.text, `[cmi] Error #${id} reported (2 occurrences): TypeError: ${FAULT.message} #1 https://cmi.example.com${ERRORS}/${id}.json`);
    // The record as the API has it before the report (reported false: it is marked once delivered).
    const before = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}.json`, headers: { authorization: t.adminAuth } });
    assert.deepEqual(body.infrastructure_error, { ...(JSON.parse(before.body) as { infrastructure_error: object }).infrastructure_error, reported: false });
    const occurrences = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}/occurrences.json`, headers: { authorization: t.adminAuth } });
    assert.deepEqual(body.occurrences, JSON.parse(occurrences.body));
    assert.equal((body.occurrences as unknown[]).length, 2);
    const histogram = await t.app.inject({ method: 'GET', url: `${ERRORS}/${id}/histogram.json?period=7d`, headers: { authorization: t.adminAuth } });
    assert.deepEqual(body.histogram, JSON.parse(histogram.body));
    assert.equal((body.histogram as unknown[]).length, 168);

    const rows = await deliveryRows(id);
    assert.deepEqual(rows.map((row) => [row.kind, row.state, Number(row.attempts), Number(row.last_status), row.delivery_id]), [['report', 'delivered', 1, 200, got!.headers['x-cmi-delivery']]]);

    // Reported already: 200 with the record, nothing sent, nothing kept.
    const again = await reportIt(id);
    assert.equal(again.statusCode, 200);
    assert.equal(again.body, res.body);
    assert.equal(receiver.received.length, 1);
    assert.equal((await deliveryRows(id)).length, 1);

    // A new occurrence keeps it reported and counts it.
    const repeat = await report(t, { ...FAULT, message: `${FAULT.message} #1`, backtrace: "src/store/users.ts:42:in 'find1'" });
    assert.equal(repeat.statusCode, 200);
    const counted = (JSON.parse(repeat.body) as { infrastructure_error: Record<string, unknown> }).infrastructure_error;
    assert.equal(counted.counter, 3);
    assert.equal(counted.reported, true);
  });

  it('sends once for two reports of one error at once (a double click): both answer the reported record', async () => {
    const id = await newError();
    const answers = await Promise.all([reportIt(id), reportIt(id)]);
    assert.deepEqual(answers.map((res) => res.statusCode), [200, 200]);
    assert.equal(answers[0].body, answers[1].body);
    assert.equal((JSON.parse(answers[0].body) as { infrastructure_error: { reported: boolean } }).infrastructure_error.reported, true);
    assert.equal(receiver.received.length, 1);
    assert.equal((await deliveryRows(id)).length, 1);
  });

  it('answers in XML when asked', async () => {
    const id = await newError();
    const res = await reportIt(id, 'xml');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], XML_TYPE);
    assert.ok(res.body.startsWith(`${XML_DECLARATION}<infrastructure_error>\n  <id type="integer">${id}</id>`), res.body);
    assert.match(res.body, /<reported type="boolean">true<\/reported>/);
  });

  it('tries 3 times with the same delivery id, then answers 502 and leaves it unreported when the receiver answers 500', async () => {
    const id = await newError();
    receiver.answer(() => ({ status: 500, body: 'x'.repeat(200_000) }));
    const res = await reportIt(id);
    assert.equal(res.statusCode, 502);
    assert.equal(res.headers['content-type'], JSON_TYPE);
    assert.equal(res.body, '{"errors":{"base":["The report receiver did not accept the error after 3 tries (last: HTTP 500); it is not marked reported"]}}');
    assert.equal(receiver.received.length, 3);
    assert.equal(new Set(receiver.received.map((r) => r.headers['x-cmi-delivery'])).size, 1);
    assert.ok(receiver.received.every((r) => r.signatureValid));
    assert.equal(await reportedFlag(id), 0);
    const rows = await deliveryRows(id);
    assert.deepEqual(rows.map((row) => [row.kind, row.state, Number(row.attempts), Number(row.last_status), row.delivered_at]), [['report', 'failed', 3, 500, null]]);
    // Nothing of it became an infrastructure error (no alert loops).
    const errors = await t.database.db.selectFrom('infrastructure_errors').select('id').execute();
    assert.equal(errors.length, faults);

    const xml = await reportIt(id, 'xml');
    assert.equal(xml.statusCode, 502);
    assert.equal(xml.body, `${XML_DECLARATION}<errors>\n  <error>The report receiver did not accept the error after 3 tries (last: HTTP 500); it is not marked reported</error>\n</errors>\n`);
  });

  it('succeeds on a later try: two 500s then 200 mark it reported', async () => {
    const id = await newError();
    receiver.answer((_r, index) => ({ status: index < 2 ? 500 : 204 }));
    const res = await reportIt(id);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(receiver.received.length, 3);
    assert.equal(await reportedFlag(id), 1);
    assert.deepEqual((await deliveryRows(id)).map((row) => [row.state, Number(row.attempts), Number(row.last_status)]), [['delivered', 3, 204]]);
  });

  it('gives each try CMI_WEBHOOK_TIMEOUT: a receiver that does not answer is a 502 after 3 tries', async () => {
    const id = await newError();
    receiver.answer(() => ({ status: 200, delayMs: 2000 }));
    const res = await reportIt(id);
    assert.equal(res.statusCode, 502);
    assert.equal(res.body, '{"errors":{"base":["The report receiver did not accept the error after 3 tries (last: no answer within 300 ms); it is not marked reported"]}}');
    assert.equal(receiver.received.length, 3);
    assert.equal(await reportedFlag(id), 0);
    assert.deepEqual((await deliveryRows(id)).map((row) => [row.state, Number(row.attempts), row.last_status]), [['failed', 3, null]]);
  });

  it('stops at a 410: one try, 502, and nothing more sent to that URL', async () => {
    const id = await newError();
    const other = await newError();
    receiver.answer(() => ({ status: 410 }));
    const res = await reportIt(id);
    assert.equal(res.statusCode, 502);
    assert.equal(res.body, '{"errors":{"base":["The report receiver answered 410 Gone; nothing is sent to it until CMI_REPORT_WEBHOOK_URL changes"]}}');
    assert.equal(receiver.received.length, 1);
    receiver.answer(() => ({ status: 200 }));
    const next = await reportIt(other);
    assert.equal(next.statusCode, 502);
    assert.equal(next.body, '{"errors":{"base":["The report receiver answered 410 Gone before; nothing is sent to it until CMI_REPORT_WEBHOOK_URL changes"]}}');
    assert.equal(receiver.received.length, 1);
    assert.equal(await reportedFlag(other), 0);
    // The URL is changed: deliveries go again.
    const moved = await createTestApp({ CMI_REPORT_WEBHOOK_URL: `${receiver.url}/v2`, CMI_WEBHOOK_SECRET: SECRET });
    try {
      const first = await report(moved, FAULT);
      const movedId = (JSON.parse(first.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      await moved.database.db.insertInto('webhook_gone_urls').values({ url: receiver.url, gone_at: '2026-11-20T10:00:00.000Z' }).execute();
      const ok = await moved.app.inject({ method: 'POST', url: `${ERRORS}/${movedId}/report.json`, headers: { authorization: moved.adminAuth } });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(receiver.received.at(-1)?.path, '/hooks/v2');
    } finally {
      await moved.close();
    }
  });

  it('is for administrators only, and 404 for an unknown error', async () => {
    const id = await newError();
    const forbidden = await reportIt(id, 'json', t.aliceAuth);
    assert.equal(forbidden.statusCode, 403);
    assert.equal(forbidden.body, forbiddenJson('infrastructure_errors.report'));
    const anonymous = await t.app.inject({ method: 'POST', url: `${ERRORS}/${id}/report.json` });
    assert.equal(anonymous.statusCode, 401);
    const missing = await reportIt(999_999);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.body, NOT_FOUND_JSON);
    assert.equal(receiver.received.length, 0);
    assert.equal(await reportedFlag(id), 0);
  });
});

describe('reporting an error while cmi stops', () => {
  it('a report waiting for a slow receiver answers 502 at once when the app closes, and the close does not wait for the receiver', async () => {
    const receiver = await webhookReceiver(SECRET, () => ({ status: 200, delayMs: 60_000 }));
    const t = await createTestApp({ CMI_REPORT_WEBHOOK_URL: receiver.url, CMI_WEBHOOK_SECRET: SECRET, CMI_WEBHOOK_TIMEOUT: '600000' });
    try {
      const created = await report(t, FAULT);
      const id = (JSON.parse(created.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      const pending = t.app.inject({ method: 'POST', url: `${ERRORS}/${id}/report.json`, headers: { authorization: t.adminAuth } });
      await eventually(() => assert.equal(receiver.received.length, 1));
      const [res] = await Promise.all([pending, t.app.close()]);
      assert.equal(res.statusCode, 502);
      assert.equal(res.body, '{"errors":{"base":["cmi is stopping: the report was not delivered; it is not marked reported"]}}');
      const row = await t.database.db.selectFrom('infrastructure_errors').select('reported').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(Number(row.reported), 0);
    } finally {
      await t.close();
      await receiver.stop();
    }
  });
});

describe('reporting an error with no report URL', () => {
  it('marks it reported and sends nothing', async () => {
    const t = await createTestApp();
    try {
      const created = await report(t, FAULT);
      const id = (JSON.parse(created.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      const res = await t.app.inject({ method: 'POST', url: `${ERRORS}/${id}/report.json`, headers: { authorization: t.adminAuth } });
      assert.equal(res.statusCode, 200);
      assert.equal((JSON.parse(res.body) as { infrastructure_error: { reported: boolean } }).infrastructure_error.reported, true);
      assert.equal((await t.database.db.selectFrom('webhook_deliveries').selectAll().execute()).length, 0);
    } finally {
      await t.close();
    }
  });
});

describe('cmi errors report', { timeout: 600_000 }, () => {
  it('delivers and marks, refuses with the receiver\'s answer, and says when it was reported already', async () => {
    const receiver = await webhookReceiver(SECRET, () => ({ status: 500 }));
    const t = await createTestApp();
    try {
      const created = await report(t, FAULT);
      const id = (JSON.parse(created.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
      const env = { DATABASE_URL: t.config.databaseUrl, CMI_REPORT_WEBHOOK_URL: receiver.url, CMI_WEBHOOK_SECRET: SECRET, CMI_REPORT_BACKOFF: '10', LOG_LEVEL: 'silent' };
      const refused = await runCmi(['local', 'errors', 'report', String(id)], env);
      assert.equal(refused.code, 1);
      assert.equal(refused.stdout, '');
      assert.equal(refused.stderr, 'cmi: try 1 of the report failed (HTTP 500)\ncmi: try 2 of the report failed (HTTP 500)\ncmi: try 3 of the report failed (HTTP 500)\n' +
        'cmi: The report receiver did not accept the error after 3 tries (last: HTTP 500); it is not marked reported\n');
      assert.equal(receiver.received.length, 3);
      receiver.answer(() => ({ status: 200 }));
      const done = await runCmi(['local', 'errors', 'report', String(id)], env);
      assert.equal(done.stderr, '');
      assert.equal(done.stdout, `Reported infrastructure error ${id} (TypeError: ${FAULT.message}) to http://127.0.0.1:${receiver.port}/…\n`);
      assert.equal(done.code, 0);
      assert.equal(receiver.received.length, 4);
      assert.ok(receiver.received.every((r) => r.signatureValid));
      const again = await runCmi(['local', 'errors', 'report', String(id)], env);
      assert.equal(again.stdout, `Infrastructure error ${id} was already reported; nothing sent\n`);
      assert.equal(receiver.received.length, 4);
    } finally {
      await t.close();
      await receiver.stop();
    }
  });
});
