import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { ConfigError, loadConfig } from '../src/config.js';

describe('GET /version', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('answers JSON with the version as a string, as OnApp clients send it (Accept, Content-Type, empty body)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/version.json',
      headers: { authorization: t.adminAuth, accept: 'application/json', 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('answers XML with the root named after the service and no type attribute', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/version.xml',
      headers: { authorization: t.adminAuth, accept: 'application/xml', 'content-type': 'application/xml' },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.body, '<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>6.7</version>\n</cmi>\n');
  });

  it('takes a bare ? at the end of the path', async () => {
    const res = await t.app.inject({ url: '/version.json?', headers: { authorization: t.adminAuth } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
  });

  it('without an extension answers JSON, or XML when Accept asks for it', async () => {
    const json = await t.app.inject({ url: '/version', headers: { authorization: t.adminAuth } });
    assert.equal(json.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(json.body, '{"version":"6.7"}');
    const xml = await t.app.inject({ url: '/version', headers: { authorization: t.adminAuth, accept: 'application/xml' } });
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.match(xml.body, /<version>6\.7<\/version>/);
  });

  it('is what clients call to test credentials: 200 for any valid user, 401 otherwise', async () => {
    const alice = await t.app.inject({ url: '/version.json', headers: { authorization: t.aliceAuth } });
    assert.equal(alice.statusCode, 200);
    const wrong = await t.app.inject({ url: '/version.json', headers: { authorization: t.basic('alice', 'nope-nope') } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.body, '{"errors":{"base":["Access denied"]}}');
  });
});

describe('CMI_ONAPP_VERSION', () => {
  it('sets the version reported, since OnApp clients choose their fields by it (the PHP wrapper knows 2.0 to 6.7)', async () => {
    const t = await createTestApp({ CMI_ONAPP_VERSION: '5.10' });
    try {
      const json = await t.app.inject({ url: '/version.json', headers: { authorization: t.adminAuth } });
      assert.equal(json.body, '{"version":"5.10"}');
      const xml = await t.app.inject({ url: '/version.xml', headers: { authorization: t.adminAuth } });
      assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>5.10</version>\n</cmi>\n');
    } finally {
      await t.close();
    }
  });

  it('must be a dotted number <major>.<minor>; anything else stops cmi at start-up', () => {
    for (const bad of ['6', '6.7.1', 'v6.7', '6.x', ' 6.7', '12345.1']) {
      assert.throws(() => loadConfig({ CMI_ONAPP_VERSION: bad }), (error: unknown) => error instanceof ConfigError
        && error.message === `CMI_ONAPP_VERSION must be a dotted number <major>.<minor>, such as 6.7 (got ${JSON.stringify(bad)})`);
    }
    assert.equal(loadConfig({}).onappVersion, '6.7');
  });
});
