import { NotFound } from '../shared/problems.js';

/** A record id from the path: a positive 32-bit integer, else the record cannot exist (404). */
export function parseId(raw: string | undefined): number {
  if (raw === undefined || !/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new NotFound();
  return Number(raw);
}
