// Formatting helpers for log lines and query strings.

const PAD = 2;

export function pad(n, width = PAD) {
  return String(n).padStart(width, "0");
}

export const formatDate = (date) =>
  [date.getFullYear(), pad(date.getMonth() + 1), pad(date.getDate())].join("-");

export function format(level, message) {
  return "[" + level.toUpperCase() + "] " + message;
}

/** parse splits "a=1&b=2" pairs; parseQuery builds an object from them. */
export function parse(text) {
  return text
    .split("&")
    .filter(Boolean)
    .map((pair) => pair.split("="));
}

export function parseQuery(
  text,
  { decode = true } = {},
) {
  const out = {};
  for (const [key, value] of parse(text)) {
    out[key] = decode ? decodeURIComponent(value || "") : value;
  }
  return out;
}

export class Formatter {
  constructor(prefix) {
    this.prefix = prefix;
  }

  format(level, message) {
    return this.prefix + " " + format(level, message);
  }

  static plain() {
    return new Formatter("");
  }
}
