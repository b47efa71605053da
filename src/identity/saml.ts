import { createHash, randomBytes, X509Certificate } from 'node:crypto';
import { type CacheProvider, generateServiceProviderMetadata, SAML, SamlStatusError, ValidateInResponseTo } from '@node-saml/node-saml';
import { XMLParser } from 'fast-xml-parser';
import { type ExternalIdentity, IdentityRefused, ProviderUnavailable, type SamlSettings } from './external-identity.js';
import { isLoopbackHost } from './identity-provider.js';

/** cmi as a service provider for one identity provider: its entity id is its metadata URL. */
export interface ServiceProvider { entityId: string; acsUrl: string }

/** What a sign-in attempt keeps between `samlStart` and `samlFinish`: the AuthnRequest's ID, which the answer must name. */
export interface SamlProtocol { request_id: string }

/**
 * A person a SAML identity provider vouched for, with what the caller needs to refuse a replay: the
 * assertion's ID, and until when this module would accept it (its earliest NotOnOrAfter plus the
 * clock skew allowed). The caller keeps `assertionId` at least until `notOnOrAfter` and refuses it a
 * second time (docs/sso-saml.md#what-cmi-checks).
 */
export interface SamlIdentity extends ExternalIdentity { assertionId: string; notOnOrAfter: Date }

type NameIdFormat = 'persistent' | 'email';

const NAME_ID_FORMAT_URNS: Readonly<Record<NameIdFormat, string>> = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
};
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';
const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer';
const SAML2_PROTOCOL = 'urn:oasis:names:tc:SAML:2.0:protocol';

/** How far the provider's clock may be from cmi's when the assertion's validity window is checked. */
const CLOCK_SKEW_MS = 60_000;
const METADATA_CACHE_MS = 5 * 60_000;
const METADATA_TIMEOUT_MS = 10_000;
const MAX_METADATA_BYTES = 1024 * 1024;
const MAX_METADATA_REDIRECTS = 3;
/** The largest SAMLResponse (base64) read: an assertion with many groups stays well under it. */
const MAX_RESPONSE_CHARS = 1024 * 1024;

/** What cmi uses of an identity provider's metadata (docs/sso-saml.md#the-providers-metadata). */
interface IdpMetadata {
  entityId: string;
  /** Its signing certificates, base64 DER (the X509Certificate elements' text). */
  certificates: string[];
  /** Its SingleSignOnService: the HTTP-Redirect one, else the HTTP-POST one. */
  ssoUrl: string;
  ssoBinding: 'HTTP-Redirect' | 'HTTP-POST';
}

/**
 * Where a sign-in sends the browser first: a redirect (OpenID Connect, SAML's HTTP-Redirect binding),
 * or a form it posts to the provider (SAML's HTTP-POST binding), which a page of cmi's submits.
 */
export type BrowserStart = { redirect: string } | { post: { action: string; fields: Record<string, string> } };

/** The NameID format asked (a provider kept before the setting existed asks persistent). */
const nameIdFormatOf = (settings: SamlSettings): NameIdFormat => settings.name_id_format ?? 'persistent';

// ---- XML reading (fast-xml-parser: namespace prefixes dropped, every value text, no DOCTYPE) ----

type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  // Every element a list, so one child and several read the same.
  isArray: (_name, _path, _isLeaf, isAttribute) => !isAttribute,
});

/** The XML text parsed, or undefined when it is not XML cmi reads (a DOCTYPE, which could expand entities, is refused). */
function parseXml(text: string): XmlNode | undefined {
  if (/<!DOCTYPE/i.test(text)) return undefined;
  try {
    const parsed = parser.parse(text, true) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as XmlNode) : undefined;
  } catch {
    return undefined;
  }
}

/** The child elements named `name` of `node`. */
function children(node: XmlNode | undefined, name: string): XmlNode[] {
  const value = node?.[name];
  if (!Array.isArray(value)) return [];
  return value.map((item: unknown) => (typeof item === 'object' && item !== null ? (item as XmlNode) : { '#text': String(item) }));
}

const child = (node: XmlNode | undefined, name: string): XmlNode | undefined => children(node, name)[0];
const attribute = (node: XmlNode | undefined, name: string): string | undefined => (typeof node?.[`@${name}`] === 'string' ? (node[`@${name}`] as string) : undefined);

/** An element's text (its own text, whatever attributes such as xsi:type it has). */
function textOf(node: XmlNode | undefined): string {
  const text = node?.['#text'];
  return typeof text === 'string' ? text : '';
}

// ---- The identity provider's metadata ----

const unavailable = (message: string) => new ProviderUnavailable(message);

/** The URL as messages show it: no query or fragment, where a key could sit. */
function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** An IdP's metadata read from its XML text, or ProviderUnavailable saying what is wrong with it (`source` names where it came from). */
function readIdpMetadata(xml: string, source: string): IdpMetadata {
  const document = parseXml(xml);
  if (document === undefined) throw unavailable(`The identity provider's metadata (${source}) is not XML cmi can read`);
  const entities = [...children(document, 'EntityDescriptor'), ...children(child(document, 'EntitiesDescriptor'), 'EntityDescriptor')]
    .filter((entity) => children(entity, 'IDPSSODescriptor').length > 0);
  if (entities.length === 0) throw unavailable(`The identity provider's metadata (${source}) holds no EntityDescriptor with an IDPSSODescriptor`);
  if (entities.length > 1) throw unavailable(`The identity provider's metadata (${source}) holds ${entities.length} identity providers: give the metadata of one`);
  const entity = entities[0] as XmlNode;
  const entityId = attribute(entity, 'entityID')?.trim() ?? '';
  if (entityId === '') throw unavailable(`The identity provider's metadata (${source}) has no entityID`);
  const descriptor = children(entity, 'IDPSSODescriptor').find((item) => (attribute(item, 'protocolSupportEnumeration') ?? '').split(/\s+/).includes(SAML2_PROTOCOL));
  if (descriptor === undefined) throw unavailable(`The identity provider's metadata (${source}) has no IDPSSODescriptor for SAML 2.0`);
  const certificates = children(descriptor, 'KeyDescriptor')
    .filter((key) => (attribute(key, 'use') ?? 'signing') === 'signing')
    .flatMap((key) => children(child(key, 'KeyInfo'), 'X509Data').flatMap((data) => children(data, 'X509Certificate')))
    .map((certificate) => textOf(certificate).replace(/\s+/g, ''))
    .filter((certificate) => certificate !== '');
  if (certificates.length === 0) throw unavailable(`The identity provider's metadata (${source}) has no signing certificate (KeyDescriptor use="signing" with an X509Certificate)`);
  for (const certificate of certificates) {
    try {
      new X509Certificate(Buffer.from(certificate, 'base64'));
    } catch {
      throw unavailable(`The identity provider's metadata (${source}) has a signing certificate that is not a valid X.509 certificate`);
    }
  }
  const services = children(descriptor, 'SingleSignOnService');
  const sso = services.find((service) => attribute(service, 'Binding') === REDIRECT_BINDING) ?? services.find((service) => attribute(service, 'Binding') === POST_BINDING);
  const location = attribute(sso, 'Location')?.trim() ?? '';
  if (sso === undefined || location === '') throw unavailable(`The identity provider's metadata (${source}) has no SingleSignOnService with the HTTP-Redirect or the HTTP-POST binding`);
  let ssoUrl: URL;
  try {
    ssoUrl = new URL(location);
  } catch {
    throw unavailable(`The identity provider's metadata (${source}) gives a SingleSignOnService location that is not a URL`);
  }
  if (ssoUrl.protocol !== 'https:' && !(ssoUrl.protocol === 'http:' && isLoopbackHost(ssoUrl.hostname))) {
    throw unavailable(`The identity provider's SingleSignOnService (${shownUrl(ssoUrl)}) must be https (http only on this machine)`);
  }
  return { entityId, certificates, ssoUrl: ssoUrl.href, ssoBinding: attribute(sso, 'Binding') === REDIRECT_BINDING ? 'HTTP-Redirect' : 'HTTP-POST' };
}

/** Whether cmi may fetch `url`: https, or http on this machine. */
function fetchable(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname));
}

/** The body of `response`, at most MAX_METADATA_BYTES, or ProviderUnavailable once it grows past them. */
async function boundedBody(response: Response, shown: string): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > MAX_METADATA_BYTES) throw unavailable(`The identity provider's metadata at ${shown} is larger than ${MAX_METADATA_BYTES} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (reader === undefined) return '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_METADATA_BYTES) {
      await reader.cancel();
      throw unavailable(`The identity provider's metadata at ${shown} is larger than ${MAX_METADATA_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The metadata document at `address`, following at most MAX_METADATA_REDIRECTS redirects, each to a URL cmi may fetch. */
async function fetchMetadata(address: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw unavailable('The identity provider\'s metadata URL is not a URL');
  }
  const signal = AbortSignal.timeout(METADATA_TIMEOUT_MS);
  for (let hops = 0; ; hops++) {
    const shown = shownUrl(url);
    if (!fetchable(url)) throw unavailable(`The identity provider's metadata URL (${shown}) must be https (http only on this machine)`);
    let response: Response;
    try {
      response = await fetch(url, { redirect: 'manual', signal, headers: { accept: 'application/samlmetadata+xml, application/xml, text/xml' } });
    } catch (error) {
      const reason = signal.aborted ? `no answer within ${METADATA_TIMEOUT_MS / 1000} s` : ((error as { cause?: { code?: string } }).cause?.code ?? 'the connection failed');
      throw unavailable(`The identity provider's metadata at ${shown} could not be fetched: ${reason}`);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.body?.cancel();
      if (hops >= MAX_METADATA_REDIRECTS) throw unavailable(`The identity provider's metadata at ${shown} redirects more than ${MAX_METADATA_REDIRECTS} times`);
      url = new URL(location, url);
      continue;
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw unavailable(`The identity provider's metadata at ${shown} answered HTTP ${response.status}`);
    }
    try {
      return await boundedBody(response, shown);
    } catch (error) {
      if (error instanceof ProviderUnavailable) throw error;
      throw unavailable(`The identity provider's metadata at ${shown} could not be read: ${signal.aborted ? `no answer within ${METADATA_TIMEOUT_MS / 1000} s` : 'the connection failed'}`);
    }
  }
}

/** Metadata fetched by URL, kept METADATA_CACHE_MS; a failure is not kept, so the next sign-in tries again. */
const metadataCache = new Map<string, { metadata: IdpMetadata; until: number }>();

async function fetchedMetadata(address: string, fresh: boolean): Promise<IdpMetadata> {
  const cached = metadataCache.get(address);
  if (!fresh && cached !== undefined && cached.until > Date.now()) return cached.metadata;
  const shown = (() => {
    try {
      return shownUrl(new URL(address));
    } catch {
      return 'its URL';
    }
  })();
  const metadata = readIdpMetadata(await fetchMetadata(address), shown);
  metadataCache.set(address, { metadata, until: Date.now() + METADATA_CACHE_MS });
  return metadata;
}

/** The provider's metadata from `idp_metadata_xml`, else fetched from `idp_metadata_url` (kept 5 minutes unless `fresh`). */
async function idpMetadata(settings: SamlSettings, fresh = false): Promise<IdpMetadata> {
  const xml = settings.idp_metadata_xml ?? '';
  if (xml.trim() !== '') return readIdpMetadata(xml, 'idp_metadata_xml');
  const url = settings.idp_metadata_url ?? '';
  if (url.trim() === '') throw unavailable('The identity provider has neither idp_metadata_url nor idp_metadata_xml');
  return fetchedMetadata(url.trim(), fresh);
}

// ---- The protocol ----

/** A cache of request ids that knows only this attempt's: any other InResponseTo, or none, is refused. */
function attemptRequestIds(requestId: string): CacheProvider {
  const createdAt = new Date().toISOString();
  return {
    saveAsync: () => Promise.resolve(null),
    getAsync: (key) => Promise.resolve(key === requestId ? createdAt : null),
    removeAsync: () => Promise.resolve(null),
  };
}

function samlFor(metadata: IdpMetadata, sp: ServiceProvider, format: NameIdFormat, requestId: string): SAML {
  return new SAML({
    entryPoint: metadata.ssoUrl,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    audience: sp.entityId,
    idpCert: metadata.certificates,
    identifierFormat: NAME_ID_FORMAT_URNS[format],
    allowCreate: true,
    // No RequestedAuthnContext: the provider's own policy (a second factor, a smart card) decides.
    disableRequestedAuthnContext: true,
    authnRequestBinding: metadata.ssoBinding,
    // The HTTP-POST binding carries the AuthnRequest base64 alone; HTTP-Redirect deflates it first.
    skipRequestCompression: metadata.ssoBinding === 'HTTP-POST',
    generateUniqueId: () => requestId,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    // How long an attempt may last is the caller's (it keeps the attempt): node-saml's own bound stays out of the way.
    requestIdExpirationPeriodMs: 24 * 60 * 60_000,
    cacheProvider: attemptRequestIds(requestId),
  });
}

/**
 * Starts a sign-in at the identity provider (docs/sso-saml.md): an unsigned AuthnRequest asking for a
 * NameID of the provider's `name_id_format` and the answer at `sp.acsUrl` (HTTP-POST), with
 * `relayState`, to its SingleSignOnService: in the URL (HTTP-Redirect binding, deflated) when the
 * metadata offers that binding, else as the form the browser posts there (HTTP-POST binding); and the
 * request's ID for `samlFinish`. ProviderUnavailable when its metadata is not to be had.
 */
export async function samlStart(settings: SamlSettings, sp: ServiceProvider, relayState: string): Promise<{ start: BrowserStart; protocol: SamlProtocol }> {
  const metadata = await idpMetadata(settings);
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const saml = samlFor(metadata, sp, nameIdFormatOf(settings), requestId);
  const protocol = { request_id: requestId };
  if (metadata.ssoBinding === 'HTTP-Redirect') return { start: { redirect: await saml.getAuthorizeUrlAsync(relayState, undefined, {}) }, protocol };
  const fields = Object.fromEntries(Object.entries(await saml.getAuthorizeMessageAsync(relayState, undefined, {})).map(([name, value]) => [name, String(value)]));
  return { start: { post: { action: metadata.ssoUrl, fields } }, protocol };
}

/** node-saml's refusals, as sentences for the sign-in page (its own messages may quote the response). */
function refusalOf(error: unknown, metadata: IdpMetadata, sp: ServiceProvider): IdentityRefused {
  if (error instanceof IdentityRefused) return error;
  if (error instanceof SamlStatusError) {
    const status = /returned (\w+) error: (.*)$/s.exec(error.message);
    return new IdentityRefused(`The identity provider did not sign you in (status ${status?.[1] ?? 'not Success'}${status?.[2] && status[2] !== 'unspecified' ? `: ${status[2].slice(0, 200)}` : ''})`);
  }
  const message = error instanceof Error ? error.message : '';
  if (message === 'InResponseTo is missing from response') return new IdentityRefused('The SAML response answers no sign-in of cmi\'s (no InResponseTo): cmi takes no unsolicited responses, sign in from cmi\'s sign-in page');
  if (/InResponseTo/.test(message)) return new IdentityRefused('The SAML response answers another sign-in attempt (its InResponseTo is not this attempt\'s request): sign in again');
  if (/signature/i.test(message)) return new IdentityRefused(`The SAML assertion's signature does not verify with ${metadata.entityId}'s signing certificate: the response was changed, or the provider's certificate changed (update its metadata)`);
  if (/audience/i.test(message)) return new IdentityRefused(`The SAML assertion is meant for another service provider (its audience is not ${sp.entityId}): check the entity id configured at the provider`);
  if (/expired|not yet valid|subject confirmation/i.test(message)) return new IdentityRefused('The SAML assertion is not valid now (expired, not yet valid, or the clocks of cmi and the provider differ by more than a minute): sign in again');
  if (/Missing SAML assertion|No decryption key/.test(message)) return new IdentityRefused('The SAML response holds no assertion cmi can read (none, or an encrypted one: cmi takes unencrypted, signed assertions)');
  return new IdentityRefused('The SAML response could not be read');
}

/** The Response element of a decoded SAMLResponse, or IdentityRefused. */
function responseElement(xml: string): XmlNode {
  const response = child(parseXml(xml), 'Response');
  if (response === undefined) throw new IdentityRefused('The SAML response could not be read (no samlp:Response)');
  return response;
}

/** The values of the assertion's attribute named `name` (its Name, else its FriendlyName). */
function attributeValues(assertion: XmlNode, name: string): string[] {
  const attributes = children(assertion, 'AttributeStatement').flatMap((statement) => children(statement, 'Attribute'));
  const found = attributes.filter((item) => attribute(item, 'Name') === name);
  const named = found.length > 0 ? found : attributes.filter((item) => attribute(item, 'FriendlyName') === name);
  return named.flatMap((item) => children(item, 'AttributeValue')).map(textOf).filter((value) => value !== '');
}

function instantOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** What the signed assertion must say beyond node-saml's checks: its issuer, NameID, and bearer confirmation for this attempt at this ACS. */
function checkedIdentity(assertion: XmlNode, metadata: IdpMetadata, sp: ServiceProvider, format: NameIdFormat, protocol: SamlProtocol): SamlIdentity {
  const issuer = textOf(child(assertion, 'Issuer'));
  if (issuer !== metadata.entityId) throw new IdentityRefused(`The SAML assertion was issued by ${issuer === '' ? 'nobody named' : issuer.slice(0, 200)}, not by ${metadata.entityId}`);
  const assertionId = attribute(assertion, 'ID') ?? '';
  if (assertionId === '') throw new IdentityRefused('The SAML assertion has no ID');
  const subject = child(assertion, 'Subject');
  const nameId = child(subject, 'NameID');
  const value = textOf(nameId);
  if (nameId === undefined || value === '') throw new IdentityRefused('The SAML assertion names nobody (no NameID)');
  const given = attribute(nameId, 'Format') ?? 'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified';
  if (given === TRANSIENT) throw new IdentityRefused('The identity provider gave a transient NameID, which changes at every sign-in: configure it to give a persistent or email NameID');
  if (given !== NAME_ID_FORMAT_URNS[format]) {
    throw new IdentityRefused(`The identity provider gave a NameID of format ${given.slice(0, 200)}, not the ${format} one cmi asks (${NAME_ID_FORMAT_URNS[format]}): configure it to give ${format} NameIDs, or change name_id_format`);
  }
  const confirmations = children(subject, 'SubjectConfirmation').filter((item) => attribute(item, 'Method') === BEARER).map((item) => child(item, 'SubjectConfirmationData'));
  const data = confirmations.find((item) => attribute(item, 'Recipient') === sp.acsUrl);
  if (data === undefined) throw new IdentityRefused(`The SAML assertion is for another address (its Recipient is not ${sp.acsUrl}): check the ACS URL configured at the provider`);
  if (attribute(data, 'InResponseTo') !== protocol.request_id) throw new IdentityRefused('The SAML assertion answers another sign-in attempt (its InResponseTo is not this attempt\'s request): sign in again');
  const ends = [instantOf(attribute(data, 'NotOnOrAfter')), instantOf(attribute(child(assertion, 'Conditions'), 'NotOnOrAfter'))].filter((ms): ms is number => ms !== undefined);
  if (instantOf(attribute(data, 'NotOnOrAfter')) === undefined) throw new IdentityRefused('The SAML assertion has no NotOnOrAfter in its subject confirmation: cmi cannot keep it from being replayed');
  if (Date.now() - CLOCK_SKEW_MS >= Math.min(...ends)) throw new IdentityRefused('The SAML assertion is not valid now (expired, not yet valid, or the clocks of cmi and the provider differ by more than a minute): sign in again');
  return {
    subject: value,
    login: undefined,
    email: undefined,
    groups: [],
    assertionId,
    notOnOrAfter: new Date(Math.min(...ends) + CLOCK_SKEW_MS),
  };
}

/**
 * Finishes a sign-in with the form the identity provider had the browser post to the ACS (HTTP-POST
 * binding: `SAMLResponse`, `RelayState`), for the attempt `protocol` started (docs/sso-saml.md#what-cmi-checks):
 * the assertion must be signed by a certificate of the provider's metadata, issued by its entity id,
 * for `sp.entityId` (audience) at `sp.acsUrl` (recipient and destination), valid now (a minute of
 * clock skew), in answer to `protocol.request_id`, and name the person by a NameID of the format
 * asked. The identity's subject is the NameID; login, email and groups come from the attributes the
 * settings name, first and last name from `givenName` and `sn`. IdentityRefused says what is wrong;
 * ProviderUnavailable when the metadata is not to be had.
 */
export async function samlFinish(settings: SamlSettings, sp: ServiceProvider, form: Record<string, string | undefined>, protocol: SamlProtocol): Promise<SamlIdentity> {
  const encoded = form.SAMLResponse ?? '';
  if (encoded === '') throw new IdentityRefused('The identity provider\'s answer holds no SAMLResponse');
  if (encoded.length > MAX_RESPONSE_CHARS) throw new IdentityRefused('The SAML response is too large');
  const metadata = await idpMetadata(settings);
  const format = nameIdFormatOf(settings);
  const response = responseElement(Buffer.from(encoded, 'base64').toString('utf8'));
  const destination = attribute(response, 'Destination');
  if (destination !== undefined && destination !== sp.acsUrl) throw new IdentityRefused(`The SAML response is for another address (its Destination is not ${sp.acsUrl}): check the ACS URL configured at the provider`);
  let assertionXml: string;
  try {
    const { profile } = await samlFor(metadata, sp, format, protocol.request_id).validatePostResponseAsync({ SAMLResponse: encoded });
    if (profile?.getAssertionXml === undefined) throw new IdentityRefused('The SAML response holds no assertion');
    assertionXml = profile.getAssertionXml();
  } catch (error) {
    throw refusalOf(error, metadata, sp);
  }
  // The assertion node-saml verified the signature of: everything below is read from it alone.
  const assertion = child(parseXml(assertionXml), 'Assertion');
  if (assertion === undefined) throw new IdentityRefused('The SAML response could not be read (no signed assertion)');
  const identity = checkedIdentity(assertion, metadata, sp, format, protocol);
  const first = (name: string) => attributeValues(assertion, name)[0];
  const firstName = first('givenName');
  const lastName = first('sn');
  return {
    ...identity,
    login: first(settings.login_attribute),
    email: first(settings.email_attribute),
    groups: [...new Set(attributeValues(assertion, settings.groups_attribute))],
    ...(firstName !== undefined ? { firstName } : {}),
    ...(lastName !== undefined ? { lastName } : {}),
  };
}

/**
 * cmi's metadata as the service provider `sp` (docs/sso-saml.md#cmis-metadata): an EntityDescriptor
 * whose SPSSODescriptor signs no requests, wants signed assertions, names the NameID format asked, and
 * has its AssertionConsumerService (HTTP-POST) at `sp.acsUrl`. The same `sp` gives the same text.
 */
export function samlMetadata(sp: ServiceProvider, nameIdFormat: 'persistent' | 'email'): string {
  const id = `_${createHash('sha256').update(`${sp.entityId}\n${sp.acsUrl}\n${nameIdFormat}`).digest('hex').slice(0, 40)}`;
  return generateServiceProviderMetadata({
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    identifierFormat: NAME_ID_FORMAT_URNS[nameIdFormat],
    wantAssertionsSigned: true,
    generateUniqueId: () => id,
  });
}

/**
 * Whether the provider's metadata can be had and used now (fetched afresh from `idp_metadata_url`):
 * resolves if so, else ProviderUnavailable saying what is wrong (docs/sso-saml.md#failures).
 */
export async function samlCheck(settings: SamlSettings): Promise<void> {
  await idpMetadata(settings, true);
}
