// Formatting for people: dates in the browser's locale and zone, durations, labels.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const shortDateTime = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

export function formatDateTime(iso, short = false) {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : (short ? shortDateTime : dateTime).format(date);
}

/** Seconds as `m:ss` (`h:mm:ss` past an hour). */
export function formatClock(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "–";
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

export function formatMs(ms) {
  return ms === null || ms === undefined ? "–" : `${Math.round(ms)} ms`;
}

/** `no_answer` -> `no answer`. */
export function label(value) {
  return value === null || value === undefined ? "–" : String(value).replaceAll("_", " ");
}

export function formatNumber(value) {
  return value === null || value === undefined ? "–" : new Intl.NumberFormat().format(value);
}
