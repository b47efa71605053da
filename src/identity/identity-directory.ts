import { BadGateway, Unauthorized } from '../shared/problems.js';
import type { PasswordDirectory } from '../users/authentication.js';
import type { User } from '../users/user.js';
import { IdentityRefused, type LdapSettings, ProviderUnavailable } from './external-identity.js';
import type { IdentityProvidersRepository } from './identity-providers.store.js';
import type { IdentitySignIn } from './identity-sign-in.js';
import { ldapAuthenticate } from './ldap.js';

/**
 * The enabled LDAP directories as the password paths' directory (docs/sso-ldap.md): each asked in id
 * order (for HTTP Basic, only those allowing it) until one vouches for the login and password; the
 * account is then found, made or re-mapped by the identity sign-in, as for OpenID Connect and SAML.
 * A directory that cannot be reached is passed over; when none answered and one could not be reached,
 * BadGateway says which, so a person whose password is right learns why it is not taken.
 */
export function identityDirectory(providers: IdentityProvidersRepository, signIn: IdentitySignIn): PasswordDirectory {
  return {
    async verify(login: string, password: string, address: string, basic: boolean): Promise<User | undefined> {
      const directories = (await providers.enabled('ldap')).filter((provider) => !basic || (provider.settings as LdapSettings).allow_basic_auth);
      const unreachable: string[] = [];
      for (const provider of directories) {
        let identity;
        try {
          identity = await ldapAuthenticate(provider.settings as LdapSettings, login, password);
        } catch (error) {
          if (!(error instanceof ProviderUnavailable)) throw error;
          unreachable.push(provider.label);
          continue;
        }
        if (identity === undefined) continue;
        try {
          return await signIn.accountOf(provider, identity, address);
        } catch (error) {
          if (error instanceof IdentityRefused) throw new Unauthorized(error.message);
          throw error;
        }
      }
      if (unreachable.length > 0) throw new BadGateway(`The directory ${unreachable.join(', ')} cannot be reached: try again later, or ask an administrator`);
      return undefined;
    },
  };
}
