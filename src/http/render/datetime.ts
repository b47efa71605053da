/** `2026-11-20T10:00:00+00:00`: UTC, numeric offset, no fraction (docs/api.md#datetimes). */
export function formatDatetime(value: Date): string {
  return `${value.toISOString().slice(0, 19)}+00:00`;
}
