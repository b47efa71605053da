import { type Database, pendingMigrations } from '../store/database.js';

export type Readiness = 'ok' | 'migrations pending' | 'database unreachable';

/** Whether this process can serve: the database answers and has every migration this cmi needs. */
export function healthService(database: Database) {
  return {
    async readiness(): Promise<Readiness> {
      try {
        return (await pendingMigrations(database)).length > 0 ? 'migrations pending' : 'ok';
      } catch {
        return 'database unreachable';
      }
    },
  };
}

export type HealthService = ReturnType<typeof healthService>;
