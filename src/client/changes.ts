import { changeResource } from '../changes/change.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** A change to the cloud (docs/changes.md): `hosts` and `components` are lists of names, empty meaning all. */
export type Change = Omit<RecordOf<typeof changeResource>, 'hosts' | 'components'> & { hosts: string[]; components: string[] };

/** The fields of `POST /sysadmin_tools/infrastructure/changes`; `started_at` is the time it is recorded unless given. */
export interface NewChange {
  /** One word: deploy, upgrade, maintenance, config or any other. */
  kind: string;
  title: string;
  release?: string | null;
  /** A Date, or any datetime form of docs/api.md#datetimes. */
  started_at?: Date | string;
  /** Null (or not given): still running. */
  ended_at?: Date | string | null;
  hosts?: string[];
  components?: string[];
}

/** The fields of `PUT /sysadmin_tools/infrastructure/changes/:id`: any of those of a new change. */
export type ChangeEdits = Partial<NewChange>;

const CHANGES = '/sysadmin_tools/infrastructure/changes';

type Decoded = RecordOf<typeof changeResource>;
/** A decoded change with its lists typed as the lists of names they are (the resource's `json` fields). */
const asChange = (record: Decoded): Change => ({ ...record, hosts: record.hosts as unknown as string[], components: record.components as unknown as string[] });
const asPage = (page: Page<Decoded>): Page<Change> => ({ ...page, items: page.items.map(asChange) });

const onWire = <T extends ChangeEdits>(fields: T) => Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, value instanceof Date ? value.toISOString() : value]));

/** `client.changes`: changes to the cloud and an error's suspect changes (docs/client.md#methods). */
export function changesApi(http: Transport) {
  const one = (answer: Answer) => asChange(decodeRecord(changeResource, http.format === 'json' ? unwrap(changeResource, answer.body) : answer.body, http.format));
  const path = (id: number) => `${CHANGES}/${id}`;

  return {
    async list(params: PageParams = {}): Promise<Page<Change>> {
      return asPage(await fetchPage(http, changeResource, CHANGES, params));
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<Change, void, undefined> {
      return walkPages(async (page) => asPage(await fetchPage(http, changeResource, CHANGES, { ...params, page })), (change) => change.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<Change> {
      return one(await http.request('GET', path(id), call));
    },

    /** Needs changes.manage or changes.create (a CD pipeline's write-only key). */
    async create(fields: NewChange, call: RequestOptions = {}): Promise<Change> {
      return one(await http.request('POST', CHANGES, { ...call, body: { change: onWire(fields) } }));
    },

    /** Answers nothing (204); `get` reads the changed change. */
    async update(id: number, edits: ChangeEdits, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { change: onWire(edits) } });
    },

    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },

    /** The changes suspected of causing error `errorId` (docs/changes.md#suspect-changes). */
    async suspects(errorId: number, params: PageParams = {}): Promise<Page<Change>> {
      return asPage(await fetchPage(http, changeResource, `/sysadmin_tools/infrastructure/errors/${errorId}/suspect_changes`, params));
    },
  };
}
