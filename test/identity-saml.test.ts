import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { inflateRawSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import { type Browser, chromium } from 'playwright-core';
import { IdentityRefused, ProviderUnavailable, type SamlSettings } from '../src/identity/external-identity.js';
import { postToProviderPage } from '../src/console/sign-in-page.js';
import { type BrowserStart, type SamlProtocol, samlCheck, samlFinish, samlMetadata, samlStart, type ServiceProvider } from '../src/identity/saml.js';
import { signInAtSimpleSamlPhp, type SimpleSamlPhp, startSimpleSamlPhp } from './support/simplesamlphp.js';

// cmi's SAML 2.0 service provider (src/identity/saml.ts, docs/sso-saml.md) against a real identity
// provider: Debian's SimpleSAMLphp under `php -S`, its login page driven in Debian's Chromium, its
// answer posted by the browser to a small ACS here that records the form.

const run = promisify(execFile);
const ALICE = { login: 'alice', password: 'alice-password', attributes: { uid: ['alice'], mail: ['alice@example.org'], groups: ['ops', 'dev', 'ops'], givenName: ['Alice'], sn: ['Liddell'] } };

/** An HTTP server standing for cmi's ACS endpoints: it records every form posted to it. */
async function acsServer() {
  const waiting: ((form: Record<string, string>) => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('received');
      if (req.method === 'POST') waiting.shift()?.({ ...form, path: req.url ?? '' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The next form posted. */
    next: () => new Promise<Record<string, string>>((resolve) => waiting.push(resolve)),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A server answering the metadata given (or what `answer` says) at /metadata, which can be stopped. */
async function metadataServer(answer: (res: http.ServerResponse) => void) {
  const server = http.createServer((_req, res) => answer(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const decoded = (form: Record<string, string | undefined>) => Buffer.from(form.SAMLResponse ?? '', 'base64').toString('utf8');
const encoded = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');

/** The promise's rejection, which must be an `expected` with a message matching `message`. */
async function refused(promise: Promise<unknown>, expected: typeof IdentityRefused | typeof ProviderUnavailable, message: RegExp): Promise<Error> {
  const error = await promise.then(() => assert.fail('expected a refusal'), (caught: unknown) => caught);
  assert.ok(error instanceof expected, `expected ${expected.name}, got ${String(error)}`);
  assert.match(error.message, message);
  return error;
}

describe('SAML 2.0 sign-in against SimpleSAMLphp', () => {
  let idp: SimpleSamlPhp;
  let acs: Awaited<ReturnType<typeof acsServer>>;
  let browser: Browser;
  let spA: ServiceProvider;
  let spA2: ServiceProvider;
  let spB: ServiceProvider;
  let spTransient: ServiceProvider;
  let spExpired: ServiceProvider;
  let settings: SamlSettings;

  before(async () => {
    acs = await acsServer();
    const sp = (id: number, acsPath = 'acs') => ({ entityId: `${acs.origin}/console/sso/${id}/metadata`, acsUrl: `${acs.origin}/console/sso/${id}/${acsPath}` });
    spA = sp(1);
    spA2 = sp(1, 'other-acs');
    spB = sp(2);
    spTransient = sp(3);
    spExpired = sp(4);
    [idp, browser] = await Promise.all([
      startSimpleSamlPhp({
        users: [ALICE],
        serviceProviders: [
          { entityId: spA.entityId, acsUrls: [spA.acsUrl, spA2.acsUrl] },
          { entityId: spB.entityId, acsUrls: [spB.acsUrl] },
          { entityId: spTransient.entityId, acsUrls: [spTransient.acsUrl], nameIdFormats: ['transient'] },
          { entityId: spExpired.entityId, acsUrls: [spExpired.acsUrl], assertionLifetime: -300 },
        ],
      }),
      chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] }),
    ]);
    settings = { idp_metadata_xml: idp.metadataXml, name_id_format: 'persistent', login_attribute: 'uid', email_attribute: 'mail', groups_attribute: 'groups' };
  });

  after(async () => {
    await browser?.close();
    await idp?.close();
    await acs?.close();
  });

  /** The URL of a start by the HTTP-Redirect binding. */
  const redirectOf = (start: BrowserStart): string => {
    assert.ok('redirect' in start, 'an HTTP-Redirect start');
    return start.redirect;
  };
  const startUrl = async (given: SamlSettings, sp: ServiceProvider, relayState: string) => new URL(redirectOf((await samlStart(given, sp, relayState)).start));

  /**
   * A whole sign-in in a new browser: samlStart, SimpleSAMLphp's login page (reached by the redirect, or
   * by a form posted to it as the console's page posts it), and the form its page posts to the ACS.
   */
  async function signIn(sp: ServiceProvider, given: SamlSettings = settings): Promise<{ form: Record<string, string>; protocol: SamlProtocol }> {
    const { start, protocol } = await samlStart(given, sp, 'attempt-relay-state');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const posted = acs.next();
      if ('redirect' in start) await page.goto(start.redirect);
      else {
        await page.setContent(postToProviderPage(start.post.action, start.post.fields).text.replace(/<script[^>]*><\/script>/, ''));
        await page.locator('button[type="submit"]').click();
      }
      await signInAtSimpleSamlPhp(page, ALICE.login, ALICE.password);
      return { form: await posted, protocol };
    } finally {
      await context.close();
    }
  }

  /** The assertion's ID and its NotOnOrAfter (SubjectConfirmationData's, the earliest SimpleSAMLphp gives) as the response says. */
  function assertionFacts(xml: string): { id: string; notOnOrAfter: number } {
    const id = /<saml:Assertion[^>]*\sID="([^"]+)"/.exec(xml)?.[1];
    const ends = [...xml.matchAll(/NotOnOrAfter="([^"]+)"/g)].map((match) => Date.parse(match[1] as string));
    assert.ok(id !== undefined && ends.length > 0, 'the response holds an assertion with NotOnOrAfter');
    return { id, notOnOrAfter: Math.min(...ends) };
  }

  it('sends an AuthnRequest over HTTP-Redirect to the SingleSignOnService, with the RelayState, the ACS and the NameID format', async () => {
    const { start, protocol } = await samlStart(settings, spA, 'relay-1');
    const parsed = new URL(redirectOf(start));
    assert.equal(`${parsed.origin}${parsed.pathname}`, `${idp.origin}/saml2/idp/SSOService.php`);
    assert.equal(parsed.searchParams.get('RelayState'), 'relay-1');
    assert.equal(parsed.searchParams.get('Signature'), null);
    const request = inflateRawSync(Buffer.from(parsed.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8');
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', removeNSPrefix: true }).parse(request) as {
      AuthnRequest: { ID: string; Destination: string; AssertionConsumerServiceURL: string; ProtocolBinding: string; Issuer: string; NameIDPolicy: { Format: string; AllowCreate: string } };
    };
    assert.match(protocol.request_id, /^_[0-9a-f]{40}$/);
    assert.equal(xml.AuthnRequest.ID, protocol.request_id);
    assert.equal(xml.AuthnRequest.Destination, `${idp.origin}/saml2/idp/SSOService.php`);
    assert.equal(xml.AuthnRequest.AssertionConsumerServiceURL, spA.acsUrl);
    assert.equal(xml.AuthnRequest.ProtocolBinding, 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST');
    assert.equal(xml.AuthnRequest.Issuer, spA.entityId);
    assert.equal(xml.AuthnRequest.NameIDPolicy.Format, 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
    const email = await startUrl({ ...settings, name_id_format: 'email' }, spA, 'relay-2');
    assert.match(inflateRawSync(Buffer.from(email.searchParams.get('SAMLRequest') ?? '', 'base64')).toString('utf8'), /Format="urn:oasis:names:tc:SAML:1\.1:nameid-format:emailAddress"/);
    // Two attempts, two request ids.
    assert.notEqual((await samlStart(settings, spA, 'relay-1')).protocol.request_id, protocol.request_id);
  });

  it('posts the AuthnRequest (HTTP-POST binding, not deflated) when the metadata offers no HTTP-Redirect SingleSignOnService, and SimpleSAMLphp answers it', async () => {
    const postOnly = { ...settings, idp_metadata_xml: idp.metadataXml.replaceAll('bindings:HTTP-Redirect" Location="', 'bindings:HTTP-POST" Location="') };
    assert.notEqual(postOnly.idp_metadata_xml, settings.idp_metadata_xml);
    const { start, protocol } = await samlStart(postOnly, spA, 'relay-post');
    assert.ok('post' in start, 'an HTTP-POST start');
    assert.equal(start.post.action, `${idp.origin}/saml2/idp/SSOService.php`);
    assert.deepEqual(Object.keys(start.post.fields), ['SAMLRequest', 'RelayState']);
    assert.equal(start.post.fields.RelayState, 'relay-post');
    const request = Buffer.from(start.post.fields.SAMLRequest ?? '', 'base64').toString('utf8');
    assert.match(request, new RegExp(`^<\\?xml version="1\\.0"\\?><samlp:AuthnRequest [^>]*ID="${protocol.request_id}"`));
    assert.match(request, new RegExp(`AssertionConsumerServiceURL="${spA.acsUrl.replaceAll('.', '\\.')}"`));
    // The page the console sends the browser: a form of those fields, to that action, that its script submits.
    const page = postToProviderPage(start.post.action, start.post.fields).text;
    assert.match(page, new RegExp(`<form method="post" action="${idp.origin}/saml2/idp/SSOService.php" data-submit-at-once>`));
    assert.ok(page.includes(`<input type="hidden" name="RelayState" value="relay-post">`), page);
    // The whole sign-in, by that form.
    const { form, protocol: posted } = await signIn(spA, postOnly);
    assert.equal((await samlFinish(postOnly, spA, form, posted)).login, 'alice');
  });

  describe('a sign-in with a persistent NameID', () => {
    let form: Record<string, string>;
    let protocol: SamlProtocol;

    before(async () => {
      ({ form, protocol } = await signIn(spA));
    });

    it('gives the exact identity: the NameID as subject, the attributes, the assertion id and until when it could be used', async () => {
      assert.equal(form.path, '/console/sso/1/acs');
      assert.equal(form.RelayState, 'attempt-relay-state');
      const facts = assertionFacts(decoded(form));
      assert.deepEqual(await samlFinish(settings, spA, form, protocol), {
        subject: idp.persistentNameId('alice', spA.entityId),
        login: 'alice',
        email: 'alice@example.org',
        groups: ['ops', 'dev'],
        firstName: 'Alice',
        lastName: 'Liddell',
        assertionId: facts.id,
        notOnOrAfter: new Date(facts.notOnOrAfter + 60_000),
      });
    });

    it('reads the attributes the settings name (absent ones undefined, no groups an empty list)', async () => {
      const identity = await samlFinish({ ...settings, login_attribute: 'mail', email_attribute: 'email', groups_attribute: 'memberOf' }, spA, form, protocol);
      assert.equal(identity.login, 'alice@example.org');
      assert.equal(identity.email, undefined);
      assert.deepEqual(identity.groups, []);
    });

    it('refuses the response given to another attempt (another request id)', async () => {
      const another = (await samlStart(settings, spA, 'another-attempt')).protocol;
      await refused(samlFinish(settings, spA, form, another), IdentityRefused, /^The SAML response answers another sign-in attempt \(its InResponseTo is not this attempt's request\): sign in again$/);
    });

    it('refuses an unsolicited response (no InResponseTo)', async () => {
      const unsolicited = decoded(form).replace(/(<samlp:Response[^>]*?)\sInResponseTo="[^"]*"/, '$1');
      assert.notEqual(unsolicited, decoded(form));
      await refused(samlFinish(settings, spA, { SAMLResponse: encoded(unsolicited) }, protocol), IdentityRefused, /no InResponseTo\): cmi takes no unsolicited responses/);
    });

    it('refuses an assertion changed after it was signed (an attribute value)', async () => {
      const changed = decoded(form).replace('>ops<', '>admins<');
      assert.notEqual(changed, decoded(form));
      const error = await refused(samlFinish(settings, spA, { SAMLResponse: encoded(changed), RelayState: form.RelayState }, protocol), IdentityRefused,
        new RegExp(`^The SAML assertion's signature does not verify with ${idp.metadataUrl.replace(/[.?]/g, '\\$&')}'s signing certificate`));
      assert.doesNotMatch(error.message, /admins|alice/);
    });

    it('refuses an assertion signed by another key than the metadata\'s', async () => {
      // SimpleSAMLphp's metadata, its certificate swapped for a self-signed one of another key.
      const { stdout } = await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', '/dev/null', '-subj', '/CN=another-idp', '-days', '1']);
      const another = stdout.replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '');
      const certificate = /<ds:X509Certificate>([^<]+)</.exec(idp.metadataXml)?.[1] ?? '';
      const foreign = idp.metadataXml.split(certificate).join(another);
      assert.notEqual(foreign, idp.metadataXml);
      await refused(samlFinish({ ...settings, idp_metadata_xml: foreign }, spA, form, protocol), IdentityRefused, /signature does not verify/);
    });

    it('refuses a response for another ACS: by its Destination, and without one by the signed Recipient', async () => {
      const elsewhere = { entityId: spA.entityId, acsUrl: spB.acsUrl };
      await refused(samlFinish(settings, elsewhere, form, protocol), IdentityRefused, new RegExp(`^The SAML response is for another address \\(its Destination is not ${elsewhere.acsUrl}\\)`));
      const noDestination = decoded(form).replace(/(<samlp:Response[^>]*?)\sDestination="[^"]*"/, '$1');
      assert.notEqual(noDestination, decoded(form));
      await refused(samlFinish(settings, elsewhere, { SAMLResponse: encoded(noDestination) }, protocol), IdentityRefused, new RegExp(`^The SAML assertion is for another address \\(its Recipient is not ${elsewhere.acsUrl}\\)`));
    });

    it('refuses a response naming no SAMLResponse, or not XML', async () => {
      await refused(samlFinish(settings, spA, { RelayState: 'x' }, protocol), IdentityRefused, /^The identity provider's answer holds no SAMLResponse$/);
      await refused(samlFinish(settings, spA, { SAMLResponse: encoded('not xml') }, protocol), IdentityRefused, /^The SAML response could not be read/);
    });

    it('refuses it when the provider\'s metadata names another entity id (issuer)', async () => {
      const renamed = idp.metadataXml.replace(`entityID="${idp.metadataUrl}"`, 'entityID="https://idp.example.org/other"');
      await refused(samlFinish({ ...settings, idp_metadata_xml: renamed }, spA, form, protocol), IdentityRefused, new RegExp(`^The SAML assertion was issued by ${idp.metadataUrl.replace(/[.?]/g, '\\$&')}, not by https://idp\\.example\\.org/other$`));
    });

    it('refuses a NameID of another format than asked', async () => {
      await refused(samlFinish({ ...settings, name_id_format: 'email' }, spA, form, protocol), IdentityRefused,
        /^The identity provider gave a NameID of format urn:oasis:names:tc:SAML:2\.0:nameid-format:persistent, not the email one cmi asks/);
    });
  });

  it('gives the email address as subject with name_id_format email', async () => {
    const emailSettings: SamlSettings = { ...settings, name_id_format: 'email' };
    const { form, protocol } = await signIn(spA, emailSettings);
    const facts = assertionFacts(decoded(form));
    assert.deepEqual(await samlFinish(emailSettings, spA, form, protocol), {
      subject: 'alice@example.org', login: 'alice', email: 'alice@example.org', groups: ['ops', 'dev'], firstName: 'Alice', lastName: 'Liddell',
      assertionId: facts.id, notOnOrAfter: new Date(facts.notOnOrAfter + 60_000),
    });
  });

  it('refuses an assertion for another service provider (audience)', async () => {
    const { form, protocol } = await signIn(spB);
    assert.equal((await samlFinish(settings, spB, form, protocol)).subject, idp.persistentNameId('alice', spB.entityId));
    await refused(samlFinish(settings, { entityId: spA.entityId, acsUrl: spB.acsUrl }, form, protocol), IdentityRefused,
      new RegExp(`^The SAML assertion is meant for another service provider \\(its audience is not ${spA.entityId}\\)`));
  });

  it('refuses a transient NameID, saying to configure persistent or email', async () => {
    const { form, protocol } = await signIn(spTransient);
    assert.match(decoded(form), /nameid-format:transient/);
    await refused(samlFinish(settings, spTransient, form, protocol), IdentityRefused,
      /^The identity provider gave a transient NameID, which changes at every sign-in: configure it to give a persistent or email NameID$/);
  });

  it('refuses an expired assertion', async () => {
    const { form, protocol } = await signIn(spExpired);
    await refused(samlFinish(settings, spExpired, form, protocol), IdentityRefused, /^The SAML assertion is not valid now \(expired/);
  });

  describe('cmi\'s SP metadata', () => {
    it('is an EntityDescriptor whose SPSSODescriptor wants signed assertions at the ACS (HTTP-POST)', () => {
      const xml = samlMetadata(spA, 'persistent');
      const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', removeNSPrefix: true }).parse(xml) as {
        EntityDescriptor: { entityID: string; SPSSODescriptor: { protocolSupportEnumeration: string; AuthnRequestsSigned: string; WantAssertionsSigned: string; NameIDFormat: string; AssertionConsumerService: { Binding: string; Location: string; index: string; isDefault: string }; KeyDescriptor?: unknown } };
      };
      const descriptor = parsed.EntityDescriptor.SPSSODescriptor;
      assert.equal(parsed.EntityDescriptor.entityID, spA.entityId);
      assert.equal(descriptor.protocolSupportEnumeration, 'urn:oasis:names:tc:SAML:2.0:protocol');
      assert.equal(descriptor.AuthnRequestsSigned, 'false');
      assert.equal(descriptor.WantAssertionsSigned, 'true');
      assert.equal(descriptor.NameIDFormat, 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent');
      assert.deepEqual(descriptor.AssertionConsumerService, { Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: spA.acsUrl, index: '1', isDefault: 'true' });
      assert.equal(descriptor.KeyDescriptor, undefined);
      assert.match(samlMetadata(spA, 'email'), /<NameIDFormat>urn:oasis:names:tc:SAML:1\.1:nameid-format:emailAddress<\/NameIDFormat>/);
      assert.equal(samlMetadata(spA, 'persistent'), xml);
    });

    it('escapes what it is given', () => {
      assert.match(samlMetadata({ entityId: 'https://cmi.example.org/a?b=1&c="2"', acsUrl: 'https://cmi.example.org/acs' }, 'persistent'), /entityID="https:\/\/cmi\.example\.org\/a\?b=1&amp;c=&quot;2&quot;"/);
    });
  });

  describe('the provider\'s metadata', () => {
    it('is fetched from idp_metadata_url: samlCheck passes, and samlStart goes to its SingleSignOnService', async () => {
      const byUrl = { ...settings, idp_metadata_xml: undefined, idp_metadata_url: idp.metadataUrl };
      await samlCheck(byUrl);
      assert.ok((await startUrl(byUrl, spA, 'r')).href.startsWith(`${idp.origin}/saml2/idp/SSOService.php?SAMLRequest=`), 'the SSO URL');
    });

    it('down: ProviderUnavailable, and a failure is not kept; once read, it is kept for samlStart, while samlCheck reads it afresh', async () => {
      const down = { ...settings, idp_metadata_xml: undefined, idp_metadata_url: `http://127.0.0.1:${await closedPort()}/metadata?key=not-shown` };
      const error = await refused(samlStart(down, spA, 'r'), ProviderUnavailable, /^The identity provider's metadata at http:\/\/127\.0\.0\.1:\d+\/metadata could not be fetched: ECONNREFUSED$/);
      assert.doesNotMatch(error.message, /not-shown/);
      await refused(samlCheck(down), ProviderUnavailable, /could not be fetched: ECONNREFUSED/);
      let up = false;
      const server = await metadataServer((res) => (up ? res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.metadataXml) : res.writeHead(503).end()));
      const flaky = { ...settings, idp_metadata_xml: undefined, idp_metadata_url: server.url };
      await refused(samlStart(flaky, spA, 'r'), ProviderUnavailable, /^The identity provider's metadata at http:\/\/127\.0\.0\.1:\d+\/metadata answered HTTP 503$/);
      up = true;
      await samlStart(flaky, spA, 'r');
      await server.close();
      // Kept: the sign-in still starts; the check fetches and says it is down.
      assert.ok((await startUrl(flaky, spA, 'r')).href.startsWith(`${idp.origin}/`), 'started from kept metadata');
      await refused(samlCheck(flaky), ProviderUnavailable, /could not be fetched: ECONNREFUSED/);
    });

    it('refuses metadata too large, over http elsewhere than this machine, or unusable, saying what is wrong', async () => {
      const big = await metadataServer((res) => res.writeHead(200).end('<x>'.padEnd(1024 * 1024 + 10, ' ') + '</x>'));
      try {
        await refused(samlCheck({ ...settings, idp_metadata_xml: undefined, idp_metadata_url: big.url }), ProviderUnavailable, /is larger than 1048576 bytes$/);
      } finally {
        await big.close();
      }
      await refused(samlCheck({ ...settings, idp_metadata_xml: undefined, idp_metadata_url: 'http://idp.example.org/metadata' }), ProviderUnavailable, /must be https \(http only on this machine\)$/);
      // Redirects are followed, each to an address cmi may fetch.
      const moved = await metadataServer((res) => res.writeHead(302, { location: idp.metadataUrl }).end());
      const away = await metadataServer((res) => res.writeHead(301, { location: 'http://idp.example.org/metadata' }).end());
      try {
        await samlCheck({ ...settings, idp_metadata_xml: undefined, idp_metadata_url: moved.url });
        await refused(samlCheck({ ...settings, idp_metadata_xml: undefined, idp_metadata_url: away.url }), ProviderUnavailable, /^The identity provider's metadata URL \(http:\/\/idp\.example\.org\/metadata\) must be https/);
      } finally {
        await moved.close();
        await away.close();
      }
      const check = (xml: string) => samlCheck({ ...settings, idp_metadata_xml: xml });
      await refused(check('<md:EntityDescriptor'), ProviderUnavailable, /^The identity provider's metadata \(idp_metadata_xml\) is not XML cmi can read$/);
      await refused(check('<!DOCTYPE x [<!ENTITY a "b">]><EntityDescriptor/>'), ProviderUnavailable, /is not XML cmi can read$/);
      await refused(check('<EntityDescriptor entityID="x"><SPSSODescriptor/></EntityDescriptor>'), ProviderUnavailable, /holds no EntityDescriptor with an IDPSSODescriptor$/);
      await refused(check(idp.metadataXml.replace(/<md:KeyDescriptor use="signing">[\s\S]*?<\/md:KeyDescriptor>/, '')), ProviderUnavailable, /has no signing certificate/);
      await refused(check(idp.metadataXml.replace(/<ds:X509Certificate>[^<]+</, '<ds:X509Certificate>bm90IGEgY2VydA==<')), ProviderUnavailable, /has a signing certificate that is not a valid X\.509 certificate$/);
      await refused(check(idp.metadataXml.replace(/SingleSignOnService Binding="[^"]*"/g, 'SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact"')), ProviderUnavailable,
        /has no SingleSignOnService with the HTTP-Redirect or the HTTP-POST binding$/);
      await refused(check(idp.metadataXml.replace(/(SingleSignOnService[^>]*Location=")http:\/\/127\.0\.0\.1:\d+/, '$1http://idp.example.org')), ProviderUnavailable, /^The identity provider's SingleSignOnService \(http:\/\/idp\.example\.org\/saml2\/idp\/SSOService\.php\) must be https/);
    });
  });
});
