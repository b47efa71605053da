import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  type BillingBucket,
  CmiClient,
  CmiNotFoundError,
  CmiPermissionError,
  CmiValidationError,
  type Format,
  type Permission,
  type RoleRecord,
} from '../src/client/index.js';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import type { RoleJson } from './support/roles.js';

const START = new Date('2026-11-20T10:00:00Z');

/** A role of a user record (support/roles.ts) as the client types it, with its users_count. */
function typed(role: RoleJson, users_count: number): RoleRecord {
  const { permissions, created_at, updated_at, ...rest } = role;
  return {
    ...rest, requires_two_factor: false, users_count, created_at: new Date(created_at), updated_at: new Date(updated_at),
    permissions: permissions.map(({ permission }) => ({ ...permission, created_at: new Date(permission.created_at), updated_at: new Date(permission.updated_at) })),
  };
}

/** The catalogue's permission `id` as `t`'s database dated it. */
const permissionOf = (t: TestApp, id: number): Permission => typed(t.systemRoles.admin, 0).permissions.find((p) => p.id === id)!;

/** What the database holds of a user: its role ids and bucket. */
async function heldBy(t: TestApp, userId: number): Promise<[number[], number | null]> {
  const roles = await t.database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', userId).orderBy('role_id').execute();
  const user = await t.database.db.selectFrom('users').select('bucket_id').where('id', '=', userId).executeTakeFirstOrThrow();
  return [roles.map((r) => Number(r.role_id)), user.bucket_id === null ? null : Number(user.bucket_id)];
}

/**
 * cmi/client's roles, permissions and billing buckets, and users' role_ids and bucket_id, against a real
 * cmi on a random port of 127.0.0.1, in JSON and in XML: the same records out of both (docs/client.md).
 */
for (const format of ['json', 'xml'] as const satisfies Format[]) {
  describe(`CmiClient roles, permissions and buckets (${format}) against a real cmi`, () => {
    let t: TestApp;
    let baseUrl: string;
    let admin: CmiClient;
    before(async () => {
      t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
      baseUrl = `http://127.0.0.1:${await listenLocally(t.app)}`;
      admin = new CmiClient({ baseUrl, login: ADMIN.login, password: ADMIN.password, format });
    });
    after(() => t.close());

    it('permissions.list and all: the catalogue, typed, by id', async () => {
      const page = await admin.permissions.list({ perPage: 10, page: 3 });
      assert.deepEqual([page.total, page.page, page.limit, page.hasMore], [PERMISSIONS.length, 3, 10, PERMISSIONS.length > 30]);
      assert.deepEqual(page.items, PERMISSIONS.slice(20, 30).map(([id]) => permissionOf(t, id)));
      const walked: Permission[] = [];
      for await (const permission of admin.permissions.all({ perPage: 10 })) walked.push(permission);
      assert.deepEqual(walked.map((p) => [p.id, p.identifier, p.label]), PERMISSIONS.map((p) => [...p]));
    });

    it('roles.list, all and get: the system roles with their users_count and permissions', async () => {
      const page = await admin.roles.list();
      assert.deepEqual(page, { items: [typed(t.systemRoles.admin, 1), typed(t.systemRoles.user, 1)], total: 2, page: 1, limit: 25, hasMore: false });
      const walked: RoleRecord[] = [];
      for await (const role of admin.roles.all({ perPage: 1 })) walked.push(role);
      assert.deepEqual(walked, page.items);
      assert.deepEqual(await admin.roles.get(2), typed(t.systemRoles.user, 1));
      await assert.rejects(admin.roles.get(999), CmiNotFoundError);
    });

    it('roles.create, update, clone, delete: the records each answers, and the server\'s state', async () => {
      const readers = await admin.roles.create({ label: `Error readers ${format}`, permission_ids: [22, 25] });
      assert.deepEqual(readers, {
        id: readers.id, label: `Error readers ${format}`, identifier: `error_readers_${format}`, system: false, requires_two_factor: false, users_count: 0,
        created_at: START, updated_at: START, permissions: [permissionOf(t, 22), permissionOf(t, 25)],
      } satisfies RoleRecord);
      assert.deepEqual(await admin.roles.get(readers.id), readers);
      const named = await admin.roles.create({ label: 'Support', identifier: `support.${format}` });
      assert.deepEqual([named.identifier, named.permissions], [`support.${format}`, []]);

      assert.equal(await admin.roles.update(readers.id, { label: 'Readers', permission_ids: [22] }), undefined);
      const changed = await admin.roles.get(readers.id);
      assert.deepEqual([changed.label, changed.identifier, changed.permissions.map((p) => p.identifier)], ['Readers', `error_readers_${format}`, ['infrastructure_errors.read']]);

      const copy = await admin.roles.clone(readers.id);
      assert.deepEqual([copy.label, copy.identifier, copy.system, copy.users_count, copy.permissions], ['Readers (copy)', `error_readers_${format}_copy`, false, 0, changed.permissions]);

      assert.equal(await admin.roles.delete(copy.id), undefined);
      await assert.rejects(admin.roles.get(copy.id), CmiNotFoundError);
      const rows = await t.database.db.selectFrom('roles').select('id').where('id', '=', copy.id).execute();
      assert.deepEqual(rows, []);
      await admin.roles.delete(named.id);
    });

    it('roles: a 422 names the fields (JSON) or carries full messages (XML); a system role is not deleted; alice may see none of it', async () => {
      const invalid = await admin.roles.create({ label: '', permission_ids: [999] }).catch((error: unknown) => error);
      assert.ok(invalid instanceof CmiValidationError);
      assert.deepEqual(invalid.errors, format === 'json'
        ? { label: ["can't be blank"], permission_ids: ['names no permission: 999'] }
        : { base: ["Label can't be blank", 'Permission ids names no permission: 999'] });
      const system = await admin.roles.delete(1).catch((error: unknown) => error);
      assert.ok(system instanceof CmiValidationError);
      assert.deepEqual(system.errors, { base: ['A system role cannot be deleted'] });
      const alice = new CmiClient({ baseUrl, login: ALICE.login, password: ALICE.password, format });
      await assert.rejects(alice.roles.list(), CmiPermissionError);
      await assert.rejects(alice.permissions.list(), CmiPermissionError);
      await assert.rejects(alice.buckets.list(), CmiPermissionError);
    });

    it('buckets.create, get, list, all, update, delete: typed exactly, defaults filled in', async () => {
      const gold = await admin.buckets.create({ label: 'Gold' });
      assert.deepEqual(gold, {
        id: gold.id, label: 'Gold', currency_code: 'USD', monthly_price: 0, show_price: false, allows_kms: false, allows_mak: false, allows_own: false,
        created_at: START, updated_at: START,
      } satisfies BillingBucket);
      const silver = await admin.buckets.create({ label: 'Silver', currency_code: 'EUR', monthly_price: 12.5, show_price: true, allows_kms: true });
      assert.deepEqual([silver.currency_code, silver.monthly_price, silver.show_price, silver.allows_kms, silver.allows_mak], ['EUR', 12.5, true, true, false]);
      assert.deepEqual(await admin.buckets.get(silver.id), silver);
      const page = await admin.buckets.list({ perPage: 1, page: 2 });
      assert.deepEqual(page, { items: [silver], total: 2, page: 2, limit: 1, hasMore: false });
      const walked: BillingBucket[] = [];
      for await (const bucket of admin.buckets.all({ perPage: 1 })) walked.push(bucket);
      assert.deepEqual(walked, [gold, silver]);

      t.time.advance(60);
      assert.equal(await admin.buckets.update(gold.id, { label: 'Gold+', monthly_price: 9.99, allows_own: true }), undefined);
      assert.deepEqual(await admin.buckets.get(gold.id), { ...gold, label: 'Gold+', monthly_price: 9.99, allows_own: true, updated_at: new Date(START.getTime() + 60_000) });

      const invalid = await admin.buckets.create({ label: 'Bad', currency_code: 'usd' }).catch((error: unknown) => error);
      assert.ok(invalid instanceof CmiValidationError);
      assert.deepEqual(invalid.errors, format === 'json' ? { currency_code: ['must be three capital letters (ISO 4217)'] } : { base: ['Currency code must be three capital letters (ISO 4217)'] });

      assert.equal(await admin.buckets.delete(gold.id), undefined);
      await assert.rejects(admin.buckets.get(gold.id), CmiNotFoundError);
      await admin.buckets.delete(silver.id);
      assert.equal((await admin.buckets.list()).total, 0);
    });

    it('users.create and update with role_ids and bucket_id; a role or bucket in use is not deleted', async () => {
      const support = await admin.roles.create({ label: `Support ${format}`, permission_ids: [1, 7] });
      const bucket = await admin.buckets.create({ label: `Team ${format}` });
      const login = `carol-${format}`;
      const carol = await admin.users.create({ login, email: `${login}@example.com`, password: 'carol-password', role_ids: [2, support.id], bucket_id: bucket.id });
      assert.deepEqual([carol.roles.map((r) => r.identifier), carol.bucket_id], [['user', `support_${format}`], bucket.id]);
      assert.deepEqual(await heldBy(t, carol.id), [[2, support.id], bucket.id]);
      assert.equal((await admin.roles.get(support.id)).users_count, 1);

      const inUse = await admin.roles.delete(support.id).catch((error: unknown) => error);
      assert.ok(inUse instanceof CmiValidationError);
      assert.deepEqual(inUse.errors, { base: ['A role that users hold cannot be deleted'] });
      const bucketInUse = await admin.buckets.delete(bucket.id).catch((error: unknown) => error);
      assert.ok(bucketInUse instanceof CmiValidationError);
      assert.deepEqual(bucketInUse.errors, { base: ['A bucket that users belong to cannot be deleted'] });

      const unknown = await admin.users.update(carol.id, { role_ids: [999], bucket_id: 999 }).catch((error: unknown) => error);
      assert.ok(unknown instanceof CmiValidationError);
      assert.deepEqual(unknown.errors, format === 'json'
        ? { role_ids: ['names no role: 999'], bucket_id: ['names no bucket: 999'] }
        : { base: ['Role ids names no role: 999', 'Bucket id names no bucket: 999'] });
      assert.deepEqual(await heldBy(t, carol.id), [[2, support.id], bucket.id]);

      assert.equal(await admin.users.update(carol.id, { role_ids: [support.id], bucket_id: null }), undefined);
      const after = await admin.users.get(carol.id);
      assert.deepEqual([after.roles.map((r) => r.id), after.bucket_id], [[support.id], null]);
      assert.deepEqual(await heldBy(t, carol.id), [[support.id], null]);
      // The role's permissions reach its holder: carol (users.read) now sees every user.
      const asCarol = new CmiClient({ baseUrl, login, password: 'carol-password', format });
      assert.ok((await asCarol.users.list()).total >= 3);
      await assert.rejects(asCarol.roles.list(), CmiPermissionError);
    });
  });
}
