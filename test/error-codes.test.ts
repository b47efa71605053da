import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import * as problems from '../src/shared/problems.js';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { validateResponses } from './support/response-validation.js';

/** Every ClientError class of the catalogue, constructed, with the code it carries. */
function everyClientError(): problems.ClientError[] {
  const made: problems.ClientError[] = [];
  for (const value of Object.values(problems)) {
    if (typeof value !== 'function' || !(value.prototype instanceof problems.ClientError)) continue;
    const Class = value as unknown as new (...args: unknown[]) => problems.ClientError;
    made.push(Class === problems.MalformedRequest ? new Class(400, 'bad') : new Class(1));
  }
  return made;
}

describe('error codes', () => {
  it('every client error has its own stable code, and docs/api.md#errors names each', () => {
    const errors = everyClientError();
    const codes = errors.map((error) => error.code);
    assert.equal(errors.length, 17);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes) assert.match(code, /^CMI_ERR_[A-Z_]+$/);
    const doc = readFileSync(new URL('../docs/api.md', import.meta.url), 'utf8');
    for (const code of [...codes, problems.INTERNAL_ERROR_CODE]) assert.ok(doc.includes(`\`${code}\``), `${code} in docs/api.md`);
  });

  describe('in the log', () => {
    let t: TestApp;
    let app: FastifyInstance;
    const lines: Array<Record<string, unknown>> = [];
    before(async () => {
      t = await createTestApp();
      const stream = new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      });
      app = await buildApp({ config: t.config, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: { level: 'debug', stream } });
    });
    after(async () => {
      await app.close();
      await t.close();
    });

    it('a client error is logged at debug with its code, status and request id', async () => {
      const res = await app.inject({ url: '/users/999.json', headers: { authorization: t.adminAuth, 'x-request-id': 'missing-1' } });
      assert.equal(res.statusCode, 404);
      const line = lines.find((entry) => entry.requestId === 'missing-1');
      assert.deepEqual(line && { level: line.level, code: line.code, status: line.status, msg: line.msg }, {
        level: 20,
        code: 'CMI_ERR_NOT_FOUND',
        status: 404,
        msg: 'Resource not found',
      });
    });

    it('a fault is logged at error with CMI_ERR_INTERNAL, and no credentials', async () => {
      // A row the code cannot render (an unparseable timestamp) makes formatDatetime throw.
      await t.database.db.updateTable('users').set({ created_at: 'not a date' }).where('login', '=', 'alice').execute();
      const res = await app.inject({ url: '/users.json', headers: { authorization: t.adminAuth, 'x-request-id': 'fault-1' } });
      assert.equal(res.statusCode, 500);
      const line = lines.find((entry) => entry.requestId === 'fault-1' && entry.msg === 'fault');
      assert.equal(line?.level, 50);
      assert.equal(line.code, 'CMI_ERR_INTERNAL');
      assert.equal((line.err as { type?: string }).type, 'RangeError');
      const everything = JSON.stringify(lines);
      assert.ok(!everything.includes(t.adminAuth.slice('Basic '.length)), 'no credentials in the log');
    });
  });
});
