/**
 * What every identity provider (OpenID Connect, SAML 2.0, LDAP) tells cmi about the person signing in
 * (docs/security.md#identity-providers): each protocol's module (oidc.ts, saml.ts, ldap.ts) turns its
 * provider's answer into this, and the sign-in (identity-sign-in.ts) links, creates and maps the account
 * from it, the same for all three.
 */
export interface ExternalIdentity {
  /**
   * The person's stable id at the provider, which links it to its cmi account: OIDC's `sub`, SAML's
   * NameID (persistent or email, never transient), LDAP's `entryUUID` (else its entry DN, lowercased:
   * Active Directory has none, so moving an AD user unlinks it: docs/sso-ldap.md). Never empty.
   */
  subject: string;
  /** The login the provider gives (by the provider's `login_claim` / `login_attribute`), for a new account. */
  login: string | undefined;
  /** The email the provider gives (by `email_claim` / `email_attribute`), for a new account. */
  email: string | undefined;
  /** The groups the person is in at the provider, as it names them (names, or DNs for LDAP's `memberOf`). */
  groups: string[];
  firstName?: string;
  lastName?: string;
}

/**
 * The provider cannot be reached or answers nothing usable (down, discovery or metadata failing, a TLS
 * error): the sign-in page says so with `message`, never a 500 (docs/security.md#identity-providers).
 */
export class ProviderUnavailable extends Error {
  override readonly name = 'ProviderUnavailable';
}

/**
 * The provider's answer is refused: a state, nonce or InResponseTo not ours, a bad signature, a wrong
 * audience or recipient, an expired or replayed assertion, a transient NameID. `message` says which, for
 * the sign-in page and the log (never a token, an assertion or a secret in it).
 */
export class IdentityRefused extends Error {
  override readonly name = 'IdentityRefused';
}

/** An OpenID Connect provider's settings (docs/sso-oidc.md). */
export interface OidcSettings {
  /** The issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  client_id: string;
  /** Write-only: never answered by the API. */
  client_secret: string;
  /** Asked beside `openid` (default `["openid", "email", "profile"]`). */
  scopes: string[];
  /** The ID token's (or userinfo's) claim giving the login of a new account (default `preferred_username`). */
  login_claim: string;
  /** Default `email`. */
  email_claim: string;
  /** Default `groups`. */
  groups_claim: string;
}

/** A SAML 2.0 identity provider's settings (docs/sso-saml.md). One of the two metadata sources is set. */
export interface SamlSettings {
  idp_metadata_url?: string;
  idp_metadata_xml?: string;
  /** The NameID asked for, which links the person to its account: `persistent` (default) or `email`; never transient. */
  name_id_format: 'persistent' | 'email';
  /** The assertion's attribute giving the login of a new account (default `uid`). */
  login_attribute: string;
  /** Default `mail`. */
  email_attribute: string;
  /** Default `groups`. */
  groups_attribute: string;
}

/** An LDAP directory's settings (docs/sso-ldap.md). */
export interface LdapSettings {
  /** `ldap://host:port` (then `start_tls` should be true) or `ldaps://host:port`. */
  url: string;
  /** The service account searching for the user's entry; empty: the entry's DN is `user_filter` itself, a bind DN template. */
  bind_dn: string;
  /** Write-only: never answered by the API. */
  bind_password: string;
  base_dn: string;
  /** A filter with `{login}` (escaped as RFC 4515 says), e.g. `(&(objectClass=inetOrgPerson)(uid={login}))`; or, without `bind_dn`, a DN template such as `uid={login},ou=people,dc=example,dc=org`. */
  user_filter: string;
  /** The entry's attribute listing its groups (default `memberOf`, DNs). */
  group_attribute: string;
  start_tls: boolean;
  /** PEM of the CA the directory's certificate is checked against (else the system's). */
  ca_certificate: string;
  /** Whether the API takes Basic authentication with the directory's password. */
  allow_basic_auth: boolean;
}
