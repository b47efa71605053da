import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { globMatcher } from '../src/logs/log-rule.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';

/** The log sources' operator rules (docs/log-sources.md#operator-rules): the API, and what they make of records. */

const RULES = '/sysadmin_tools/infrastructure/log_rules';
const AT = '2026-11-20T10:00:00+00:00';

let t: TestApp;
let otlpKey: string;
before(async () => {
  t = await createTestApp();
  const made = await call('POST', '/sysadmin_tools/infrastructure/ingest_keys.json', { ingest_key: { label: 'Nova', kind: 'otlp' } });
  otlpKey = (JSON.parse(made.body) as { ingest_key: { public_key: string } }).ingest_key.public_key;
});
after(() => t.close());

function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, authorization = t.adminAuth) {
  return t.app.inject({
    method, url, headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}

/** Sends OTLP log records of service `service` on host `host` with the key, at these severities and bodies. */
async function sendLogs(host: string, service: string, records: Array<[severityNumber: number, body: string]>): Promise<void> {
  const body = {
    resourceLogs: [{
      resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }, { key: 'service.name', value: { stringValue: service } }] },
      scopeLogs: [{ logRecords: records.map(([severityNumber, text]) => ({ severityNumber, body: { stringValue: text } })) }],
    }],
  };
  const sent = await t.app.inject({ method: 'POST', url: '/v1/logs', headers: { authorization: `Bearer ${otlpKey}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  assert.equal(sent.statusCode, 200, sent.body);
  assert.equal(sent.body, '{}');
}

/** The errors whose occurrences name `host`: class, message, component and counter. */
async function errorsOn(host: string): Promise<Array<[string, string, string | null, number]>> {
  const listed = await call('GET', `/sysadmin_tools/infrastructure/errors.json?host=${host}&per_page=100`);
  assert.equal(listed.statusCode, 200, listed.body);
  const found: Array<[string, string, string | null, number]> = [];
  for (const { infrastructure_error: e } of JSON.parse(listed.body) as Array<{ infrastructure_error: { id: number; error_class: string; message: string; counter: number } }>) {
    const occurrences = JSON.parse((await call('GET', `/sysadmin_tools/infrastructure/errors/${e.id}/occurrences.json`)).body) as Array<{ occurrence: { component: string | null; context: { rule?: string } } }>;
    found.push([e.error_class, e.message, occurrences[0]!.occurrence.component, e.counter]);
  }
  return found.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

describe('log rules: the API', () => {
  it('creates a rule after the last, shows it in JSON and XML, lists them in order, changes and deletes it, each in the audit trail', async () => {
    const made = await call('POST', `${RULES}.json`, { log_rule: { label: 'Missing instances', position: 5, program: 'nova-*', pattern: '*Instance * could not be found*', error_class: 'nova: instance missing', component: 'compute' } });
    assert.equal(made.statusCode, 201, made.body);
    const id = (JSON.parse(made.body) as { log_rule: { id: number } }).log_rule.id;
    assert.equal(made.headers.location, `${RULES}/${id}.json`);
    assert.equal(made.body, `{"log_rule":{"id":${id},"position":5,"label":"Missing instances","program":"nova-*","pattern":"*Instance * could not be found*","error_class":"nova: instance missing","component":"compute","enabled":true,"created_at":"${AT}","updated_at":"${AT}"}}`);
    const xml = await call('GET', `${RULES}/${id}.xml`);
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<log_rule>
  <id type="integer">${id}</id>
  <position type="integer">5</position>
  <label>Missing instances</label>
  <program>nova-*</program>
  <pattern>*Instance * could not be found*</pattern>
  <error_class>nova: instance missing</error_class>
  <component>compute</component>
  <enabled type="boolean">true</enabled>
  <created_at type="datetime">${AT}</created_at>
  <updated_at type="datetime">${AT}</updated_at>
</log_rule>
`);
    const second = await call('POST', `${RULES}.json`, { label: 'Any disk', pattern: '*disk*', error_class: 'disk' });
    assert.equal(second.statusCode, 201, second.body);
    const secondId = (JSON.parse(second.body) as { log_rule: { id: number; position: number; program: null; component: null } }).log_rule;
    assert.deepEqual([secondId.position, secondId.program, secondId.component], [6, null, null]);
    assert.equal((await call('PUT', `${RULES}/${secondId.id}.json`, { log_rule: { position: 1, enabled: 'false' } })).statusCode, 204);
    const listed = await call('GET', `${RULES}.json`);
    assert.equal(listed.headers['x-total'], '2');
    // By position: the second, moved to 1, comes first.
    assert.deepEqual((JSON.parse(listed.body) as Array<{ log_rule: { id: number; position: number; enabled: boolean } }>).map(({ log_rule: r }) => [r.id, r.position, r.enabled]), [[secondId.id, 1, false], [id, 5, true]]);
    assert.equal((await call('DELETE', `${RULES}/${secondId.id}.json`)).statusCode, 204);
    assert.equal((await call('GET', `${RULES}/${secondId.id}.json`)).statusCode, 404);
    const trail = await t.database.db.selectFrom('audit_events').select(['action', 'target_id', 'changes']).where('target_type', '=', 'log_rule').orderBy('id').execute();
    assert.deepEqual(trail.map((event) => [event.action, Number(event.target_id)]), [['log_rule.create', id], ['log_rule.create', secondId.id], ['log_rule.update', secondId.id], ['log_rule.delete', secondId.id]]);
    assert.deepEqual(JSON.parse(trail[2]!.changes), { position: [6, 1], enabled: [true, false] });
  });

  it('names every bad field in one 422, and refuses a holder without the ingest keys\' permissions', async () => {
    const bad = await call('POST', `${RULES}.json`, { log_rule: { label: '', pattern: 'x'.repeat(1025), position: 0, enabled: 'maybe' } });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, JSON.stringify({ errors: {
      label: ["can't be blank"],
      pattern: ['is too long (maximum is 1024 characters)'],
      error_class: ["can't be blank"],
      position: ['must be an integer from 1 to 100000'],
      enabled: ['must be true or false'],
    } }));
    const refused = await call('POST', `${RULES}.json`, { label: 'x', pattern: '*', error_class: 'x' }, t.aliceAuth);
    assert.equal(refused.statusCode, 403);
    assert.equal((await call('GET', `${RULES}.json`, undefined, t.aliceAuth)).statusCode, 403);
  });
});

describe('log rules: what they make of records', () => {
  it('makes a matching record an error of the rule\'s class and component whatever its severity; others stay lines; a disabled rule promotes nothing', async () => {
    const made = await call('POST', `${RULES}.json`, { log_rule: { label: 'Port flaps', program: 'ovs-*', pattern: '*port * link state changed to down*', error_class: 'ovs: port down', component: 'network' } });
    const id = (JSON.parse(made.body) as { log_rule: { id: number } }).log_rule.id;
    await sendLogs('sw-1', 'ovs-vswitchd', [[9, 'bridge br0: port tap7 link state changed to down'], [9, 'bridge br0: port tap8 link state changed to up'], [9, 'bridge br0: port tap9 link state changed to down']]);
    // Another program: the rule does not apply.
    await sendLogs('sw-1', 'netplan', [[9, 'port eth0 link state changed to down']]);
    // One error of both downs (the port's name is masked), with the latest message.
    assert.deepEqual(await errorsOn('sw-1'), [['ovs: port down', 'bridge br0: port tap9 link state changed to down', 'network', 2]]);
    const context = JSON.parse((await call('GET', '/sysadmin_tools/infrastructure/errors.json?host=sw-1')).body) as Array<{ infrastructure_error: { id: number } }>;
    const occurrence = JSON.parse((await call('GET', `/sysadmin_tools/infrastructure/errors/${context[0]!.infrastructure_error.id}/occurrences.json?per_page=1`)).body) as Array<{ occurrence: { context: { rule: string } } }>;
    assert.equal(occurrence[0]!.occurrence.context.rule, `rule ${id}`);

    assert.equal((await call('PUT', `${RULES}/${id}.json`, { enabled: false })).statusCode, 204);
    await sendLogs('sw-2', 'ovs-vswitchd', [[9, 'bridge br0: port tap7 link state changed to down']]);
    assert.deepEqual(await errorsOn('sw-2'), []);
  });

  it('holds in another process from its next record', async () => {
    const other = await t.secondProcess();
    const sendThere = async (host: string) => {
      const sent = await other.app.inject({
        method: 'POST', url: '/v1/logs', headers: { authorization: `Bearer ${otlpKey}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ resourceLogs: [{ resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }, { key: 'service.name', value: { stringValue: 'ceph-osd' } }] }, scopeLogs: [{ logRecords: [{ severityNumber: 9, body: { stringValue: '12 slow ops, oldest one blocked for 31 sec' } }] }] }] }),
      });
      assert.equal(sent.statusCode, 200, sent.body);
    };
    try {
      // The other process judges a record first, so it holds the rules as they are (none of this kind).
      await sendThere('st-3');
      assert.deepEqual(await errorsOn('st-3'), []);
      const made = await call('POST', `${RULES}.json`, { log_rule: { label: 'Ceph slow ops', program: 'ceph-osd', pattern: '*slow ops*', error_class: 'ceph: slow ops' } });
      assert.equal(made.statusCode, 201);
      await sendThere('st-4');
      assert.deepEqual(await errorsOn('st-4'), [['ceph: slow ops', '12 slow ops, oldest one blocked for 31 sec', 'ceph-osd', 1]]);
    } finally {
      await other.close();
    }
  });
});

describe('globs', () => {
  it('match whole texts: * any run, ? one character, \\ a literal; a pathological glob ends without matching', () => {
    const cases: Array<[string, string, boolean]> = [
      ['*disk*', 'the disk failed', true],
      ['disk*', 'the disk failed', false],
      ['*failed', 'the disk failed', true],
      ['sd?', 'sda', true],
      ['sd?', 'sdab', false],
      ['a\\*b', 'a*b', true],
      ['a\\*b', 'axb', false],
      ['**x**', 'x', true],
      ['', '', true],
      ['*', '', true],
      ['*a*a*a*a*a*a*b', 'a'.repeat(4000), false],
      ['*Instance * could not be found*', 'ERROR nova.compute: Instance 7f could not be found.', true],
    ];
    for (const [glob, text, expected] of cases) assert.equal(globMatcher(glob).test(text), expected, `${glob} ~ ${text.slice(0, 40)}`);
  });
});

describe('cmi log-rules', () => {
  it('adds, lists, shows, edits and removes a rule on a server, by id or label', async () => {
    const url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    const home = mkdtempSync(join(tmpdir(), 'cmi-cli-log-rules-'));
    const env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '' };
    const cmi = async (...args: string[]) => {
      const res = await runCmi(['log-rules', ...args], env);
      assert.deepEqual([res.stderr, res.code], ['', 0], res.stdout);
      return res.stdout;
    };
    try {
      const added = await cmi('add', '--label', 'Hung tasks', '--program', 'kernel', '--pattern', '*hung_task_timeout_secs*', '--error-class', 'kernel: hung task (operator)', '--component', 'hypervisor', '--position', '50');
      const id = Number(/^Created log rule (\d+) "Hung tasks" at position 50\n$/.exec(added)?.[1]);
      assert.ok(id > 0, added);
      assert.equal(await cmi('show', 'Hung tasks'), [
        `id:          ${id}`,
        'position:    50',
        'label:       Hung tasks',
        'program:     kernel',
        'pattern:     *hung_task_timeout_secs*',
        'error_class: kernel: hung task (operator)',
        'component:   hypervisor',
        'enabled:     yes',
        `created_at:  ${AT}`,
        `updated_at:  ${AT}`,
        '',
      ].join('\n'));
      assert.equal(await cmi('edit', String(id), '--no-enabled', '--component', ''), `Updated log rule ${id} "Hung tasks"\n`);
      const listed = JSON.parse(await cmi('ls', '--all', '--json')) as Array<{ log_rule: { id: number; enabled: boolean; component: string | null } }>;
      assert.deepEqual(listed.filter(({ log_rule: r }) => r.id === id).map(({ log_rule: r }) => [r.enabled, r.component]), [[false, null]]);
      assert.match(await cmi('ls', '--all'), new RegExp(`^${id} +50 +Hung tasks +kernel +\\*hung_task_timeout_secs\\* +kernel: hung task \\(operator\\) +- +no$`, 'm'));
      assert.equal(await cmi('rm', 'Hung tasks'), `Deleted log rule ${id} "Hung tasks"\n`);
      const missing = await runCmi(['log-rules', 'show', String(id)], env);
      assert.equal(missing.code, 1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
