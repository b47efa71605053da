import { AsyncLocalStorage } from 'node:async_hooks';
import type { KyselyPlugin, OperationNode, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** What a cache serves: users' pages, the error tracker's, or the alert rules a batch is routed by (docs/architecture.md#how-cached-pages-stay-right). */
export type CachedData = 'users' | 'tracker' | 'alerts';

/** Tables whose rows are served from caches, by what they serve; writes to the others (login counters, sessions) change nothing cached. */
const CACHED_TABLES = new Map<string, CachedData>([
  ['users', 'users'],
  ['permissions', 'users'],
  ['roles', 'users'],
  ['role_permissions', 'users'],
  ['user_roles', 'users'],
  ['billing_buckets', 'users'],
  ['user_groups', 'users'],
  ['user_group_roles', 'users'],
  ['infrastructure_errors', 'tracker'],
  ['error_counts', 'tracker'],
  ['error_occurrences', 'tracker'],
  ['error_histogram', 'tracker'],
  ['error_breakdown', 'tracker'],
  ['error_triage', 'tracker'],
  ['error_notes', 'tracker'],
  ['error_activity', 'tracker'],
  ['alert_rules', 'alerts'],
  ['alert_destinations', 'alerts'],
  ['alert_rule_destinations', 'alerts'],
]);

type Node = OperationNode & Record<string, unknown>;

/** The table an insert, update or delete writes to; undefined for anything else. */
function writtenTable(node: RootOperationNode): string | undefined {
  const any = node as unknown as Node;
  const target = (node.kind === 'InsertQueryNode' ? any.into
    : node.kind === 'UpdateQueryNode' ? any.table
    : node.kind === 'DeleteQueryNode' ? (any.from as { froms: unknown[] } | undefined)?.froms[0]
    : undefined) as Node | undefined;
  if (target === undefined) return undefined;
  const table = (target.kind === 'AliasNode' ? target.node : target) as { table?: { identifier?: { name?: string } } };
  return table.table?.identifier?.name ?? '(unknown)';
}

/** Writes withheld from the counts while a `withheld` work runs (in its async context only). */
interface Withholding {
  data: CachedData;
  /** False once the work has settled: a write under it afterwards (a timer it started) counts as usual. */
  open: boolean;
  wrote: boolean;
}

/**
 * Counts the writes this process has completed through kysely to tables that caches serve, so its
 * own changes invalidate its caches synchronously, before any notice from the database could arrive.
 */
export class WriteCounter implements KyselyPlugin {
  /** Completed writes by what they change. */
  readonly counts: Record<CachedData, number> = { users: 0, tracker: 0, alerts: 0 };
  private readonly writes = new WeakMap<object, { changes: CachedData | 'all'; held?: Withholding }>();
  private readonly holding = new AsyncLocalStorage<Withholding>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const table = writtenTable(args.node);
    // A write whose table cannot be told is counted for all: better a needless refresh than a stale page.
    const changes = table === '(unknown)' ? 'all' : table === undefined ? undefined : CACHED_TABLES.get(table);
    if (changes !== undefined) {
      const held = this.holding.getStore();
      this.writes.set(args.queryId, held?.open && held.data === changes ? { changes, held } : { changes });
    }
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const write = this.writes.get(args.queryId);
    if (write?.changes === 'all') {
      this.counts.users += 1;
      this.counts.tracker += 1;
      this.counts.alerts += 1;
    } else if (write !== undefined) this.count(write.changes, write.held);
    return Promise.resolve(args.result);
  }

  /** A transaction that wrote `data` ended (Database.transactionEnded): counted as a write of it. */
  ended(data: CachedData): void {
    this.count(data, this.holding.getStore());
  }

  private count(data: CachedData, held: Withholding | undefined): void {
    if (held?.open && held.data === data) held.wrote = true;
    else this.counts[data] += 1;
  }

  /**
   * Runs `work` with its writes to `data` withheld from the counts (docs/architecture.md#how-cached-pages-stay-right):
   * once it has settled, `settle` says whether it told the caches itself what those writes changed
   * (`true`, given what `work` answered), or not (`false`, or `work` failed): then they count as one
   * write, as usual. Only statements `work` runs in its own async context are withheld.
   */
  async withheld<T>(data: CachedData, work: () => Promise<T>, settle: (answer: T) => boolean): Promise<T> {
    const held: Withholding = { data, open: true, wrote: false };
    let told = false;
    try {
      const answer = await this.holding.run(held, work);
      told = settle(answer);
      return answer;
    } finally {
      held.open = false;
      if (held.wrote && !told) this.counts[data] += 1;
    }
  }
}
