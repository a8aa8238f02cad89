// Durations, grouped numbers and UTC minutes, as the terminal and the HTML report print them.
// Its own module: the terminal views need the formats, not the page.

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0ms';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1).replace(/\.?0+$/, '')}s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes < 60) return `${minutes}m ${seconds}s`;
  return `${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

export function grouped(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const two = (n: number) => (n < 10 ? `0${n}` : String(n));

/**
 * `YYYY-MM-DD HH:MM` in UTC, or `?` for a time that is not one. Built from the getUTC* fields
 * because a process's first Date#toISOString is far slower than the getters on Node 20, and
 * `wf runs` / `wf show` are one-shot processes. Years outside 0-9999 keep
 * toISOString's extended form.
 */
export function utcMinute(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (Number.isNaN(year)) return '?';
  if (year < 0 || year > 9999) return d.toISOString().slice(0, 16).replace('T', ' ');
  const y = String(year).padStart(4, '0');
  return `${y}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}`;
}
